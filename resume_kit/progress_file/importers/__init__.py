"""Turn task lists from elsewhere into units: Markdown checklists, spec-kit ``tasks.md`` and
Task Master's ``tasks.json`` (docs/progress-file.md, "Importing task lists").

Pure functions: text in, (goal, units) out. A checked item becomes ``done`` without evidence:
that is the list's claim, and reconcile reports it as DONE_UNVERIFIED until verified. A verify
command taken from a list came with the repository: it is never approved here.
"""

from __future__ import annotations

import re

from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import Literal
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model.progress import Unit, unique_id

Format = Literal["auto", "markdown", "taskmaster", "speckit"]
FORMATS: tuple[Format, ...] = ("auto", "markdown", "taskmaster", "speckit")
IMPORT_HINT = "--import takes a Markdown checklist, a spec-kit tasks.md or a Task Master tasks.json"


@dataclass
class Imported:
    goal: str | None
    units: list[Unit]
    format: Format = "markdown"


def claim_id(base: str, taken: set[str]) -> str:
    """:func:`~resume_kit.model.progress.unique_id` for ``base``, added to ``taken``."""
    unit_id = unique_id(base, taken)
    taken.add(unit_id)
    return unit_id


_SPECKIT_LINE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[[ xX]\]\s+T\d+\b", re.MULTILINE)
_SPECKIT_TITLE = re.compile(r"^#\s+Tasks:\s", re.MULTILINE)


def detect(text: str, filename: str) -> Format:
    """The format ``auto`` means for this file: JSON is Task Master's; Markdown with a
    ``# Tasks: …`` title or ``- [ ] T001 …`` lines is spec-kit's; any other text a checklist."""
    if filename.lower().endswith(".json") or text.lstrip().startswith(("{", "[")):
        return "taskmaster"
    if _SPECKIT_TITLE.search(text) or _SPECKIT_LINE.search(text):
        return "speckit"
    return "markdown"


def parse_import(text: str, filename: str, fmt: Format = "auto") -> Imported:
    """The goal and units of the task list ``text`` (read from ``filename``)."""
    if fmt == "auto":
        fmt = detect(text, filename)
    if fmt == "taskmaster":
        from resume_kit.progress_file.importers.taskmaster import parse_taskmaster

        return parse_taskmaster(text)
    from resume_kit.progress_file.importers.checklist import parse_checklist

    imported = parse_checklist(text, speckit=fmt == "speckit")
    if not imported.units:
        raise ResumeKitError(
            f"{filename}: no task lines found",
            hint="tasks are checkbox lines: `- [ ] Write the parser`, `- [x] Done thing` or "
            "`1. [ ] First step` (plain `- item` bullets are not tasks)",
        )
    return imported
