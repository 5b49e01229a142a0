"""The progress model (SPEC 2): load, validate, migrate, pick the next unit, save.

The file is parsed with ruamel.yaml's round-trip loader so that a person's comments, key order
and quoting survive: the typed model is derived from the parsed document, and saving merges the
model back into that document, touching only the values that changed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from resume_kit.errors import ProgressFileError
from resume_kit.paths import Layout
from resume_kit.store import FileLock, atomic_write, keep_history

SCHEMA_VERSION = 1
STATUSES = ("todo", "in_progress", "done", "blocked")
ACTION_STATUSES = ("success", "unknown", "failed")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
ID_PATTERN_TEXT = "[a-z0-9][a-z0-9._-]*"
MAX_FILE_BYTES = 16 * 1024 * 1024

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
FAILURE_KEYS = ("at", "exit_code", "signature", "repeats", "excerpt")
ACTION_KEYS = ("key", "description", "status", "at")


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
    repeats: int = 1
    excerpt: str = ""


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
class Action:
    key: str
    description: str
    status: Literal["success", "unknown", "failed"] = "success"
    at: str | None = None


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
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def pick_next(progress: Progress, unit_id: str | None = None) -> Unit | None:
    """The unit to work on: ``unit_id``; else the first in progress; else the first ready todo."""
    if unit_id is not None:
        return progress.require_unit(unit_id)
    for unit in progress.units:
        if unit.status == "in_progress":
            return unit
    done = {u.id for u in progress.units if u.status == "done"}
    for unit in progress.units:
        if unit.status == "todo" and all(dep in done for dep in unit.after):
            return unit
    return None


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
    if unit.after:
        return f"it is the first unit still to do whose dependencies ({', '.join(unit.after)}) are done"
    return "it is the first unit still to do"


# --------------------------------------------------------------------------- validation


class _Problems:
    def __init__(self, name: str):
        self.name = name
        self.items: list[str] = []

    def add(self, line: int | None, message: str) -> None:
        where = f"{self.name}:{line}" if line else self.name
        self.items.append(f"{where}: {message}")


def _line_of(node: Any, key: Any = None) -> int | None:
    """1-based line of ``node`` (or of ``key`` inside it) when ruamel recorded it."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        if key is not None:
            return int(lc.key(key)[0]) + 1
        return int(lc.line) + 1
    except (KeyError, TypeError, AttributeError, IndexError):
        return None


def _plain(value: Any) -> Any:
    """Datetimes (unquoted timestamps in YAML) read back as ISO strings."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return value.strftime("%Y-%m-%dT%H:%M:%S") + "Z"
        return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "empty"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _shown(value: Any) -> str:
    """A value for a message: short scalars as they are, containers by kind only (a YAML alias
    bomb is a few lines of text but billions of items once printed)."""
    if isinstance(value, str | int | float | bool) or value is None:
        # control characters escaped: a key with a newline must not break the one-line error
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(value))
        return text if len(text) <= 60 else text[:59] + "…"
    return _type_name(value)


def _scalar(value: Any, what: str, line: int | None, problems: _Problems) -> str:
    """A string field's value as text; a mapping or list is a problem, never ``str()``-ed."""
    value = _plain(value)
    if isinstance(value, dict | list | tuple | set):
        problems.add(line, f"{what} must be a string, not {_type_name(value)}")
        return ""
    return str(value)


def _str_list(value: Any, what: str, line: int | None, problems: _Problems) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.add(line, f"{what} must be a list of strings, not {_type_name(value)}")
        return []
    return [str(v) for v in value]


def _evidence(raw: Any, label: str, line: int | None, problems: _Problems) -> Evidence | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.add(line, f"{label}: evidence must be a mapping")
        return None
    for key in raw:
        if key not in EVIDENCE_KEYS:
            problems.add(_line_of(raw, key), f"{label}: unknown key '{_shown(key)}' in evidence")

    def text(key: str) -> str:
        return _scalar(raw.get(key, ""), f"{label}: evidence {key}", _line_of(raw, key), problems)

    try:
        return Evidence(
            verified_at=text("verified_at"),
            commit=None if raw.get("commit") is None else text("commit"),
            dirty=bool(raw.get("dirty", False)),
            fingerprint=text("fingerprint"),
            duration_s=float(raw.get("duration_s", 0.0) or 0.0),
            log=None if raw.get("log") is None else text("log"),
        )
    except (TypeError, ValueError):
        problems.add(line, f"{label}: evidence has a value of the wrong type")
        return None


def _failure(raw: Any, label: str, line: int | None, problems: _Problems) -> LastFailure | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.add(line, f"{label}: last_failure must be a mapping")
        return None
    for key in raw:
        if key not in FAILURE_KEYS:
            problems.add(
                _line_of(raw, key), f"{label}: unknown key '{_shown(key)}' in last_failure"
            )

    def text(key: str) -> str:
        return _scalar(
            raw.get(key, "") or "", f"{label}: last_failure {key}", _line_of(raw, key), problems
        )

    try:
        return LastFailure(
            at=text("at"),
            exit_code=int(raw.get("exit_code", 1)),
            signature=text("signature"),
            repeats=int(raw.get("repeats", 1)),
            excerpt=text("excerpt"),
        )
    except (TypeError, ValueError):
        problems.add(line, f"{label}: last_failure has a value of the wrong type")
        return None


def _unit(raw: Any, index: int, problems: _Problems) -> Unit | None:
    line = _line_of(raw)
    if not isinstance(raw, dict):
        problems.add(line, f"units[{index}] must be a mapping with at least an id")
        return None
    uid = raw.get("id")
    label = f"unit '{_shown(uid)}'" if isinstance(uid, str | int) else f"units[{index}]"
    for key in raw:
        if key not in UNIT_KEYS:
            problems.add(
                _line_of(raw, key),
                f"{label}: unknown key '{_shown(key)}' (allowed: {', '.join(UNIT_KEYS)})",
            )
    if not isinstance(uid, str) or not ID_PATTERN.match(uid):
        problems.add(_line_of(raw, "id") or line, f"{label}: id must match {ID_PATTERN_TEXT}")
        return None
    title = raw.get("title", uid)
    if not isinstance(title, str):
        problems.add(_line_of(raw, "title"), f"{label}: title must be a string")
        title = uid
    status = raw.get("status", "todo")
    if not isinstance(status, str) or status not in STATUSES:
        problems.add(
            _line_of(raw, "status"),
            f"{label}: status must be one of {', '.join(STATUSES)}, not '{_shown(status)}'",
        )
        status = "todo"
    verify = raw.get("verify")
    if verify is not None and not isinstance(verify, str):
        if isinstance(verify, bool | int | float):
            problems.add(
                _line_of(raw, "verify"),
                f"{label}: verify is {_type_name(verify)} ({verify!r}), not a command; quote it: "
                f"verify: '{str(verify).lower() if isinstance(verify, bool) else verify}'",
            )
        else:
            problems.add(
                _line_of(raw, "verify"),
                f"{label}: verify is {_type_name(verify)}, not a command (a quoted string)",
            )
        verify = None
    if isinstance(verify, str) and not verify.strip():
        problems.add(_line_of(raw, "verify"), f"{label}: verify is an empty command")
        verify = None
    return Unit(
        id=uid,
        title=title,
        status=cast(Status, status),
        verify=verify,
        files=_str_list(raw.get("files"), f"{label}: files", _line_of(raw, "files"), problems),
        artifacts=_str_list(
            raw.get("artifacts"), f"{label}: artifacts", _line_of(raw, "artifacts"), problems
        ),
        after=_str_list(raw.get("after"), f"{label}: after", _line_of(raw, "after"), problems),
        evidence=_evidence(raw.get("evidence"), label, _line_of(raw, "evidence"), problems),
        last_failure=_failure(
            raw.get("last_failure"), label, _line_of(raw, "last_failure"), problems
        ),
        line=line,
    )


def _action(raw: Any, index: int, problems: _Problems) -> Action | None:
    line = _line_of(raw)
    if not isinstance(raw, dict) or not isinstance(raw.get("key"), str):
        problems.add(line, f"actions[{index}] must be a mapping with a string key")
        return None
    for key in raw:
        if key not in ACTION_KEYS:
            problems.add(
                _line_of(raw, key), f"action '{_shown(raw['key'])}': unknown key '{_shown(key)}'"
            )
    status = raw.get("status", "success")
    if not isinstance(status, str) or status not in ACTION_STATUSES:
        problems.add(
            _line_of(raw, "status"),
            f"action '{_shown(raw['key'])}': status must be one of {', '.join(ACTION_STATUSES)}",
        )
        status = "unknown"
    at = raw.get("at")
    label = f"action '{_shown(raw['key'])}'"
    return Action(
        key=raw["key"],
        description=_scalar(
            raw.get("description", "") or "",
            f"{label}: description",
            _line_of(raw, "description"),
            problems,
        ),
        status=cast(Literal["success", "unknown", "failed"], status),
        at=None if at is None else _scalar(at, f"{label}: at", _line_of(raw, "at"), problems),
    )


def _check_graph(units: list[Unit], problems: _Problems) -> None:
    ids: dict[str, Unit] = {}
    for unit in units:
        if unit.id in ids:
            problems.add(
                unit.line, f"unit '{unit.id}': duplicate id (first on line {ids[unit.id].line})"
            )
        else:
            ids[unit.id] = unit
    for unit in units:
        for dep in unit.after:
            if dep not in ids:
                problems.add(
                    unit.line, f"unit '{unit.id}': after names unknown unit '{_shown(dep)}'"
                )
            elif dep == unit.id:
                problems.add(unit.line, f"unit '{unit.id}': after names the unit itself")
    # Cycle detection (iterative DFS, so 10,000 units never hit the recursion limit).
    state: dict[str, int] = {}
    for start in ids:
        if state.get(start):
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(ids[start].after))]
        state[start] = 1
        path = [start]
        while stack:
            node, deps = stack[-1]
            nxt = next(deps, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            if nxt not in ids or nxt == node:
                continue
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                problems.add(ids[nxt].line, f"dependency cycle: {' -> '.join(cycle)}")
                state[nxt] = 2
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(ids[nxt].after)))


def migrate(raw: Any, name: str) -> tuple[Any, bool]:
    """Bring an older document up to SCHEMA_VERSION in memory. Returns (document, migrated).

    Version 0 is the pre-release layout: ``tasks`` instead of ``units`` and ``pending`` /
    ``completed`` statuses. A ``completed`` task becomes ``done`` without evidence, which
    reconcile then reports as DONE_UNVERIFIED: it was never verified by resume-kit.
    """
    version = raw.get("schema_version")
    if version == 0 and isinstance(version, int) and not isinstance(version, bool):
        if "tasks" in raw and "units" not in raw:
            position = list(raw.keys()).index("tasks")
            tasks = raw.pop("tasks")
            if hasattr(raw, "insert"):  # a round-trip mapping: keep the key where it was
                raw.insert(position, "units", tasks)
            else:
                items = list(raw.items())
                items.insert(position, ("units", tasks))
                raw.clear()
                raw.update(items)
        units = raw.get("units")
        for unit in units if isinstance(units, list) else []:
            if isinstance(unit, dict) and unit.get("status") in ("pending", "completed"):
                unit["status"] = "todo" if unit["status"] == "pending" else "done"
        raw["schema_version"] = SCHEMA_VERSION
        return raw, True
    return raw, False


def validate(raw: Any, name: str = "progress.yaml") -> Progress:
    """Turn a parsed document into a Progress, or raise ProgressFileError naming line and reason."""
    problems = _Problems(name)
    if raw is None:
        raise ProgressFileError(
            f"{name}: the file is empty",
            hint="it needs at least `schema_version: 1` and a `goal:`; "
            "or move it away and run `resume-kit init`",
        )
    if not isinstance(raw, dict):
        raise ProgressFileError(
            f"{name}:1: the top level must be a mapping, not {_type_name(raw)}",
            hint="see SPEC section 2 for the shape of progress.yaml",
        )
    version = raw.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ProgressFileError(
            f"{name}:{_line_of(raw, 'schema_version') or 1}: schema_version must be an integer",
            hint=f"this version of resume-kit writes `schema_version: {SCHEMA_VERSION}`",
        )
    if version > SCHEMA_VERSION:
        raise ProgressFileError(
            f"{name}: schema_version {version} is newer than this resume-kit understands "
            f"({SCHEMA_VERSION})",
            hint="upgrade resume-kit: pip install --upgrade resume-kit",
        )
    if version < 0:
        raise ProgressFileError(f"{name}: schema_version {version} is not a known version")
    raw, _ = migrate(raw, name)
    for key in raw:
        if key not in TOP_KEYS:
            problems.add(
                _line_of(raw, key), f"unknown key '{_shown(key)}' (allowed: {', '.join(TOP_KEYS)})"
            )
    goal = raw.get("goal")
    if not isinstance(goal, str):
        problems.add(_line_of(raw, "goal") or 1, "goal must be a string (one sentence)")
        goal = ""
    units_raw = raw.get("units")
    units: list[Unit] = []
    if units_raw is None:
        units_raw = []
    if not isinstance(units_raw, list):
        problems.add(_line_of(raw, "units"), "units must be a list")
    else:
        for index, item in enumerate(units_raw):
            unit = _unit(item, index, problems)
            if unit is not None:
                units.append(unit)
    actions: list[Action] = []
    actions_raw = raw.get("actions") or []
    if not isinstance(actions_raw, list):
        problems.add(_line_of(raw, "actions"), "actions must be a list")
    else:
        for index, item in enumerate(actions_raw):
            action = _action(item, index, problems)
            if action is not None:
                actions.append(action)
    notes = raw.get("notes")
    if notes is not None and not isinstance(notes, str):
        problems.add(_line_of(raw, "notes"), "notes must be a string")
        notes = None
    _check_graph(units, problems)
    if problems.items:
        more = len(problems.items) - 1
        raise ProgressFileError(
            problems.items[0],
            hint=(f"{more} more problem{'s' if more > 1 else ''} after this one; " if more else "")
            + "fix the file by hand; resume-kit never overwrites a file it cannot read",
        )
    return Progress(
        goal=goal, units=units, actions=actions, notes=notes, schema_version=SCHEMA_VERSION
    )


# --------------------------------------------------------------------------- YAML round trip


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.allow_duplicate_keys = False
    return yaml


def _detect_indent(text: str) -> tuple[int, int]:
    """(sequence indent, dash offset) as the person wrote the units list; SPEC style by default."""
    match = re.search(r"^[A-Za-z_]+:[ \t]*\n(?:[ \t]*#.*\n)*( *)- ", text, re.MULTILINE)
    if match:
        offset = len(match.group(1))
        return offset + 2, offset
    return 4, 2


def parse_text(text: str, name: str = "progress.yaml") -> Any:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        reason = (exc.problem or exc.context or "invalid YAML").strip()
        raise ProgressFileError(
            f"{name}{line}: not valid YAML ({reason})",
            hint="fix the file by hand; resume-kit never overwrites a file it cannot read",
        ) from None
    except (YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise ProgressFileError(
            f"{name}: not valid YAML ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
            hint="fix the file by hand; resume-kit never overwrites a file it cannot read",
        ) from None


def _as_yaml_value(value: Any) -> Any:
    from ruamel.yaml.scalarstring import LiteralScalarString

    if isinstance(value, str) and "\n" in value:
        lines = value.split("\n")
        # A literal block only where it reads back byte for byte; otherwise a quoted string.
        if all(line.isprintable() and line == line.rstrip() for line in lines) and lines[0]:
            return LiteralScalarString(value)
    return value


def to_data(progress: Progress) -> dict[str, Any]:
    """The plain data a Progress writes, in SPEC key order, empty optional keys left out."""

    def unit_data(unit: Unit) -> dict[str, Any]:
        data: dict[str, Any] = {"id": unit.id, "title": unit.title, "status": unit.status}
        if unit.verify is not None:
            data["verify"] = unit.verify
        for key in ("files", "artifacts", "after"):
            if getattr(unit, key):
                data[key] = list(getattr(unit, key))
        if unit.evidence is not None:
            ev = unit.evidence
            data["evidence"] = {
                "verified_at": ev.verified_at,
                "commit": ev.commit,
                "dirty": ev.dirty,
                "fingerprint": ev.fingerprint,
                "duration_s": ev.duration_s,
            }
            if ev.log is not None:
                data["evidence"]["log"] = ev.log
        if unit.last_failure is not None:
            lf = unit.last_failure
            data["last_failure"] = {
                "at": lf.at,
                "exit_code": lf.exit_code,
                "signature": lf.signature,
                "repeats": lf.repeats,
                "excerpt": lf.excerpt,
            }
        return data

    data: dict[str, Any] = {
        "schema_version": progress.schema_version,
        "goal": progress.goal,
        "units": [unit_data(u) for u in progress.units],
    }
    if progress.actions:
        data["actions"] = [
            {k: v for k, v in vars(a).items() if v is not None} for a in progress.actions
        ]
    if progress.notes is not None:
        data["notes"] = progress.notes
    return data


def _same(old: Any, new: Any) -> bool:
    """Whether a parsed value already holds ``new`` (so the node, and its comments, stay)."""
    old = _plain(old)
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool) and old == new
    if isinstance(new, str):
        return isinstance(old, str) and str(old) == new
    if isinstance(new, int | float):
        return isinstance(old, int | float) and old == new
    return bool(old == new)


def merge_into(raw: Any, data: Any) -> Any:
    """Update the round-trip node ``raw`` to hold ``data``, keeping what did not change.

    Mappings are updated key by key (new keys appended, vanished keys removed); lists of
    mappings with ``id``/``key`` are matched by that identity. Anything else is replaced.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(data, dict):
        if not isinstance(raw, CommentedMap):
            fresh = CommentedMap()
            for key, value in data.items():
                fresh[key] = merge_into(None, value)
            return fresh
        for key in [k for k in raw if k not in data]:
            _delete_keeping_comments(raw, key)
        for key, value in data.items():
            if key in raw:
                merged = merge_into(raw[key], value)
                if merged is not raw[key]:
                    raw[key] = merged
            else:
                raw[key] = merge_into(None, value)
        return raw
    if isinstance(data, list):
        if not isinstance(raw, CommentedSeq):
            fresh_seq = CommentedSeq()
            for value in data:
                fresh_seq.append(merge_into(None, value))
            return fresh_seq
        ident = _identity_key(data)
        if ident is not None and all(isinstance(item, dict) for item in raw):
            old_ids = [item.get(ident) for item in raw]
            new_ids = [item[ident] for item in data]
            if new_ids[: len(old_ids)] == old_ids:
                for item, value in zip(raw, data, strict=False):
                    merge_into(item, value)
                for value in data[len(old_ids) :]:
                    raw.append(merge_into(None, value))
                return raw
            by_id = {item.get(ident): item for item in raw}
            rebuilt = CommentedSeq()
            for value in data:
                rebuilt.append(merge_into(by_id.get(value[ident]), value))
            return rebuilt
        if len(raw) == len(data) and all(_same(a, b) for a, b in zip(raw, data, strict=True)):
            return raw
        fresh_seq = CommentedSeq()
        if raw.fa.flow_style():
            fresh_seq.fa.set_flow_style()
        for value in data:
            fresh_seq.append(merge_into(None, value))
        return fresh_seq
    if raw is not None and _same(raw, data):
        return raw
    return _as_yaml_value(data)


def _take_trailing_comment(node: Any) -> Any:
    """Detach the comment that follows the last value inside ``node`` (None when there is none).

    ruamel.yaml stores a comment line that precedes the next key or list item on the last
    value before it, so deleting that value would delete a person's comment with it.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap) and node:
        last = list(node.keys())[-1]
        slot = node.ca.items.get(last)
        if slot and len(slot) > 2 and slot[2] is not None:
            token, slot[2] = slot[2], None
            return token
        return _take_trailing_comment(node[last])
    if isinstance(node, CommentedSeq) and node:
        slot = node.ca.items.get(len(node) - 1)
        if slot and slot[0] is not None:
            token, slot[0] = slot[0], None
            return token
        return _take_trailing_comment(node[-1])
    return None


def _attach_trailing_comment(node: Any, key: Any, token: Any) -> None:
    """Put ``token`` after the value of ``node[key]`` (descending into nested blocks)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    value = node[key]
    if isinstance(value, CommentedMap) and value:
        _attach_trailing_comment(value, list(value.keys())[-1], token)
    elif isinstance(value, CommentedSeq) and value:
        if isinstance(value[-1], CommentedMap | CommentedSeq) and value[-1]:
            inner = value[-1]
            _attach_trailing_comment(
                inner,
                list(inner.keys())[-1] if isinstance(inner, CommentedMap) else len(inner) - 1,
                token,
            )
        elif isinstance(node, CommentedSeq):
            node.ca.items.setdefault(key, [None, None])[0] = token
        else:
            value.ca.items.setdefault(len(value) - 1, [None, None])[0] = token
    elif isinstance(node, CommentedMap):
        slot = node.ca.items.setdefault(key, [None, None, None, None])
        if slot[2] is None:
            slot[2] = token
    else:
        slot = node.ca.items.setdefault(key, [None, None])
        if slot[0] is None:
            slot[0] = token


def _delete_keeping_comments(mapping: Any, key: Any) -> None:
    keys = list(mapping.keys())
    position = keys.index(key)
    token = None
    slot = mapping.ca.items.get(key)
    if slot and len(slot) > 2 and slot[2] is not None:
        token = slot[2]
    else:
        token = _take_trailing_comment(mapping[key])
    del mapping[key]
    if token is not None and position > 0:
        _attach_trailing_comment(mapping, keys[position - 1], token)


def _identity_key(items: list[Any]) -> str | None:
    for key in ("id", "key"):
        if items and all(isinstance(i, dict) and key in i for i in items):
            return key
    return None


def dump(raw: Any, indent: tuple[int, int] = (4, 2)) -> str:
    yaml = _yaml()
    yaml.indent(mapping=2, sequence=indent[0], offset=indent[1])
    buffer = io.StringIO()
    yaml.dump(raw, buffer)
    return buffer.getvalue()


def new_document(progress: Progress) -> Any:
    return merge_into(None, to_data(progress))


# --------------------------------------------------------------------------- file I/O


@dataclass
class ProgressDoc:
    """A loaded progress file: the typed model, its text, and the data it was loaded as."""

    path: Path
    progress: Progress
    text: str
    data: dict[str, Any] = field(default_factory=dict)  # to_data() of the model as loaded
    _raw: Any = field(default=None, repr=False)

    @property
    def raw(self) -> Any:
        """The ruamel.yaml round-trip document (parsed on first use: it is slow)."""
        if self._raw is None:
            self._raw, _ = migrate(parse_text(self.text, self.path.name), self.path.name)
        return self._raw

    def render(self) -> str:
        """The full round trip: merge the model into the parsed document and dump it."""
        merged = merge_into(self.raw, to_data(self.progress))
        self._raw = merged
        return dump(merged, _detect_indent(self.text))

    def render_fast(self) -> str:
        """Like :meth:`render`, re-rendering only the changed units when that is safe."""
        from resume_kit.yamlpatch import patch_units

        new = to_data(self.progress)
        old = self.data
        if old and all(old.get(k) == new.get(k) for k in TOP_KEYS if k != "units"):
            patched = patch_units(self.text, old.get("units", []), new["units"])
            if patched is not None:
                return patched
        text = self.render()
        validate(
            parse_text(text, self.path.name), self.path.name
        )  # never write what we cannot read
        return text


def read_text(path: Path) -> str:
    import errno

    from resume_kit.store import FileTooLarge, NotARegularFile, read_regular

    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise ProgressFileError(
            f"no progress file at {path}",
            hint='run `resume-kit init --goal "..."` first',
        ) from None
    except FileTooLarge as exc:
        raise ProgressFileError(
            f"{path.name} is {exc.size // (1024 * 1024)} MiB, larger than the "
            f"{MAX_FILE_BYTES // (1024 * 1024)} MiB a progress file may be",
            hint="keep progress.yaml small: long logs belong in .resume-kit/runs/",
        ) from None
    except NotARegularFile as exc:
        if exc.kind == "a directory":
            raise ProgressFileError(f"{path} is a directory, not a file") from None
        raise ProgressFileError(
            f"{path} is not a regular file ({exc.kind})",
            hint="progress.yaml must be a plain text file; move this one away",
        ) from None
    except PermissionError:
        raise ProgressFileError(
            f"cannot read {path}: permission denied", hint="check the file's permissions"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise ProgressFileError(
                f"{path.parent} is not a folder, so there is no progress file in it",
                hint=f"move {path.parent.name} away and run `resume-kit init`",
            ) from None
        raise ProgressFileError(
            f"cannot read {path}: {exc.strerror or exc}",
            hint="progress.yaml must be a plain text file (a symbolic link loop?)",
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ProgressFileError(
            f"{path.name}:{line}: not UTF-8 text",
            hint="save progress.yaml as UTF-8; resume-kit never overwrites a file it cannot read",
        ) from None


# The parsed-model cache: reading a large progress file through a YAML parser costs far more
# than the brief's budget, so the validated data is kept in .resume-kit/cache/, keyed by the
# SHA-256 of the exact text (any edit, by anyone, misses the cache).
_CACHE_FORMAT = 1


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _cache_file(layout: Layout) -> Path:
    return layout.cache / "progress.json"


def _read_cache(layout: Layout, digest: str) -> dict[str, Any] | None:
    import json

    try:
        cached = json.loads(_cache_file(layout).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        isinstance(cached, dict)
        and cached.get("format") == _CACHE_FORMAT
        and cached.get("digest") == digest
        and isinstance(cached.get("data"), dict)
    ):
        return cast(dict[str, Any], cached["data"])
    return None


def _write_cache(layout: Layout, digest: str, data: dict[str, Any], text: str) -> None:
    import json

    payload = json.dumps(
        {"format": _CACHE_FORMAT, "digest": digest, "data": data}, ensure_ascii=False
    )
    with contextlib.suppress(OSError):
        atomic_write(_cache_file(layout), payload)
    _write_unit_in_progress(layout, data, text)


IN_PROGRESS_CACHE = ".resume-kit/cache/in-progress"  # hookentry.IN_PROGRESS_CACHE


def _write_unit_in_progress(layout: Layout, data: dict[str, Any], text: str) -> None:
    """Tell the git hook which unit is in progress in exactly this text (see hookentry)."""
    from resume_kit.hookentry import write_unit_in_progress

    first = next((u["id"] for u in data.get("units", []) if u.get("status") == "in_progress"), None)
    write_unit_in_progress(str(layout.root), text.encode("utf-8"), first)


def _parse_fast(text: str) -> Any:
    """Plain data through libyaml's safe loader, or None when it cannot say (then ruamel does)."""
    from resume_kit.yamlpatch import safe_load

    try:
        return safe_load(text)
    except RecursionError:
        return _TOO_DEEP
    except Exception as exc:
        # libyaml stops at 1000 levels; ruamel would then recurse for seconds before failing
        return _TOO_DEEP if "maximum nesting depth" in str(exc) else None


MAX_DEPTH = 64  # a progress file nests about five levels deep
_TOO_DEEP = object()  # what _parse_fast returns for nesting even libyaml's constructor gave up on


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether lists and mappings nest more than ``limit`` levels (each shared node visited
    once, so an alias bomb costs its size in text, not its expanded size)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict | list) or id(node) in seen:
            continue
        if depth > limit:
            return True
        seen.add(id(node))
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_and_validate(text: str, name: str = "progress.yaml") -> Progress:
    """Validate ``text``: libyaml when it agrees the file is valid; ruamel for exact errors."""
    fast = _parse_fast(text)
    if fast is not None:
        try:
            if fast is not _TOO_DEEP:
                return validate(fast, name)
        except ProgressFileError:
            pass
        if fast is _TOO_DEEP or _deeper_than(fast, MAX_DEPTH):  # ruamel takes seconds to fail
            raise ProgressFileError(
                f"{name}: nested more than {MAX_DEPTH} levels deep: not a progress file",
                hint="fix the file by hand; resume-kit never overwrites a file it cannot read",
            )
    return validate(parse_text(text, name), name)


def _strings(value: Any) -> list[str] | None:
    if type(value) is not list:
        return None
    for item in value:  # a loop, not all(...): this runs 30,000 times for 10,000 units
        if type(item) is not str:
            return None
    return list(value)


def _evidence_from_cache(raw: Any) -> Evidence | None:
    if type(raw) is not dict or not raw.keys() <= _EVIDENCE_KEY_SET:
        return None
    verified_at, commit, dirty = raw.get("verified_at"), raw.get("commit"), raw.get("dirty")
    fingerprint, duration, log = raw.get("fingerprint"), raw.get("duration_s"), raw.get("log")
    if (
        type(verified_at) is not str
        or (commit is not None and type(commit) is not str)
        or type(dirty) is not bool
        or type(fingerprint) is not str
        or type(duration) not in (int, float)
        or (log is not None and type(log) is not str)
    ):
        return None
    return Evidence(verified_at, commit, dirty, fingerprint, float(cast(float, duration)), log)


def _failure_from_cache(raw: Any) -> LastFailure | None:
    if type(raw) is not dict or raw.keys() != _FAILURE_KEY_SET:
        return None
    at, code, signature = raw["at"], raw["exit_code"], raw["signature"]
    repeats, excerpt = raw["repeats"], raw["excerpt"]
    if (
        type(at) is not str
        or type(code) is not int
        or type(signature) is not str
        or type(repeats) is not int
        or type(excerpt) is not str
    ):
        return None
    return LastFailure(at, code, signature, repeats, excerpt)


def _unit_from_cache(raw: Any) -> Unit | None:
    if type(raw) is not dict or not raw.keys() <= _UNIT_KEY_SET:
        return None
    uid, title, status = raw.get("id"), raw.get("title"), raw.get("status")
    if (
        type(uid) is not str
        or not ID_PATTERN.match(uid)
        or type(title) is not str
        or status not in STATUSES
    ):
        return None
    verify = raw.get("verify")
    if verify is not None and (type(verify) is not str or not verify.strip()):
        return None
    lists = [_strings(raw.get(key, [])) for key in ("files", "artifacts", "after")]
    files, artifacts, after = lists
    if files is None or artifacts is None or after is None:
        return None
    evidence = failure = None
    if "evidence" in raw:
        evidence = _evidence_from_cache(raw["evidence"])
        if evidence is None:
            return None
    if "last_failure" in raw:
        failure = _failure_from_cache(raw["last_failure"])
        if failure is None:
            return None
    return Unit(
        uid, title, cast(Status, status), verify, files, artifacts, after, evidence, failure
    )


def _action_from_cache(raw: Any) -> Action | None:
    if type(raw) is not dict or not raw.keys() <= _ACTION_KEY_SET:
        return None
    key, description = raw.get("key"), raw.get("description")
    status, at = raw.get("status"), raw.get("at")
    if (
        type(key) is not str
        or type(description) is not str
        or status not in ACTION_STATUSES
        or (at is not None and type(at) is not str)
    ):
        return None
    return Action(key, description, cast(Literal["success", "unknown", "failed"], status), at)


_UNIT_KEY_SET = frozenset(UNIT_KEYS)
_EVIDENCE_KEY_SET = frozenset(EVIDENCE_KEYS)
_FAILURE_KEY_SET = frozenset(FAILURE_KEYS)
_ACTION_KEY_SET = frozenset(ACTION_KEYS)


def model_from_cache(data: Any) -> Progress | None:
    """The model of cached data (what :func:`to_data` wrote for a validated model), built
    without :func:`validate`'s per-field bookkeeping: the same Progress ``validate`` returns,
    or None whenever the data is not in exactly that shape (then ``validate`` decides)."""
    if type(data) is not dict or not data.keys() <= set(TOP_KEYS):
        return None
    version, goal, notes = data.get("schema_version"), data.get("goal"), data.get("notes")
    units_raw, actions_raw = data.get("units"), data.get("actions", [])
    if (
        type(version) is not int
        or version != SCHEMA_VERSION
        or type(goal) is not str
        or (notes is not None and type(notes) is not str)
        or type(units_raw) is not list
        or type(actions_raw) is not list
    ):
        return None
    units = [_unit_from_cache(raw) for raw in units_raw]
    actions = [_action_from_cache(raw) for raw in actions_raw]
    if None in units or None in actions:
        return None
    problems = _Problems("cache")
    checked = cast(list[Unit], units)
    _check_graph(checked, problems)
    if problems.items:
        return None
    return Progress(
        goal=goal,
        units=checked,
        actions=cast(list[Action], actions),
        notes=notes,
        schema_version=SCHEMA_VERSION,
    )


# The text and data this process last read or wrote, per file: a command that loads the same
# unchanged file again (verify-next reads it before and after the run) skips hashing it and
# reading the cache. Only exact text equality counts.
_LOADED: dict[str, tuple[str, dict[str, Any]]] = {}


def load(layout: Layout) -> ProgressDoc:
    path = layout.progress
    text = read_text(path)
    if "\x00" in text:
        raise ProgressFileError(f"{path.name}: the file holds binary data (NUL bytes)")
    remembered = _LOADED.get(str(path))
    if remembered is not None and remembered[0] == text:
        cached: dict[str, Any] | None = remembered[1]  # this process read or wrote these bytes
    else:
        cached = _read_cache(layout, _digest(text))
    model: Progress | None = None
    if cached is not None:
        model = model_from_cache(cached)
        if model is None:
            with contextlib.suppress(ProgressFileError):
                model = validate(cached, path.name)
        if model is not None and not (layout.root / IN_PROGRESS_CACHE).exists():
            _write_unit_in_progress(layout, cached, text)
    if model is None:
        model = parse_and_validate(text, path.name)
        cached = to_data(model)
        if layout.state_dir.is_dir():
            _write_cache(layout, _digest(text), cached, text)
    data = cached or to_data(model)
    _LOADED[str(path)] = (text, data)
    return ProgressDoc(path=path, progress=model, text=text, data=data)


def save(layout: Layout, doc: ProgressDoc) -> bool:
    """Write ``doc`` if its model changed: previous version to history/, then an atomic replace.

    The caller must hold the progress lock (see :func:`transaction`).
    """
    new_data = to_data(doc.progress)
    if new_data == doc.data:
        return False
    text = doc.render_fast()
    keep_history(doc.path, layout.history)
    atomic_write(doc.path, text)
    doc.text, doc.data, doc._raw = text, new_data, None
    _write_cache(layout, _digest(text), new_data, text)
    _LOADED[str(doc.path)] = (text, new_data)
    return True


@contextlib.contextmanager
def transaction(layout: Layout) -> Iterator[ProgressDoc]:
    """Load under the lock, let the caller change ``doc.progress``, save if it changed."""
    with FileLock(layout.progress):
        doc = load(layout)
        yield doc
        save(layout, doc)


def create(layout: Layout, progress: Progress, header: str = "") -> None:
    """Write a new progress file; refuse when one exists (checked again under the lock)."""
    text = header + dump(new_document(progress))
    validate(parse_text(text, layout.progress.name), layout.progress.name)
    with FileLock(layout.progress):
        if layout.progress.exists():
            raise ProgressFileError(
                f"{layout.rel(layout.progress)} already exists",
                hint="init never overwrites; add units with `resume-kit add`, or move the file away",
            )
        atomic_write(layout.progress, text)
