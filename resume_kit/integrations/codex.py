"""Codex CLI: its hooks file in the project (``.codex/hooks.json``, Claude Code's shapes)."""

from __future__ import annotations

from pathlib import Path


def project_hooks(root: Path) -> Path:
    return root / ".codex" / "hooks.json"
