"""Claude Code session files: find this work tree's newest session and read what matters.

Sessions live at ``$CLAUDE_CONFIG_DIR`` (or ``~/.claude``) ``/projects/<escaped cwd>/<id>.jsonl``.
The format is internal to Claude Code and changes between versions, so everything here is
tolerant: unknown record types, broken lines and odd shapes are skipped, never raised.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from resume_kit.core.typing_light import Any
from resume_kit.facts.fact_reuse import note_folder
from resume_kit.facts.transcripts import claude_tasks, tail
from resume_kit.facts.transcripts.records import (
    MAX_ERRORS,
    MAX_REQUEST_CHARS,
    SinceCount,
    clip,
    coverage_notes,
    empty_result,
    error_line,
    files_newest_first,
    home_dir,
    int_or_zero,
    iso_time,
    mtime_iso,
    name_errors,
    read_tail,
    todo_list,
    within,
)

AGENT = "claude-code"
MAX_CANDIDATES = 20  # session files checked for a matching cwd, newest first
# Claude Code shortens long folder names and appends a hash we cannot recompute: match the
# first part and let the records' cwd decide.
MAX_NAME = 200

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_OLD_RULE = re.compile(r"[/.\\:]")
_NOT_A_REQUEST = (
    "<command-",
    "<local-command-",
    "<system-reminder>",
    "[request interrupted",
    "caveat: the messages below",
)
_ERROR_TAGS = re.compile(r"</?tool_use_error>")
# wrappers Claude Code puts around what is not the person's own words
_WRAPPERS = ("<task-notification>", "<local-command-stdout>", "<local-command-stderr>")
_COMMAND_NAME = re.compile(r"<command-name>\s*(/?[^<\s]{1,100})\s*</command-name>")
_BARE_COMMAND = re.compile(r"^/[\w:.-]{1,100}$")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
# a person saying no to a tool call is a decision, not a failure of the tool
_REJECTION = re.compile(
    r"^(?:error: )?(?:the user doesn't want to (?:proceed|take this action)|"
    r"\[request interrupted by user)",
    re.IGNORECASE,
)


def config_dir() -> Path:
    return home_dir("CLAUDE_CONFIG_DIR", ".claude")


def escaped_names(path: Path) -> set[str]:
    """The project folder names Claude Code has used for ``path`` (old and new rules)."""
    text = str(path)
    return {_OLD_RULE.sub("-", text), _NOT_ALNUM.sub("-", text)}


def _folder_matches(name: str, escaped: Iterable[str]) -> bool:
    for form in escaped:
        if name == form or name.startswith(form + "-"):  # the root itself or a subfolder
            return True
        if len(form) > MAX_NAME and name.startswith(form[:MAX_NAME]):
            return True
    return False


def _candidate_files(root: Path) -> list[tuple[float, Path]]:
    projects = config_dir() / "projects"
    escaped = escaped_names(root) | escaped_names(Path(os.path.realpath(root)))
    note_folder(projects)
    try:
        folders = [
            e for e in os.scandir(projects) if e.is_dir() and _folder_matches(e.name, escaped)
        ]
    except OSError:
        return []
    # agent-*.jsonl are sub-agent side chains, not the session itself
    return files_newest_first(
        folders, lambda name: name.endswith(".jsonl") and not name.startswith("agent-")
    )


def _session_cwd_matches(path: Path, root: Path) -> bool:
    """Confirm by the records' ``cwd``: the first one recorded, else the last one."""
    for records in (tail.head_records(path), tail.tail_records(path)):
        for record in records:
            cwd = record.get("cwd")
            if isinstance(cwd, str) and cwd:
                if within(cwd, root):
                    return True
                break
    return False


def sessions(root: Path) -> Iterator[tuple[float, Path]]:
    """(mtime, path) of the Claude Code sessions for the work tree at ``root``, newest first."""
    for mtime, path in _candidate_files(root)[:MAX_CANDIDATES]:
        if _session_cwd_matches(path, root):
            yield mtime, path


def newest_session(root: Path) -> tuple[float, Path] | None:
    """(mtime, path) of the newest Claude Code session for the work tree at ``root``."""
    return next(sessions(root), None)


def looks_like(record: dict[str, Any]) -> bool:
    """Whether a parsed line has the shape of a Claude Code session record."""
    if "payload" in record:
        return False
    return (
        "sessionId" in record
        or "uuid" in record
        or record.get("type") in ("user", "assistant", "system", "summary")
    )


# --------------------------------------------------------------------------- record reading


def _blocks(message: Any) -> list[dict[str, Any]]:
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _todos(raw: Any) -> list[dict[str, str]] | None:
    return todo_list(raw, "content")


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return "\n".join(parts)
    return ""


def _slash_command(text: str) -> str | None:
    """``/name args`` from Claude Code's ``<command-name>`` wrapper of a slash command; None
    for a bare command (``/clear``, ``/compact``): that is no request for work."""
    name = _COMMAND_NAME.search(text)
    args = _COMMAND_ARGS.search(text)
    rest = args.group(1).strip() if args else ""
    if name is None or not rest:
        return None
    command = name.group(1) if name.group(1).startswith("/") else "/" + name.group(1)
    return f"{command} {rest}"


def person_text(text: str) -> str | None:
    """``text`` when it is what the person typed (a slash command with its arguments), None
    for the wrappers Claude Code writes on the person's behalf."""
    text = text.strip()
    if not text:
        return None
    command = _slash_command(text) if text.startswith("<command-") else None
    if command is not None:
        return command
    lowered = text.lower()
    if lowered.startswith(_NOT_A_REQUEST) or lowered.startswith(_WRAPPERS):
        return None
    if _BARE_COMMAND.match(text):
        return None
    return text


def _request_text(record: dict[str, Any]) -> str | None:
    """The person's words when this user record is a real request, else None."""
    if record.get("isMeta") or record.get("isCompactSummary") or record.get("isSidechain"):
        return None
    if record.get("isVisibleInTranscriptOnly"):
        return None
    blocks = _blocks(record.get("message"))
    if not blocks or any(b.get("type") == "tool_result" for b in blocks):
        return None
    texts = [
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return person_text("\n".join(t for t in texts if t.strip()))


def response_key(record: dict[str, Any], message: dict[str, Any]) -> str | None:
    """What identifies one API response: its records (one per content block) repeat it."""
    key = message.get("id") or record.get("requestId") or record.get("uuid")
    return key if isinstance(key, str) else None


def response_tokens(usage: dict[str, Any]) -> tuple[int, int]:
    """(prompt, prompt + output) tokens of one response's ``message.usage``."""
    prompt = (
        int_or_zero(usage.get("input_tokens"))
        + int_or_zero(usage.get("cache_read_input_tokens"))
        + int_or_zero(usage.get("cache_creation_input_tokens"))
    )
    return prompt, prompt + int_or_zero(usage.get("output_tokens"))


class _Reader:
    """Accumulates facts from records seen newest first."""

    def __init__(self, since: dt.datetime | None = None) -> None:
        self.since = SinceCount(since)
        self.after = True  # the record being read is after ``since``
        self.todos: list[dict[str, str]] | None = None
        self.errors: list[dict[str, Any]] = []  # newest first while reading
        self.pending_names: dict[str, list[dict[str, Any]]] = {}
        self.request: str | None = None
        self.session_id: str | None = None
        self.updated_at: str | None = None
        self.total = 0
        self.saw_usage = False
        self.usage_keys: set[str] = set()
        self.last_context: int | None = None
        self.compactions = 0
        self.compaction_at: str | None = None
        self.summary_pending = False
        self.last_prompt: str | None = None
        self.results: dict[str, Any] = {}  # tool_use_id -> recorded result, for calls that worked
        self.failed: set[str] = set()  # tool_use_ids whose result was an error
        self.task_events: list[tuple[str, Any, Any]] = []  # newest first

    def satisfied(self) -> bool:
        return (
            self.todos is not None
            and self.request is not None
            and self.last_context is not None
            and self.since.done()
        )

    def take(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        self.after = self.since.see(record.get("timestamp"))
        if self.updated_at is None:
            self.updated_at = iso_time(record.get("timestamp"))
        if self.session_id is None and isinstance(record.get("sessionId"), str):
            self.session_id = record["sessionId"]
        if kind == "last-prompt" and self.last_prompt is None:
            prompt = record.get("lastPrompt")
            self.last_prompt = person_text(prompt) if isinstance(prompt, str) else None
            return
        if kind == "system" and record.get("subtype") == "compact_boundary":
            self._post_compact(record.get("compactMetadata"))
            if not self.summary_pending:
                self._compacted()
            self._compaction_time(record)
            self.summary_pending = False
            return
        if kind == "user" and record.get("isCompactSummary"):
            self._compacted()  # counted once with the boundary just before it
            self._compaction_time(record)
            self.summary_pending = True
            return
        self.summary_pending = False
        if kind == "assistant":
            self._assistant(record)
        elif kind == "user":
            self._user(record)

    def _compacted(self) -> None:
        self.compactions += 1
        self.since.compactions += self.after

    def _post_compact(self, metadata: Any) -> None:
        """Met before any usage (newest first): the context is what the compaction left."""
        if self.last_context is None and isinstance(metadata, dict):
            post = int_or_zero(metadata.get("postTokens"))
            if post > 0:
                self.last_context = post

    def _compaction_time(self, record: dict[str, Any]) -> None:
        if self.compaction_at is None:
            self.compaction_at = iso_time(record.get("timestamp"))

    def _assistant(self, record: dict[str, Any]) -> None:
        message = record.get("message")
        sidechain = bool(record.get("isSidechain"))
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            self._usage(record, message, message["usage"], sidechain)
        for block in _blocks(message):
            if block.get("type") != "tool_use":
                continue
            name = block.get("name")
            call_id = block.get("id")
            name_errors(self.pending_names, call_id, name)
            if sidechain or not isinstance(call_id, str) or call_id in self.failed:
                continue  # a call whose result was an error changed nothing
            if self.todos is None and name == "TodoWrite":
                tool_input = block.get("input")
                if isinstance(tool_input, dict):
                    self.todos = _todos(tool_input.get("todos"))
            elif name in claude_tasks.TASK_TOOLS and call_id in self.results:
                self.task_events.append((name, block.get("input"), self.results[call_id]))

    def _usage(
        self, record: dict[str, Any], message: dict[str, Any], usage: dict[str, Any], side: bool
    ) -> None:
        # one API response is written as several records (one per content block) that repeat
        # the same usage: count it once
        key = response_key(record, message)
        if key is not None:
            if key in self.usage_keys:
                return
            self.usage_keys.add(key)
        prompt, used = response_tokens(usage)
        self.total += used
        if self.after:
            self.since.tokens += used
        self.saw_usage = True
        if self.last_context is None and not side and prompt > 0:
            self.last_context = prompt

    def _user(self, record: dict[str, Any]) -> None:
        sidechain = bool(record.get("isSidechain"))
        blocks = _blocks(record.get("message"))
        failed = False
        for block in blocks:
            if block.get("type") != "tool_result" or sidechain:
                continue
            call_id = block.get("tool_use_id")
            if block.get("is_error") is True:
                failed = True
                if isinstance(call_id, str):
                    self.failed.add(call_id)
                self._error(record, block)
            elif isinstance(call_id, str) and len(self.results) < 1000:
                self.results[call_id] = record.get("toolUseResult")
        if self.todos is None and not sidechain and not failed:
            self._user_todos(record)
        if self.request is None:
            self.request = _request_text(record)

    def _user_todos(self, record: dict[str, Any]) -> None:
        # An empty list here often means "cleared after everything was completed": keep looking
        # for the TodoWrite call that says what was completed.
        result = record.get("toolUseResult")
        candidates = [record.get("todos")]
        if isinstance(result, dict):
            candidates.insert(0, result.get("newTodos"))
        for raw in candidates:
            todos = _todos(raw)
            if todos:
                self.todos = todos
                return

    def _error(self, record: dict[str, Any], block: dict[str, Any]) -> None:
        if len(self.errors) >= MAX_ERRORS:
            return
        text = _ERROR_TAGS.sub("", _result_text(block.get("content")))
        if _REJECTION.match(text.strip()):
            return
        message = error_line(text) or "(no message)"
        error: dict[str, Any] = {
            "tool": None,
            "message": message,
            "at": iso_time(record.get("timestamp")),
        }
        self.errors.append(error)
        tool_use_id = block.get("tool_use_id")
        if isinstance(tool_use_id, str):
            self.pending_names.setdefault(tool_use_id, []).append(error)


def _task_list(session_id: str, reader: _Reader) -> list[dict[str, str]] | None:
    """The Task tools' list: the session's task files first (the source of truth), then the
    calls in the transcript; None when the session used no Task tools."""
    folder = claude_tasks.tasks_dir(config_dir(), session_id)
    from_files = claude_tasks.read_task_files(folder) if folder is not None else None
    if from_files is not None:
        return from_files
    return claude_tasks.replay(list(reversed(reader.task_events)))


def read_session(
    path: Path,
    *,
    cap: int = tail.DEFAULT_CAP,
    min_bytes: int = tail.DEFAULT_MIN,
    since: dt.datetime | None = None,
) -> dict[str, Any]:
    """The ``transcript`` dict for one Claude Code session file (never raises on odd content);
    ``tokens.since`` counts the usage and compactions recorded after ``since`` (the last
    verified unit; None: the whole session), each API response once."""
    result = empty_result(AGENT, path)
    notes: list[str] = result["notes"]
    reader = _Reader(since)
    stats = read_tail(path, reader, notes, "Claude Code session", cap=cap, min_bytes=min_bytes)
    if stats is None:
        return result
    result["session_id"] = reader.session_id or path.stem
    result["updated_at"] = reader.updated_at or mtime_iso(path)
    result["todos"] = _task_list(result["session_id"], reader) or reader.todos
    result["tool_errors"] = list(reversed(reader.errors))
    request = reader.last_prompt or reader.request
    result["last_request"] = clip(request, MAX_REQUEST_CHARS) if request else None
    result["tokens"] = {
        "total": reader.total if reader.saw_usage else None,
        "last_context": reader.last_context,
        "since": reader.since.result(
            reader.since.tokens if reader.saw_usage else None, stats.reached_start
        ),
    }
    result["compactions"] = {"count": reader.compactions, "last_at": reader.compaction_at}
    coverage_notes(
        notes,
        stats,
        counts="token total and compaction count cover",
        todos=reader.todos is not None,
        plan="todo list",
        file="session",
    )
    return result
