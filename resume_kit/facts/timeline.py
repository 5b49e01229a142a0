"""The timeline of a work tree from its state library (facts/history_db): sessions (briefs),
compactions (pre-compact snapshots), verified units and failures over time, a burn-down of the
units left, and the tokens the agents spent per verified unit (the interval ending at its pass),
drawn as text for the terminal and as one self-contained HTML page with inline SVG (no script,
no network)."""

from __future__ import annotations

import bisect
import datetime as dt
import html
import itertools

from resume_kit.core.light_dataclass import dataclass, field
from resume_kit.core.typing_light import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resume_kit.facts.transcripts.usage import Usage

BARS = " ▁▂▃▄▅▆▇█"
WIDTH, HEIGHT, PAD = 720, 240, 40


@dataclass(frozen=True)
class UnitTokens:
    """Tokens spent in the interval ending at ``unit``'s pass (``unit`` None: after the last
    pass, still open); ``complete`` False when a byte cap or the session limit cut a reader,
    so ``tokens`` is a lower bound ("at least")."""

    unit: str | None
    at: float | None  # the pass (epoch seconds); None for the open interval
    tokens: int
    complete: bool

    def figure(self) -> str:
        return f"{'' if self.complete else 'at least '}{self.tokens:,}"

    def as_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "at": self.at, "tokens": self.tokens, "complete": self.complete}


def tokens_per_unit(
    passes: list[tuple[str, float]],
    usages: list[Usage],
    start: float | None,
    every_session: bool = True,
) -> list[UnitTokens]:
    """Each pass (unit, epoch; oldest first) with the tokens used after the pass before it (the
    first: after ``start``, None meaning since the sessions began), then the open interval
    after the last pass."""
    points = sorted((at.timestamp(), n) for u in usages for at, n in u.points)
    covered = [u.covered_from.timestamp() for u in usages if u.covered_from is not None]

    def whole(since: float | None) -> bool:
        return every_session and all(since is not None and c <= since for c in covered)

    times = [t for t, _ in points]
    running = [0, *itertools.accumulate(n for _, n in points)]  # tokens before index i

    def upto(at: float | None) -> int:  # tokens at moments <= at (None: all)
        return running[-1] if at is None else running[bisect.bisect_right(times, at)]

    found: list[UnitTokens] = []
    bounds: list[tuple[str | None, float | None]] = [*passes, (None, None)]
    prev = start
    for unit, at in bounds:
        used = upto(at) - (0 if prev is None else upto(prev))
        found.append(UnitTokens(unit, at, max(used, 0), whole(prev)))
        prev = at
    return found


@dataclass
class Timeline:
    total: int
    events: list[dict[str, Any]] = field(default_factory=list)  # at, kind, unit, passed
    burn: list[tuple[float, int]] = field(default_factory=list)  # (at, units left)
    tokens: list[UnitTokens] = field(default_factory=list)  # per verified unit, then the open one

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


MAX_TOKEN_ROWS = 20  # verified units shown one per line in the terminal (the newest)


def token_lines(line: Timeline, width: int = 30) -> list[str]:
    """Tokens per verified unit as one bar per line (the newest :data:`MAX_TOKEN_ROWS`), then
    what was spent since the last pass."""
    units = [t for t in line.tokens if t.unit is not None]
    if not units:
        return []
    top = max((t.tokens for t in line.tokens), default=0) or 1
    name_width = min(max(len(t.unit or "") for t in units), 24)
    rows = ["tokens per verified unit:"]
    if len(units) > MAX_TOKEN_ROWS:
        rows.append(f"  ({len(units) - MAX_TOKEN_ROWS} earlier units: see --json or --html)")
    for t in units[-MAX_TOKEN_ROWS:]:
        bar = "█" * round(t.tokens / top * width) or ("▏" if t.tokens else "")
        rows.append(f"  {(t.unit or '')[:24]:<{name_width}} {bar} {t.figure()}")
    open_part = line.tokens[-1]
    if open_part.unit is None:
        rows.append(f"  since {units[-1].unit} passed: {open_part.figure()}")
    return rows


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


TOKENS_HEIGHT = 200


def tokens_svg(line: Timeline) -> str:
    """A bar per verified unit (and a dashed one for the interval still open): its tokens."""
    bars = line.tokens
    top = max((t.tokens for t in bars), default=0) or 1
    inner = WIDTH - 2 * PAD
    step = inner / max(len(bars), 1)
    parts = [
        f'<svg id="tokens" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{TOKENS_HEIGHT}" viewBox="0 0 {WIDTH} {TOKENS_HEIGHT}" role="img" '
        'aria-label="tokens spent per verified unit">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{TOKENS_HEIGHT}" fill="#fff"/>',
        f'<line class="axis" x1="{PAD}" y1="{TOKENS_HEIGHT - PAD}" x2="{WIDTH - PAD}" '
        f'y2="{TOKENS_HEIGHT - PAD}" stroke="#888"/>',
    ]
    for i, t in enumerate(bars):
        h = (TOKENS_HEIGHT - 2 * PAD) * t.tokens / top
        x = PAD + i * step + step * 0.1
        kind = "tokens" if t.unit is not None else "tokens-open"
        label = f"{t.unit} passed" if t.unit is not None else "since the last pass"
        title = html.escape(f"{label}: {t.figure()} tokens")
        fill = "#1f6feb" if t.complete else "#8fb8f5"
        dashed = "" if t.unit is not None else ' stroke="#1f6feb" stroke-dasharray="3 3"'
        parts.append(
            f'<rect class="{kind}" x="{x:.1f}" y="{TOKENS_HEIGHT - PAD - h:.1f}" '
            f'width="{step * 0.8:.1f}" height="{h:.1f}" fill="{fill}"{dashed}>'
            f"<title>{title}</title></rect>"
        )
        name = (t.unit or "(open)")[:14] if len(bars) <= 40 else ""
        if name:
            parts.append(
                f'<text class="tokens-label" x="{x + step * 0.4:.1f}" '
                f'y="{TOKENS_HEIGHT - PAD + 14}" font-size="11" font-family="sans-serif" '
                f'text-anchor="middle">{html.escape(name)}</text>'
            )
    parts.append(
        f'<text x="{PAD}" y="{PAD - 12}" font-size="12" font-family="sans-serif">'
        f"tokens per verified unit (most {top:,}; pale: at least)</text></svg>"
    )
    return "\n".join(parts)


def _tokens_table(line: Timeline) -> str:
    rows = "\n".join(
        "<tr><td>{}</td><td>{}</td><td>{}</td></tr>".format(
            html.escape(t.unit or "(since the last pass)"),
            _utc(t.at) if t.at is not None else "",
            html.escape(t.figure()),
        )
        for t in line.tokens
    )
    return (
        '<table id="unit-tokens"><tr><th>verified unit</th><th>passed (UTC)</th>'
        f"<th>tokens</th></tr>{rows}</table>"
    )


def _utc(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def html_page(line: Timeline, title: str) -> str:
    rows = "\n".join(
        "<tr><td>{}</td><td>{}</td><td>{}</td></tr>".format(
            _utc(e["at"]),
            html.escape(e["kind"]),
            html.escape(e["unit"] or ""),
        )
        for e in line.events
    )
    tokens_part = ""
    if any(t.unit is not None for t in line.tokens):
        tokens_part = f"<h2>Tokens per verified unit</h2>{tokens_svg(line)}{_tokens_table(line)}"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}td{padding:0 1em}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        f'<p id="counts">{html.escape(counts_text(line))}</p>'
        f"{svg(line)}{tokens_part}<h2>Events</h2>"
        f'<table id="events"><tr><th>when (UTC)</th><th>what</th><th>unit</th></tr>{rows}'
        "</table></body></html>\n"
    )
