"""The engine of ``resume-kit run``: ready units on worker threads, their outcomes turned into
the bookkeeping of :class:`resume_kit.core.batch.Batch`, and the summary of the run.

Each unit goes through :func:`resume_kit.runner.verify.verify_unit`, which checkpoints a pass the
moment the command exits 0; checkpoints go through one
:class:`resume_kit.runner.batch_store.BatchStore` so that they stay cheap with hundreds of units
and serialised across worker threads. What the user sees is the caller's :class:`Reporter`.
"""

from __future__ import annotations

import copy
import functools
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from resume_kit.core.batch import (
    STOP_ERROR,
    STOP_FAILURE,
    STOP_INTERRUPTED,
    STOP_MAX_FAILURES,
    STOP_MAX_UNITS,
    STOP_TIME_BUDGET,
    Batch,
    Failure,
    Remaining,
    continue_command,
)
from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import TYPE_CHECKING, Any, Protocol
from resume_kit.infra.errors import ResumeKitError

if TYPE_CHECKING:
    from resume_kit.infra.paths import Layout
    from resume_kit.model.progress import Unit
    from resume_kit.runner.batch_store import BatchStore
    from resume_kit.runner.signal_guard import Signals
    from resume_kit.runner.verify import Outcome

POLL_S = 0.25  # how often the main loop looks at signals and the display when nothing ends
STOP_REASONS = (
    STOP_FAILURE,
    STOP_MAX_FAILURES,
    STOP_MAX_UNITS,
    STOP_TIME_BUDGET,
    STOP_INTERRUPTED,
    STOP_ERROR,
)


class Reporter(Protocol):
    """What the engine tells the user about, as it happens (the CLI's progress display)."""

    def refresh(self) -> None: ...
    def failed(self, outcome: Outcome, failure: Failure, what: str) -> None: ...
    def not_recorded(self, unit_id: str) -> None: ...
    def stopping(self, running: list[str], now: bool) -> None: ...
    def recorded(self, outcome: Outcome) -> None: ...


@dataclass
class Options:
    jobs: int
    keep_going: bool
    max_failures: int | None
    max_units: int | None
    time_budget: str | None
    json_out: bool


class Status:
    """What the display shows; updated by the main loop, last lines by worker threads."""

    def __init__(self, total: int, done: int, started_at: float):
        self.total = total
        self.done = done
        self.failed = 0
        self.passed = 0
        self.started_at = started_at
        self.running: dict[str, float] = {}  # unit id -> start time
        self.last_lines: dict[str, str] = {}
        self.last_failure = ""
        self.lock = threading.Lock()

    def tick(self, unit_id: str, elapsed: float, last_line: str) -> None:
        if last_line:
            with self.lock:
                self.last_lines[unit_id] = last_line


def failure_of(outcome: Outcome) -> Failure:
    result = outcome.result
    exit_code = 124 if result.timed_out else result.exit_code
    excerpt = outcome.failure.excerpt if outcome.failure is not None else ""
    first = next((line for line in excerpt.splitlines() if line.strip()), "")
    repeats = outcome.failure.repeats if outcome.failure is not None else 1
    return Failure(unit_id=outcome.unit_id, exit_code=exit_code, first_line=first, repeats=repeats)


_worker = threading.local()  # the unit a worker thread is verifying


class Runner:
    """Starts ready units on worker threads and turns their outcomes into bookkeeping.

    Worker threads post two events: ``checkpoint`` when the unit's command has ended and its
    outcome is about to be written, and ``done``. A pass frees the unit's slot at
    ``checkpoint`` (the next command overlaps the write, which is mostly fsync), yet the unit
    counts as running for dependencies and shared files until ``done``; a failure counts
    against the failure limits from ``checkpoint`` on.
    """

    def __init__(
        self,
        layout: Layout,
        store: BatchStore,
        batch: Batch,
        options: Options,
        timeout_s: float,
        trusted: set[tuple[str, str]],
        total: int,
        done: int,
    ):
        self.layout = layout
        self.store = store
        self.batch = batch
        self.options = options
        self.timeout_s = timeout_s
        self.trusted = trusted
        self.refused: list[str] = []
        from resume_kit.runner.leases import held_by_others, release_done

        self.leased = held_by_others(layout)  # someone else's: skipped (docs/many-agents.md)
        with store.view() as progress:
            ready = {u.id for u in batch.candidates(progress)}
            finished = {u.id for u in progress.units if u.status == "done"}
        # ours on done units: left by a run killed between a pass and its release
        self.notes: list[str] = release_done(layout, finished)
        self.skipped_leased = [uid for uid in self.leased if uid in ready]
        batch.tried.update(self.leased)
        self.error: BaseException | None = None
        self.started_at = time.monotonic()
        self.status = Status(total, done, self.started_at)
        self.events: queue.Queue[tuple[str, str, bool]] = queue.Queue()
        self.futures: dict[str, Future[Outcome]] = {}
        self.units: dict[str, Unit] = {}
        self.checkpointing: set[str] = set()
        store.on_write = self._checkpoint_begins

    # ---- worker side

    def _checkpoint_begins(self, units: list[Unit]) -> None:
        unit_id = getattr(_worker, "unit_id", None)
        for unit in units:
            if unit.id == unit_id:
                self.events.put(("checkpoint", unit_id, unit.status == "done"))

    def _work(self, unit: Unit, stop: threading.Event) -> Outcome:
        from resume_kit.runner.leases import release_after_pass, renewing
        from resume_kit.runner.verify import verify_unit

        _worker.unit_id = unit.id
        try:
            with renewing(self.layout, unit.id):
                outcome = verify_unit(
                    self.layout,
                    unit,
                    self.timeout_s,
                    stop=stop,
                    on_tick=lambda elapsed, line: self.status.tick(unit.id, elapsed, line),
                    txn=self.store.transaction,
                    start=False,  # a failed unit stays to do: in progress means someone started it
                )
            if outcome.recorded and outcome.result.passed:
                freed = release_after_pass(self.layout, unit.id)
                if freed:
                    self.notes.append(freed)
            return outcome
        finally:
            _worker.unit_id = None

    # ---- main thread

    def _approved(self, unit: Unit) -> bool:
        """Approved at the start, or (a command changed during the run) approved now."""
        from resume_kit.infra.trust import untrusted

        if (unit.id, unit.verify or "") in self.trusted:
            return True
        return not untrusted(self.layout.root, [unit])

    def _select(self) -> list[Unit]:
        elapsed = time.monotonic() - self.started_at
        free = self.options.jobs - (len(self.futures) - len(self.checkpointing))
        with self.store.view() as progress:
            chosen = self.batch.select(progress, free, elapsed)
            chosen = [copy.deepcopy(unit) for unit in chosen]
        ready: list[Unit] = []
        for unit in chosen:
            if self._approved(unit):
                ready.append(unit)
            else:
                self.batch.finish_not_recorded(unit.id)
                self.refused.append(unit.id)
        return ready

    def _finish(self, unit: Unit, future: Future[Outcome], report: Reporter) -> None:
        status = self.status
        with status.lock:
            status.running.pop(unit.id, None)
            status.last_lines.pop(unit.id, None)
        error = future.exception()
        if error is not None:
            self.batch.finish_not_recorded(unit.id)
            if self.error is None:
                self.error = error
            self.batch.request_stop(STOP_ERROR)
            return
        outcome = future.result()
        result = outcome.result
        if result.interrupted:
            self.batch.finish_interrupted(unit.id)
            return
        if not outcome.recorded:
            self.batch.finish_not_recorded(unit.id)
            report.not_recorded(unit.id)
        elif result.passed:
            self.batch.finish_passed(unit.id)
            status.passed += 1
            status.done += 1
        else:
            failure = failure_of(outcome)
            self.batch.finish_failed(failure)
            status.failed += 1
            what = "timed out" if result.timed_out else f"failed (exit {failure.exit_code})"
            status.last_failure = f"{unit.id} {what}: {failure.first_line}"
            report.failed(outcome, failure, what)
        if outcome.recorded:
            report.recorded(outcome)

    def announce(self, signals: Signals, report: Reporter) -> None:
        """Tell the user about signals not yet told about, and stop starting units."""
        if signals.interrupts == signals.announced:
            return
        signals.announced = signals.interrupts
        self.batch.request_stop(STOP_INTERRUPTED)
        running = list(self.batch.running)
        if running:
            report.stopping(running, now=signals.kill.is_set())

    def _start(self, pool: ThreadPoolExecutor, signals: Signals) -> None:
        try:
            chosen = self._select()
        except ResumeKitError as exc:  # the progress file broke under us
            self.error = exc
            self.batch.request_stop(STOP_ERROR)
            return
        for unit in chosen:
            with self.status.lock:
                self.status.running[unit.id] = time.monotonic()
            future = pool.submit(self._work, unit, signals.kill)
            self.futures[unit.id] = future
            self.units[unit.id] = unit
            future.add_done_callback(functools.partial(self._done, unit.id))

    def _done(self, unit_id: str, future: Future[Outcome]) -> None:
        self.events.put(("done", unit_id, False))

    def _handle(self, event: tuple[str, str, bool], report: Reporter) -> None:
        kind, unit_id, passed = event
        if unit_id not in self.futures:
            return
        if kind == "checkpoint":
            if passed:
                self.checkpointing.add(unit_id)
                with self.status.lock:
                    self.status.running.pop(unit_id, None)
            else:
                self.batch.failed_pending(unit_id)
            return
        self.checkpointing.discard(unit_id)
        future = self.futures.pop(unit_id)
        self._finish(self.units.pop(unit_id), future, report)

    def loop(self, signals: Signals, report: Reporter) -> None:
        # Enough threads for `jobs` commands plus the same number still writing checkpoints.
        workers = 2 * self.options.jobs
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="unit") as pool:
            while True:
                self.announce(signals, report)
                if self.error is None:
                    self._start(pool, signals)
                if not self.futures:
                    break
                try:
                    event = self.events.get(timeout=POLL_S)
                except queue.Empty:
                    report.refresh()
                    continue
                self._handle(event, report)
                while True:
                    try:
                        self._handle(self.events.get_nowait(), report)
                    except queue.Empty:
                        break
                report.refresh()

    # ---- the end

    def summary(self, remaining: Remaining, code: int) -> dict[str, Any]:
        """The run's result, as ``--json`` prints it and the human summary reads it."""
        batch, options, refused = self.batch, self.options, self.refused
        stop = batch.stop_reason
        if stop is not None and stop not in STOP_REASONS:
            stop = STOP_ERROR
        return {
            "passed": list(batch.passed),
            "failed": [
                {"unit": f.unit_id, "exit_code": f.exit_code, "excerpt": f.first_line}
                for f in batch.failures
            ],
            "stuck": list(remaining.stuck),
            "interrupted": list(batch.interrupted_units),
            "not_recorded": [u for u in batch.not_recorded if u not in refused],
            "refused": list(refused),
            "no_verify": list(remaining.no_verify),
            "done": remaining.done,
            "total": remaining.total,
            "remaining": remaining.left,
            "blocked": remaining.blocked,
            "stopped": stop,
            "duration_s": round(time.monotonic() - self.started_at, 2),
            "exit_code": code,
            **({"leased": list(self.skipped_leased)} if self.skipped_leased else {}),
            "continue": (
                continue_command(
                    options.jobs,
                    options.keep_going,
                    options.max_failures,
                    options.max_units,
                    options.time_budget,
                    options.json_out,
                )
                if remaining.left and remaining.left > remaining.blocked
                else None
            ),
        }
