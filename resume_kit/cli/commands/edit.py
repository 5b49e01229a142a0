"""`edit`, `rm`, `rename`, `note`: change a unit after it exists, keeping every comment in the
file (the round trip) and every approval whose command text did not change."""

from __future__ import annotations

from resume_kit.cli.ui import info, note
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file.edits import Edit


def edit(unit_id: str, change: Edit) -> int:
    from resume_kit.cli.approval import person_at_terminal
    from resume_kit.cli.commands.units import check_command
    from resume_kit.progress_file.edits import apply_edit

    if all(getattr(change, name) is None for name in vars(change)):
        raise ResumeKitError(
            f"nothing to change for '{unit_id}'",
            hint="give at least one of --title, --verify, --files, --artifact, --after, "
            "--side-effects",
        )
    if change.title is not None:
        if not change.title.strip():
            raise ResumeKitError("--title is empty", hint="say what the unit achieves")
        change.title = " ".join(change.title.split())
    if change.verify is not None:
        check_command(change.verify)
    layout = paths.find_layout()
    with progress_io.transaction(layout) as doc:
        unit = doc.progress.require_unit(unit_id)
        had_evidence = unit.evidence is not None
        changed = apply_edit(doc.progress, unit, change)
    if not changed:
        info(f"{unit_id}: nothing changed")
        return 0
    info(f"edited {unit_id}: {', '.join(changed)}")
    if "verify" in changed and unit.verify is not None:
        from resume_kit.infra.trust import approve, is_trusted

        if had_evidence:
            note(f"{unit_id}: its evidence was dropped (it proved the old command)")
        if person_at_terminal():
            approve(layout.root, [unit])
        elif not is_trusted(layout.root, unit.id, unit.verify):
            note(
                f"{unit_id}: the new verify command is not approved (no terminal: not typed "
                "by a person); a person must approve it with `resume-kit trust`"
            )
    return 0


def remove(unit_id: str, force: bool) -> int:
    from resume_kit.progress_file.edits import remove as remove_unit

    layout = paths.find_layout()
    with progress_io.transaction(layout) as doc:
        waiting = remove_unit(doc.progress, unit_id, force)
    info(f"removed unit {unit_id}")
    if waiting:
        note(f"no longer waiting for {unit_id}: {', '.join(waiting)}")
    return 0


def rename(old: str, new: str) -> int:
    from resume_kit.infra.trust import approve, is_trusted
    from resume_kit.progress_file.edits import dependents
    from resume_kit.progress_file.edits import rename as rename_unit

    layout = paths.find_layout()
    with progress_io.transaction(layout) as doc:
        unit = doc.progress.require_unit(old)
        # approvals follow the command text; one kept under the older per-unit key moves on
        approved = unit.verify is not None and is_trusted(
            layout.root, old, unit.verify, honour_env=False
        )
        rename_unit(doc.progress, old, new)
        if approved:
            approve(layout.root, [unit])
        rewritten = dependents(doc.progress, new)
    info(f"renamed {old} -> {new}")
    if rewritten:
        note(f"after rewritten in: {', '.join(rewritten)}")
    return 0


def set_note(unit_id: str, text: str) -> int:
    layout = paths.find_layout()
    with progress_io.transaction(layout) as doc:
        unit = doc.progress.require_unit(unit_id)
        unit.notes = text.strip() or None
    info(f"{unit_id}: note {'kept' if unit.notes else 'cleared'}")
    return 0
