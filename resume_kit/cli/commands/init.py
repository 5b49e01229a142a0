"""`resume-kit init`: create .resume-kit/ with a progress file (never overwrites)."""

from __future__ import annotations

from pathlib import Path

from resume_kit.cli.ui import info
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.infra.store import ensure_gitignore
from resume_kit.model import progress
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file.importers import Format

HEADER = (
    "# resume-kit progress file (schema: https://github.com/resume-kit/resume-kit#progress-file).\n"
    "# A unit becomes done only when `resume-kit verify-next` has run its verify command and it\n"
    "# passed; evidence is written by the tool. Comments you add here survive every rewrite.\n"
)


def run(goal: str | None, import_file: Path | None, fmt: Format = "auto") -> int:
    if fmt != "auto" and import_file is None:
        raise ResumeKitError(
            "--format says how to read --import FILE, and no file was given",
            hint=f"resume-kit init --import FILE --format {fmt}",
        )
    layout = paths.find_layout()
    if layout.progress.exists():
        raise ResumeKitError(
            f"{layout.rel(layout.progress)} already exists",
            hint="init never overwrites; add units with `resume-kit add`, or move the file away",
        )
    units: list[progress.Unit] = []
    if import_file is not None:
        from resume_kit.cli.commands.imports import read

        imported = read(import_file, fmt)
        units = imported.units
        goal = goal or imported.goal
    if goal is None or not goal.strip():
        example = "Extract parties and dates from the contracts in docs/"
        raise ResumeKitError(
            "a goal is needed: one sentence that says what the whole task achieves"
            + (f" ({import_file} names none)" if import_file is not None else ""),
            hint=f'resume-kit init --goal "{example}"'
            + (f" --import {import_file}" if import_file is not None else ""),
        )
    model = progress.Progress(goal=" ".join(goal.split()), units=units)
    layout.state_dir.mkdir(exist_ok=True)
    ensure_gitignore(layout)
    progress_io.create(layout, model, header=HEADER)
    # Imported verify commands came with the list (the repository): never approved here.
    done = sum(1 for u in units if u.status == "done")
    info(f"created {layout.rel(layout.progress)}" + (f" with {len(units)} units" if units else ""))
    if done:
        info(
            f"{done} imported units are marked done without evidence; "
            "`resume-kit status` lists them as DONE_UNVERIFIED until verified"
        )
    if import_file is not None:
        from resume_kit.cli.commands.imports import next_step

        next_step(model, units)
        return 0
    info('next: resume-kit add "First unit" --verify "pytest tests/test_first.py"')
    return 0
