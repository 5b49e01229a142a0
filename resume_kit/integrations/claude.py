"""Claude Code: where its settings live (project ``.claude/settings.json`` or the user's)."""

from __future__ import annotations

import os
from pathlib import Path


def user_config_dir() -> Path:
    """``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def project_settings(root: Path) -> Path:
    return root / ".claude" / "settings.json"


def user_settings() -> Path:
    return user_config_dir() / "settings.json"
