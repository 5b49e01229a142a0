"""`action record|list|check|forget`: the side-effect ledger (what must not happen twice)."""

from __future__ import annotations

from resume_kit.cli.ui import info, out, print_json
from resume_kit.core.typing_light import cast
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model import progress
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file import ledger


def checked_key(key: str) -> str:
    if not key.strip():
        raise ResumeKitError(
            "the key is empty", hint="use a stable key such as notify-reviewer-pr-42"
        )
    return key


def record(key: str, description: str, status: str) -> int:
    if status not in progress.ACTION_STATUSES:
        raise ResumeKitError(
            f"--status must be one of {', '.join(progress.ACTION_STATUSES)}, not '{status}'",
            hint="use unknown when you cannot tell whether it happened",
        )
    layout = paths.find_layout()
    attempt = progress.Attempt(cast(progress.ActionStatus, status), at=progress.now_iso())
    action = ledger.record(layout, checked_key(key), attempt, description)
    count = len(action.history())
    verb = "recorded" if count == 1 else f"recorded attempt {count} of"
    info(f"{verb} action {key} ({status})")
    return 0


def action_json(action: progress.Action) -> dict[str, object]:
    from resume_kit.progress_file.roundtrip import action_data

    data = action_data(action)
    data["attempts"] = [
        {k: v for k, v in vars(attempt).items() if v is not None} for attempt in action.history()
    ]
    return data


def list_actions(json_out: bool) -> int:
    layout = paths.find_layout()
    actions = progress_io.load(layout).progress.actions
    if json_out:
        print_json([action_json(a) for a in actions])
        return 0
    if not actions:
        info("no side effects recorded (resume-kit action record KEY --description D)")
        return 0
    from resume_kit.core.escape import escape_controls

    for action in actions:
        # every field comes from the progress file: one printable line each
        line = f"{action.status:<8} {action.key}  {action.at or ''}  {action.description}"
        out(escape_controls(line))
        if len(action.attempts) > 1:
            for attempt in action.attempts:
                out(escape_controls(f"  - {_attempt_line(attempt)}"))
    return 0


def _attempt_line(attempt: progress.Attempt) -> str:
    parts = [f"{attempt.status:<8}", attempt.at or "(no time)"]
    if attempt.session:
        parts.append(f"session {attempt.session}")
    if attempt.result:
        parts.append(attempt.result)
    if attempt.command:
        parts.append(f"$ {attempt.command}")
    return "  ".join(parts)


def check(key: str) -> int:
    """Exit 0 when ``key`` never succeeded, 1 when it did (for scripts, before acting)."""
    from resume_kit.core.escape import escape_controls

    action = ledger.entry(paths.find_layout(), checked_key(key))
    if action is None:
        info(escape_controls(f"{key}: never recorded"))
        return 0
    done = action.last_success()
    if done is not None:
        out(escape_controls(f"{key}: succeeded {_attempt_line(done).split(maxsplit=1)[1]}"))
        return 1
    history = action.history()
    states = ", ".join(a.status for a in history)
    out(escape_controls(f"{key}: never succeeded ({len(history)} attempts: {states})"))
    if any(a.status == "unknown" for a in history):
        info("an attempt's outcome is unknown: it may have run; check before repeating")
    return 0


def forget(key: str) -> int:
    from resume_kit.core.escape import escape_controls

    removed = ledger.forget(paths.find_layout(), checked_key(key))
    if removed is None:
        raise ResumeKitError(
            escape_controls(f"no ledger entry '{key}'"),
            hint="see the keys with `resume-kit action list`",
        )
    info(escape_controls(f"forgot action {key} ({len(removed.history())} attempts)"))
    return 0
