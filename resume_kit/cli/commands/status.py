"""`status`: the units with status and evidence age, the workspace facts, and the findings.

It takes a snapshot without saving it and never writes progress.yaml. An invalid progress file
stops it with exit 2 (the ProgressFileError reaches cli.main).
"""

from __future__ import annotations

import sys

from resume_kit.cli import ui
from resume_kit.cli.status_table import Row, free_text_widths, unit_rows
from resume_kit.core.typing_light import TYPE_CHECKING
from resume_kit.infra.collector import fewer_collections
from resume_kit.model.findings import Finding
from resume_kit.model.progress import Progress

if TYPE_CHECKING:
    from rich.console import Console

    from resume_kit.model.facts import Snapshot


def _clip(text: str, width: int) -> str:
    from resume_kit.core.inert import clip

    return clip(text, width)


def summary_line(
    progress: Progress, findings: list[Finding], leases: dict[str, str] | None = None
) -> str:
    from resume_kit.facts.leases import held_by_others
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
    nxt = pick_next(progress, skip=held_by_others(leases))
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


def _print_table(rows: list[Row], console: Console) -> None:
    """On a terminal: a Rich table; the free-text columns are clipped to the width."""
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    title_w, failure_w = free_text_widths(rows, console.width)
    for name in ("id", "title", "status", "evidence", "last failure"):
        if name == "last failure" and not failure_w:
            continue
        table.add_column(name, no_wrap=True)
    group = ""
    for row in rows:
        if row.group != group and any(r.group for r in rows):
            group = row.group
            # a heading row where the group changes: no column of its own to squeeze the facts
            table.add_row("", Text(_clip(group or "(no group)", title_w), style="bold"))
        cells = [
            Text(row.id),
            Text(_clip(row.title, title_w)),
            Text(row.status, style=STYLES.get(row.status, "")),
            Text(row.evidence),
        ]
        if failure_w:
            cells.append(Text(_clip(row.failure, failure_w), style="red"))
        table.add_row(*cells)
    console.print(table)


def plain_table(rows: list[Row]) -> list[str]:
    """Not on a terminal (a pipe, an agent's tool): aligned columns, nothing ever clipped, so
    every id and status can be passed on as printed."""
    names = [
        name
        for name in COLUMNS
        if name not in ("group", "last failure") or any(getattr(r, _FIELD[name]) for r in rows)
    ]
    cells = [names, *([getattr(row, _FIELD[name]) for name in names] for row in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(names) - 1)]
    return [
        "  ".join(
            [*(cell.ljust(w) for cell, w in zip(line, widths, strict=False)), line[-1]]
        ).rstrip()
        for line in cells
    ]


COLUMNS = ("id", "status", "evidence", "group", "title", "last failure")  # the plain order
_FIELD = {name: name.replace("last ", "") for name in COLUMNS}
STYLES = {"done": "green", "in_progress": "yellow", "blocked": "red", "claimed done": "yellow"}


def _print_human(
    progress: Progress, snapshot: Snapshot, findings: list[Finding], leases: dict[str, str]
) -> None:
    from rich.text import Text

    from resume_kit.brief.facts_text import describe_workspace, terminal_line

    console = ui.stdout_console()
    console.print(Text(terminal_line(f"goal: {progress.goal}")))
    if progress.units:
        rows = unit_rows(progress, findings, snapshot.get("created_at") or "")
        if ui.is_terminal(sys.stdout):
            _print_table(rows, console)
        else:
            for line in plain_table(rows):
                console.print(Text(line))
    else:
        console.print(Text('no units yet (resume-kit add "TITLE" --verify CMD)'))
    _print_details(console, progress)
    _print_leases(console, leases)
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
    console.print(Text(summary_line(progress, findings, leases)))


def _print_leases(console: Console, leases: dict[str, str]) -> None:
    """Who leases which unit, as this clone last heard (docs/many-agents.md)."""
    from rich.text import Text

    from resume_kit.brief.facts_text import terminal_line

    if leases:
        console.print(Text("leases:", style="bold"))
        for unit, who in sorted(leases.items()):
            console.print(Text(terminal_line(f"  {unit}: {who}")))


@fewer_collections()  # as the brief's: the snapshot and the model hold no cycles
def run(json_out: bool) -> int:
    from resume_kit.core.reconcile import reconcile
    from resume_kit.facts.snapshot import take_snapshot
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.config import load as load_config
    from resume_kit.progress_file.io import load

    layout = find_layout(config_ahead=True)
    progress = load(layout).progress
    config = load_config(layout)
    snapshot = take_snapshot(layout, config, "manual", progress=progress)
    findings = reconcile(progress, snapshot)
    from resume_kit.facts.leases import who_holds_what

    leases = who_holds_what(layout.root, common_dir=layout.git_common_dir)
    if json_out:
        from resume_kit.cli.status_json import status_data

        ui.print_json(status_data(layout, progress, snapshot, findings, leases))
        return 0
    _print_human(progress, snapshot, findings, leases)
    return 0
