"""Validation and migration of a parsed progress document (SPEC 2), and the fast path that
rebuilds the model from the content-hash cache without re-validating field by field."""

from __future__ import annotations

import datetime as dt
import math
import os
from collections.abc import Callable, Iterator

from resume_kit.core.escape import escape_controls
from resume_kit.core.inert import clip
from resume_kit.core.lazy_regex import lazy
from resume_kit.core.timeutil import format_utc
from resume_kit.core.typing_light import Any, Literal, cast
from resume_kit.infra.errors import ProgressFileError
from resume_kit.model.progress import (
    ACTION_KEYS,
    ACTION_STATUSES,
    ATTEMPT_KEYS,
    EVIDENCE_KEYS,
    FAILURE_KEYS,
    ID_PATTERN,
    ID_PATTERN_TEXT,
    SCHEMA_VERSION,
    STATUSES,
    TOP_KEYS,
    UNIT_KEYS,
    Action,
    ActionStatus,
    Attempt,
    Evidence,
    LastFailure,
    Progress,
    Status,
    Unit,
    pending_units,
)

TYPE_CHECKING = False  # not typing's (mypy reads the guard)
if TYPE_CHECKING:
    from resume_kit.progress_file.cache_json import Columns


class _Problems:
    def __init__(self, name: str, strings_as_read: bool = False):
        self.name = name
        self.items: list[str] = []
        # libyaml's data (YAML 1.1): a non-string where a string belongs may be a string that
        # YAML 1.2, which ruamel writes and reads, keeps (``yes``, ``on``, ``1:20``): a problem
        # here, so that ruamel reads the file instead of str() turning ``yes`` into ``True``
        self.strings_as_read = strings_as_read

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


def plain_value(value: Any) -> Any:
    """Datetimes (unquoted timestamps in YAML) read back as ISO strings."""
    if isinstance(value, dt.datetime):
        return format_utc(value)
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
        return clip(escape_controls(str(value)), 60)
    return _type_name(value)


MAX_COMMAND_BYTES = 128 * 1024


def command_problem(command: str) -> str | None:
    """What makes ``command`` unusable as a verify command (a NUL byte cannot reach a shell;
    128 KiB and more cannot be passed to one), or None."""
    if "\x00" in command:
        return "contains a NUL byte"
    size = len(command.encode("utf-8", "surrogatepass"))
    if size >= MAX_COMMAND_BYTES:
        return f"is {size} bytes long (the limit is {MAX_COMMAND_BYTES // 1024} KiB)"
    return None


def _scalar(value: Any, what: str, line: int | None, problems: _Problems) -> str:
    """A string field's value as text; a mapping or list is a problem, never ``str()``-ed."""
    value = plain_value(value)
    if isinstance(value, dict | list | tuple | set):
        problems.add(line, f"{what} must be a string, not {_type_name(value)}")
        return ""
    if problems.strings_as_read and not isinstance(value, str):
        problems.add(line, f"{what}: read as {_type_name(value)} by YAML 1.1")
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


def _paths(value: Any, what: str, line: int | None, problems: _Problems) -> list[str]:
    """A unit's ``files`` or ``artifacts``: strings that stay inside the work tree."""
    from resume_kit.infra.safefs import escapes

    paths = _str_list(value, what, line, problems)
    for path in paths:
        reason = escapes(path)
        if reason is not None:
            problems.add(
                line, f"{what}: '{_shown(path)}' {reason}; paths must stay inside the work tree"
            )
    return paths


def _nested_mapping(
    raw: Any, name: str, allowed: tuple[str, ...], label: str, line: int | None, problems: _Problems
) -> bool:
    """Whether ``raw`` is a mapping to read ``name`` from; unknown keys are reported."""
    if raw is None:
        return False
    if not isinstance(raw, dict):
        problems.add(line, f"{label}: {name} must be a mapping")
        return False
    for key in raw:
        if key not in allowed:
            problems.add(_line_of(raw, key), f"{label}: unknown key '{_shown(key)}' in {name}")
    return True


def _evidence(raw: Any, label: str, line: int | None, problems: _Problems) -> Evidence | None:
    if not _nested_mapping(raw, "evidence", EVIDENCE_KEYS, label, line, problems):
        return None

    def text(key: str) -> str:
        return _scalar(raw.get(key, ""), f"{label}: evidence {key}", _line_of(raw, key), problems)

    try:
        evidence = Evidence(
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
    if not math.isfinite(evidence.duration_s):  # NaN is not JSON: --json output would break
        problems.add(
            _line_of(raw, "duration_s") or line,
            f"{label}: evidence duration_s must be a finite number of seconds",
        )
        return None
    return evidence


def _count(value: Any) -> int:
    """A count that is not negative (a bool or text is the wrong type)."""
    if type(value) is not int or value < 0:
        raise ValueError(value)
    return value


def _failure(raw: Any, label: str, line: int | None, problems: _Problems) -> LastFailure | None:
    if not _nested_mapping(raw, "last_failure", FAILURE_KEYS, label, line, problems):
        return None

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
            state=text("state") or None,
            reruns=_count(raw.get("reruns", 0)),
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
    if isinstance(verify, str) and (problem := command_problem(verify)):
        problems.add(_line_of(raw, "verify"), f"{label}: verify {problem}")
        verify = None
    return Unit(
        id=uid,
        title=title,
        status=cast(Status, status),
        verify=verify,
        files=_paths(raw.get("files"), f"{label}: files", _line_of(raw, "files"), problems),
        artifacts=_paths(
            raw.get("artifacts"), f"{label}: artifacts", _line_of(raw, "artifacts"), problems
        ),
        after=_str_list(raw.get("after"), f"{label}: after", _line_of(raw, "after"), problems),
        evidence=_evidence(raw.get("evidence"), label, _line_of(raw, "evidence"), problems),
        last_failure=_failure(
            raw.get("last_failure"), label, _line_of(raw, "last_failure"), problems
        ),
        parallel=_flag(raw, "parallel", label, problems),
        group=_text_field(raw, "group", label, problems),
        notes=_text_field(raw, "notes", label, problems),
        blocked_reason=_text_field(raw, "blocked_reason", label, problems),
        side_effects=_flag(raw, "side_effects", label, problems),
        line=line,
    )


def _flag(raw: Any, key: str, label: str, problems: _Problems) -> bool:
    """An optional boolean unit field (``parallel``, ``side_effects``); absent or empty is
    false; anything but a YAML boolean (the string 'yes', a number) is refused."""
    value = raw.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        shown = f"'{_shown(value)}'" if isinstance(value, str) else _type_name(value)
        problems.add(_line_of(raw, key), f"{label}: {key} must be true or false, not {shown}")
        return False
    return value


def _text_field(raw: Any, key: str, label: str, problems: _Problems) -> str | None:
    """An optional free-text unit field (``notes``, ``group``, ``blocked_reason``)."""
    value = plain_value(raw.get(key))
    if value is None:
        return None
    if not isinstance(value, str):
        problems.add(
            _line_of(raw, key), f"{label}: {key} must be a string, not {_type_name(value)}"
        )
        return None
    return value


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
    description = raw.get("description")
    # an empty or false description is "", except libyaml's false (``no``): _scalar refuses it
    if description is None or (not description and not problems.strings_as_read):
        description = ""
    return Action(
        key=raw["key"],
        description=_scalar(
            description,
            f"{label}: description",
            _line_of(raw, "description"),
            problems,
        ),
        status=cast(Literal["success", "unknown", "failed"], status),
        at=None if at is None else _scalar(at, f"{label}: at", _line_of(raw, "at"), problems),
        attempts=_attempts(raw, label, problems),
    )


def _attempts(raw: dict[str, Any], label: str, problems: _Problems) -> list[Attempt]:
    items = raw.get("attempts")
    if items is None:
        return []
    if not isinstance(items, list):
        problems.add(_line_of(raw, "attempts"), f"{label}: attempts must be a list")
        return []
    found: list[Attempt] = []
    for index, item in enumerate(items):
        where = f"{label}: attempts[{index}]"
        if not isinstance(item, dict):
            problems.add(_line_of(raw, "attempts"), f"{where} must be a mapping")
            continue
        for key in item:
            if key not in ATTEMPT_KEYS:
                problems.add(_line_of(item, key), f"{where}: unknown key '{_shown(key)}'")
        status = item.get("status")
        if not isinstance(status, str) or status not in ACTION_STATUSES:
            problems.add(
                _line_of(item, "status"),
                f"{where}: status must be one of {', '.join(ACTION_STATUSES)}",
            )
            status = "unknown"
        fields = {
            name: _scalar(item[name], f"{where}: {name}", _line_of(item, name), problems)
            for name in ATTEMPT_KEYS[1:]
            if item.get(name) is not None
        }
        # str(): ruamel's quoted scalars are str subclasses that carry their quoting; the
        # model holds plain text (a rewritten attempts list takes fresh styles either way)
        found.append(Attempt(cast(ActionStatus, str(status)), **fields))
    return found


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
    for start, first in ids.items():
        if not first.after:
            continue  # a unit that follows none is on no cycle (most units: 10,000 of them)
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


def graph_problems(units: list[Unit]) -> list[str]:
    """What is wrong with the units' ids and ``after`` links (duplicates, unknown ids,
    cycles), as the messages validation gives, without a file name."""
    problems = _Problems("")
    _check_graph(units, problems)
    return [item.split(": ", 1)[1] if item.startswith(":") else item for item in problems.items]


def migrate(raw: Any, name: str) -> tuple[Any, bool]:
    """Bring an older document up to SCHEMA_VERSION in memory. Returns (document, migrated).

    Version 0 is the pre-release layout: ``tasks`` instead of ``units`` and ``pending`` /
    ``completed`` statuses. A ``completed`` task becomes ``done`` without evidence, which
    reconcile then reports as DONE_UNVERIFIED: it was never verified by resume-kit.
    Version 1 is version 2 without the optional unit fields ``parallel``, ``side_effects``,
    ``group``, ``notes`` and ``blocked_reason``: only the number changes.
    """
    version = raw.get("schema_version")
    if version == 1 and isinstance(version, int) and not isinstance(version, bool):
        raw["schema_version"] = SCHEMA_VERSION
        return raw, True
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


def validate(raw: Any, name: str = "progress.yaml", *, strings_as_read: bool = False) -> Progress:
    """Turn a parsed document into a Progress, or raise ProgressFileError naming line and
    reason. ``strings_as_read``: ``raw`` came from libyaml, and a string field holding
    anything but a string is a problem (the caller then has ruamel read the file)."""
    problems = _Problems(name, strings_as_read)
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


# --------------------------------------------------------------------------- the cached model


_POSIX_PATHS = os.sep == "/"


def _stay_inside(files: list[str], artifacts: list[str]) -> bool:
    """What :func:`_paths` demands of every path in ``files`` and ``artifacts``, with the full
    check only when some path might fail it (absolute, or with ``..``; any path where the
    separator is a backslash). The NUL-joined text shows both in one search per unit: ``\0/``
    only where a path starts with ``/`` (or holds a NUL, which then gets the full check) and
    ``..`` only inside one path."""
    if _POSIX_PATHS:
        joined = "\0" + "\0".join(files) + "\0" + "\0".join(artifacts)
        if ".." not in joined and "\0/" not in joined:
            return True
    from resume_kit.infra.safefs import escapes

    for path in (*files, *artifacts):
        if (path[:1] == "/" or ".." in path or not _POSIX_PATHS) and escapes(path) is not None:
            return False
    return True


def _strings(value: Any) -> list[str] | None:
    if type(value) is not list:
        return None
    for item in value:  # a loop, not all(...): this runs 30,000 times for 10,000 units
        if type(item) is not str:
            return None
    return list(value)


_NO_STRINGS: list[str] = []  # read only: what a unit without the key has


def _evidence_from_cache(raw: Any) -> Evidence | None:
    if type(raw) is not dict or not raw.keys() <= _EVIDENCE_KEY_SET:
        return None
    get = raw.get
    verified_at, commit, dirty = get("verified_at"), get("commit"), get("dirty")
    fingerprint, duration, log = get("fingerprint"), get("duration_s"), get("log")
    if (
        type(verified_at) is not str
        or (commit is not None and type(commit) is not str)
        or type(dirty) is not bool
        or type(fingerprint) is not str
        or (type(duration) is not float and type(duration) is not int)
        or not math.isfinite(duration)
        or (log is not None and type(log) is not str)
    ):
        return None
    return Evidence(verified_at, commit, dirty, fingerprint, float(duration), log)


def _failure_from_cache(raw: Any) -> LastFailure | None:
    if type(raw) is not dict or not _FAILURE_BASE_KEYS <= raw.keys() <= _FAILURE_KEY_SET:
        return None
    at, code, signature = raw["at"], raw["exit_code"], raw["signature"]
    repeats, excerpt = raw["repeats"], raw["excerpt"]
    state, reruns = raw.get("state"), raw.get("reruns", 0)
    if (
        type(at) is not str
        or type(code) is not int
        or type(signature) is not str
        or type(repeats) is not int
        or type(excerpt) is not str
        or (state is not None and type(state) is not str)
        or type(reruns) is not int
        or reruns < 0
    ):
        return None
    return LastFailure(at, code, signature, repeats, excerpt, state, reruns)


def _unit_from_cache(raw: Any) -> Unit | None:
    # One of 10,000 on a big plan: each check is written for speed (one bound .get, no
    # helper call where an inline test does); the result equals validate's for the same data.
    if type(raw) is not dict or not raw.keys() <= _UNIT_KEY_SET:
        return None
    get = raw.get
    uid, title, status = get("id"), get("title"), get("status")
    if (
        type(uid) is not str
        or not ID_PATTERN.match(uid)
        or type(title) is not str
        or status not in STATUSES
    ):
        return None
    verify = get("verify")
    if verify is not None and (
        type(verify) is not str or not verify.strip() or command_problem(verify)
    ):
        return None
    files = _strings(get("files", _NO_STRINGS))
    artifacts = _strings(get("artifacts", _NO_STRINGS))
    after = _strings(get("after", _NO_STRINGS))
    if files is None or artifacts is None or after is None:
        return None
    if not _stay_inside(files, artifacts):
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
    parallel, side_effects = get("parallel", False), get("side_effects", False)
    if type(parallel) is not bool or type(side_effects) is not bool:
        return None
    group, notes, blocked_reason = get("group"), get("notes"), get("blocked_reason")
    if (
        (group is not None and type(group) is not str)
        or (notes is not None and type(notes) is not str)
        or (blocked_reason is not None and type(blocked_reason) is not str)
    ):
        return None
    return Unit(
        uid,
        title,
        cast(Status, status),
        verify,
        files,
        artifacts,
        after,
        evidence,
        failure,
        parallel,
        group,
        notes,
        blocked_reason,
        side_effects,
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
    if "attempts" in raw and type(raw["attempts"]) is not list:
        return None
    attempts: list[Attempt] = []
    for item in raw.get("attempts", ()):
        if (
            type(item) is not dict
            or not item.keys() <= _ATTEMPT_KEY_SET
            or item.get("status") not in ACTION_STATUSES
            or any(type(item.get(k, "")) is not str for k in ATTEMPT_KEYS[1:])
        ):
            return None
        attempts.append(Attempt(**item))
    return Action(key, description, cast(ActionStatus, status), at, attempts)


_TOP_KEY_SET = frozenset(TOP_KEYS)
_STATUS_SET = frozenset(STATUSES)
_ID_LINES = lazy(f"(?:{ID_PATTERN_TEXT}\\n)*")  # ids, each ending a line
_UNIT_KEY_SET = frozenset(UNIT_KEYS)
_EVIDENCE_KEY_SET = frozenset(EVIDENCE_KEYS)
_FAILURE_KEY_SET = frozenset(FAILURE_KEYS)
_FAILURE_BASE_KEYS = frozenset(("at", "exit_code", "signature", "repeats", "excerpt"))
_ACTION_KEY_SET = frozenset(ACTION_KEYS)
_ATTEMPT_KEY_SET = frozenset(ATTEMPT_KEYS)


def built_unit(raw: Any, read_first: list[Any]) -> Unit:
    """The unit of cached data ``raw`` whose id, status and ``after`` (``read_first``) the
    cache's index gave: as :func:`_unit_from_cache` builds it, else as :func:`validate` would;
    data that neither takes, or that disagrees with the index, is an error (a cache changed by
    hand: its key, progress.yaml's BLAKE2b, still matched)."""
    unit = _unit_from_cache(raw)
    detail = "its index disagrees with the unit"
    if unit is None:
        problems = _Problems("")
        unit = _unit(raw, 0, problems)
        if problems.items:
            unit, detail = None, problems.items[0].split(": ", 1)[-1]
    if unit is None or [unit.id, unit.status, unit.after] != read_first:
        raise ProgressFileError(f"the progress cache disagrees with progress.yaml ({detail})")
    return unit


def _top_from_cache(data: Any) -> tuple[str, str | None, list[Action]] | None:
    """The goal, notes and actions of cached data (its units aside), or None when the data is
    not in exactly the shape :func:`to_data` writes."""
    if type(data) is not dict or not data.keys() <= _TOP_KEY_SET:
        return None
    version, goal, notes = data.get("schema_version"), data.get("goal"), data.get("notes")
    actions_raw = data.get("actions", [])
    if (
        type(version) is not int
        or version != SCHEMA_VERSION
        or type(goal) is not str
        or (notes is not None and type(notes) is not str)
        or type(actions_raw) is not list
    ):
        return None
    actions = [_action_from_cache(raw) for raw in actions_raw]
    if None in actions:
        return None
    return goal, notes, cast(list[Action], actions)


def _progress_of(top: tuple[str, str | None, list[Action]], units: list[Unit]) -> Progress | None:
    problems = _Problems("cache")
    _check_graph(units, problems)
    if problems.items:
        return None
    goal, notes, actions = top
    return Progress(
        goal=goal, units=units, actions=actions, notes=notes, schema_version=SCHEMA_VERSION
    )


def model_from_cache(data: Any) -> Progress | None:
    """The model of cached data (what :func:`to_data` wrote for a validated model), built
    without :func:`validate`'s per-field bookkeeping: the same Progress ``validate`` returns,
    or None whenever the data is not in exactly that shape (then ``validate`` decides)."""
    top = _top_from_cache(data)
    units_raw = data.get("units") if top is not None else None
    if top is None or type(units_raw) is not list:
        return None
    units = [_unit_from_cache(raw) for raw in units_raw]
    if None in units:
        return None
    return _progress_of(top, cast(list[Unit], units))


def model_from_index(rest: Any, columns: Columns, build: Callable[[int], Unit]) -> Progress | None:
    """The model of cached data given as ``rest`` (the data without its units) and ``columns``
    (the units' ids, statuses and ``after`` lists), each unit built by ``build(position)`` when
    a field other than those is first read (for a caller that reads those of every unit and
    one in full); None as :func:`model_from_cache` for those fields."""
    top = _top_from_cache(rest)
    if top is None or "units" in rest:
        return None
    # checked a column at a time (10,000 units on a big plan): the same checks as
    # _unit_from_cache's, the ids' pattern in one match over them all
    ids, statuses, after = columns.ids, columns.statuses, columns.after
    if not all(type(uid) is str for uid in ids):
        return None
    lines = "\n".join(ids) + "\n"
    if lines.count("\n") != len(ids) or not _ID_LINES.fullmatch(lines):  # no id holds a newline
        return None
    if not all(type(status) is str for status in statuses) or not set(statuses) <= _STATUS_SET:
        return None
    if not all(type(deps) is list for deps in after.values()):
        return None
    if not all(type(dep) is str for deps in after.values() for dep in deps):
        return None
    return _progress_of(top, pending_units(ids, statuses, after, build))
