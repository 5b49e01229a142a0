"""Claude Code's Task tools (2.1.16+): the task list as its files and its transcript record it.

The files ``$CLAUDE_CONFIG_DIR/tasks/<session id>/<n>.json`` (``{id, subject, status, ...}``)
are the source of truth; when they are gone the ``TaskCreate``/``TaskUpdate`` calls whose
results succeeded are replayed in order. Bounded: at most ``MAX_TODOS`` files of
``MAX_TASK_BYTES`` each.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from resume_kit.core.typing_light import Any
from resume_kit.facts.fact_reuse import note_folder
from resume_kit.facts.transcripts import tail
from resume_kit.facts.transcripts.records import MAX_TODOS, todo_item

TASK_TOOLS = ("TaskCreate", "TaskUpdate")
MAX_TASK_BYTES = 64 * 1024
_SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_TASK_FILE = re.compile(r"^(\d{1,9})\.json$")


def tasks_dir(config: Path, session_id: Any) -> Path | None:
    """The session's task folder, or None when the id could leave ``config/tasks``."""
    if not isinstance(session_id, str) or not _SESSION.match(session_id) or ".." in session_id:
        return None
    return config / "tasks" / session_id


def _load(path: Path) -> dict[str, Any] | None:
    try:
        with tail.open_binary(path) as f:
            data = f.read(MAX_TASK_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_TASK_BYTES:
        return None
    try:
        task = json.loads(data)
    except ValueError:
        return None
    return task if isinstance(task, dict) else None


def read_task_files(folder: Path) -> list[dict[str, str]] | None:
    """The task list from the session's task files, ordered by number; None when there are
    none (no folder, no task file)."""
    note_folder(folder)
    try:
        names = [m for e in os.scandir(folder) if (m := _TASK_FILE.match(e.name))]
    except OSError:
        return None
    if not names:
        return None
    names.sort(key=lambda m: int(m.group(1)))
    items: list[dict[str, str]] = []
    for match in names[:MAX_TODOS]:
        task = _load(folder / match.group(0))
        if task is None:
            continue
        item = todo_item(task.get("subject"), task.get("status"))
        if item is not None:
            items.append(item)
    return items


def _task_id(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()[:40]
    return None


def replay(events: list[tuple[str, Any, Any]]) -> list[dict[str, str]] | None:
    """The task list from successful Task tool calls ``(name, input, recorded result)`` in the
    order they happened; None when there is no ``TaskCreate`` among them."""
    tasks: dict[str, dict[str, Any]] = {}
    created = False
    for name, tool_input, result in events:
        args = tool_input if isinstance(tool_input, dict) else {}
        recorded = result if isinstance(result, dict) else {}
        if name == "TaskCreate":
            created = True
            task = recorded.get("task")
            task_id = _task_id(task.get("id")) if isinstance(task, dict) else None
            task_id = task_id or str(len(tasks) + 1)
            if len(tasks) < MAX_TODOS:
                tasks[task_id] = {"subject": args.get("subject"), "status": "pending"}
        elif name == "TaskUpdate":
            task_id = _task_id(args.get("taskId")) or _task_id(recorded.get("taskId"))
            if task_id is None or task_id not in tasks:
                continue  # created before the part of the transcript we read
            change = recorded.get("statusChange")
            status = change.get("to") if isinstance(change, dict) else None
            tasks[task_id]["status"] = status or args.get("status") or tasks[task_id]["status"]
            if isinstance(args.get("subject"), str):
                tasks[task_id]["subject"] = args["subject"]
    if not created:
        return None
    items = [todo_item(t["subject"], t["status"]) for t in tasks.values()]
    return [item for item in items if item is not None]
