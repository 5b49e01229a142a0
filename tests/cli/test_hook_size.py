"""The hook answer fits Codex CLI's count (ceil(UTF-8 bytes / 4) <= 2,500, so at most 10,000
bytes) as well as Claude Code's 10,000 characters, at the budget `integrate codex` asks for
(issue 21, Codex's cap)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resume_kit.brief.render import HOOK_MAX_CHARS
from resume_kit.integrations.codex import BRIEF_TOKENS, CONTEXT_LIMIT
from tests.big_progress import write_big_progress
from tests.conftest import run_cli


@pytest.mark.parametrize("style", ["english", "box"])
def test_the_biggest_hook_brief_is_within_codexs_limit(repo: Path, style: str) -> None:
    write_big_progress(repo, style, "Big-brief-marker")
    result = run_cli(
        "brief", "--format", "claude-hook", "--max-tokens", str(BRIEF_TOKENS), cwd=repo
    )
    assert result.code == 0, result.stderr
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    size = len(context.encode("utf-8"))
    assert -(-size // 4) <= CONTEXT_LIMIT and size <= HOOK_MAX_CHARS, size
    assert "Big-brief-marker" in context and "**Rule:**" in context
