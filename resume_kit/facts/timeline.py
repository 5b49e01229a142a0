"""The timeline of a work tree from its state library (facts/history_db): sessions (briefs),
compactions (pre-compact snapshots), verified units and failures over time, a burn-down of the
units left, drawn as text for the terminal and as one self-contained HTML page with an inline
SVG (no script, no network)."""

from __future__ import annotations

import datetime as dt
import html
from dataclasses import dataclass, field
from typing import Any

BARS = " ▁▂▃▄▅▆▇█"
WIDTH, HEIGHT, PAD = 720, 240, 40


@dataclass
class Timeline:
    total: int
    events: list[dict[str, Any]] = field(default_factory=list)  # at, kind, unit, passed
    burn: list[tuple[float, int]] = field(default_factory=list)  # (at, units left)

    def counts(self) -> dict[str, int]:
        kinds = [e["kind"] for e in self.events]
        return {
            "sessions": kinds.count("session"),
            "compactions": kinds.count("compaction"),
            "verified": kinds.count("verified"),
            "failures": kinds.count("failure"),
        }


def build(rows: list[dict[str, Any]], total: int, done_before: int = 0) -> Timeline:
    """The timeline from history rows (oldest first) and the number of units in the plan."""
    line = Timeline(total)
    verified: set[str] = set()
    left = max(0, total - done_before)
    if rows:
        line.burn.append((rows[0]["at"], left))
    for row in rows:
        kind = None
        if row["kind"] == "brief":
            kind = "session"
        elif row["kind"] == "snapshot" and "pre-compact" in (row["text"] or ""):
            kind = "compaction"
        elif row["kind"] == "verify":
            kind = "verified" if row["passed"] == 1 else "failure"
        if kind is None:
            continue
        line.events.append({"at": row["at"], "kind": kind, "unit": row["unit"]})
        if kind == "verified" and row["unit"] and row["unit"] not in verified:
            verified.add(row["unit"])
            left = max(0, left - 1)
            line.burn.append((row["at"], left))
    return line


def counts_text(line: Timeline) -> str:
    """``2 sessions, 1 compaction, 3 verified, 1 failure; 12 units``."""
    c = line.counts()

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    return (
        f"{n(c['sessions'], 'session')}, {n(c['compactions'], 'compaction')}, "
        f"{c['verified']} verified, {n(c['failures'], 'failure')}; {n(line.total, 'unit')}"
    )


def terminal_chart(line: Timeline, width: int = 40) -> list[str]:
    """A one-line burn-down (units left per time slice) and the counts."""
    head = counts_text(line)
    if len(line.burn) < 2 or line.total == 0:
        return [head]
    start, end = line.burn[0][0], line.burn[-1][0]
    span = max(end - start, 1e-9)
    cells = []
    for i in range(width):
        t = start + span * i / (width - 1)
        left = next(v for at, v in reversed(line.burn) if at <= t) if t >= start else line.total
        cells.append(BARS[round(left / line.total * (len(BARS) - 1))])
    return [head, "left: " + "".join(cells) + f" {line.burn[-1][1]}"]


def _x(at: float, start: float, span: float) -> float:
    return PAD + (WIDTH - 2 * PAD) * ((at - start) / span if span else 0.0)


def _y(left: int, total: int) -> float:
    return PAD + (HEIGHT - 2 * PAD) * (1 - (left / total if total else 0.0))


def svg(line: Timeline) -> str:
    start = line.burn[0][0] if line.burn else 0.0
    end = line.burn[-1][0] if line.burn else 0.0
    ends = [e["at"] for e in line.events]
    if ends:
        start, end = min(start, min(ends)), max(end, max(ends))
    span = end - start
    parts = [
        f'<svg id="burndown" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        'aria-label="burn-down: units left over time">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" '
        f'y2="{HEIGHT - PAD}" stroke="#888"/>',
        f'<line class="axis" x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#888"/>',
    ]
    if line.burn:
        points = []
        for i, (at, left) in enumerate(line.burn):
            if i:
                points.append(
                    f"{_x(at, start, span):.1f},{_y(line.burn[i - 1][1], line.total):.1f}"
                )
            points.append(f"{_x(at, start, span):.1f},{_y(left, line.total):.1f}")
        points.append(f"{_x(end, start, span):.1f},{_y(line.burn[-1][1], line.total):.1f}")
        parts.append(
            f'<polyline class="burn" fill="none" stroke="#1f6feb" stroke-width="2" '
            f'points="{" ".join(points)}"/>'
        )
    colours = {
        "verified": "#1a7f37",
        "failure": "#cf222e",
        "session": "#8250df",
        "compaction": "#9a6700",
    }
    for e in line.events:
        x = _x(e["at"], start, span)
        title = html.escape(f"{e['kind']} {e['unit'] or ''}".strip())
        if e["kind"] in ("session", "compaction"):
            parts.append(
                f'<line class="{e["kind"]}" x1="{x:.1f}" y1="{PAD}" x2="{x:.1f}" '
                f'y2="{HEIGHT - PAD}" stroke="{colours[e["kind"]]}" stroke-dasharray="3 3">'
                f"<title>{title}</title></line>"
            )
        else:
            parts.append(
                f'<circle class="{e["kind"]}" cx="{x:.1f}" cy="{HEIGHT - PAD + 12}" r="4" '
                f'fill="{colours[e["kind"]]}"><title>{title}</title></circle>'
            )
    parts.append(
        f'<text x="{PAD}" y="{PAD - 12}" font-size="12" font-family="sans-serif">'
        f"units left (of {line.total})</text></svg>"
    )
    return "\n".join(parts)


def html_page(line: Timeline, title: str) -> str:
    rows = "\n".join(
        "<tr><td>{}</td><td>{}</td><td>{}</td></tr>".format(
            dt.datetime.fromtimestamp(e["at"], dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
            html.escape(e["kind"]),
            html.escape(e["unit"] or ""),
        )
        for e in line.events
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}td{padding:0 1em}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        f'<p id="counts">{html.escape(counts_text(line))}</p>'
        f"{svg(line)}"
        f'<table id="events"><tr><th>when (UTC)</th><th>what</th><th>unit</th></tr>{rows}'
        "</table></body></html>\n"
    )
