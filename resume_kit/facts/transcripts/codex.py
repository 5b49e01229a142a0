"""Codex CLI rollout files: find this work tree's newest rollout and read what matters.

Rollouts live at ``$CODEX_HOME`` (or ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-*.jsonl``;
each line is ``{timestamp, type, payload}`` and the first one is ``session_meta`` with the cwd.
Unknown record types (Codex adds new ones) are skipped.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from resume_kit.core.typing_light import Any
from resume_kit.facts.fact_reuse import note_folder
from resume_kit.facts.transcripts import tail
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
    utc_moment,
    within,
)

AGENT = "codex"
MAX_DAY_FOLDERS = 31  # newest day folders whose rollouts are considered
MAX_CANDIDATES = 30  # rollouts whose first line is checked, newest first
_KNOWN_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_EXIT_LINE = re.compile(r"^(?:exit code:?|process exited with code)\s*(-?\d+)", re.IGNORECASE)
_IDE_REQUEST = "## My request for Codex:"
# Codex's goal tools (when update_plan is absent): the goal's status as a todo status
_GOAL_STATUS = {"active": "in_progress", "complete": "completed", "completed": "completed"}
_SESSION_ID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def codex_home() -> Path:
    return home_dir("CODEX_HOME", ".codex")


def _numbered_dirs(path: Path) -> list[Path]:
    note_folder(path)
    try:
        entries = [e for e in os.scandir(path) if e.is_dir() and e.name.isdigit()]
    except OSError:
        return []
    return [Path(e.path) for e in sorted(entries, key=lambda e: e.name, reverse=True)]


def _candidate_files() -> list[tuple[float, Path]]:
    days: list[Path] = []
    for year in _numbered_dirs(codex_home() / "sessions"):
        for month in _numbered_dirs(year):
            days.extend(_numbered_dirs(month))
            if len(days) >= MAX_DAY_FOLDERS:
                break
        if len(days) >= MAX_DAY_FOLDERS:
            break
    # idle rollouts are compressed to .jsonl.zst; archived ones move to archived_sessions/
    folders = [*days[:MAX_DAY_FOLDERS], codex_home() / "archived_sessions"]
    return files_newest_first(
        folders,
        lambda name: name.startswith("rollout-") and name.endswith((".jsonl", ".jsonl.zst")),
    )


def _meta(record: dict[str, Any] | None) -> dict[str, Any] | None:
    if not record or record.get("type") != "session_meta":
        return None
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return None
    meta = payload.get("meta")  # some versions nest the meta one level deeper
    return meta if isinstance(meta, dict) and "cwd" in meta else payload


def first_record(path: Path) -> dict[str, Any] | None:
    return tail.first_record(path)


def _is_subagent(meta: dict[str, Any]) -> bool:
    """A sub-agent's rollout (``source: {subagent: ...}``) shares the cwd, not the session."""
    source = meta.get("source")
    return isinstance(source, dict) and "subagent" in source


def rollouts(root: Path) -> Iterator[tuple[float, Path]]:
    """(mtime, path) of the Codex main-session rollouts started in the work tree at ``root``,
    newest first."""
    for mtime, path in _candidate_files()[:MAX_CANDIDATES]:
        meta = _meta(first_record(path))
        if meta is not None and within(meta.get("cwd"), root) and not _is_subagent(meta):
            yield mtime, path


def newest_rollout(root: Path) -> tuple[float, Path] | None:
    """(mtime, path) of the newest Codex rollout started in the work tree at ``root``."""
    return next(rollouts(root), None)


def looks_like(record: dict[str, Any]) -> bool:
    """Whether a parsed line has the shape of a Codex rollout record."""
    return isinstance(record.get("payload"), dict) and isinstance(record.get("type"), str)


# --------------------------------------------------------------------------- record reading


def _plan(raw: Any) -> list[dict[str, str]] | None:
    return todo_list(raw, "step")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def request_text(text: Any) -> str | None:
    """The person's request: for an IDE prompt, the part after ``## My request for Codex:``
    (what comes before is the open tabs and context the extension adds)."""
    if not isinstance(text, str):
        return None
    at = text.rfind(_IDE_REQUEST)
    if at >= 0:
        text = text[at + len(_IDE_REQUEST) :]
    text = text.strip()
    return text or None


def _output_failure(output: Any) -> tuple[int, str] | None:
    """(exit code, output text) when a function_call_output reports a failed command."""
    text = _text_of(output)
    if not text:
        return None
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            metadata = data.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            if isinstance(code, int) and not isinstance(code, bool):
                return (code, _text_of(data.get("output"))) if code != 0 else None
    lines = text.splitlines()
    for index, line in enumerate(lines[:6]):
        match = _EXIT_LINE.match(line.strip())
        if match:
            code = int(match.group(1))
            if code == 0:
                return None
            body = lines[index + 1 :]
            for at, rest in enumerate(body):  # "Output:" starts the command's own output
                if rest.strip() == "Output:":
                    body = body[at + 1 :]
                    break
            return code, "\n".join(body)
    return None


class _Reader:
    """Accumulates facts from rollout records seen newest first."""

    def __init__(self, since: dt.datetime | None = None) -> None:
        self.since = SinceCount(since)
        self.after = True  # the record being read is after ``since``
        # the session's running total at the newest token_count at or before ``since``, and
        # at the oldest one read (a lower bound when the cap stops the read before ``since``)
        self.total_before: int | None = None
        self.oldest_total: int | None = None
        self.since_compacted = 0
        self.since_events = 0
        self.todos: list[dict[str, str]] | None = None
        self.errors: list[dict[str, Any]] = []  # newest first while reading
        self.error_calls: set[str] = set()
        self.pending_names: dict[str, list[dict[str, Any]]] = {}
        self.request: str | None = None
        self.fallback_request: str | None = None
        self.updated_at: str | None = None
        self.session_id: str | None = None
        self.total: int | None = None
        self.last_context: int | None = None
        self.compacted = 0
        self.compact_events = 0
        self.compaction_at: str | None = None
        self.turn_end: str | None = None  # the newest turn's end: task_complete | turn_aborted
        self.goal_status: str | None = None  # the newest update_goal status, newest first
        self.goal: list[dict[str, str]] | None = None

    def satisfied(self) -> bool:
        return (
            self.todos is not None
            and self.request is not None
            and self.last_context is not None
            and self.since.done()
        )

    def take(self, record: dict[str, Any]) -> None:
        at = iso_time(record.get("timestamp"))
        self.after = self.since.see(record.get("timestamp"))
        if self.updated_at is None:
            self.updated_at = at
        kind = record.get("type")
        payload = record.get("payload")
        if kind not in _KNOWN_TYPES or not isinstance(payload, dict):
            return
        if kind == "session_meta":
            meta = _meta(record)
            if meta is not None and isinstance(meta.get("id"), str):
                self.session_id = meta["id"]
        elif kind == "compacted":
            self.compacted += 1
            self.since_compacted += self.after
            self.compaction_at = self.compaction_at or at
        elif kind == "event_msg":
            self._event(payload, at)
        elif kind == "response_item":
            self._item(payload, at)

    def _event(self, payload: dict[str, Any], at: str | None) -> None:
        kind = payload.get("type")
        if kind == "user_message" and self.request is None:
            self.request = request_text(payload.get("message"))
        elif kind == "item_completed":
            self._completed_item(payload.get("item"))
        elif kind in ("task_complete", "turn_aborted") and self.turn_end is None:
            self.turn_end = kind
        elif kind == "token_count":
            self._tokens(payload.get("info"))
        elif kind == "context_compacted":
            self.compact_events += 1
            self.since_events += self.after
            self.compaction_at = self.compaction_at or at
        elif kind == "plan_update" and self.todos is None:
            self.todos = _plan(payload.get("plan"))
        elif kind == "exec_command_end":
            code = payload.get("exit_code")
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                text = ""
                for key in ("stderr", "aggregated_output", "formatted_output", "stdout"):
                    if _text_of(payload.get(key)).strip():
                        text = _text_of(payload.get(key))
                        break
                self._error(payload.get("call_id"), code, text, at)
        elif kind == "error":
            message = payload.get("message")
            if isinstance(message, str) and len(self.errors) < MAX_ERRORS:
                line = error_line(message)
                if line:
                    self.errors.append({"tool": None, "message": line, "at": at})

    def _completed_item(self, item: Any) -> None:
        """Newer threads record the person's prompt as ``item_completed`` ``UserMessage``."""
        if isinstance(item, dict) and item.get("type") == "UserMessage" and self.request is None:
            self.request = request_text(_text_of(item.get("content")))

    def _goal(self, name: str, arguments: Any) -> None:
        data = self._arguments(arguments)
        if self.goal is not None or data is None:
            return
        if name == "update_goal":
            if self.goal_status is None and isinstance(data.get("status"), str):
                self.goal_status = data["status"]
            return
        objective = data.get("objective", data.get("goal"))
        status = _GOAL_STATUS.get((self.goal_status or "active").lower(), "pending")
        self.goal = todo_list([{"step": objective, "status": status}], "step")

    def _tokens(self, info: Any) -> None:
        if not isinstance(info, dict):
            return
        total_usage = info.get("total_token_usage")
        if isinstance(total_usage, dict):
            total = running_total(total_usage)
            if self.total is None:
                self.total = total
            self.oldest_total = total
            if not self.after and self.total_before is None:
                self.total_before = total
        last = info.get("last_token_usage")
        if self.last_context is None and isinstance(last, dict):
            prompt = int_or_zero(last.get("input_tokens"))
            if prompt > 0:
                self.last_context = prompt

    def since_result(self, whole_file: bool, started: dt.datetime | None) -> dict[str, Any]:
        """``tokens.since``: the running total's growth after ``since`` (a streamed or repeated
        token_count carries the same running total, so nothing is counted twice)."""
        since = self.since
        since.compactions = max(self.since_compacted, self.since_events)
        before = self.total_before
        if since.at is None or (
            before is None and (whole_file or (started and started > since.at))
        ):
            before = 0  # the session began after ``since``
            since.reached = True
        if self.total is None:
            return since.result(None, whole_file)
        base = before if before is not None else (self.oldest_total or 0)
        return since.result(max(self.total - base, 0), whole_file)

    def _item(self, payload: dict[str, Any], at: str | None) -> None:
        kind = payload.get("type")
        if kind == "function_call":
            name = payload.get("name")
            name_errors(self.pending_names, payload.get("call_id"), name)
            if name == "update_plan" and self.todos is None:
                self.todos = self._plan_arguments(payload.get("arguments"))
            elif name in ("create_goal", "update_goal"):
                self._goal(name, payload.get("arguments"))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            failure = _output_failure(payload.get("output"))
            if failure is not None:
                self._error(payload.get("call_id"), failure[0], failure[1], at)
        elif kind in ("custom_tool_call", "local_shell_call"):
            name = payload.get("name") if kind == "custom_tool_call" else "local_shell"
            name_errors(self.pending_names, payload.get("call_id"), name)
        elif kind == "compaction":
            self.compact_events += 1
            self.since_events += self.after
            self.compaction_at = self.compaction_at or at
        elif kind == "message" and payload.get("role") == "user" and self.fallback_request is None:
            text = _text_of(payload.get("content")).strip()
            # context Codex injects as user messages (environment, AGENTS.md) starts with a tag
            if text and not text.startswith(("<", "# AGENTS.md")):
                self.fallback_request = request_text(text)

    @staticmethod
    def _arguments(arguments: Any) -> dict[str, Any] | None:
        data = arguments
        if isinstance(arguments, str):
            try:
                data = json.loads(arguments)
            except ValueError:
                return None
        return data if isinstance(data, dict) else None

    def _plan_arguments(self, arguments: Any) -> list[dict[str, str]] | None:
        data = self._arguments(arguments)
        return _plan(data.get("plan")) if data is not None else None

    def _error(self, call_id: Any, code: int, text: str, at: str | None) -> None:
        if isinstance(call_id, str):
            if call_id in self.error_calls:  # reported both as an event and as the output
                return
            self.error_calls.add(call_id)
        if len(self.errors) >= MAX_ERRORS:
            return
        line = error_line(text)
        message = f"exit code {code}: {line}" if line else f"exit code {code}"
        error: dict[str, Any] = {"tool": None, "message": clip(message, 200), "at": at}
        self.errors.append(error)
        if isinstance(call_id, str):  # named when its call is met further back
            self.pending_names.setdefault(call_id, []).append(error)


def running_total(usage: dict[str, Any]) -> int:
    total = usage.get("total_tokens")
    if isinstance(total, int) and not isinstance(total, bool):
        return total
    return int_or_zero(usage.get("input_tokens")) + int_or_zero(usage.get("output_tokens"))


def read_rollout(
    path: Path,
    *,
    cap: int = tail.DEFAULT_CAP,
    min_bytes: int = tail.DEFAULT_MIN,
    since: dt.datetime | None = None,
) -> dict[str, Any]:
    """The ``transcript`` dict for one Codex rollout file (never raises on odd content);
    ``tokens.since`` has the tokens and compactions after ``since`` (the last verified unit;
    None: the whole session)."""
    result = empty_result(AGENT, path)
    notes: list[str] = result["notes"]
    reader = _Reader(since)
    stats = read_tail(path, reader, notes, "Codex rollout", cap=cap, min_bytes=min_bytes)
    if stats is None:
        return result
    session_id = reader.session_id
    first: dict[str, Any] | None = None
    if session_id is None or not (reader.since.done() or stats.reached_start):
        first = tail.first_record(path)
    if session_id is None:
        meta = _meta(first)
        if meta is not None and isinstance(meta.get("id"), str):
            session_id = meta["id"]
    if session_id is None:
        match = _SESSION_ID.search(path.name)
        session_id = match.group(1) if match else path.stem
    request = reader.request or reader.fallback_request
    result["session_id"] = clip(session_id, 100)
    result["updated_at"] = reader.updated_at or mtime_iso(path)
    result["todos"] = reader.todos if reader.todos is not None else reader.goal
    result["tool_errors"] = list(reversed(reader.errors))
    result["last_request"] = clip(request, MAX_REQUEST_CHARS) if request else None
    started = utc_moment(first.get("timestamp")) if first else None
    result["tokens"] = {
        "total": reader.total,
        "last_context": reader.last_context,
        "since": reader.since_result(stats.reached_start, started),
    }
    result["compactions"] = {
        "count": max(reader.compacted, reader.compact_events),
        "last_at": reader.compaction_at,
    }
    if reader.turn_end == "turn_aborted":
        result["interrupted"] = True
    coverage_notes(
        notes,
        stats,
        counts="the compaction count covers",
        todos=reader.todos is not None,
        plan="plan",
        file="rollout",
    )
    return result
