"""Markdown checklists (and spec-kit's ``tasks.md``, which is one) into units.

One unit per checkbox item: ``- [ ]``, ``* [x]``, ``1. [ ]``, ``2) [~]``. Nesting makes the
parent wait for its children (``after``); the nearest heading is the unit's ``group``; HTML
comments and fenced code blocks hold no tasks; plain bullets and text indented under an item
are that item's ``notes``. The first ``#`` heading is the goal.
"""

from __future__ import annotations

import re

from resume_kit.core.light_dataclass import dataclass, field
from resume_kit.model.progress import Status, Unit, id_from_title
from resume_kit.progress_file.importers import Imported, claim_id

_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(?P<rest>.*)$")
_BOX = re.compile(r"^\[(?P<mark>[ xX~/-])\](?:[ \t]+(?P<text>.*))?$")
_HEADING = re.compile(r"^ {0,3}(?P<level>#{1,6})(?:[ \t]+(?P<text>.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")
_TAG = re.compile(r"^\[(?:P|US\d+|[A-Za-z][\w.-]*)\]\s+")

MARKS: dict[str, Status] = {
    " ": "todo",
    "x": "done",
    "X": "done",
    "~": "in_progress",
    "/": "in_progress",
    "-": "blocked",
}
CANCELLED_REASON = "cancelled in the task list ([-])"
MAX_NOTES = 2000  # characters of indented text kept per item


def strip_comments(text: str) -> list[str]:
    """The lines of ``text`` with every ``<!-- … -->`` removed (across lines, as HTML does: an
    unclosed one runs to the end); line numbers stay those of the file."""
    lines: list[str] = []
    in_comment = False
    for line in text.splitlines():
        kept: list[str] = []
        rest = line
        while rest:
            if in_comment:
                end = rest.find("-->")
                if end < 0:
                    rest = ""
                    break
                rest = rest[end + 3 :]
                in_comment = False
            else:
                start = rest.find("<!--")
                if start < 0:
                    kept.append(rest)
                    break
                kept.append(rest[:start])
                rest = rest[start + 4 :]
                in_comment = True
        lines.append("".join(kept))
    return lines


def _indent(text: str) -> int:
    return len(text.expandtabs(4))


def _clean(text: str) -> str:
    return " ".join(text.split())


@dataclass
class _Open:
    """An item whose nested lines are still being read."""

    indent: int
    unit: Unit | None  # None: a plain bullet (its own nested lines go nowhere)
    notes: list[str] = field(default_factory=list)


def parse_checklist(text: str, *, speckit: bool = False) -> Imported:
    """Every checkbox item of ``text`` as a unit; ``speckit``: its ``T001 [P] [US1] …``
    conventions read as well (:mod:`.speckit`)."""
    from resume_kit.progress_file.importers import speckit as spec

    goal: str | None = None
    group: str | None = None
    units: list[Unit] = []
    taken: set[str] = set()
    spec_ids: dict[str, str] = {}  # spec-kit id as written (T012) -> unit id
    pending_after: dict[str, list[str]] = {}  # unit id -> spec-kit ids it depends on
    stack: list[_Open] = []
    fence: str | None = None

    def close(indent: int) -> None:
        while stack and stack[-1].indent >= indent:
            done = stack.pop()
            if done.unit is not None and done.notes:
                done.unit.notes = "\n".join(done.notes)[:MAX_NOTES]

    for line in strip_comments(text):
        if fence is not None:
            if line.lstrip().startswith(fence):
                fence = None
            continue
        if not line.strip():
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group("fence")
            continue
        heading = _HEADING.match(line)
        if heading:
            close(0)
            title = _clean(heading.group("text") or "")
            if goal is None and heading.group("level") == "#" and title:
                goal = spec.feature_name(title) if speckit else title
                group = None
            elif title:
                group = title
            continue
        indent = _indent(line[: len(line) - len(line.lstrip())])
        item = _ITEM.match(line)
        box = _BOX.match(item.group("rest")) if item else None
        if box is None:
            # a plain bullet or text: notes of the nearest item it is indented under, if any
            if item:
                close(indent)
            owner = next((o for o in reversed(stack) if o.indent < indent and o.unit), None)
            if owner is None:
                close(0 if not item else indent)
            elif owner.unit is not None:
                owner.notes.append(_clean(item.group("rest") if item else line))
            if item:
                stack.append(_Open(indent, None))
            continue
        close(indent)
        body = _clean(box.group("text") or "")
        status = MARKS[box.group("mark")]
        if speckit:
            task = spec.read_task(body)
            title, base = task.title, task.id.lower() if task.id else None
        else:
            while (tag := _TAG.match(body)) is not None:
                body = body[tag.end() :]
            title, base, task = body, None, None
        if not title:
            stack.append(_Open(indent, None))
            continue
        unit = Unit(
            id=claim_id(base or id_from_title(title), taken),
            title=title,
            status=status,
            group=group,
        )
        if status == "blocked":
            unit.blocked_reason = CANCELLED_REASON
        if task is not None:
            unit.parallel = task.parallel
            unit.group = task.story or group
            unit.files = task.files
            if task.id:
                spec_ids.setdefault(task.id, unit.id)
            if task.after:
                pending_after[unit.id] = task.after
        parent = next((o.unit for o in reversed(stack) if o.unit is not None), None)
        if parent is not None and status != "blocked":
            parent.after.append(unit.id)  # done only after its children (not cancelled ones)
        units.append(unit)
        stack.append(_Open(indent, unit))
    close(0)
    for unit in units:
        for dep in pending_after.get(unit.id, []):
            dep_id = spec_ids.get(dep)
            if dep_id is not None and dep_id != unit.id and dep_id not in unit.after:
                unit.after.append(dep_id)
    return Imported(goal=goal, units=units, format="speckit" if speckit else "markdown")
