"""`status`: the units with status and evidence age, the workspace facts, and the findings.

It takes a snapshot without saving it and never writes progress.yaml. An invalid progress file
stops it with exit 2 (the ProgressFileError reaches cli.main).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from resume_kit.cli import ui
from resume_kit.cli.status_table import free_text_widths, unit_rows
from resume_kit.model.findings import Finding
from resume_kit.model.progress import Progress

if TYPE_CHECKING:
    from rich.console import Console

    from resume_kit.model.facts import Snapshot


def _clip(text: str, width: int) -> str:
    from resume_kit.core.inert import clip

    return clip(text, width)


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


def _print_details(console: Console, progress: Progress) -> None:
    from rich.text import Text

    from resume_kit.cli.status_table import unit_details

    details = unit_details(progress)
    for kind, heading in (("blocked", "blocked:"), ("note", "notes:")):
        lines = [(uid, text) for k, uid, text in details if k == kind]
        if lines:
            console.print(Text(heading, style="bold"))
            for uid, text in lines:
                console.print(Text(f"  {uid}: {text}"))


def _print_human(progress: Progress, snapshot: Snapshot, findings: list[Finding]) -> None:
    from rich.table import Table
    from rich.text import Text

    from resume_kit.brief.facts_text import describe_workspace, terminal_line

    console = ui.stdout_console()
    console.print(Text(terminal_line(f"goal: {progress.goal}")))
    if progress.units:
        table = Table(show_edge=False, pad_edge=False, header_style="bold")
        rows = unit_rows(progress, findings, snapshot.get("created_at") or "")
        title_w, failure_w = free_text_widths(rows, console.width)
        for name in ("id", "title", "status", "evidence", "last failure"):
            if name == "last failure" and not failure_w:
                continue
            table.add_column(name, no_wrap=True)
        styles = {
            "done": "green",
            "in_progress": "yellow",
            "blocked": "red",
            "todo": "",
            "claimed done": "yellow",
        }
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
    _print_details(console, progress)
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
