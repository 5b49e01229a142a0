"""Merging an imported task list into an existing progress file (``resume-kit import``).

A listed unit is the same unit as one in the file when it has its id, else its title (space
and case ignored). Such a unit takes the list's title and status only while it has no
evidence (what resume-kit saw pass outranks what a list claims), plus dependencies on units
this import adds; nothing else of it changes. Every other listed unit is added at the end.
Units the list does not name are left alone. Nothing is ever added twice.
"""

from __future__ import annotations

from resume_kit.core.light_dataclass import dataclass, field
from resume_kit.model.progress import Progress, Unit
from resume_kit.progress_file.importers import claim_id


@dataclass
class MergeReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def _key(title: str) -> str:
    return " ".join(title.split()).casefold()


def _match(progress: Progress, listed: list[Unit]) -> dict[str, Unit]:
    """Listed id -> the unit of the file it is (by id first, then by title)."""
    by_id = {u.id: u for u in progress.units}
    matched: dict[str, Unit] = {}
    claimed: set[str] = set()
    for unit in listed:
        existing = by_id.get(unit.id)
        if existing is not None:
            matched[unit.id] = existing
            claimed.add(existing.id)
    by_title: dict[str, Unit] = {}
    for existing in progress.units:
        if existing.id not in claimed:
            by_title.setdefault(_key(existing.title), existing)
    for unit in listed:
        if unit.id not in matched:
            existing = by_title.pop(_key(unit.title), None)
            if existing is not None and existing.id not in claimed:
                matched[unit.id] = existing
                claimed.add(existing.id)
    return matched


def merge(progress: Progress, listed: list[Unit]) -> MergeReport:
    """Merge ``listed`` into ``progress`` in place; which ids were added, updated, unchanged."""
    report = MergeReport()
    matched = _match(progress, listed)
    taken = {u.id for u in progress.units}
    final: dict[str, str] = {lid: unit.id for lid, unit in matched.items()}
    new: list[Unit] = []
    for unit in listed:
        if unit.id not in matched:
            final[unit.id] = claim_id(unit.id, taken)
            new.append(unit)
    added_ids = {final[u.id] for u in new}
    for unit in listed:
        existing = matched.get(unit.id)
        if existing is None:
            continue
        changed = False
        if existing.evidence is None:
            if existing.title != unit.title:
                existing.title, changed = unit.title, True
            if existing.status != unit.status:
                existing.status, changed = unit.status, True
                existing.blocked_reason = unit.blocked_reason if unit.status == "blocked" else None
            for dep in unit.after:
                dep_id = final.get(dep)
                if dep_id in added_ids and dep_id not in existing.after:
                    existing.after.append(dep_id)
                    changed = True
        (report.updated if changed else report.unchanged).append(existing.id)
    for unit in new:
        unit.id = final[unit.id]
        unit.after = list(dict.fromkeys(final[d] for d in unit.after if d in final))
        progress.units.append(unit)
        report.added.append(unit.id)
    return report
