"""Helpers shared by the transcript readers: the result shape, text clipping, timestamps,
todo lists, naming errors after their tool call, and finding session files."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from resume_kit.core.escape import ANSI_SEQUENCE
from resume_kit.core.inert import squash
from resume_kit.core.timeutil import format_utc, from_epoch, parse_utc
from resume_kit.core.typing_light import Any
from resume_kit.facts.fact_reuse import note_folder
from resume_kit.facts.transcripts import tail
from resume_kit.infra.redact import redact, split_lines

MAX_ERRORS = 5
MAX_ERROR_CHARS = 200
MAX_REQUEST_CHARS = 300
MAX_TODOS = 100
MAX_TODO_CHARS = 500

TODO_STATUSES = ("pending", "in_progress", "completed")
_STATUS_ALIASES = {
    "done": "completed",
    "complete": "completed",
    "finished": "completed",
    "in-progress": "in_progress",
    "inprogress": "in_progress",
    "active": "in_progress",
}
_WHOLE_SECONDS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(.*)$")
_EXIT_ONLY = re.compile(r"^(?:exit code:?|process exited with code) -?\d+\.?$", re.IGNORECASE)
_HINT = re.compile(r"^hint:", re.IGNORECASE)
_CAUSE = re.compile(r"^(?:fatal|error|[A-Za-z_.]*(?:Error|Exception))\b\S*:", re.IGNORECASE)


def empty_result(agent: str, path: Path) -> dict[str, Any]:
    """The ``transcript`` dict of the snapshot (see the agreed schema) with nothing found yet."""
    return {
        "agent": agent,
        "path": str(path),
        "session_id": None,
        "updated_at": None,
        "todos": None,
        "tool_errors": [],
        "last_request": None,
        "tokens": {"total": None, "last_context": None},
        "compactions": {"count": 0, "last_at": None},
        "notes": [],
    }


def clip(text: str, limit: int) -> str:
    """Whitespace squashed, redacted first (a secret is never half cut), then shortened."""
    return squash(redact(text), limit)


def error_line(text: str) -> str | None:
    """The telling line of a tool's error output, ANSI escapes removed and ``hint:`` lines
    left out: the first line, and when it says only ``Exit code N``, the cause (the first
    ``fatal:``/``error:`` line, else the last line, where the cause usually is)."""
    plain = ANSI_SEQUENCE.sub("", text)
    lines = [ln.strip() for ln in split_lines(plain) if ln.strip()]
    lines = [ln for ln in lines if not _HINT.match(ln)] or lines
    if not lines:
        return None
    first = lines[0]
    if _EXIT_ONLY.match(first) and len(lines) > 1:
        rest = lines[1:]
        cause = next((ln for ln in rest if _CAUSE.match(ln)), rest[-1])
        first = f"{first}: {cause}"
    return clip(first, MAX_ERROR_CHARS)


def todo_status(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    status = value.strip().lower()
    status = _STATUS_ALIASES.get(status, status)
    return status if status in TODO_STATUSES else None


def todo_item(content: Any, status: Any) -> dict[str, str] | None:
    if not isinstance(content, str) or not content.strip():
        return None
    normal = todo_status(status)
    if normal is None:  # "cancelled" and the like: neither done nor to do
        return None
    return {"content": clip(content, MAX_TODO_CHARS), "status": normal}


def todo_list(raw: Any, text_key: str) -> list[dict[str, str]] | None:
    """The usable items of an agent's todo list (or plan), each entry's text under
    ``text_key``; None when ``raw`` is not a list at all."""
    if not isinstance(raw, list):
        return None
    items: list[dict[str, str]] = []
    for entry in raw[:MAX_TODOS]:
        if isinstance(entry, dict):
            item = todo_item(entry.get(text_key), entry.get("status"))
            if item is not None:
                items.append(item)
    return items


def name_errors(pending: dict[str, list[dict[str, Any]]], call_id: Any, name: Any) -> None:
    """Give the errors waiting for tool call ``call_id`` its tool's name (records are read
    newest first, so the call is met after its error)."""
    for error in pending.pop(str(call_id), []):
        error["tool"] = clip(name, 80) if isinstance(name, str) else None


def home_dir(env_var: str, default_name: str) -> Path:
    """The agent's folder: ``$env_var`` when set, else ``~/default_name``."""
    configured = os.environ.get(env_var)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / default_name


def files_newest_first(
    folders: Iterable[str | os.PathLike[str]], wanted: Callable[[str], bool]
) -> list[tuple[float, Path]]:
    """(mtime, path) of the regular files in ``folders`` whose name is ``wanted``, newest
    first; folders and entries that cannot be read are skipped."""
    found: list[tuple[float, Path]] = []
    for folder in folders:
        note_folder(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not wanted(entry.name):
                continue
            try:
                if entry.is_file():
                    found.append((entry.stat().st_mtime, Path(entry.path)))
            except OSError:
                continue
    found.sort(key=lambda item: item[0], reverse=True)
    return found


def utc_moment(value: Any) -> dt.datetime | None:
    """The moment an agent's timestamp names (aware, UTC), or None."""
    moment = parse_utc(value)
    if moment is None and isinstance(value, str):
        # Python 3.10 rejects fractions that are not 3 or 6 digits long
        match = _WHOLE_SECONDS.match(value.strip())
        if match:
            moment = parse_utc(match.group(1) + match.group(2))
    return moment


def iso_time(value: Any) -> str | None:
    """An ISO-8601 UTC timestamp (seconds, ``Z``) from what the agent wrote, or None."""
    moment = utc_moment(value)
    return None if moment is None else format_utc(moment)


class SinceCount:
    """Tokens and compactions after a moment (the last verified unit), from records read newest
    first: every record read before the first one stamped at or before ``at`` is after it.
    ``at`` None: since the session started (every record counts)."""

    def __init__(self, at: dt.datetime | None) -> None:
        self.at = at
        self.reached = False  # a record at or before ``at`` was read: the rest are older
        self.tokens = 0
        self.compactions = 0

    def see(self, stamp: Any) -> bool:
        """Take a record's timestamp; whether that record is after ``at``."""
        if self.at is not None and not self.reached:
            moment = utc_moment(stamp)
            if moment is not None and moment <= self.at:
                self.reached = True
        return not self.reached

    def done(self) -> bool:
        """Whether reading further back can change the counts."""
        return self.at is None or self.reached

    def result(self, tokens: int | None, whole_file: bool) -> dict[str, Any]:
        """The ``tokens.since`` entry: ``complete`` False when the byte cap stopped the read
        before ``at``, so the counts are lower bounds."""
        return {
            "at": None if self.at is None else format_utc(self.at),
            "tokens": tokens,
            "compactions": self.compactions,
            "complete": self.reached or whole_file,
        }


def mtime_iso(path: Path) -> str | None:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return None
    return from_epoch(stamp)


def within(cwd: Any, root: Path) -> bool:
    """Whether the agent's recorded ``cwd`` is the work tree root or a folder inside it."""
    if not isinstance(cwd, str) or not cwd:
        return False
    roots = {os.path.normpath(str(root)), os.path.realpath(root)}
    candidates = {os.path.normpath(cwd), os.path.realpath(cwd)}
    for base in roots:
        prefix = base.rstrip(os.sep) + os.sep
        for candidate in candidates:
            if candidate == base or candidate.startswith(prefix):
                return True
    return False


def int_or_zero(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(value, 0)


def coverage_notes(
    notes: list[str], stats: tail.TailStats, *, counts: str, todos: bool, plan: str, file: str
) -> None:
    """What a tail-first read of a session file could not see: ``counts`` cover(s) only the part
    read, no ``plan`` was found in it, lines of the ``file`` were skipped."""
    if not stats.reached_start:
        notes.append(
            f"read the last {tail.mib(stats.bytes_read)} of {tail.mib(stats.size)}: "
            f"{counts} that part only"
        )
        if not todos:
            notes.append(f"no {plan} in the last {tail.mib(stats.bytes_read)} of the {file}")
    if stats.broken_lines:
        notes.append(f"skipped {stats.broken_lines} unreadable line(s) of the {file}")


def read_tail(
    path: Path, reader: tail.RecordReader, notes: list[str], what: str, *, cap: int, min_bytes: int
) -> tail.TailStats | None:
    """Feed ``path``'s records to ``reader`` from the end; None (and a note) if it cannot be read."""
    try:
        return tail.read_backward(path, reader, cap=cap, min_bytes=min_bytes)
    except OSError as exc:
        notes.append(clip(f"could not read the {what} {path}: {exc}", 300))
        return None
