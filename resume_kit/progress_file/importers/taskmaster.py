"""Task Master's ``tasks.json`` into units: tagged ``{"master": {"tasks": [...], "metadata":
{...}}}`` (Task Master 0.16 and later) and the older ``{"meta": {...}, "tasks": [...]}``.

Subtask ``2.1`` becomes unit ``task-2.1``; a parent waits for its children (``after``) and its
children wait for what the parent depends on, so the next unit is the first open subtask.
``testStrategy`` that is a shell command becomes the verify command (never approved here);
``description``, ``details`` and a prose ``testStrategy`` become the unit's notes.
"""

from __future__ import annotations

import json
import re

from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model.progress import Status, Unit, slugify
from resume_kit.progress_file.importers import IMPORT_HINT, Imported, claim_id
from resume_kit.progress_file.validate import command_problem

STATUSES: dict[str, tuple[Status, str | None]] = {
    "done": ("done", None),
    "completed": ("done", None),
    "in-progress": ("in_progress", None),
    "in_progress": ("in_progress", None),
    "review": ("in_progress", None),
    "pending": ("todo", None),
    "todo": ("todo", None),
    "blocked": ("blocked", "blocked in Task Master"),
    "deferred": ("blocked", "deferred in Task Master"),
    "cancelled": ("blocked", "cancelled in Task Master: not to be done"),
    "canceled": ("blocked", "cancelled in Task Master: not to be done"),
}
MAX_NOTES = 4000
MAX_COMMAND = 500
# The first word of a testStrategy that is a command, not prose ("Deploy and confirm …").
_COMMANDS = frozenset(
    [
        "pytest",
        "python",
        "python3",
        "py.test",
        "tox",
        "nox",
        "uv",
        "uvx",
        "poetry",
        "hatch",
        "pdm",
        "make",
        "just",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "bun",
        "bunx",
        "deno",
        "node",
        "jest",
        "vitest",
        "mocha",
        "playwright",
        "cypress",
        "tsc",
        "eslint",
        "ruff",
        "mypy",
        "pyright",
        "go",
        "cargo",
        "rustc",
        "mvn",
        "gradle",
        "./gradlew",
        "./mvnw",
        "dotnet",
        "bundle",
        "rake",
        "rspec",
        "ruby",
        "php",
        "composer",
        "phpunit",
        "mix",
        "elixir",
        "swift",
        "xcodebuild",
        "ctest",
        "cmake",
        "meson",
        "ninja",
        "bazel",
        "sh",
        "bash",
        "zsh",
    ]
)
_SENTENCE_END = re.compile(r"[A-Za-z)][.!]$")  # "… the expected JSON." is prose; "pytest ." is not
_DEFAULT_TAG_DESCRIPTION = re.compile(r"^Tasks for \S+ context$")


def shell_command(text: str) -> str | None:
    """``text`` when it is one shell command (``pytest -q tests/x.py``, `` `npm test` ``,
    ``$ make check``), else None: a description of how to test is not a command."""
    line = text.strip()
    if "\n" in line or not line or len(line) > MAX_COMMAND:
        return None
    if len(line) > 2 and line[0] == line[-1] == "`" and "`" not in line[1:-1]:
        return line[1:-1].strip() or None  # marked as code: a command whatever its first word
    if line.startswith("$ "):
        return line[2:].strip() or None
    if _SENTENCE_END.search(line):
        return None
    first = line.split(maxsplit=1)[0]
    if first in _COMMANDS or (first.startswith("./") and len(first) > 2):
        return line
    return None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _tag_goal(tag: str, value: dict[str, Any], *, name_ok: bool) -> str | None:
    """The tag's own description; else, for a file of one tag, its name unless ``master``."""
    metadata = value.get("metadata")
    description = _text(metadata.get("description")) if isinstance(metadata, dict) else ""
    if description and not _DEFAULT_TAG_DESCRIPTION.match(description):
        return description
    return tag.strip() or None if name_ok and tag != "master" else None


def _file_goal(data: dict[str, Any]) -> str | None:
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else data.get("metadata")
    if not isinstance(meta, dict):
        return None
    name = _text(meta.get("projectName"))
    description = _text(meta.get("description"))
    if description == "Tasks generated from PRD":
        description = ""
    return name or description or None


def _groups(data: Any) -> tuple[list[tuple[str | None, list[Any]]], str | None]:
    """The task lists by tag (None: untagged) and the goal the file gives."""
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        return [(None, data["tasks"])], _file_goal(data)
    tagged = (
        {k: v for k, v in data.items() if isinstance(v, dict) and isinstance(v.get("tasks"), list)}
        if isinstance(data, dict)
        else {}
    )
    if not tagged:
        raise ResumeKitError(
            'this JSON is not a Task Master tasks.json (no "tasks" list)',
            hint='expected {"master": {"tasks": [...]}} or {"tasks": [...]}',
        )
    if len(tagged) == 1:
        tag, value = next(iter(tagged.items()))
        return [(None, value["tasks"])], _tag_goal(str(tag), value, name_ok=True)
    goals = {str(tag): _tag_goal(str(tag), value, name_ok=False) for tag, value in tagged.items()}
    goal = goals.get("master") or next((g for g in goals.values() if g), None)
    return [(str(tag), value["tasks"]) for tag, value in tagged.items()], goal


def parse_taskmaster(text: str) -> Imported:
    """The units of a Task Master ``tasks.json``; every tag's tasks when it has several."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResumeKitError(
            f"not valid JSON at line {exc.lineno}: {exc.msg}", hint=IMPORT_HINT
        ) from None
    except RecursionError:
        raise ResumeKitError(
            "the JSON is nested too deeply to be a tasks.json", hint=IMPORT_HINT
        ) from None
    groups, goal = _groups(data)
    units: list[Unit] = []
    taken: set[str] = set()
    for tag, tasks in groups:
        # a tag with no usable characters (":", "---") would make ids start with "-"
        prefix = f"{slugify(tag)}-task-" if tag and slugify(tag) else "task-"
        for task in tasks:
            if isinstance(task, dict) and "id" in task:
                units += _task_units(task, prefix, taken)
    known = {u.id for u in units}
    for unit in units:
        unit.after = list(dict.fromkeys(d for d in unit.after if d in known and d != unit.id))
    return Imported(goal=goal, units=units, format="taskmaster")


def _task_units(task: dict[str, Any], prefix: str, taken: set[str]) -> list[Unit]:
    """The task's unit and its subtasks' units, parent first."""
    short = slugify(str(task["id"]))
    parent = _unit(task, f"{prefix}{short}", taken)
    parent.after = [f"{prefix}{slugify(str(d))}" for d in _list(task.get("dependencies"))]
    subtasks = [s for s in _list(task.get("subtasks")) if isinstance(s, dict) and "id" in s]
    siblings = {_sub_id(str(task["id"]), s["id"]) for s in subtasks}
    children: list[Unit] = []
    for sub in subtasks:
        child = _unit(sub, f"{prefix}{short}.{slugify(_sub_id(str(task['id']), sub['id']))}", taken)
        for dep in _list(sub.get("dependencies")):
            dep_text = str(dep)
            if "." in dep_text:
                child.after.append(f"{prefix}{slugify(dep_text)}")
            elif dep_text in siblings:  # a number in a subtask names a sibling
                child.after.append(f"{prefix}{short}.{slugify(dep_text)}")
            elif dep_text == str(task["id"]):
                continue  # its own parent, which already waits for it
            else:
                child.after.append(f"{prefix}{slugify(dep_text)}")
        child.after += parent.after  # what the parent waits for, its parts wait for too
        children.append(child)
    cancelled = {id(c) for c, s in zip(children, subtasks, strict=True) if _cancelled(s)}
    parent.after += [c.id for c in children if id(c) not in cancelled]
    return [parent, *children]


def _cancelled(task: dict[str, Any]) -> bool:
    return str(task.get("status", "")).lower() in ("cancelled", "canceled")


def _sub_id(parent_id: str, sub_id: Any) -> str:
    """A subtask's own number: ``2`` of ``2`` or of ``"1.2"`` / ``1.2`` under task 1."""
    text = str(sub_id)
    return text[len(parent_id) + 1 :] if text.startswith(f"{parent_id}.") else text


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _unit(task: dict[str, Any], unit_id: str, taken: set[str]) -> Unit:
    status, reason = STATUSES.get(str(task.get("status", "pending")).lower(), ("todo", None))
    description, details = _text(task.get("description")), _text(task.get("details"))
    title = _text(task.get("title")) or description or unit_id
    strategy = _text(task.get("testStrategy"))
    verify = shell_command(strategy)
    if verify is not None and command_problem(verify) is not None:
        verify = None
    notes = [description if description != title else "", details]
    if strategy and verify is None:
        notes.append(f"Test strategy: {strategy}")
    return Unit(
        id=claim_id(unit_id, taken),
        title=" ".join(title.split()),
        status=status,
        verify=verify,
        notes="\n\n".join(n for n in notes if n)[:MAX_NOTES] or None,
        blocked_reason=reason,
    )
