"""GitHub Copilot CLI: our own hooks file ``.github/hooks/resume-kit.json`` (Copilot loads every
``.github/hooks/*.json`` of a trusted folder: ``{"version": 1, "hooks": {"camelCaseEvent":
[{"type": "command", "bash": ..., "cwd": ..., "timeoutSec": N}]}}``, a flat list per event).

The brief reaches the model through ``userPromptSubmitted``'s ``additionalContext``, with the
first prompt after each start, resume or compaction of a session
(``resume_kit.integrations.prompt_once``); ``preCompact`` takes the snapshot; ``preToolUse`` and
``postToolUse`` feed the side-effect ledger (``resume_kit.integrations.tool_hook --agent
copilot``; Copilot has no matcher, the hook itself leaves non-shell tools alone). Entries of ours
are recognised by their command line; every other entry (and every other hooks file) is kept.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path

from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ResumeKitError
from resume_kit.integrations.settings import (
    SNAPSHOT_ARGS,
    TOOL_POST_ARGS,
    TOOL_PRE_ARGS,
    HookSpec,
    command_args,
    tool_specs,
)

HOOKS_REL = ".github/hooks/resume-kit.json"
BRIEF_ARGS = "brief --format copilot-hook"
PRE_TOOL_ARGS = f"{TOOL_PRE_ARGS} --agent copilot"
POST_TOOL_ARGS = f"{TOOL_POST_ARGS} --agent copilot"
EVENTS: dict[str, tuple[str, ...]] = {
    "userPromptSubmitted": (BRIEF_ARGS,),
    "preCompact": (SNAPSHOT_ARGS,),
    "preToolUse": (PRE_TOOL_ARGS,),
    "postToolUse": (POST_TOOL_ARGS,),
}
OUR_ARGS = frozenset({BRIEF_ARGS, SNAPSHOT_ARGS, PRE_TOOL_ARGS, POST_TOOL_ARGS})
TIMEOUT_SEC = 30

REQUIREMENTS = (
    "Copilot CLI runs these hooks only in a trusted folder (it asks on first start; `copilot "
    "-p` needs the folder trusted already, or --trust-folder). No PowerShell command is "
    "written: on Windows the hooks do not run.",
)


def hooks_file(root: Path) -> Path:
    return root / HOOKS_REL


def _spec(args: str, exe: str | None, python: str | None) -> HookSpec:
    """The hook ``args`` runs: the tool hooks as settings.tool_specs builds them (``python -I
    -m`` the module when ``python`` runs our hooks, else resume-kit); the brief by ``python``'s
    entry script too (settings.isolated_command_line)."""
    tools = tool_specs("", python, exe, "copilot", ("postToolUse",), "preToolUse")
    brief = python if args == BRIEF_ARGS else None
    fallback = HookSpec("", args, None, TIMEOUT_SEC, exe, python=brief)
    return next((s for s in tools if s.args == args), fallback)


def entry(args: str, exe: str | None, python: str | None = None) -> dict[str, Any]:
    spec = _spec(args, exe, python)
    return {"type": "command", "bash": spec.command, "cwd": ".", "timeoutSec": spec.timeout}


def _ours(item: Any) -> str | None:
    if not isinstance(item, dict) or not isinstance(item.get("bash"), str):
        return None
    args = command_args(item["bash"])
    return args if args in OUR_ARGS else None


def _updated(
    item: dict[str, Any], args: str, exe: str | None, python: str | None
) -> dict[str, Any]:
    """Our entry as we write it, keeping only a timeout the person changed: the file may have
    come with the repository, and an ``env``, ``cwd`` or ``powershell`` key on an entry that
    runs resume-kit is not something to bless."""
    new = entry(args, exe, python)
    timeout = item.get("timeoutSec")
    if isinstance(timeout, int) and not isinstance(timeout, bool) and 0 < timeout <= 600:
        new["timeoutSec"] = timeout
    return new


def _event(
    entries: list[Any], wanted: tuple[str, ...], exe: str | None, python: str | None
) -> list[Any]:
    """``entries`` with each wanted hook of ours once (brought up to date in place, see
    :func:`_updated`); ours that are not wanted go."""
    result: list[Any] = []
    placed: set[str] = set()
    for item in entries:
        args = _ours(item)
        if args is None:
            result.append(item)
        elif args in wanted and args not in placed:
            result.append(_updated(item, args, exe, python))
            placed.add(args)
    result.extend(entry(args, exe, python) for args in wanted if args not in placed)
    return result


def merged(
    data: dict[str, Any], exe: str | None, remove: bool, python: str | None = None
) -> tuple[dict[str, Any], bool]:
    """``data`` with our hooks added (or taken out); and whether anything changed."""
    result = copy.deepcopy(data)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ResumeKitError(f'{HOOKS_REL}: "hooks" is not an object; nothing was changed')
    changed = False
    for event, args in EVENTS.items():
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            raise ResumeKitError(f'{HOOKS_REL}: "hooks.{event}" is not a list')
        new = _event(entries, () if remove else args, exe, python)
        if new == entries:
            continue
        changed = True
        if new:
            hooks[event] = new
        else:
            hooks.pop(event, None)
    if not changed:
        return data, False
    if not hooks:
        result.pop("hooks")
    if remove and set(result) <= {"version"}:
        return {}, True  # the file held only our hooks
    return {"version": result.pop("version", 1), **result}, True


def apply(root: Path, exe: str | None, remove: bool, python: str | None = None) -> list[str]:
    from resume_kit.infra.store import atomic_write
    from resume_kit.integrations.settings import read_settings, render

    current = read_settings(hooks_file(root), root)
    if remove and not current.existed:
        return [f"no {HOOKS_REL}: nothing changed"]
    new, changed = merged(current.data, exe, remove, python)
    if not changed:
        return [f"{HOOKS_REL}: nothing changed"]
    if not new:
        current.path.unlink()
        with contextlib.suppress(OSError):  # only when nothing else is in them
            current.path.parent.rmdir()
            current.path.parent.parent.rmdir()
        return [f"removed our hooks; {HOOKS_REL} held nothing else and was removed"]
    atomic_write(current.path, render(new, current.indent), mode=current.mode)
    if remove:
        return [f"removed the resume-kit hooks from {HOOKS_REL}"]
    return [
        f"added the resume-kit userPromptSubmitted, preCompact, preToolUse and postToolUse "
        f"hooks to {HOOKS_REL}",
        *REQUIREMENTS,
    ]
