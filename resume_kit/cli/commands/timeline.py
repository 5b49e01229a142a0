"""``resume-kit timeline [--html FILE]``: the work tree's sessions, compactions, verified units
and failures over time (:mod:`resume_kit.facts.timeline`)."""

from __future__ import annotations

from pathlib import Path

from resume_kit.cli.ui import info, out, print_json
from resume_kit.infra.errors import EXIT_OK


def run(html_file: Path | None, json_out: bool) -> int:
    from resume_kit.facts import timeline
    from resume_kit.facts.history_db import all_records, db_path
    from resume_kit.infra.paths import find_layout
    from resume_kit.infra.store import atomic_write
    from resume_kit.progress_file import io as progress_io

    layout = find_layout()
    progress = progress_io.load(layout).progress
    rows = all_records(db_path(str(layout.root), str(layout.git_common_dir)))
    verified = {r["unit"] for r in rows if r["kind"] == "verify" and r["passed"] == 1}
    done_before = sum(1 for u in progress.units if u.status == "done" and u.id not in verified)
    line = timeline.build(rows, len(progress.units), done_before)
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
                "html": str(html_file) if html_file else None,
            }
        )
        return EXIT_OK
    for text in timeline.terminal_chart(line):
        out(text)
    if html_file is not None:
        info(f"wrote {html_file}")
    return EXIT_OK
