"""Turn task lists from elsewhere into units: Markdown checklists and Task Master's tasks.json.

Pure functions: text in, (goal, units) out. A checked item becomes ``done`` without evidence:
that is the list's claim, and reconcile reports it as DONE_UNVERIFIED until verified.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from resume_kit.infra.errors import ResumeKitError
from resume_kit.model.progress import Status, Unit, slugify

_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[(?P<mark>[ xX~-])\]\s+(?P<text>.+?)\s*$")
_SPECKIT_ID = re.compile(r"^(?P<id>T\d+)\s+")
_TAG = re.compile(r"^\[(?:P|US\d+|[A-Za-z][\w.-]*)\]\s+")
_HEADING = re.compile(r"^#\s+(?P<text>.+?)\s*#*\s*$")


@dataclass
class Imported:
    goal: str | None
    units: list[Unit]


def _unique(base: str, taken: set[str]) -> str:
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base}-{n}"
        n += 1
    taken.add(candidate)
    return candidate


def parse_markdown(text: str) -> Imported:
    """``- [ ]`` / ``- [x]`` lines (spec-kit ``T012 [P] [US1] …`` ids and tags understood)."""
    goal: str | None = None
    units: list[Unit] = []
    taken: set[str] = set()
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading and goal is None:
            goal = heading.group("text")
            continue
        match = _CHECKBOX.match(line)
        if not match:
            continue
        body = match.group("text")
        spec_id = _SPECKIT_ID.match(body)
        if spec_id:
            body = body[spec_id.end() :]
        while (tag := _TAG.match(body)) is not None:
            body = body[tag.end() :]
        title = body.strip() or (spec_id.group("id") if spec_id else "task")
        base = (
            spec_id.group("id").lower()
            if spec_id
            else (slugify(title)[:48].rstrip("-._") or "task")
        )
        status: Status = "done" if match.group("mark") in "xX" else "todo"
        units.append(Unit(id=_unique(base, taken), title=title, status=status))
    return Imported(goal=goal, units=units)


_TASKMASTER_STATUS: dict[str, Status] = {
    "done": "done",
    "completed": "done",
    "in-progress": "in_progress",
    "in_progress": "in_progress",
    "review": "in_progress",
    "pending": "todo",
    "todo": "todo",
    "blocked": "blocked",
    "deferred": "blocked",
    "cancelled": "blocked",
}


def parse_taskmaster(text: str) -> Imported:
    """Task Master ``tasks.json``: ``{"tasks": [...]}`` or tagged ``{"<tag>": {"tasks": [...]}}``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResumeKitError(
            f"not valid JSON at line {exc.lineno}: {exc.msg}",
            hint="--import takes a Markdown task list or a Task Master tasks.json",
        ) from None
    except RecursionError:
        raise ResumeKitError(
            "the JSON is nested too deeply to be a tasks.json",
            hint="--import takes a Markdown task list or a Task Master tasks.json",
        ) from None
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        groups: list[tuple[str | None, list[Any]]] = [(None, data["tasks"])]
    elif (
        isinstance(data, dict)
        and all(isinstance(v, dict) and isinstance(v.get("tasks"), list) for v in data.values())
        and data
    ):
        groups = [(str(tag), value["tasks"]) for tag, value in data.items()]
        if len(groups) == 1:
            groups = [(None, groups[0][1])]
    else:
        raise ResumeKitError(
            'this JSON is not a Task Master tasks.json (no "tasks" list)',
            hint='expected {"tasks": [...]} or {"<tag>": {"tasks": [...]}}',
        )
    units: list[Unit] = []
    taken: set[str] = set()
    for tag, tasks in groups:
        # a tag with no usable characters (":", "---") would make ids start with "-"
        prefix = f"{slugify(tag)}-task-" if tag and slugify(tag) else "task-"
        for task in tasks:
            if not isinstance(task, dict) or "id" not in task:
                continue
            task_id = f"{prefix}{slugify(str(task['id']))}"
            units.append(_taskmaster_unit(task, task_id, prefix, taken, parent=None))
            subtasks = task.get("subtasks")
            for sub in subtasks if isinstance(subtasks, list) else []:
                if isinstance(sub, dict) and "id" in sub:
                    sub_id = f"{task_id}.{slugify(str(sub['id']))}"
                    units.append(_taskmaster_unit(sub, sub_id, prefix, taken, parent=task_id))
    known = {u.id for u in units}
    for unit in units:
        unit.after = [dep for dep in unit.after if dep in known and dep != unit.id]
    return Imported(goal=None, units=units)


def _taskmaster_unit(
    task: dict[str, Any], unit_id: str, prefix: str, taken: set[str], parent: str | None
) -> Unit:
    after: list[str] = []
    dependencies = task.get("dependencies")
    for dep in dependencies if isinstance(dependencies, list) else []:
        dep_text = slugify(str(dep))
        if parent is not None and "." not in str(dep):
            # Subtask dependencies name sibling subtasks by their short id.
            after.append(f"{parent}.{dep_text}")
        else:
            after.append(f"{prefix}{dep_text}")
    status = _TASKMASTER_STATUS.get(str(task.get("status", "pending")).lower(), "todo")
    title = str(task.get("title") or task.get("description") or unit_id)
    return Unit(id=_unique(unit_id, taken), title=title, status=status, after=after)


def parse_import(text: str, filename: str) -> Imported:
    stripped = text.lstrip()
    if filename.lower().endswith(".json") or stripped.startswith(("{", "[")):
        return parse_taskmaster(text)
    imported = parse_markdown(text)
    if not imported.units:
        raise ResumeKitError(
            f"{filename}: no task lines found",
            hint="Markdown tasks look like `- [ ] Write the parser` or `- [x] Done thing`",
        )
    return imported
