"""The progress model (SPEC 2): the typed units and actions, and picking the next unit.

Validation and migration live in :mod:`resume_kit.progress_file.validate`, the YAML round trip in
:mod:`resume_kit.progress_file.roundtrip`, and loading and saving the file in :mod:`resume_kit.progress_file.io`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal

from resume_kit.core.timeutil import now_utc
from resume_kit.infra.errors import ProgressFileError

SCHEMA_VERSION = 1
STATUSES = ("todo", "in_progress", "done", "blocked")
ACTION_STATUSES = ("success", "unknown", "failed")
# \Z, not $: "$" also matches before a final newline, so "a\n" would pass as an id
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
ID_PATTERN_TEXT = "[a-z0-9][a-z0-9._-]*"

Status = Literal["todo", "in_progress", "done", "blocked"]

TOP_KEYS = ("schema_version", "goal", "units", "actions", "notes")
UNIT_KEYS = (
    "id",
    "title",
    "status",
    "verify",
    "files",
    "artifacts",
    "after",
    "evidence",
    "last_failure",
)
EVIDENCE_KEYS = ("verified_at", "commit", "dirty", "fingerprint", "duration_s", "log")
FAILURE_KEYS = ("at", "exit_code", "signature", "repeats", "excerpt", "state", "reruns")
ACTION_KEYS = ("key", "description", "status", "at", "attempts")
ATTEMPT_KEYS = ("status", "at", "session", "command", "call", "result")
ActionStatus = Literal["success", "unknown", "failed"]


@dataclass
class Evidence:
    verified_at: str
    commit: str | None
    dirty: bool
    fingerprint: str
    duration_s: float
    log: str | None = None


@dataclass
class LastFailure:
    at: str
    exit_code: int
    signature: str
    repeats: int = 1  # attempts with this signature, each after a change (UNIT_STUCK counts these)
    excerpt: str = ""
    # what the next failure is compared against: a hash of HEAD, the changed files and the
    # unit's fingerprint at this attempt (None in files written before it was recorded)
    state: str | None = None
    reruns: int = 0  # plain re-runs since: same error, nothing changed in between


@dataclass
class Unit:
    id: str
    title: str
    status: Status = "todo"
    verify: str | None = None
    files: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    evidence: Evidence | None = None
    last_failure: LastFailure | None = None
    line: int | None = field(default=None, compare=False, repr=False)


@dataclass
class Attempt:
    """One time a side effect was tried: by a person (``action record``) or seen by a tool hook."""

    status: ActionStatus
    at: str | None = None
    session: str | None = None  # the agent session that ran it
    command: str | None = None  # the command line, redacted
    call: str | None = None  # the agent's tool-call id: the after-event finds its attempt by it
    result: str | None = None  # what the after-event said (``exit 1``), redacted, one line


@dataclass
class Action:
    """A ledger entry: a key and every attempt, oldest first. ``status`` and ``at`` are the
    newest attempt's (a file written before attempts existed has only those)."""

    key: str
    description: str
    status: ActionStatus = "success"
    at: str | None = None
    attempts: list[Attempt] = field(default_factory=list)

    def history(self) -> list[Attempt]:
        """Every attempt; an entry from before attempts were kept counts as its one attempt."""
        return self.attempts or [Attempt(self.status, self.at)]

    def last_success(self) -> Attempt | None:
        return next((a for a in reversed(self.history()) if a.status == "success"), None)

    def add(self, attempt: Attempt) -> None:
        """Append ``attempt``; ``status`` and ``at`` follow it."""
        if not self.attempts:
            self.attempts.append(Attempt(self.status, self.at))  # keep the old single record
        self.attempts.append(attempt)
        self.refresh()

    def refresh(self) -> None:
        """``status`` and ``at`` from the newest attempt (after one was changed in place)."""
        if self.attempts:
            self.status, self.at = self.attempts[-1].status, self.attempts[-1].at


def record_attempt(progress: Progress, key: str, attempt: Attempt, description: str = "") -> Action:
    """Append ``attempt`` to the entry ``key`` (created when new); the entry."""
    action = next((a for a in progress.actions if a.key == key), None)
    if action is None:
        action = Action(key=key, description=description, status=attempt.status, at=attempt.at)
        progress.actions.append(action)
        action.attempts.append(attempt)
    else:
        action.description = description or action.description
        action.add(attempt)
    return action


@dataclass
class Progress:
    goal: str
    units: list[Unit] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    notes: str | None = None
    schema_version: int = SCHEMA_VERSION

    def unit(self, unit_id: str) -> Unit | None:
        for unit in self.units:
            if unit.id == unit_id:
                return unit
        return None

    def require_unit(self, unit_id: str) -> Unit:
        unit = self.unit(unit_id)
        if unit is None:
            known = ", ".join(u.id for u in self.units[:8]) or "none"
            raise ProgressFileError(
                f"no unit with id '{unit_id}'",
                hint=f"known ids: {known}{' …' if len(self.units) > 8 else ''} "
                "(see `resume-kit status`)",
            )
        return unit

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for unit in self.units:
            counts[unit.status] += 1
        return counts


def slugify(text: str) -> str:
    """Lower-case ``text`` with every character outside ``[a-z0-9._-]`` turned into ``-``."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    return re.sub(r"-{2,}", "-", slug).strip("-._")


def now_iso() -> str:
    return now_utc()


def is_ready(unit: Unit, done: Collection[str]) -> bool:
    """The one readiness rule (SPEC 5): a unit in progress or to do whose ``after`` units are
    all in ``done``. A unit in progress is not ready while a dependency is not done."""
    return unit.status in ("in_progress", "todo") and all(dep in done for dep in unit.after)


def ready_units(progress: Progress, done: Collection[str] | None = None) -> list[Unit]:
    """Every ready unit in the order verify-next takes them: in progress first, then to do,
    each in file order. ``done`` defaults to the ids of the units marked done."""
    if done is None:
        done = {u.id for u in progress.units if u.status == "done"}
    return [
        unit
        for status in ("in_progress", "todo")
        for unit in progress.units
        if unit.status == status and is_ready(unit, done)
    ]


def pick_next(progress: Progress, unit_id: str | None = None) -> Unit | None:
    """The unit to work on: ``unit_id``; else the first ready unit (:func:`ready_units`)."""
    if unit_id is not None:
        return progress.require_unit(unit_id)
    ready = ready_units(progress)
    return ready[0] if ready else None


def why_next(progress: Progress, unit: Unit) -> str:
    """A short reason why ``pick_next`` chose ``unit``."""
    if unit.status == "in_progress":
        if unit.last_failure:
            return (
                f"it is in progress and its last verification failed ({unit.last_failure.repeats}x)"
            )
        return "it is in progress"
    if unit.status == "done":
        return "it was asked for explicitly"
    # a unit a batch tried keeps its status (to do) and its failure: say so
    failed = (
        f"; its last verification failed ({unit.last_failure.repeats}x)"
        if unit.last_failure
        else ""
    )
    if unit.after:
        return (
            f"it is the first unit still to do whose dependencies ({', '.join(unit.after)}) "
            f"are done{failed}"
        )
    return f"it is the first unit still to do{failed}"
