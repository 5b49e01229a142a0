"""`resume-kit brief --format claude-hook|copilot-hook`: the brief as an agent hook's answer.

It reads the agent's hook input, never prompts, never uses the network, and whatever goes wrong
it exits 0 with one line on stderr, so a broken resume-kit never breaks the agent's session.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from resume_kit.brief.pipeline import build
from resume_kit.cli.commands.brief import COPILOT_FORMAT, HOOK_FORMAT, write
from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import NotARepositoryError, ProgressFileError, ResumeKitError
from resume_kit.integrations.hook_gate import for_event


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


def run_hook(max_tokens: int | None, output: Path | None, copilot: bool = False) -> int:
    from resume_kit.brief import fastpath
    from resume_kit.cli.ui import say
    from resume_kit.integrations.hook_gate import delivers

    hook_input: dict[str, Any] = {}
    try:
        # the served path may have read stdin and decided already (then it could not serve)
        taken = fastpath.take_hook_handoff()
        if taken is None:
            from resume_kit.integrations.agent_input import read_hook_input

            hook_input = read_hook_input(timeout=1.0)
            delivered = delivers(hook_input, copilot)
        else:
            hook_input, delivered = taken
        if not delivered:
            return 0  # not a prompt or not the first since the session (re)started, or the
            # other event of this compaction delivered the brief
        fmt = COPILOT_FORMAT if copilot else HOOK_FORMAT
        request = {"max_tokens": max_tokens, "format": fmt} if output is None else None
        recording = fastpath.begin(request, hook_input)
        try:
            text, rendered, layout = build(max_tokens, HOOK_FORMAT, False, hook_input=hook_input)
            if recording is not None:
                recording.printing()
            write(for_event(text, hook_input, copilot), output)
            if not rendered.fits:
                say("the brief is over its token budget even at its minimum")
        finally:
            if recording is not None:
                recording.end()
        if recording is not None:
            recording.store(text, layout, 0)
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
        write(for_event(_hook_note(first), hook_input, copilot), output)
    return 0
