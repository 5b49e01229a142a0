"""The unit table of `status`: one row per unit (long runs of alike, unremarkable units
collapsed into one) and the widths of its free-text columns."""

from __future__ import annotations

from resume_kit.core.light_dataclass import dataclass
from resume_kit.model.findings import Finding
from resume_kit.model.progress import Progress, Unit

SHOW_ALL_UNTIL = 30  # up to this many units every one gets a row
MIN_RUN = 3  # shorter runs of alike units are not worth collapsing


@dataclass
class Row:
    id: str
    title: str
    status: str
    evidence: str
    failure: str
    group: str = ""


def _evidence_text(unit: Unit, now: str) -> str:
    from resume_kit.core.inert import short_sha
    from resume_kit.core.timeutil import age as age_of

    if unit.evidence is None:
        return "not verified" if unit.status == "done" else ""
    ev = unit.evidence
    age = age_of(ev.verified_at, now) or ev.verified_at or "?"
    commit = short_sha(ev.commit)
    text = f"{age} · {commit}" if commit else age
    return text + (" (dirty)" if ev.dirty else "")


def status_text(unit: Unit) -> str:
    """A done unit without evidence is a claim (an import's ``[x]``, a hand edit), not a result."""
    return "claimed done" if unit.status == "done" and unit.evidence is None else unit.status


def _failure_text(unit: Unit) -> str:
    failure = unit.last_failure
    if failure is None:
        return ""
    from resume_kit.core.inert import squash

    excerpt = failure.excerpt.strip().splitlines()[-1] if failure.excerpt.strip() else ""
    excerpt = squash(excerpt, 60)
    reruns = f" +{failure.reruns} re-run" if failure.reruns else ""
    return f"{failure.repeats}x{reruns} exit {failure.exit_code}" + (
        f": {excerpt}" if excerpt else ""
    )


def unit_rows(progress: Progress, findings: list[Finding], now: str) -> list[Row]:
    """One row per unit, except long runs of alike, unremarkable units collapse into one."""
    from resume_kit.core.escape import escape_controls as shown

    # every field comes from the progress file: one printable line each
    rows_of = [
        Row(shown(u.id), shown(u.title), shown(status_text(u)), shown(_evidence_text(u, now)),
            shown(_failure_text(u)), shown(u.group or ""))
        for u in progress.units
    ]  # fmt: skip
    if len(progress.units) <= SHOW_ALL_UNTIL:
        return rows_of
    flagged = {f.unit for f in findings if f.unit}
    rows: list[Row] = []
    run: list[Unit] = []

    def flush() -> None:
        if len(run) >= MIN_RUN:
            rows.append(
                Row(
                    f"{run[0].id} … {run[-1].id}",
                    f"{len(run)} units",
                    run[0].status,
                    "",
                    "",
                    rows_of[index[run[0].id]].group,
                )
            )
        else:
            rows.extend(rows_of[index[u.id]] for u in run)
        run.clear()

    index = {u.id: i for i, u in enumerate(progress.units)}
    for unit in progress.units:
        plain = (
            unit.id not in flagged and unit.last_failure is None and unit.status in ("done", "todo")
        )
        if plain and (not run or (run[0].status, run[0].group) == (unit.status, unit.group)):
            run.append(unit)
            continue
        flush()
        if plain:
            run.append(unit)
        else:
            rows.append(rows_of[index[unit.id]])
    flush()
    return rows


def free_text_widths(rows: list[Row], total: int) -> tuple[int, int]:
    """Widths for the title and last-failure columns: the fact columns (id, status, evidence)
    keep their full width and the free text shares what is left (never below 12)."""
    fixed = sum(
        max(len(name), *(len(getattr(row, name)) for row in rows))
        for name in ("id", "status", "evidence")
    )
    title_need = max(len("title"), *(len(row.title) for row in rows))
    failure_need = max(0, *(len(row.failure) for row in rows))
    columns = 5 if failure_need else 4
    left = max(24, total - fixed - 3 * (columns - 1))
    if not failure_need:
        return min(title_need, left), 0
    failure_need = max(failure_need, len("last failure"))
    title_w = min(title_need, max(12, left - min(failure_need, left // 2)))
    return title_w, min(failure_need, max(12, left - title_w))


NOTE_CHARS = 200  # a unit's note or block reason in status; the file keeps it whole


def unit_details(progress: Progress) -> list[tuple[str, str, str]]:
    """(kind, id, text) for what status says under the table: why each blocked unit is
    blocked, and what the units in progress (or the next one) were in the middle of."""
    from resume_kit.core.escape import escape_controls as shown
    from resume_kit.core.inert import clip
    from resume_kit.model.progress import pick_next

    def text(value: str) -> str:
        return shown(clip(" ".join(value.split()), NOTE_CHARS))

    details = [
        ("blocked", shown(u.id), text(u.blocked_reason))
        for u in progress.units
        if u.status == "blocked" and u.blocked_reason and u.blocked_reason.strip()
    ]
    nxt = pick_next(progress)
    for unit in progress.units:
        if unit.notes and unit.notes.strip() and (unit.status == "in_progress" or unit is nxt):
            details.append(("note", shown(unit.id), text(unit.notes)))
    return details
