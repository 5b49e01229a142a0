"""Codex CLI: its hooks file in the project (``.codex/hooks.json``, Claude Code's shapes), the
context limit our SessionStart hook declares, and what Codex requires before it runs a hook."""

from __future__ import annotations

from pathlib import Path

from resume_kit.core.light_dataclass import replace
from resume_kit.integrations.settings import BRIEF_ARGS, PRE_COMPACT, SESSION_START, STOP, HookSpec

# Codex spills hook context above `additionalContextLimit` (2,500 when unset) to a file and
# shows the model a preview. It counts ceil(UTF-8 bytes / 4) (0.171.0), so 2,500 is 10,000
# bytes: the hook answer is capped at that (brief.render.HOOK_MAX_CHARS, in bytes) and the
# 1,800 cl100k tokens asked for are the budget within it.
CONTEXT_LIMIT = 2500
BRIEF_TOKENS = 1800
CODEX_BRIEF_ARGS = f"{BRIEF_ARGS} --max-tokens {BRIEF_TOKENS}"

REQUIREMENTS = (
    "Codex runs these hooks only when:",
    '  - the project is trusted (Codex asks on first start; or `[projects."<this path>"] '
    'trust_level = "trusted"` in ~/.codex/config.toml): an untrusted project\'s .codex/ is '
    "not loaded at all;",
    "  - you approve each hook in Codex's /hooks: the approval is pinned to the hook's hash, "
    "so after any change to .codex/hooks.json (this command included) Codex asks again;",
    "  - Codex older than 0.171 also needs `[features] codex_hooks = true` in "
    "~/.codex/config.toml.",
)


def project_hooks(root: Path) -> Path:
    return root / ".codex" / "hooks.json"


def specs(stop_verify: bool, exe: str | None, python: str | None = None) -> list[HookSpec]:
    start = replace(
        SESSION_START,
        args=CODEX_BRIEF_ARGS,
        exe=exe,
        python=python,
        extra=(("additionalContextLimit", CONTEXT_LIMIT),),
        replaces=(BRIEF_ARGS,),
    )
    rest = [PRE_COMPACT, *([STOP] if stop_verify else [])]
    return [start, *(replace(spec, exe=exe) for spec in rest)]


# Codex 0.171 sends PreToolUse / PostToolUse for its shell tool as "Bash" (tool_input.command)
# and for MCP tools as mcp__server__tool; its PostToolUse carries the output only.
TOOL_MATCHER = "Bash|mcp__.*"


def tool_specs(python: str | None, exe: str | None) -> list[HookSpec]:
    from resume_kit.integrations.settings import tool_specs as specs

    return specs(TOOL_MATCHER, python, exe, agent="codex")
