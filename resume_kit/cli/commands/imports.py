"""`resume-kit import FILE`: merge a task list into the progress file, by id, never twice; and
the next step both it and `init --import` print."""

from __future__ import annotations

from pathlib import Path

from resume_kit.cli.ui import info
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model import progress
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file.importers import Format, Imported


def read(path: Path, fmt: Format) -> Imported:
    from resume_kit.progress_file.importers import parse_import
    from resume_kit.progress_file.importers.source import read_task_list

    return parse_import(read_task_list(path), path.name, fmt)


def _shown(text: str, limit: int = 60) -> str:
    from resume_kit.core.escape import escape_controls

    text = escape_controls(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def next_step(model: progress.Progress, imported: list[progress.Unit]) -> None:
    """What to do after an import: which unit is next, and what its command still needs."""
    from resume_kit.infra.trust import untrusted

    unit = progress.pick_next(model)
    if unit is not None:
        info(f"next unit: {unit.id} ({_shown(unit.title)}): {progress.why_next(model, unit)}")
    without = [u for u in imported if u.verify is None and u.status != "done"]
    with_command = untrusted(paths.find_layout().root, imported, honour_env=False)
    if with_command:
        one = len(with_command) == 1
        info(
            f"{len(with_command)} imported verify command{'' if one else 's'} came with the "
            f"list and {'is' if one else 'are'} not approved: a person must review "
            f"{'it' if one else 'them'} with `resume-kit trust`"
        )
    if without:
        one = len(without) == 1
        info(
            f"{len(without)} imported unit{'' if one else 's'} still to do "
            f"{'has' if one else 'have'} no verify command: give {'it' if one else 'each'} "
            "one with `resume-kit edit ID --verify CMD` (a command that exits 0 once it is done)"
        )
    if unit is None:
        info("next: resume-kit status")
    elif unit.verify is None:
        info(f'next: resume-kit edit {unit.id} --verify "CMD", then resume-kit verify-next')
    elif unit in with_command:
        info("next: resume-kit trust, then resume-kit verify-next")
    else:
        info("next: resume-kit verify-next")


def run(path: Path, fmt: Format) -> int:
    layout = paths.find_layout()
    if not layout.progress.exists():
        raise ResumeKitError(
            f"{layout.rel(layout.progress)} does not exist",
            hint=f"start one from the list: resume-kit init --import {path}",
        )
    from resume_kit.progress_file.importers.merge import merge
    from resume_kit.progress_file.roundtrip import to_data
    from resume_kit.progress_file.validate import validate

    imported = read(path, fmt)
    with progress_io.transaction(layout) as doc:
        report = merge(doc.progress, imported.units)
        try:
            validate(to_data(doc.progress), layout.progress.name)
        except ResumeKitError as exc:
            raise ResumeKitError(
                f"{path}: importing it would make the progress file invalid ({exc.message}); "
                "nothing was changed",
                hint="fix the task list or the progress file, then import again",
            ) from None
        model = doc.progress
    added_ids = set(report.added)
    added = [u for u in model.units if u.id in added_ids]
    info(
        f"imported {path}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.unchanged)} unchanged"
    )
    next_step(model, added)
    return 0
