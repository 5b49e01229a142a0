"""`resume-kit brief`: snapshot, reconcile, build and render the fresh-context prompt (SPEC 4).

Reads progress.yaml and never writes it. In hook mode (``--format claude-hook``) it reads the
agent's hook input, never prompts, never uses the network, and whatever goes wrong it exits 0
with one line on stderr, so a broken resume-kit never breaks the agent's session.
"""

from __future__ import annotations

import sys
from pathlib import Path

from resume_kit.brief.pipeline import build
from resume_kit.core.typing_light import Any

HOOK_FORMAT = "claude-hook"
COPILOT_FORMAT = "copilot-hook"  # the claude-hook brief in Copilot CLI's shape, once per start


def write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from resume_kit.infra.store import atomic_write

    atomic_write(output, text)


def _report(rendered: Any, budget_note: str, output: Path | None) -> None:
    from resume_kit.cli.ui import say, warn

    if not rendered.fits:
        warn(
            f"the brief needs {rendered.tokens} tokens, more than {budget_note}: "
            "even its minimum (header, warnings, next unit) does not fit; printed anyway"
        )
    if output is not None:
        say(f"brief written to {output}")


def run(max_tokens: int | None, fmt: str, output: Path | None, summarize: bool | None) -> int:
    if fmt in (HOOK_FORMAT, COPILOT_FORMAT):
        from resume_kit.cli.commands.brief_hook import run_hook

        return run_hook(max_tokens, output, copilot=fmt == COPILOT_FORMAT)
    from resume_kit.brief import fastpath

    servable = fmt == "markdown" and output is None and summarize is not True
    recording = fastpath.begin(
        {"max_tokens": max_tokens, "summarize": summarize} if servable else None
    )
    try:
        text, rendered, layout = build(max_tokens, fmt, summarize, hook_input=None)
        if recording is not None:
            recording.printing()
        write(text, output)
        budget_note = f"the budget of {max_tokens}" if max_tokens else "the configured budget"
        _report(rendered, budget_note, output)
    finally:
        if recording is not None:
            recording.end()
    if recording is not None:
        recording.store(text, layout, 0)  # what the next unchanged brief prints (fails open)
    return 0
