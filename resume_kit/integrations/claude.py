"""Claude Code: where its settings live (project ``.claude/settings.json`` or the user's)."""

from __future__ import annotations

import os
from pathlib import Path

from resume_kit.core.typing_light import Any


def user_config_dir() -> Path:
    """``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def project_settings(root: Path) -> Path:
    return root / ".claude" / "settings.json"


def local_settings(root: Path) -> Path:
    """The person's own settings for this project (``integrate claude --local``); Claude Code
    keeps the file out of git."""
    return root / ".claude" / "settings.local.json"


def user_settings() -> Path:
    return user_config_dir() / "settings.json"


# Approving a verify command is a person's act (docs/security.md): the agent is denied every
# usual spelling of `resume-kit trust` (on PATH, by a path, as `python -m resume_kit`, inside a
# wrapper such as `script -c` that would give it a terminal to answer on). This is
# a guard rail in the agent's own permission system, not a boundary: it does not stop a
# person, and a shell that can write the user's files can do worse anyway.
DENY_RULES = (
    "Bash(resume-kit trust)",
    "Bash(resume-kit trust *)",
    # any command line naming it: a path to the script, a wrapper (`script -c`, `env`), a chain
    "Bash(*resume-kit trust*)",
    "Bash(*-m resume_kit trust*)",
    # clearing the side-effect ledger is the person's decision too: the guard says how
    "Bash(*resume-kit action forget*)",
    "Bash(*-m resume_kit action forget*)",
)
# The tool hooks (issue 15): before the shell tool and every MCP tool (only a writing one is a
# side effect); after every tool, so the loop guard sees an edit between two failing runs.
# PostToolUseFailure is Claude Code's after-event of a call that failed.
TOOL_MATCHER = "Bash|mcp__.*"
TOOL_POST_EVENTS = ("PostToolUse", "PostToolUseFailure")


def tool_specs(python: str | None, exe: str | None) -> list[Any]:
    from resume_kit.integrations.settings import tool_specs as specs

    return specs(TOOL_MATCHER, python, exe, post_events=TOOL_POST_EVENTS, post_matcher=None)


def _deny_list(data: dict[str, Any], path: Path) -> list[Any] | None:
    from resume_kit.integrations.settings import SettingsError

    permissions = data.get("permissions")
    if permissions is None:
        return None
    deny = permissions.get("deny") if isinstance(permissions, dict) else None
    if not isinstance(permissions, dict) or not isinstance(deny, list | type(None)):
        raise SettingsError(
            f"{path}: `permissions` is not an object with a `deny` list; nothing was changed",
            hint="fix the file by hand",
        )
    return deny


def add_deny_rules(path: Path, root: Path | None = None) -> bool:
    """Add :data:`DENY_RULES` to ``permissions.deny`` in ``path`` (a project file when ``root``
    is its work tree), keeping everything else; True when the file changed."""
    from resume_kit.infra.store import atomic_write
    from resume_kit.integrations.settings import read_settings, render

    current = read_settings(path, root)
    data = dict(current.data)
    deny = _deny_list(data, path)
    missing = [rule for rule in DENY_RULES if rule not in (deny or [])]
    if not missing:
        return False
    permissions = dict(data.get("permissions") or {})
    permissions["deny"] = [*(deny or []), *missing]
    data["permissions"] = permissions
    atomic_write(current.path, render(data, current.indent), mode=current.mode)
    return True


def remove_deny_rules(path: Path, root: Path | None = None) -> bool:
    """Take :data:`DENY_RULES` out of ``path`` (an emptied ``deny`` or ``permissions`` goes
    too, and a file left holding nothing is removed); True when the file changed."""
    from resume_kit.infra.store import atomic_write
    from resume_kit.integrations.settings import read_settings, render

    current = read_settings(path, root)
    if not current.existed:
        return False
    data = dict(current.data)
    deny = _deny_list(data, path)
    if not deny or not any(rule in DENY_RULES for rule in deny):
        return False
    permissions = dict(data["permissions"])
    kept = [rule for rule in deny if rule not in DENY_RULES]
    if kept:
        permissions["deny"] = kept
    else:
        del permissions["deny"]
    if permissions:
        data["permissions"] = permissions
    else:
        del data["permissions"]
    if data:
        atomic_write(current.path, render(data, current.indent), mode=current.mode)
    else:
        current.path.unlink()
    return True
