"""`resume-kit brief --format claude-hook|copilot-hook`: the brief as an agent hook's answer.

It reads the agent's hook input, never prompts, never uses the network, and whatever goes wrong
it exits 0 with one line on stderr, so a broken resume-kit never breaks the agent's session.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from resume_kit.brief.pipeline import build
from resume_kit.cli.commands.brief import HOOK_FORMAT, write
from resume_kit.infra.errors import NotARepositoryError, ProgressFileError, ResumeKitError


def _for_event(answer: str, hook_input: dict[str, Any], copilot: bool = False) -> str:
    """PostCompact takes no hookSpecificOutput: its plain stdout reaches the model. Copilot CLI
    reads a flat ``{"additionalContext": ...}``."""
    if hook_input.get("hook_event_name") != "PostCompact" and not copilot:
        return answer
    import json

    context = str(json.loads(answer)["hookSpecificOutput"]["additionalContext"])
    if copilot:
        return json.dumps({"additionalContext": context}, ensure_ascii=False) + "\n"
    return context + "\n"


def _hook_note(message: str) -> str:
    import json

    from resume_kit.core.inert import one_line

    context = (
        "resume-kit could not build the resume brief for this repository "
        f"({one_line(message, 200)}). Run `resume-kit brief` in a terminal to see why."
    )
    return (
        json.dumps(
            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}},
            ensure_ascii=False,
        )
        + "\n"
    )


def _first_for_compaction(hook_input: dict[str, Any]) -> bool:
    from resume_kit.infra.cachedir import user_cache_root
    from resume_kit.integrations.compact_once import compaction_event, should_deliver

    event = compaction_event(hook_input)
    session = hook_input.get("session_id")
    if event is None or not isinstance(session, str) or not session:
        return True
    return should_deliver(user_cache_root(), session, event)


def _copilot_prompt_delivers(hook_input: dict[str, Any]) -> bool:
    """Copilot CLI's userPromptSubmitted: the first prompt since the session started, resumed
    or compacted delivers (``prompt_once``); an event with a ``source`` (sessionStart) or a
    ``trigger`` (preCompact) never does."""
    from resume_kit.infra.cachedir import user_cache_root
    from resume_kit.integrations import prompt_once

    if "source" in hook_input or "trigger" in hook_input:
        return False
    session = hook_input.get("session_id")
    if not isinstance(session, str) or not session:
        return True
    stamp = hook_input.get("timestamp")
    return prompt_once.take(user_cache_root(), session, stamp if isinstance(stamp, int) else None)


def run_hook(max_tokens: int | None, output: Path | None, copilot: bool = False) -> int:
    from resume_kit.cli.ui import say

    hook_input: dict[str, Any] = {}
    try:
        from resume_kit.integrations.agent_input import read_hook_input

        hook_input = read_hook_input(timeout=1.0)
        if copilot and not _copilot_prompt_delivers(hook_input):
            return 0  # not a prompt, or not the first since the session (re)started
        if not copilot and not _first_for_compaction(hook_input):
            return 0  # the other event of this compaction delivered the brief
        text, rendered, _ = build(max_tokens, HOOK_FORMAT, False, hook_input=hook_input)
        write(_for_event(text, hook_input, copilot), output)
        if not rendered.fits:
            say("the brief is over its token budget even at its minimum")
        return 0
    except (NotARepositoryError, ProgressFileError) as exc:
        if isinstance(exc, NotARepositoryError) or "no progress file" in exc.message:
            # Not a resume-kit repository: nothing to add to the agent's context.
            say(f"no brief: {exc.message.splitlines()[0]}")
            return 0
        note = exc.message
    except ResumeKitError as exc:
        note = exc.message
    except BaseException as exc:  # hook mode: whatever happens, the agent's session goes on
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            note = "interrupted"
        else:
            note = f"unexpected {type(exc).__name__}"
    first = (note.splitlines() or [""])[0]
    say(f"no brief: {first}")
    with contextlib.suppress(Exception):
        write(_for_event(_hook_note(first), hook_input, copilot), output)
    return 0
