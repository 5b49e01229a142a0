"""What each MCP tool does, without the protocol: the same engine functions the CLI calls,
returning the dictionaries the CLI prints with ``--json``. Diagnostics go to stderr (the CLI's
own lines); stdout belongs to the protocol and nothing here writes to it."""

from __future__ import annotations

import json

from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ResumeKitError


def brief(max_tokens: int | None, fmt: str) -> dict[str, Any]:
    from resume_kit.brief.pipeline import build

    text, rendered, _ = build(max_tokens, fmt, False, hook_input=None)
    data: dict[str, Any] = {
        "format": fmt,
        "tokens": rendered.tokens,
        "fits": rendered.fits,
        "text": text,
    }
    if fmt == "json":
        data["brief"] = json.loads(text)
    return data


def status() -> dict[str, Any]:
    from resume_kit.cli.status_json import status_data
    from resume_kit.core.reconcile import reconcile
    from resume_kit.facts.leases import who_holds_what
    from resume_kit.facts.snapshot import take_snapshot
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.config import load as load_config
    from resume_kit.progress_file.io import load

    layout = find_layout()
    progress = load(layout).progress
    snapshot = take_snapshot(layout, load_config(layout), "manual", progress=progress)
    findings = reconcile(progress, snapshot)
    return status_data(
        layout,
        progress,
        snapshot,
        findings,
        who_holds_what(layout.root, common_dir=layout.git_common_dir),
    )


def next_unit() -> dict[str, Any]:
    """The one next unit (as in ``status --json``'s ``next``), or ``{"next": null}``."""
    from resume_kit.cli.status_json import next_data
    from resume_kit.facts.leases import who_holds_what
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.io import load

    layout = find_layout()
    return {
        "next": next_data(
            layout,
            load(layout).progress,
            who_holds_what(layout.root, common_dir=layout.git_common_dir),
        )
    }


def add_unit(
    title: str, verify: str, files: list[str], artifacts: list[str], after: list[str]
) -> dict[str, Any]:
    """Add a unit whose command stays unapproved: it came from the agent, not a person."""
    from resume_kit.cli.commands.units import create
    from resume_kit.infra.paths import find_layout

    unit = create(find_layout(), title, verify, None, files, artifacts, after)
    return {**_unit_data(unit), "approved": False}


def start_unit(unit_id: str) -> dict[str, Any]:
    from resume_kit.cli.commands.units import set_status

    set_status(unit_id, "in_progress")
    return _current(unit_id)


def note_unit(unit_id: str, text: str) -> dict[str, Any]:
    from resume_kit.cli.commands.edit import set_note

    set_note(unit_id, text)
    return _current(unit_id)


def record_action(key: str, description: str, status: str) -> dict[str, Any]:
    from resume_kit.cli.commands import action

    action.record(key, description, status)
    return _action(key)


def check_action(key: str) -> dict[str, Any]:
    """What ``action check`` tells: ``succeeded`` true (its exit 1) means do not repeat it."""
    from resume_kit.cli.commands.action import action_json, checked_key

    entry = _entry(checked_key(key))
    if entry is None:
        return {"key": key, "recorded": False, "succeeded": False, "unknown": False, "entry": None}
    history = entry.history()
    return {
        "key": key,
        "recorded": True,
        "succeeded": entry.last_success() is not None,
        "unknown": any(a.status == "unknown" for a in history),
        "entry": action_json(entry),
    }


def list_actions() -> dict[str, Any]:
    from resume_kit.cli.commands.action import action_json
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.io import load

    return {"actions": [action_json(a) for a in load(find_layout()).progress.actions]}


def _entry(key: str) -> Any:
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file import ledger

    return ledger.entry(find_layout(), key)


def _action(key: str) -> dict[str, Any]:
    from resume_kit.cli.commands.action import action_json

    entry = _entry(key)
    if entry is None:  # pragma: no cover - just recorded
        raise ResumeKitError(f"no ledger entry '{key}'")
    return action_json(entry)


def _current(unit_id: str) -> dict[str, Any]:
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.io import load

    return _unit_data(load(find_layout()).progress.require_unit(unit_id))


def _unit_data(unit: Any) -> dict[str, Any]:
    return {
        "id": unit.id,
        "title": unit.title,
        "status": unit.status,
        "verify": unit.verify,
        "files": list(unit.files),
        "artifacts": list(unit.artifacts),
        "after": list(unit.after),
        "notes": unit.notes,
    }


def verify_plan(unit_id: str | None, timeout_s: float | None) -> tuple[Any, Any, float] | None:
    """(layout, unit, timeout) for verify_next, after the CLI's refusals: no verify command, an
    unfinished merge, a command no person approved. None when nothing is ready."""
    from resume_kit.cli.approval import require_approved
    from resume_kit.cli.commands.verify import _require_verify
    from resume_kit.infra.paths import find_layout
    from resume_kit.model.progress import pick_next
    from resume_kit.progress_file import config
    from resume_kit.progress_file.io import load
    from resume_kit.runner.conflicts import refuse_while_conflicted

    layout = find_layout()
    unit = pick_next(load(layout).progress, unit_id)
    if unit is None:
        return None
    _require_verify(unit)
    refuse_while_conflicted(layout, False)
    require_approved(layout.root, [unit])
    timeout = timeout_s if timeout_s is not None else config.load(layout).verify_timeout_s
    return layout, unit, timeout


def verify_run(layout: Any, unit: Any, timeout_s: float, stop: Any, on_tick: Any) -> dict[str, Any]:
    """Run and record (the checkpoint) as ``verify-next --json`` does; interrupted: nothing."""
    from resume_kit.cli.commands.verify_report import after_run, json_result
    from resume_kit.runner.verify import verify_unit

    outcome = verify_unit(layout, unit, timeout_s, stop=stop, on_tick=on_tick)
    data = json_result(outcome)
    data["interrupted"] = outcome.result.interrupted
    passed = outcome.result.passed and outcome.recorded
    next_unit = after_run(layout)[0] if passed else None
    data["next"] = next_unit.id if next_unit is not None else None
    return data
