"""Scheduling for ``resume-kit run`` (pure): which units are ready, which may run together,
and the failure and budget bookkeeping of one batch run.

Nothing here touches the disk, the clock or a process: the command feeds in the progress as
it stands, the elapsed time and each outcome, and asks what to start next and why it stopped.

Ready is :func:`resume_kit.model.progress.ready_units`, the rule verify-next and the brief use,
applied repeatedly (a unit still running does not count as done). Two
units may run at the same time only when neither names the other in ``after`` and their
``files``/``artifacts`` cannot touch a common path (see :func:`claims_overlap`).
"""

from __future__ import annotations

import posixpath
import re

from resume_kit.core.light_dataclass import dataclass, field
from resume_kit.infra.errors import (
    EXIT_INTERRUPTED,
    EXIT_NOTHING_TO_DO,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VERIFY_FAILED,
    ResumeKitError,
)
from resume_kit.model.findings import STUCK_REPEATS
from resume_kit.model.globs import broad_glob_regex
from resume_kit.model.progress import Progress, Unit, ready_units

# --------------------------------------------------------------------------- durations

_DURATION = re.compile(
    r"^(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m)?(?:(?P<s>\d+(?:\.\d+)?)s)?$"
)


def parse_duration(text: str) -> float:
    """Seconds in ``90s``, ``15m``, ``2h``, ``1h30m`` or a bare number of seconds; > 0."""
    raw = text.strip().lower().replace(" ", "")
    seconds: float | None = None
    if re.fullmatch(r"\d+(?:\.\d+)?", raw):
        seconds = float(raw)
    else:
        match = _DURATION.match(raw)
        if raw and match and any(match.group(k) for k in ("h", "m", "s")):
            seconds = (
                float(match.group("h") or 0) * 3600
                + float(match.group("m") or 0) * 60
                + float(match.group("s") or 0)
            )
    if seconds is None or seconds <= 0:
        raise ResumeKitError(
            f"invalid duration {text!r}",
            hint="give a positive duration such as 90s, 15m, 2h or 1h30m",
            exit_code=EXIT_USAGE,
        )
    return seconds


# --------------------------------------------------------------------------- path claims

_WILDCARD = re.compile(r"[*?\[]")


def _normalise(path: str) -> str:
    norm = posixpath.normpath(path.strip())
    return "" if norm == "." else norm.rstrip("/")


def _static_prefix(pattern: str) -> str:
    """The leading folders of ``pattern`` before its first wildcard segment."""
    parts: list[str] = []
    for segment in pattern.split("/"):
        if _WILDCARD.search(segment):
            break
        parts.append(segment)
    return "/".join(parts)


def _within(inner: str, outer: str) -> bool:
    """``inner`` is ``outer`` or lies below it (``""`` is the whole tree)."""
    return outer == "" or inner == outer or inner.startswith(outer + "/")


@dataclass(frozen=True)
class Claims:
    """The paths a unit may touch: literal paths and glob patterns (with their static prefix)."""

    literals: frozenset[str]
    patterns: tuple[tuple[str, str], ...]

    @property
    def empty(self) -> bool:
        return not self.literals and not self.patterns


def claims_of(unit: Unit) -> Claims:
    literals: set[str] = set()
    patterns: list[tuple[str, str]] = []
    for item in (*unit.files, *unit.artifacts):
        norm = _normalise(item)
        if _WILDCARD.search(norm):
            patterns.append((norm, _static_prefix(norm)))
        else:
            literals.add(norm)
    return Claims(frozenset(literals), tuple(patterns))


def _literal_meets_pattern(literal: str, pattern: str, prefix: str) -> bool:
    return bool(broad_glob_regex(pattern).match(literal)) or _within(prefix, literal)


def claims_overlap(a: Claims, b: Claims) -> bool:
    """True when the two units might touch a common path (conservative, never misses one).

    Literal vs literal: equal, or one is a folder holding the other. Literal vs pattern: the
    pattern matches it, or it is a folder holding the pattern's area. Pattern vs pattern: their
    static prefixes are nested (two patterns under unrelated folders cannot meet).
    """
    for left in a.literals:
        for right in b.literals:
            if _within(left, right) or _within(right, left):
                return True
        for pattern, prefix in b.patterns:
            if _literal_meets_pattern(left, pattern, prefix):
                return True
    for pattern, prefix in a.patterns:
        for right in b.literals:
            if _literal_meets_pattern(right, pattern, prefix):
                return True
        for _, other_prefix in b.patterns:
            if _within(prefix, other_prefix) or _within(other_prefix, prefix):
                return True
    return False


def may_run_together(a: Unit, b: Unit) -> bool:
    """Neither unit depends on the other and their paths cannot meet."""
    if a.id in b.after or b.id in a.after:
        return False
    return not claims_overlap(claims_of(a), claims_of(b))


# --------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Limits:
    keep_going: bool = False
    max_failures: int | None = None  # None with keep_going: no limit
    max_units: int | None = None
    time_budget_s: float | None = None


@dataclass(frozen=True)
class Failure:
    unit_id: str
    exit_code: int | None
    first_line: str
    repeats: int = 1


STOP_FAILURE = "failure"
STOP_MAX_FAILURES = "max-failures"
STOP_MAX_UNITS = "max-units"
STOP_TIME_BUDGET = "time-budget"
STOP_INTERRUPTED = "interrupted"
STOP_ERROR = "error"


@dataclass
class Remaining:
    """What is left after a run, as the progress file stands."""

    total: int
    done: int
    todo: int
    in_progress: int
    blocked: int
    stuck: list[str]
    no_verify: list[str]

    @property
    def left(self) -> int:
        return self.total - self.done


@dataclass
class Batch:
    """The bookkeeping of one ``resume-kit run``: started, running, passed and failed units."""

    limits: Limits
    running: dict[str, Unit] = field(default_factory=dict)
    passed: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    not_recorded: list[str] = field(default_factory=list)  # vanished or command changed
    interrupted_units: list[str] = field(default_factory=list)
    tried: set[str] = field(default_factory=set)  # started in this run: never again
    started: int = 0
    failing: set[str] = field(default_factory=set)  # failed, outcome still being written
    stop_reason: str | None = None
    stuck_seen: set[str] = field(default_factory=set)
    no_verify_seen: set[str] = field(default_factory=set)

    # ---- stopping

    def request_stop(self, reason: str) -> None:
        """Start nothing more; the first reason given is the one reported."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def check_limits(self, elapsed_s: float) -> str | None:
        """The reason to start no further unit, or None; remembered once found."""
        if self.stop_reason is not None:
            return self.stop_reason
        limits = self.limits
        failed = len(self.failures) + len(self.failing)
        if failed and not limits.keep_going:
            self.request_stop(STOP_FAILURE)
        elif limits.max_failures is not None and failed >= limits.max_failures:
            self.request_stop(STOP_MAX_FAILURES)
        elif limits.max_units is not None and self.started >= limits.max_units:
            self.request_stop(STOP_MAX_UNITS)
        elif limits.time_budget_s is not None and elapsed_s >= limits.time_budget_s:
            self.request_stop(STOP_TIME_BUDGET)
        return self.stop_reason

    # ---- choosing

    def candidates(self, progress: Progress) -> list[Unit]:
        """Ready units not yet tried in this run, in verify-next order (in progress first).
        A unit still running (its checkpoint not yet written) does not count as done."""
        done = {u.id for u in progress.units if u.status == "done" and u.id not in self.running}
        ready: list[Unit] = []
        for unit in ready_units(progress, done):
            if unit.id in self.tried or unit.id in self.running:
                continue
            if unit.verify is None:
                self.no_verify_seen.add(unit.id)
                continue
            if unit.last_failure is not None and unit.last_failure.repeats >= STUCK_REPEATS:
                self.stuck_seen.add(unit.id)
                continue
            ready.append(unit)
        return ready

    def select(self, progress: Progress, slots: int, elapsed_s: float) -> list[Unit]:
        """Up to ``slots`` units to start now, each compatible with every running unit and with
        each other; none once a limit is reached. The chosen units count as started."""
        if slots <= 0 or self.check_limits(elapsed_s) is not None:
            return []
        chosen: list[Unit] = []
        for unit in self.candidates(progress):
            if len(chosen) >= slots:
                break
            if self.limits.max_units is not None and self.started >= self.limits.max_units:
                break
            others = [*self.running.values(), *chosen]
            if all(may_run_together(unit, other) for other in others):
                chosen.append(unit)
                self.start(unit)
        return chosen

    def start(self, unit: Unit) -> None:
        self.running[unit.id] = unit
        self.tried.add(unit.id)
        self.started += 1

    # ---- outcomes

    def failed_pending(self, unit_id: str) -> None:
        """The unit's command failed; its outcome is being written. Counts as a failure for
        the limits from now on, so nothing starts that the failure should have stopped."""
        if unit_id in self.running:
            self.failing.add(unit_id)

    def _end(self, unit_id: str) -> None:
        self.running.pop(unit_id, None)
        self.failing.discard(unit_id)

    def finish_passed(self, unit_id: str) -> None:
        self._end(unit_id)
        self.passed.append(unit_id)

    def finish_failed(self, failure: Failure) -> None:
        self._end(failure.unit_id)
        self.failures.append(failure)

    def finish_not_recorded(self, unit_id: str) -> None:
        self._end(unit_id)
        self.not_recorded.append(unit_id)

    def finish_interrupted(self, unit_id: str) -> None:
        self._end(unit_id)
        self.interrupted_units.append(unit_id)

    # ---- the end

    def remaining(self, progress: Progress) -> Remaining:
        counts = progress.counts()
        stuck = [
            u.id
            for u in progress.units
            if u.status != "done"
            and u.status != "blocked"
            and u.last_failure is not None
            and u.last_failure.repeats >= STUCK_REPEATS
            and u.id not in self.tried
        ]
        no_verify = [
            u.id for u in progress.units if u.id in self.no_verify_seen and u.status != "done"
        ]
        return Remaining(
            total=len(progress.units),
            done=counts["done"],
            todo=counts["todo"],
            in_progress=counts["in_progress"],
            blocked=counts["blocked"],
            stuck=[u for u in stuck if u in self.stuck_seen],
            no_verify=no_verify,
        )

    def exit_code(self, remaining: Remaining) -> int:
        """130 interrupted; 1 a failure in this run or a stuck unit skipped; 3 nothing was
        started and nothing is left that could start; 2 nothing started because the ready
        units have no verify command; else 0 (including a clean stop on a budget)."""
        if self.stop_reason == STOP_INTERRUPTED:
            return EXIT_INTERRUPTED
        if self.failures or remaining.stuck:
            return EXIT_VERIFY_FAILED
        if self.started == 0:
            return EXIT_USAGE if remaining.no_verify else EXIT_NOTHING_TO_DO
        return EXIT_OK


def continue_command(
    jobs: int,
    keep_going: bool,
    max_failures: int | None,
    max_units: int | None,
    time_budget: str | None,
    json_out: bool,
) -> str:
    """The command line that continues this run with the same flags."""
    import shlex

    parts = ["resume-kit", "run"]
    if jobs != 1:
        parts += ["--jobs", str(jobs)]
    if keep_going:
        parts.append("--keep-going")
    if max_failures is not None:
        parts += ["--max-failures", str(max_failures)]
    if max_units is not None:
        parts += ["--max-units", str(max_units)]
    if time_budget is not None:
        parts += ["--time-budget", shlex.quote(time_budget)]
    if json_out:
        parts.append("--json")
    return " ".join(parts)
