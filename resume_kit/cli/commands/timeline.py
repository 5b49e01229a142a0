"""``resume-kit timeline [--html FILE]``: the work tree's sessions, compactions, verified units
and failures over time, with the tokens the agents spent per verified unit
(:mod:`resume_kit.facts.timeline`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from resume_kit.cli.ui import info, out, print_json
from resume_kit.core.typing_light import TYPE_CHECKING, Any
from resume_kit.infra.errors import EXIT_OK

if TYPE_CHECKING:
    from resume_kit.facts.timeline import UnitTokens
    from resume_kit.model.progress import Unit


def run(html_file: Path | None, json_out: bool) -> int:
    from resume_kit.facts import timeline
    from resume_kit.facts.history_db import all_records
    from resume_kit.facts.history_place import own_db
    from resume_kit.infra.paths import find_layout
    from resume_kit.infra.store import atomic_write
    from resume_kit.progress_file import io as progress_io

    layout = find_layout()
    progress = progress_io.load(layout).progress
    rows = all_records(own_db(layout))
    verified = {r["unit"] for r in rows if r["kind"] == "verify" and r["passed"] == 1}
    done_before = sum(1 for u in progress.units if u.status == "done" and u.id not in verified)
    line = timeline.build(rows, len(progress.units), done_before)
    line.tokens = _unit_tokens(layout.root, progress.units, rows)
    if html_file is not None:
        atomic_write(
            html_file, timeline.html_page(line, f"resume-kit timeline: {layout.root.name}")
        )
    if json_out:
        print_json(
            {
                "counts": line.counts(),
                "total": line.total,
                "events": line.events,
                "burn": line.burn,
                "tokens": [t.as_json() for t in line.tokens],
                "html": str(html_file) if html_file else None,
            }
        )
        return EXIT_OK
    for text in timeline.terminal_chart(line) + timeline.token_lines(line):
        out(text)
    if not line.tokens and line.counts()["verified"]:
        out("tokens per verified unit: no Claude Code or Codex session of this work tree found")
    if html_file is not None:
        info(f"wrote {html_file}")
    return EXIT_OK


def _unit_tokens(root: Path, units: Sequence[Unit], rows: list[dict[str, Any]]) -> list[UnitTokens]:
    """Tokens per verified unit from this tree's agent sessions. A unit's pass ends its
    interval: the history's record of that verify (sub-second), else ``evidence.verified_at``
    (whole seconds). The first interval starts with the history (else with the sessions)."""
    import datetime as dt

    from resume_kit.core.timeutil import parse_utc
    from resume_kit.facts.timeline import tokens_per_unit
    from resume_kit.facts.transcripts.usage import tree_usage

    recorded = {r["unit"]: r["at"] for r in rows if r["kind"] == "verify" and r["passed"] == 1}
    passes: list[tuple[str, float]] = []
    for unit in units:
        moment = parse_utc(unit.evidence.verified_at) if unit.evidence is not None else None
        if unit.status != "done" or moment is None:
            continue
        at = recorded.get(unit.id)
        exact = at is not None and 0 <= at - moment.timestamp() < 2
        passes.append((unit.id, at if exact and at is not None else moment.timestamp()))
    passes.sort(key=lambda p: p[1])
    if not passes:
        return []
    start: float | None = rows[0]["at"] if rows else None
    if start is not None and start >= passes[0][1]:
        start = None  # a pass older than the history: count from the sessions' start
    since = dt.datetime.fromtimestamp(start, dt.timezone.utc) if start is not None else None
    usages, every = tree_usage(root, since)
    if not usages:
        return []  # no agent session of this tree: unknown, not zero
    return tokens_per_unit(passes, usages, start, every)
