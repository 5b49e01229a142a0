"""Gemini CLI: the project's ``.gemini/settings.json`` (Claude Code's nested hook shape, its own
event names, timeouts in milliseconds; geminicli.com/docs/hooks/reference)."""

from __future__ import annotations

from pathlib import Path

from resume_kit.integrations.settings import BRIEF_ARGS, SNAPSHOT_ARGS, STOP_ARGS, HookSpec

# Gemini's SessionStart sources; its hooks must print nothing but JSON on stdout, which the
# claude-hook format is (`hookSpecificOutput.additionalContext`).
SESSION_START_MATCHER = "startup|resume|clear"


def project_settings(root: Path) -> Path:
    return root / ".gemini" / "settings.json"


def specs(exe: str | None, stop_verify: bool = False, python: str | None = None) -> list[HookSpec]:
    found = [
        HookSpec(
            "SessionStart",
            BRIEF_ARGS,
            SESSION_START_MATCHER,
            timeout=30_000,
            exe=exe,
            python=python,
        ),
        HookSpec("PreCompress", SNAPSHOT_ARGS, timeout=30_000, exe=exe),
    ]
    if stop_verify:
        found.append(HookSpec("AfterAgent", STOP_ARGS, timeout=600_000, exe=exe))
    return found


# Gemini's shell tool is run_shell_command; its MCP tools are mcp_<server>_<tool>.
TOOL_MATCHER = "run_shell_command|mcp_.*"


def tool_specs(python: str | None, exe: str | None) -> list[HookSpec]:
    from resume_kit.integrations.settings import tool_specs as specs

    return specs(
        TOOL_MATCHER, python, exe, agent="gemini", pre_event="BeforeTool",
        post_events=("AfterTool",), timeout=15_000, post_matcher=None,
    )  # fmt: skip
