"""``resume-kit run``: work through the remaining units as a resumable batch (SPEC 3).

Each unit goes through :func:`resume_kit.runner.verify.verify_unit`, which checkpoints a pass the
moment the command exits 0; so a run killed at any point continues, next time, with the first
unit not yet done, and nothing that passed runs again. Scheduling and budgets live in
:mod:`resume_kit.core.batch`; checkpoints go through one :class:`resume_kit.runner.batch_store.BatchStore`
so that they stay cheap with hundreds of units and serialised across worker threads.

Ctrl-C once: start nothing more, let running units finish. Twice (or SIGTERM): stop the
running units' process groups, leave them not done, exit 130.
"""

from __future__ import annotations

import contextlib
import functools
import json
import queue
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from resume_kit.cli.ui import hint, info, say
from resume_kit.infra.errors import EXIT_UNTRUSTED, ResumeKitError, UntrustedCommandError
from resume_kit.infra.messages import prefixed, warning_text
from resume_kit.model.findings import STUCK_REPEATS

if TYPE_CHECKING:
    from resume_kit.core.batch import Batch, Failure, Remaining
    from resume_kit.infra.paths import Layout
    from resume_kit.model.progress import Progress, Unit
    from resume_kit.runner.batch_store import BatchStore
    from resume_kit.runner.verify import Outcome

HEARTBEAT_S = 10.0  # plain (non-terminal) progress: one line this often
POLL_S = 0.25  # how often the main loop looks at signals and the display when nothing ends
LIST_MAX = 8  # ids shown in one line before "and N more"


# --------------------------------------------------------------------------- small helpers


def _ids(ids: list[str], limit: int = LIST_MAX) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _clip(text: str, limit: int = 160) -> str:
    from resume_kit.core.inert import clip
    from resume_kit.infra.redact import redact
    from resume_kit.infra.trust import display_command

    return clip(display_command(redact(text)), limit)


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def _rate(passed: int, elapsed: float) -> str:
    if passed == 0 or elapsed <= 0:
        return "-"
    per_s = passed / elapsed
    return f"{per_s:.1f} units/s" if per_s >= 1 else f"{elapsed / passed:.1f} s/unit"


def _may_run(progress: Progress) -> list[Unit]:
    """Units this run could start at some point: not done, not blocked, not stuck, verifiable."""
    return [
        u
        for u in progress.units
        if u.status in ("todo", "in_progress")
        and u.verify is not None
        and not (u.last_failure is not None and u.last_failure.repeats >= STUCK_REPEATS)
    ]


def _require_trusted(layout: Layout, units: list[Unit]) -> None:
    from resume_kit.infra.trust import untrusted

    refused = untrusted(layout.root, units)
    if refused:
        noun = "command is" if len(refused) == 1 else "commands are"
        raise UntrustedCommandError(
            f"{len(refused)} verify {noun} not approved on this machine: "
            f"{_ids([u.id for u in refused])}",
            hint="they did not come from `resume-kit add/plan/init` here (a pull or a hand "
            "edit?); a person must read them and approve them with `resume-kit trust`",
        )


# --------------------------------------------------------------------------- signals


@dataclass
class _Signals:
    """First Ctrl-C: drain (start nothing more). Second Ctrl-C or SIGTERM: kill the running."""

    drain: threading.Event = field(default_factory=threading.Event)
    kill: threading.Event = field(default_factory=threading.Event)
    interrupts: int = 0
    announced: int = 0  # how many of the above the main loop has told the user about

    def handle(self, signum: int, frame: FrameType | None) -> None:
        # Only set flags here: printing from a handler can hit a reentrant write on stderr.
        self.interrupts += 1
        self.drain.set()
        if signum != signal.SIGINT or self.interrupts > 1:
            self.kill.set()


@contextlib.contextmanager
def _signal_handlers() -> Iterator[_Signals]:
    signals = _Signals()
    previous = [
        (sig, signal.signal(sig, signals.handle)) for sig in (signal.SIGINT, signal.SIGTERM)
    ]
    try:
        yield signals
    finally:
        for sig, old in previous:
            signal.signal(sig, old)


# --------------------------------------------------------------------------- display


class _Status:
    """What both displays show; updated by the main loop, last lines by worker threads."""

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

    def running_text(self, width: int = 160) -> str:
        now = time.monotonic()
        with self.lock:
            items = list(self.running.items())
            lines = dict(self.last_lines)
        parts = []
        for unit_id, since in items:
            text = f"{unit_id} ({now - since:.0f}s)"
            if len(items) == 1 and lines.get(unit_id):
                text += f": {_clip(lines[unit_id], max(20, width - len(text) - 12))}"
            parts.append(text)
        return ", ".join(parts)

    def eta(self) -> str:
        elapsed = time.monotonic() - self.started_at
        if not self.passed or elapsed <= 0:
            return "-"
        left = self.total - self.done
        return _clock(left * elapsed / self.passed)


class _PlainDisplay:
    """Not a terminal: a start line, failures as they happen, a progress line now and then."""

    def __init__(self, status: _Status):
        self.status = status
        self.next_beat = time.monotonic() + HEARTBEAT_S

    def begin(self, jobs: int) -> None:
        s = self.status
        say(
            f"run: {s.total - s.done} units to go ({s.done}/{s.total} done)"
            + (f", {jobs} at a time" if jobs > 1 else "")
        )

    def note(self, text: str) -> None:
        info(text)

    def refresh(self) -> None:
        now = time.monotonic()
        if now < self.next_beat:
            return
        self.next_beat = now + HEARTBEAT_S
        s = self.status
        running = s.running_text()
        say(
            f"{s.done}/{s.total} done, {s.failed} failed, "
            f"{_rate(s.passed, now - s.started_at)}, ETA {s.eta()}"
            + (f"; running: {running}" if running else "")
        )

    def close(self) -> None:
        return None


class _LiveDisplay:
    """A terminal: a Rich progress bar on stderr with rate, ETA, the running units and the
    last failure."""

    def __init__(self, status: _Status):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        from resume_kit.cli.ui import stderr_console

        self.status = status
        shared = status
        console = stderr_console()

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                elapsed = time.monotonic() - shared.started_at
                return Text(_rate(shared.passed, elapsed), style="dim")

        class BatchProgress(Progress):
            def get_renderables(self) -> Any:
                yield self.make_tasks_table(self.tasks)
                width = console.width  # not self.console: Live asks for this during __init__
                running = shared.running_text(width)
                if running:
                    yield Text("running: ", style="dim") + Text(running)
                if shared.last_failure:
                    yield Text("last failure: ", style="red") + Text(
                        _clip(shared.last_failure, max(20, width - 16))
                    )

        self.progress = BatchProgress(
            SpinnerColumn(),
            TextColumn("[bold]run"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=8,
        )
        self.task = self.progress.add_task("run", total=status.total, completed=status.done)

    def begin(self, jobs: int) -> None:
        self.progress.start()

    def note(self, text: str) -> None:
        self.progress.console.print(text, markup=False, highlight=False)

    def refresh(self) -> None:
        self.progress.update(self.task, completed=self.status.done)

    def close(self) -> None:
        self.refresh()
        self.progress.stop()


def _display(status: _Status) -> _PlainDisplay | _LiveDisplay:
    import os

    isatty = getattr(sys.stderr, "isatty", None)
    if isatty is not None and isatty() and os.environ.get("TERM", "") != "dumb":
        return _LiveDisplay(status)
    return _PlainDisplay(status)


# --------------------------------------------------------------------------- the run


@dataclass
class _Options:
    jobs: int
    keep_going: bool
    max_failures: int | None
    max_units: int | None
    time_budget: str | None
    json_out: bool


def _json_line(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _failure_of(outcome: Outcome) -> Failure:
    from resume_kit.core.batch import Failure

    result = outcome.result
    exit_code = 124 if result.timed_out else result.exit_code
    excerpt = outcome.failure.excerpt if outcome.failure is not None else ""
    first = next((line for line in excerpt.splitlines() if line.strip()), "")
    repeats = outcome.failure.repeats if outcome.failure is not None else 1
    return Failure(unit_id=outcome.unit_id, exit_code=exit_code, first_line=first, repeats=repeats)


_worker = threading.local()  # the unit a worker thread is verifying


class _Runner:
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
        options: _Options,
        timeout_s: float,
        trusted: set[tuple[str, str]],
    ):
        self.layout = layout
        self.store = store
        self.batch = batch
        self.options = options
        self.timeout_s = timeout_s
        self.trusted = trusted
        self.refused: list[str] = []
        self.error: BaseException | None = None
        self.started_at = time.monotonic()
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

    def _work(self, unit: Unit, stop: threading.Event, status: _Status) -> Outcome:
        from resume_kit.runner.verify import verify_unit

        _worker.unit_id = unit.id
        try:
            return verify_unit(
                self.layout,
                unit,
                self.timeout_s,
                stop=stop,
                on_tick=lambda elapsed, line: status.tick(unit.id, elapsed, line),
                txn=self.store.transaction,
            )
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
        import copy

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

    def _finish(self, unit: Unit, future: Future[Outcome], status: _Status, display: Any) -> None:
        with status.lock:
            status.running.pop(unit.id, None)
            status.last_lines.pop(unit.id, None)
        error = future.exception()
        if error is not None:
            self.batch.finish_not_recorded(unit.id)
            if self.error is None:
                self.error = error
            self.batch.request_stop("error")
            return
        outcome = future.result()
        result = outcome.result
        if result.interrupted:
            self.batch.finish_interrupted(unit.id)
            return
        if not outcome.recorded:
            self.batch.finish_not_recorded(unit.id)
            display.note(
                warning_text(
                    f"unit '{unit.id}' was removed or its verify command changed "
                    "while it ran; nothing recorded"
                )
            )
        elif result.passed:
            self.batch.finish_passed(unit.id)
            status.passed += 1
            status.done += 1
        else:
            failure = _failure_of(outcome)
            self.batch.finish_failed(failure)
            status.failed += 1
            what = "timed out" if result.timed_out else f"failed (exit {failure.exit_code})"
            status.last_failure = f"{unit.id} {what}: {failure.first_line}"
            repeats = f", same failure {failure.repeats}x running" if failure.repeats > 1 else ""
            display.note(
                prefixed(f"{unit.id} {what} after {result.duration_s:.1f}s{repeats}")
                + (f": {_clip(failure.first_line)}" if failure.first_line else "")
                + f" (full output: {outcome.log})"
            )
        if self.options.json_out and outcome.recorded:
            _json_line(
                {
                    "unit": outcome.unit_id,
                    "passed": result.passed,
                    "exit_code": 124 if result.timed_out else result.exit_code,
                    "duration_s": round(result.duration_s, 2),
                    "log": outcome.log,
                }
            )

    def _announce(self, signals: _Signals, display: Any) -> None:
        from resume_kit.core.batch import STOP_INTERRUPTED

        if signals.interrupts == signals.announced:
            return
        signals.announced = signals.interrupts
        self.batch.request_stop(STOP_INTERRUPTED)
        running = list(self.batch.running)
        if signals.kill.is_set():
            if running:
                display.note(prefixed(f"stopping {_ids(running)} now; they stay not done"))
        elif running:
            display.note(
                prefixed(
                    f"stopping: no new units will start; waiting for {_ids(running)} "
                    "(Ctrl-C again stops them now and leaves them not done)"
                )
            )

    def _start(self, pool: ThreadPoolExecutor, signals: _Signals, status: _Status) -> None:
        try:
            chosen = self._select()
        except ResumeKitError as exc:  # the progress file broke under us
            self.error = exc
            self.batch.request_stop("error")
            return
        for unit in chosen:
            with status.lock:
                status.running[unit.id] = time.monotonic()
            future = pool.submit(self._work, unit, signals.kill, status)
            self.futures[unit.id] = future
            self.units[unit.id] = unit
            future.add_done_callback(functools.partial(self._done, unit.id))

    def _done(self, unit_id: str, future: Future[Outcome]) -> None:
        self.events.put(("done", unit_id, False))

    def _handle(self, event: tuple[str, str, bool], status: _Status, display: Any) -> None:
        kind, unit_id, passed = event
        if unit_id not in self.futures:
            return
        if kind == "checkpoint":
            if passed:
                self.checkpointing.add(unit_id)
                with status.lock:
                    status.running.pop(unit_id, None)
            else:
                self.batch.failed_pending(unit_id)
            return
        self.checkpointing.discard(unit_id)
        future = self.futures.pop(unit_id)
        self._finish(self.units.pop(unit_id), future, status, display)

    def loop(self, signals: _Signals, status: _Status, display: Any) -> None:
        # Enough threads for `jobs` commands plus the same number still writing checkpoints.
        workers = 2 * self.options.jobs
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="unit") as pool:
            while True:
                self._announce(signals, display)
                if self.error is None:
                    self._start(pool, signals, status)
                if not self.futures:
                    break
                try:
                    event = self.events.get(timeout=POLL_S)
                except queue.Empty:
                    display.refresh()
                    continue
                self._handle(event, status, display)
                while True:
                    try:
                        self._handle(self.events.get_nowait(), status, display)
                    except queue.Empty:
                        break
                display.refresh()


# --------------------------------------------------------------------------- the summary


_STOP_TEXT = {
    "failure": "stopped at the first failure (--keep-going continues past failures)",
    "max-failures": "stopped after {max_failures} failures (--max-failures)",
    "max-units": "stopped after {max_units} units (--max-units)",
    "time-budget": "time budget of {time_budget} used up (--time-budget)",
    "interrupted": "interrupted",
    "error": "stopped on an error",
}


def _summary(
    batch: Batch,
    remaining: Remaining,
    options: _Options,
    refused: list[str],
    elapsed: float,
    code: int,
) -> dict[str, Any]:
    from resume_kit.core.batch import continue_command

    stop = batch.stop_reason
    if stop is not None and stop not in _STOP_TEXT:
        stop = "error"
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
        "duration_s": round(elapsed, 2),
        "exit_code": code,
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


def _print_summary(summary: dict[str, Any], options: _Options) -> None:
    passed: list[str] = summary["passed"]
    failed: list[dict[str, Any]] = summary["failed"]
    total, done, left = summary["total"], summary["done"], summary["remaining"]
    if not passed and not failed and not summary["interrupted"] and summary["stopped"] is None:
        if total == 0:
            say("nothing to do: there are no units yet")
            hint('add one with `resume-kit add "TITLE" --verify "COMMAND"`')
        elif done == total:
            say(f"nothing to do: all {total} units done")
        elif summary["stuck"]:
            say(
                f"nothing run: {_ids(summary['stuck'])} failed the same way "
                f"{STUCK_REPEATS} times running (UNIT_STUCK) and is not retried by `run`"
            )
            hint(
                "change the approach, then check it with "
                f"`resume-kit verify-next --unit {summary['stuck'][0]}`"
            )
        elif summary["no_verify"]:
            say(f"nothing run: no verify command on {_ids(summary['no_verify'])}")
            hint("add a `verify:` line (a command that exits 0 when the unit is done)")
        elif summary["refused"]:
            say(f"nothing run: not approved: {_ids(summary['refused'])}")
            hint("a person must review them and approve them with `resume-kit trust`")
        else:
            say(f"nothing verifiable: {left} units left, none of them ready")
            hint("`resume-kit status` shows why; unblock with `resume-kit start ID`")
        return
    head = prefixed(f"run {'interrupted' if summary['stopped'] == 'interrupted' else 'ended'}")
    info(
        f"{head} after {_clock(summary['duration_s'])}: {len(passed)} passed, "
        f"{len(failed)} failed; {done}/{total} done, {left} left"
        + (f" ({summary['blocked']} blocked)" if summary["blocked"] else "")
    )
    if passed:
        info(f"  passed: {_ids(passed)}")
    for item in failed[:LIST_MAX]:
        code = "timed out" if item["exit_code"] == 124 else f"exit {item['exit_code']}"
        excerpt = f": {_clip(item['excerpt'])}" if item["excerpt"] else ""
        info(f"  failed: {item['unit']} ({code}){excerpt}")
    if len(failed) > LIST_MAX:
        info(f"  … and {len(failed) - LIST_MAX} more failed")
    if summary["interrupted"]:
        info(f"  stopped while running (not done): {_ids(summary['interrupted'])}")
    if summary["stuck"]:
        info(
            f"  not retried, stuck on the same failure {STUCK_REPEATS} times running: "
            f"{_ids(summary['stuck'])}"
            " (change the approach, then `resume-kit verify-next --unit ID`)"
        )
    if summary["refused"]:
        info(f"  not approved (changed during the run): {_ids(summary['refused'])}")
    if summary["no_verify"]:
        info(f"  no verify command: {_ids(summary['no_verify'])}")
    stop = summary["stopped"]
    if stop is not None and stop != "interrupted":
        info(
            "  "
            + _STOP_TEXT[stop].format(
                max_failures=options.max_failures,
                max_units=options.max_units,
                time_budget=options.time_budget,
            )
        )
    if summary["continue"]:
        info(f"  continue with: {summary['continue']}")


# --------------------------------------------------------------------------- entry point


def run(
    jobs: int,
    keep_going: bool,
    max_failures: int | None,
    max_units: int | None,
    time_budget: str | None,
    json_out: bool,
) -> int:
    from resume_kit.core.batch import Batch, Limits, parse_duration
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file import config
    from resume_kit.runner.batch_store import BatchStore

    budget_s = parse_duration(time_budget) if time_budget is not None else None
    options = _Options(max(1, jobs), keep_going, max_failures, max_units, time_budget, json_out)
    layout = find_layout()
    store = BatchStore(layout)
    with store.view() as progress:
        candidates = _may_run(progress)
        total = len(progress.units)
        done = progress.counts()["done"]
    _require_trusted(layout, candidates)
    timeout_s = config.load(layout).verify_timeout_s
    limits = Limits(
        keep_going=keep_going or max_failures is not None,
        max_failures=max_failures,
        max_units=max_units,
        time_budget_s=budget_s,
    )
    batch = Batch(limits)
    runner = _Runner(
        layout,
        store,
        batch,
        options,
        timeout_s,
        trusted={(u.id, u.verify or "") for u in candidates},
    )
    status = _Status(total, done, runner.started_at)
    display = _display(status)
    with _signal_handlers() as signals:
        if candidates:
            display.begin(options.jobs)
        try:
            runner.loop(signals, status, display)
        finally:
            display.close()
        runner._announce(signals, display)
    try:
        with store.view() as progress:
            remaining = batch.remaining(progress)
    except ResumeKitError:
        if runner.error is None:
            raise
        raise runner.error from None
    code = batch.exit_code(remaining)
    if runner.refused and code in (0, 3):
        code = EXIT_UNTRUSTED
    if isinstance(runner.error, ResumeKitError):
        code = runner.error.exit_code
    summary = _summary(
        batch, remaining, options, runner.refused, time.monotonic() - runner.started_at, code
    )
    _print_summary(summary, options)
    if json_out:
        _json_line({"summary": summary})
    if runner.error is not None:
        raise runner.error
    return code
