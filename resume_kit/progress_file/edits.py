"""Changes to units after they exist: edit fields, remove, rename (on the model, checked as
validation checks a file).

The CLI (`edit`, `rm`, `rename`, `note`) calls these inside a progress transaction; approvals
of verify commands are the caller's business (they follow the command text, not the id).
"""

from __future__ import annotations

from resume_kit.core.light_dataclass import dataclass
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model.progress import ID_PATTERN, ID_PATTERN_TEXT, Progress, Unit
from resume_kit.progress_file.validate import graph_problems


def check_id(unit_id: str) -> str:
    """``unit_id`` when it is a valid id; a usage error naming the pattern otherwise."""
    if not ID_PATTERN.match(unit_id):
        raise ResumeKitError(
            f"invalid id '{unit_id}': ids must match {ID_PATTERN_TEXT}",
            hint="use lower-case letters, digits, '.', '_' and '-', e.g. --id parse-dates",
        )
    return unit_id


def dependents(progress: Progress, unit_id: str) -> list[str]:
    """The ids of the units whose ``after`` names ``unit_id``, in file order."""
    return [u.id for u in progress.units if unit_id in u.after]


@dataclass
class Edit:
    """The fields to change; None leaves a field as it is."""

    title: str | None = None
    verify: str | None = None
    files: list[str] | None = None
    artifacts: list[str] | None = None
    after: list[str] | None = None
    side_effects: bool | None = None


def apply_edit(progress: Progress, unit: Unit, edit: Edit) -> list[str]:
    """Apply ``edit`` to ``unit``; the names of the fields that changed.

    A new verify command drops the evidence and the last failure: they are about the old one.
    """
    if edit.after is not None:
        check_after(progress, unit, edit.after)
    changed = []
    for name in ("title", "verify", "files", "artifacts", "after", "side_effects"):
        value = getattr(edit, name)
        if value is not None and value != getattr(unit, name):
            setattr(unit, name, value)
            changed.append(name)
    if "verify" in changed:
        unit.evidence = None
        unit.last_failure = None
    return changed


def check_after(progress: Progress, unit: Unit, after: list[str]) -> None:
    """Refuse ``after`` for ``unit`` when it names an unknown unit, the unit itself, or closes
    a cycle."""
    for dep in after:
        if dep == unit.id:
            raise ResumeKitError(
                f"--after names '{dep}' itself", hint="a unit cannot wait for itself"
            )
        if progress.unit(dep) is None:
            raise ResumeKitError(
                f"--after names unknown unit '{dep}'", hint="see `resume-kit status` for ids"
            )
    trial = [Unit(u.id, u.title, after=after if u is unit else u.after) for u in progress.units]
    problems = graph_problems(trial)
    if problems:
        raise ResumeKitError(
            f"--after would make {problems[0]}", hint="a unit cannot wait for one that waits for it"
        )


def remove(progress: Progress, unit_id: str, force: bool) -> list[str]:
    """Remove the unit; the ids whose ``after`` named it (dropped there, only with ``force``)."""
    unit = progress.require_unit(unit_id)
    waiting = dependents(progress, unit_id)
    if waiting and not force:
        shown = ", ".join(waiting[:8]) + (" …" if len(waiting) > 8 else "")
        raise ResumeKitError(
            f"{len(waiting)} {'units depend' if len(waiting) > 1 else 'unit depends'} on "
            f"'{unit_id}': {shown}",
            hint="edit their --after first, or pass --force to remove it from their after",
        )
    for other in progress.units:
        if unit_id in other.after:
            other.after = [dep for dep in other.after if dep != unit_id]
    progress.units.remove(unit)
    return waiting


def rename(progress: Progress, old: str, new: str) -> Unit:
    """Give unit ``old`` the id ``new``, rewriting every ``after`` that names it; evidence,
    failure, notes and status stay with the unit."""
    unit = progress.require_unit(old)
    check_id(new)
    if new != old and progress.unit(new) is not None:
        raise ResumeKitError(f"a unit with id '{new}' already exists", hint="choose another id")
    unit.id = new
    for other in progress.units:
        if old in other.after:
            other.after = [new if dep == old else dep for dep in other.after]
    return unit
