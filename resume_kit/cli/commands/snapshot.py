"""`snapshot`: record the workspace facts; print what changed since the previous snapshot.

Under a hook (``--trigger post-commit`` or ``pre-compact``) it never fails the caller: anything
wrong is one line on stderr and exit 0. ``pre-compact`` also reads the agent hook's stdin JSON
(``cwd``, ``transcript_path``).
"""

from __future__ import annotations

from pathlib import Path

from resume_kit.cli import ui
from resume_kit.infra.collector import fewer_collections

HOOK_TRIGGERS = ("post-commit", "pre-compact")


def _record(
    json_out: bool,
    quiet: bool,
    trigger: str,
    start: Path | None,
    transcript_path: Path | None,
    session: str | None = None,
) -> int:
    from resume_kit.brief.facts_text import render_diff
    from resume_kit.core.snapshot_diff import diff_snapshots
    from resume_kit.facts.snapshot import take_snapshot
    from resume_kit.facts.snapshot_store import Encoded, load_latest, save_snapshot
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.config import load as load_config

    layout = find_layout(start, config_ahead=True)
    config = load_config(layout)
    previous, warnings = load_latest(layout)
    encoded = Encoded()
    snapshot = take_snapshot(
        layout, config, trigger, transcript_path=transcript_path, encoded=encoded
    )
    save_snapshot(layout, snapshot, config.keep_snapshots, session=session, encoded=encoded)
    if quiet:
        return 0
    for warning in warnings:
        ui.warn(warning)
    if json_out:
        ui.print_json(snapshot)
    else:
        ui.out(render_diff(diff_snapshots(previous, snapshot), snapshot))
    return 0


@fewer_collections()  # a snapshot's facts and the progress model hold no cycles
def run(json_out: bool, quiet: bool, trigger: str, start: Path | None = None) -> int:
    """``start``: a folder in the work tree (default: the current directory)."""
    if trigger not in HOOK_TRIGGERS:
        return _record(json_out, quiet, trigger, start, None)
    transcript_path: Path | None = None
    session: str | None = None
    try:
        if trigger == "pre-compact":
            from resume_kit.integrations.agent_input import read_hook_input

            payload = read_hook_input()
            cwd = payload.get("cwd")
            if cwd and Path(cwd).is_dir():
                start = Path(cwd)
            if payload.get("transcript_path"):
                transcript_path = Path(payload["transcript_path"])
            if isinstance(payload.get("session_id"), str):
                session = payload["session_id"]
        return _record(json_out, quiet, trigger, start, transcript_path, session)
    except Exception as exc:  # a hook must never break the commit or the agent
        from resume_kit.infra.errors import ResumeKitError

        reason = exc.message if isinstance(exc, ResumeKitError) else f"{type(exc).__name__}: {exc}"
        ui.say(f"snapshot skipped ({' '.join(str(reason).split())[:200]})")
        return 0
