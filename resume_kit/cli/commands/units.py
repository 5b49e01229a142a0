"""`add`, `start`, `block`, `reset`: changes a person makes to the units (`plan` is in
:mod:`resume_kit.cli.commands.plan`)."""

from __future__ import annotations

from resume_kit.cli.ui import info, note
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model import progress
from resume_kit.model.progress import Status, Unit
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file.edits import check_id


def check_command(verify: str) -> str:
    from resume_kit.progress_file.validate import command_problem

    if not verify.strip():
        raise ResumeKitError(
            "--verify is empty",
            hint='give a command that exits 0 when the unit is done, e.g. --verify "pytest -q tests/test_x.py"',
        )
    problem = command_problem(verify)
    if problem:
        raise ResumeKitError(
            f"the verify command {problem}",
            hint="put a long command in a script and verify with `sh script.sh`",
        )
    return verify


def add(
    title: str,
    verify: str,
    unit_id: str | None,
    files: list[str],
    artifacts: list[str],
    after: list[str],
    side_effects: bool = False,
) -> int:
    layout = paths.find_layout()
    unit = create(layout, title, verify, unit_id, files, artifacts, after, side_effects)
    from resume_kit.infra.trust import approve_created

    approve_created(layout, [unit])
    info(f"added unit {unit.id}: {unit.title}")
    return 0


def create(
    layout: paths.Layout,
    title: str,
    verify: str,
    unit_id: str | None,
    files: list[str],
    artifacts: list[str],
    after: list[str],
    side_effects: bool = False,
) -> Unit:
    """Append the unit to progress.yaml and return it; approving its command is the caller's
    choice (`add` approves what a person typed here; the MCP server's `add_unit` does not)."""
    if not title.strip():
        raise ResumeKitError(
            "the title is empty", hint='resume-kit add "Parse the dates" --verify "..."'
        )
    check_command(verify)
    with progress_io.transaction(layout) as doc:
        model = doc.progress
        taken = {u.id for u in model.units}
        if unit_id is not None:
            check_id(unit_id)
            if unit_id in taken:
                raise ResumeKitError(
                    f"a unit with id '{unit_id}' already exists", hint="choose another --id"
                )
        else:
            unit_id = progress.unique_id(progress.id_from_title(title), taken)
        for dep in after:
            if dep not in taken:
                raise ResumeKitError(
                    f"--after names unknown unit '{dep}'", hint="see `resume-kit status` for ids"
                )
        unit = Unit(
            id=unit_id,
            title=" ".join(title.split()),
            verify=verify,
            files=files,
            artifacts=artifacts,
            after=after,
            side_effects=side_effects,
        )
        model.units.append(unit)
    return unit


def set_status(unit_id: str, status: Status, reason: str | None = None) -> int:
    layout = paths.find_layout()
    if status == "blocked" and (reason is None or not reason.strip()):
        raise ResumeKitError("--reason is empty", hint="say why, so the next session knows")
    with progress_io.transaction(layout) as doc:
        unit = doc.progress.require_unit(unit_id)
        previous = unit.status
        if status == "in_progress":
            missing = [
                dep
                for dep in unit.after
                if (d := doc.progress.unit(dep)) is None or d.status != "done"
            ]
            if missing:
                note(f"{unit_id} depends on units not done yet: {', '.join(missing)}")
        unit.status = status
        if status != "done":
            unit.evidence = None
        if status == "todo":
            unit.last_failure = None
        # the reason belongs to the unit, and only while it is blocked
        unit.blocked_reason = " ".join(reason.split()) if status == "blocked" and reason else None
    info(f"{unit_id}: {previous} -> {status}")
    return 0
