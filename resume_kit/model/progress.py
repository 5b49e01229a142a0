"""The progress model (SPEC 2): the typed units and actions, and picking the next unit.

Validation and migration live in :mod:`resume_kit.progress_file.validate`, the YAML round trip in
:mod:`resume_kit.progress_file.roundtrip`, and loading and saving the file in :mod:`resume_kit.progress_file.io`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Collection, Iterator

from resume_kit.core.light_dataclass import dataclass, field
from resume_kit.core.timeutil import now_utc, parse_utc
from resume_kit.core.typing_light import Literal
from resume_kit.infra.errors import ProgressFileError

SCHEMA_VERSION = 2
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
    "parallel",
    "side_effects",
    "group",
    "notes",
    "blocked_reason",
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
    # schema 2: written only when set (parallel and side_effects only when true)
    parallel: bool = False  # safe to run alongside other units
    group: str | None = None  # the heading or story the unit belongs to
    notes: str | None = None  # what someone was in the middle of
    blocked_reason: str | None = None
    # its verify command has effects outside the work tree: a drill never runs it
    side_effects: bool = False
    line: int | None = field(default=None, compare=False, repr=False)


# A unit built when read (verify-next on a plan of 10,000 units reads the statuses and links of
# all of them and one unit in full): it holds its id, status and ``after`` (and no line) and,
# under this key, its position and the function that builds it from that, until another
# field is read.
_PENDING = "_pending"
_SET_FIRST = ("id", "status", "after", "line")


class _BuiltWhenRead:
    """A field of a pending unit: the first read builds the whole unit. A non-data descriptor,
    so a unit's own value (every unit made by ``__init__``, a built one) shadows it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, unit: Unit | None, owner: type | None = None) -> object:
        if unit is None:
            return self
        own = unit.__dict__
        pending = own.get(_PENDING)
        if pending is None:
            raise AttributeError(self.name)
        position, build = pending
        built = build(position)  # raises ProgressFileError when the data is not a valid unit
        for name, value in built.__dict__.items():
            own.setdefault(name, value)  # what was set meanwhile (status) stays
        own.pop(_PENDING, None)  # last: a thread that reads a field meanwhile builds it too
        return own[self.name]


for _spec in getattr(Unit, "__light_fields__"):  # noqa: B009
    if _spec.name not in _SET_FIRST:
        setattr(Unit, _spec.name, _BuiltWhenRead(_spec.name))


def pending_units(
    ids: list[str], statuses: list[str], after: dict[int, list[str]], build: Callable[[int], Unit]
) -> list[Unit]:
    """A unit for each id, status and ``after`` (by position; [] when not there) whose other
    fields ``build(position)`` makes when one of them is first read; the caller has checked
    them as ``build`` checks a unit."""
    new = object.__new__
    units: list[Unit] = []
    links = after.get
    for position, (unit_id, status) in enumerate(zip(ids, statuses, strict=True)):
        unit: Unit = new(Unit)
        unit.__dict__ = {
            "id": unit_id,
            "status": status,
            "after": links(position) or [],
            "line": None,
        }
        unit.__dict__[_PENDING] = (position, build)
        units.append(unit)
    return units


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


# letters NFKD does not take apart into a Latin letter and marks
_LATIN_EXTRA = str.maketrans(
    {"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE", "ł": "l",
     "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "þ": "th", "Þ": "TH", "ı": "i"}
)  # fmt: skip


def transliterate(text: str) -> str:
    """``text`` in ASCII: accents dropped (``über`` → ``uber``, NFKD), a few Latin letters
    spelled out (``ß`` → ``ss``); characters with no Latin form are left out."""
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text.translate(_LATIN_EXTRA))
    return decomposed.encode("ascii", "ignore").decode("ascii")


def slugify(text: str) -> str:
    """``text`` transliterated and lower-cased, every character outside ``[a-z0-9._-]``
    turned into ``-``."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", transliterate(text).lower())
    return re.sub(r"-{2,}", "-", slug).strip("-._")


ID_LENGTH = 48


def id_from_title(title: str) -> str:
    """The one rule for a unit id made from a title (``add``, the importers): its slug, at
    most 48 characters; a title with letters but none of them Latin (``データ処理``) gets a
    short stable id instead, ``u-`` and 6 hex digits of the title's SHA-256."""
    from resume_kit.core.digest import sha256

    words = " ".join(title.split())
    slug = slugify(words)[:ID_LENGTH].strip("-._")
    if slug and (re.search("[a-z]", slug) or not any(c.isalpha() for c in words)):
        return slug
    return "u-" + sha256(words.encode("utf-8", "surrogatepass")).hexdigest()[:6]


def id_from_path(rel_path: str, prefix: str = "") -> str:
    """The one rule for a unit id made from a file (``plan``): the path relative to the
    repository root without its extension, slugified, after ``prefix`` joined with ``-``
    (unless it ends in a separator); a first folder the prefix already names is left out."""
    from pathlib import PurePosixPath

    stem = (
        str(PurePosixPath(rel_path).with_suffix("")) if PurePosixPath(rel_path).suffix else rel_path
    )
    parts = stem.split("/")
    core = prefix.rstrip("-._")
    if core and len(parts) > 1:
        named = {core, re.split(r"[-._]", core)[-1]}
        if slugify(parts[0]) in named:
            parts = parts[1:]
    slug = slugify("-".join(parts))
    if not prefix:
        return slug
    return prefix + slug if prefix[-1] in "-._" else f"{prefix}-{slug}"


def unique_id(base: str, taken: Collection[str]) -> str:
    """``base``, or ``base-2``, ``base-3``… whichever is not in ``taken``."""
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def now_iso() -> str:
    return now_utc()


def is_ready(unit: Unit, done: Collection[str]) -> bool:
    """The one readiness rule (SPEC 5): a unit in progress or to do whose ``after`` units are
    all in ``done``. A unit in progress is not ready while a dependency is not done."""
    return unit.status in ("in_progress", "todo") and all(dep in done for dep in unit.after)


def ready_units(progress: Progress, done: Collection[str] | None = None) -> list[Unit]:
    """Every ready unit in the order verify-next takes them: in progress first, then to do,
    each in file order. ``done`` defaults to the ids of the units marked done."""
    return list(iter_ready(progress, done))


def iter_ready(progress: Progress, done: Collection[str] | None = None) -> Iterator[Unit]:
    """:func:`ready_units` one at a time (the first of 10,000 without listing the rest)."""
    if done is None:
        done = {u.id for u in progress.units if u.status == "done"}
    for status in ("in_progress", "todo"):
        for unit in progress.units:
            if unit.status == status and is_ready(unit, done):
                yield unit


def pick_next(
    progress: Progress, unit_id: str | None = None, skip: Collection[str] = ()
) -> Unit | None:
    """The unit to work on: ``unit_id``; else the first ready unit (:func:`ready_units`) not
    in ``skip`` (the units someone else leases)."""
    if unit_id is not None:
        return progress.require_unit(unit_id)
    return next((unit for unit in iter_ready(progress) if unit.id not in skip), None)


def latest_pass(progress: Progress) -> tuple[dt.datetime, str] | None:
    """When the newest passing verification happened (``evidence.verified_at``), and of which
    unit; None while no unit is verified."""
    best: tuple[dt.datetime, str] | None = None
    for unit in progress.units:
        if unit.status == "done" and unit.evidence is not None:
            when = parse_utc(unit.evidence.verified_at)
            if when is not None and (best is None or when > best[0]):
                best = (when, unit.id)
    return best


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
