"""`status`: the units with status and evidence age, the workspace facts, and the findings.

It takes a snapshot without saving it and never writes progress.yaml. An invalid progress file
stops it with exit 2 (the ProgressFileError reaches cli.main).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from resume_kit.cli import ui
from resume_kit.model.findings import Finding
from resume_kit.model.progress import Progress, Unit

if TYPE_CHECKING:
    from resume_kit.model.facts import Snapshot

SHOW_ALL_UNTIL = 30  # up to this many units every one gets a row
MIN_RUN = 3  # shorter runs of alike units are not worth collapsing


@dataclass
class Row:
    id: str
    title: str
    status: str
    evidence: str
    failure: str


def _evidence_text(unit: Unit, now: str) -> str:
    from resume_kit.core.timeutil import age as age_of

    if unit.evidence is None:
        return "none" if unit.status == "done" else ""
    ev = unit.evidence
    age = age_of(ev.verified_at, now) or ev.verified_at or "?"
    text = f"{age} · {ev.commit[:7]}" if ev.commit else age
    return text + (" (dirty)" if ev.dirty else "")


def _failure_text(unit: Unit) -> str:
    from resume_kit.core.inert import squash

    failure = unit.last_failure
    if failure is None:
        return ""
    excerpt = failure.excerpt.strip().splitlines()[-1] if failure.excerpt.strip() else ""
    excerpt = squash(excerpt, 60)
    return f"{failure.repeats}x exit {failure.exit_code}" + (f": {excerpt}" if excerpt else "")


def unit_rows(progress: Progress, findings: list[Finding], now: str) -> list[Row]:
    """One row per unit, except long runs of alike, unremarkable units collapse into one."""
    from resume_kit.core.escape import escape_controls as shown

    # every field comes from the progress file: one printable line each
    rows_of = [
        Row(shown(u.id), shown(u.title), shown(u.status), shown(_evidence_text(u, now)),
            shown(_failure_text(u)))
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
        if plain and (not run or run[0].status == unit.status):
            run.append(unit)
            continue
        flush()
        if plain:
            run.append(unit)
        else:
            rows.append(rows_of[index[unit.id]])
    flush()
    return rows


def _clip(text: str, width: int) -> str:
    from resume_kit.core.inert import clip

    return clip(text, width)


def _free_text_widths(rows: list[Row], total: int) -> tuple[int, int]:
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


def summary_line(progress: Progress, findings: list[Finding]) -> str:
    from resume_kit.model.progress import pick_next

    counts = progress.counts()
    total = len(progress.units)
    parts = [f"{counts['done']}/{total} done"]
    for key, label in (("in_progress", "in progress"), ("todo", "to do"), ("blocked", "blocked")):
        if counts[key]:
            parts.append(f"{counts[key]} {label}")
    by_severity = {s: sum(f.severity == s for f in findings) for s in ("error", "warn", "info")}
    if findings:
        detail = ", ".join(f"{n} {s}" for s, n in by_severity.items() if n)
        parts.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''} ({detail})")
    else:
        parts.append("no findings")
    nxt = pick_next(progress)
    parts.append(f"next: {nxt.id}" if nxt is not None else "nothing left to verify")
    return " · ".join(parts)


def _print_human(progress: Progress, snapshot: Snapshot, findings: list[Finding]) -> None:
    from rich.table import Table
    from rich.text import Text

    from resume_kit.brief.facts_text import describe_workspace, terminal_line

    console = ui.stdout_console()
    console.print(Text(terminal_line(f"goal: {progress.goal}")))
    if progress.units:
        table = Table(show_edge=False, pad_edge=False, header_style="bold")
        rows = unit_rows(progress, findings, snapshot.get("created_at") or "")
        title_w, failure_w = _free_text_widths(rows, console.width)
        for name in ("id", "title", "status", "evidence", "last failure"):
            if name == "last failure" and not failure_w:
                continue
            table.add_column(name, no_wrap=True)
        styles = {"done": "green", "in_progress": "yellow", "blocked": "red", "todo": ""}
        for row in rows:
            cells = [
                Text(row.id),
                Text(_clip(row.title, title_w)),
                Text(row.status, style=styles.get(row.status, "")),
                Text(row.evidence),
            ]
            if failure_w:
                cells.append(Text(_clip(row.failure, failure_w), style="red"))
            table.add_row(*cells)
        console.print(table)
    else:
        console.print(Text('no units yet (resume-kit add "TITLE" --verify CMD)'))
    console.print(Text("workspace:", style="bold"))
    for line in describe_workspace(snapshot):
        console.print(Text(f"  {line}"))
    if findings:
        console.print(Text("findings:", style="bold"))
        styles = {"error": "red", "warn": "yellow", "info": "dim"}
        for item in findings:
            entry = Text("  ")
            entry.append(f"{item.severity:<5}", style=styles[item.severity])
            entry.append(terminal_line(f" {item.code}: {item.message}"))
            console.print(entry)
    console.print(Text(summary_line(progress, findings)))


def run(json_out: bool) -> int:
    from resume_kit.core.reconcile import reconcile
    from resume_kit.facts.snapshot import take_snapshot
    from resume_kit.infra.paths import find_layout
    from resume_kit.model.progress import SCHEMA_VERSION
    from resume_kit.progress_file.config import load as load_config
    from resume_kit.progress_file.io import load
    from resume_kit.progress_file.roundtrip import to_data

    layout = find_layout()
    progress = load(layout).progress
    config = load_config(layout)
    snapshot = take_snapshot(layout, config, "manual", progress=progress)
    findings = reconcile(progress, snapshot)
    if json_out:
        ui.print_json(
            {
                "schema_version": SCHEMA_VERSION,
                "goal": progress.goal,
                "units": to_data(progress)["units"],
                "findings": [f.to_dict() for f in findings],
            }
        )
        return 0
    _print_human(progress, snapshot, findings)
    return 0
