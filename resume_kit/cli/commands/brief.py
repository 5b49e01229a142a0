"""`resume-kit brief`: snapshot, reconcile, build and render the fresh-context prompt (SPEC 4).

Reads progress.yaml and never writes it. In hook mode (``--format claude-hook``) it reads the
agent's hook input, never prompts, never uses the network, and whatever goes wrong it exits 0
with one line on stderr, so a broken resume-kit never breaks the agent's session.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

from resume_kit.infra.errors import NotARepositoryError, ProgressFileError, ResumeKitError

HOOK_FORMAT = "claude-hook"


def _build(
    max_tokens: int | None,
    fmt: str,
    summarize: bool | None,
    *,
    hook_input: dict[str, Any] | None,
) -> tuple[str, Any, Any]:
    """(rendered text, RenderedBrief, layout) for the current work tree."""
    from resume_kit.brief.build import build_brief
    from resume_kit.brief.render import render
    from resume_kit.core.reconcile import reconcile
    from resume_kit.facts.snapshot import take_snapshot
    from resume_kit.facts.snapshot_store import save_snapshot
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file import config as config_mod
    from resume_kit.progress_file import io as progress_io

    hook_mode = hook_input is not None
    start: Path | None = None
    transcript_path: Path | None = None
    if hook_input:
        cwd = hook_input.get("cwd")
        if isinstance(cwd, str) and Path(cwd).is_dir():
            start = Path(cwd)
        if isinstance(hook_input.get("transcript_path"), str):
            transcript_path = Path(hook_input["transcript_path"])
    layout = find_layout(start)
    progress = progress_io.load(layout).progress
    config = config_mod.load(layout)
    from resume_kit.infra.tokens import preload

    preload()  # the brief is nearly always counted exactly: load the tokenizer while git runs
    snapshot = take_snapshot(
        layout, config, "brief", progress=progress, transcript_path=transcript_path, hook=hook_input
    )
    save_snapshot(layout, snapshot, config.keep_snapshots)
    findings = reconcile(progress, snapshot)

    summary = None
    from resume_kit.brief.summarize import should_summarize

    if should_summarize(config, summarize, hook_mode):
        from resume_kit.brief.summarize import SummaryInputs
        from resume_kit.brief.summarize import summarize as run_summary

        inputs = SummaryInputs.from_snapshot(
            snapshot, goal=progress.goal, references=[u.id for u in progress.units]
        )
        result = run_summary(inputs, config=config, cache_dir=layout.user_cache, force=summarize)
        if result.note:
            from resume_kit.cli.ui import say

            say(result.note)
        summary = result.summary

    brief = build_brief(
        progress,
        snapshot,
        findings,
        summary=summary,
        next_approved=_next_approved(layout, progress),
    )
    budget = max_tokens if max_tokens is not None else config.brief_max_tokens
    rendered = render(brief, fmt, budget, _approved_template(layout.root))
    return rendered.text, rendered, layout


def _next_approved(layout: Any, progress: Any) -> bool:
    """Whether a person approved the next unit's verify command on this machine."""
    from resume_kit.infra.trust import is_trusted
    from resume_kit.model.progress import pick_next

    unit = pick_next(progress)
    if unit is None or not unit.verify:
        return True
    return is_trusted(layout.root, unit.id, unit.verify)


def _approved_template(root: Path) -> Any:
    """The repository's brief template if a person approved its exact content on this
    machine; else None (the shipped one is used) and one line on stderr saying so."""
    from resume_kit.brief import repo_template
    from resume_kit.infra.trust import template_trusted

    found = repo_template.find(root)
    if found is None:
        return None
    if template_trusted(root, found.rel_path, found.sha256):
        return found
    from resume_kit.cli.ui import warn

    warn(
        f"{found.rel_path} is not approved on this machine, so the "
        "shipped brief template is used; a person must review it and approve it with "
        "`resume-kit trust`"
    )
    return None


def _write(text: str, output: Path | None) -> None:
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


def _run_hook(max_tokens: int | None, output: Path | None) -> int:
    from resume_kit.cli.ui import say

    hook_input: dict[str, Any] = {}
    try:
        from resume_kit.integrations.agent_input import read_hook_input

        hook_input = read_hook_input(timeout=1.0)
        if not _first_for_compaction(hook_input):
            return 0  # the other event of this compaction delivered the brief
        text, rendered, _ = _build(max_tokens, HOOK_FORMAT, False, hook_input=hook_input)
        if hook_input.get("hook_event_name") == "PostCompact":
            import json

            # PostCompact takes no hookSpecificOutput: its plain stdout reaches the model.
            text = json.loads(text)["hookSpecificOutput"]["additionalContext"] + "\n"
        _write(text, output)
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
        note_text = _hook_note(first)
        if hook_input.get("hook_event_name") == "PostCompact":
            import json

            note_text = json.loads(note_text)["hookSpecificOutput"]["additionalContext"] + "\n"
        _write(note_text, output)
    return 0


def run(max_tokens: int | None, fmt: str, output: Path | None, summarize: bool | None) -> int:
    if fmt == HOOK_FORMAT:
        return _run_hook(max_tokens, output)
    text, rendered, _ = _build(max_tokens, fmt, summarize, hook_input=None)
    _write(text, output)
    budget_note = f"the budget of {max_tokens}" if max_tokens else "the configured budget"
    _report(rendered, budget_note, output)
    return 0
