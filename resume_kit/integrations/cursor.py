"""Cursor: ``.cursor/hooks.json`` (``{"version": 1, "hooks": {"camelCaseEvent": [{"command":
...}]}}``, a flat list per event) gets the pre-compaction snapshot; the brief reaches the agent
through an always-applied rules file telling it to read the brief, since how Cursor injects a
hook's output is not something we could test."""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path

from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ResumeKitError
from resume_kit.integrations.settings import SNAPSHOT_ARGS, command_args, command_line

RULES_REL = ".cursor/rules/resume-kit.mdc"
RULES = """---
description: How to work with resume-kit in this repository
alwaysApply: true
---
This repository tracks its work in `.resume-kit/progress.yaml`, one unit at a time.
Before anything else in a session (and again after the context was summarised), run
`resume-kit brief` and follow its "next" section: do that one unit, then run
`resume-kit verify-next`. Record side effects outside the work tree on the unit.
Never run `resume-kit trust`: approving a verify command is the person's decision.
"""
EVENTS = {
    "preCompact": SNAPSHOT_ARGS,
    # the tool hooks (issue 15): Cursor's shell events carry the command at the top level
    "beforeShellExecution": "hook-tool pre --agent cursor",
    "afterShellExecution": "hook-tool post --agent cursor",
}


def hooks_file(root: Path) -> Path:
    return root / ".cursor" / "hooks.json"


def merged(data: dict[str, Any], exe: str | None, remove: bool) -> tuple[dict[str, Any], bool]:
    """``data`` with our hooks added (or taken out); and whether anything changed."""
    result = copy.deepcopy(data)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ResumeKitError('.cursor/hooks.json: "hooks" is not an object; nothing was changed')
    changed = False
    for event, args in EVENTS.items():
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            raise ResumeKitError(f'.cursor/hooks.json: "hooks.{event}" is not a list')
        kept = [
            e
            for e in entries
            if not (isinstance(e, dict) and command_args(str(e.get("command", ""))) == args)
        ]
        wanted = [] if remove else [{"command": command_line(args, exe)}]
        if entries == [*kept, *wanted] or (not remove and wanted[0] in entries):
            continue
        changed = True
        if kept or wanted:
            hooks[event] = [*kept, *wanted]
        else:
            hooks.pop(event, None)
    if remove and not hooks:
        result.pop("hooks")
        if set(result) <= {"version"}:
            result = {}
    else:
        result.setdefault("version", 1)
        result = {"version": result.pop("version"), **result}
    return result, changed


def apply(root: Path, exe: str | None, remove: bool) -> list[str]:
    from resume_kit.infra.safefs import contained
    from resume_kit.infra.store import atomic_write
    from resume_kit.integrations.settings import read_settings, render

    lines: list[str] = []
    current = read_settings(hooks_file(root), root)
    if current.existed or not remove:
        new, changed = merged(current.data, exe, remove)
        if not changed:
            lines.append(".cursor/hooks.json: nothing changed")
        elif not new:
            current.path.unlink()
            lines.append("removed our hooks; .cursor/hooks.json held nothing else and was removed")
        else:
            atomic_write(current.path, render(new, current.indent), mode=current.mode)
            lines.append(
                f"{'removed' if remove else 'added'} the preCompact snapshot hook and the shell "
                f"hooks {'from' if remove else 'to'} .cursor/hooks.json"
            )
    rules = contained(root, RULES_REL)
    if remove:
        with contextlib.suppress(FileNotFoundError):
            rules.unlink()
            lines.append(f"removed {RULES_REL}")
    elif not rules.exists() or rules.read_text(encoding="utf-8") != RULES:
        rules.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(rules, RULES)
        lines.append(f"wrote {RULES_REL} (always applied: tells the agent to read the brief)")
    return lines
