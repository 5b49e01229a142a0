"""`action record` / `action list`: the side-effect ledger (what must not happen twice)."""

from __future__ import annotations

from typing import Literal, cast

from resume_kit.cli.ui import info, out, print_json
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model import progress
from resume_kit.progress_file import io as progress_io


def record(key: str, description: str, status: str) -> int:
    if status not in progress.ACTION_STATUSES:
        raise ResumeKitError(
            f"--status must be one of {', '.join(progress.ACTION_STATUSES)}, not '{status}'",
            hint="use unknown when you cannot tell whether it happened",
        )
    if not key.strip():
        raise ResumeKitError(
            "the key is empty", hint="use a stable key such as notify-reviewer-pr-42"
        )
    layout = paths.find_layout()
    state = cast(Literal["success", "unknown", "failed"], status)
    with progress_io.transaction(layout) as doc:
        existing = next((a for a in doc.progress.actions if a.key == key), None)
        if existing is None:
            doc.progress.actions.append(
                progress.Action(
                    key=key, description=description, status=state, at=progress.now_iso()
                )
            )
            verb = "recorded"
        else:
            existing.description = description or existing.description
            existing.status = state
            existing.at = progress.now_iso()
            verb = "updated"
    info(f"{verb} action {key} ({status})")
    return 0


def list_actions(json_out: bool) -> int:
    layout = paths.find_layout()
    actions = progress_io.load(layout).progress.actions
    if json_out:
        print_json([vars(a) for a in actions])
        return 0
    if not actions:
        info("no side effects recorded (resume-kit action record KEY --description D)")
        return 0
    from resume_kit.core.escape import escape_controls

    for action in actions:
        # every field comes from the progress file: one printable line each
        line = f"{action.status:<8} {action.key}  {action.at or ''}  {action.description}"
        out(escape_controls(line))
    return 0
