"""`resume-kit stop-check` (hidden): the agent's Stop hook, blocking the stop while the unit in
progress fails its verify command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from resume_kit.cli.ui import say


def run() -> int:
    """Block the agent from stopping while the unit in progress fails its verify command.

    Hook mode: never prompts, never loops (``stop_hook_active``), and any trouble of ours is
    one line on stderr with exit 0, so the agent is never broken by resume-kit.
    """
    from resume_kit.integrations.agent_input import read_hook_input

    payload = read_hook_input()
    if payload.get("stop_hook_active") is True:
        return 0  # we already blocked once in this turn: let the agent stop
    try:
        return _stop_check(payload.get("cwd"), payload.get("session_id"))
    except Exception as exc:  # fail-open, whatever went wrong
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        say(f"stop-check skipped: {message.splitlines()[0]}")
        return 0


def _stop_check(cwd: str | None, session: str | None = None) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations.meter import stop_report
    from resume_kit.runner.unitcheck import check_in_progress, describe_failure

    start = Path(cwd) if cwd and Path(cwd).is_dir() else None
    layout = find_layout(start)
    if not layout.progress.is_file():
        return 0
    report = stop_report(layout, session)  # no progress: report once, then let it end
    if report is not None:
        return _block(report) if report else 0
    check = check_in_progress(layout)
    if check.outcome == "untrusted":
        say(
            f"stop-check: unit {check.unit_id} not checked: its verify command "
            "is not approved (a person must approve it with `resume-kit trust`)"
        )
        return 0
    if check.outcome != "failed":
        return 0
    return _block(describe_failure(check))


def _block(reason: str) -> int:
    sys.stdout.write(json.dumps({"decision": "block", "reason": reason}, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0
