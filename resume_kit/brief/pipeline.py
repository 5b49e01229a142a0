"""The brief from end to end: snapshot the workspace, reconcile it with the progress file,
build the brief and render it (SPEC 4). Used by `resume-kit brief`, its hook answer and the
Aider integration's brief file."""

from __future__ import annotations

from pathlib import Path

from resume_kit.core.typing_light import Any


def build(
    max_tokens: int | None,
    fmt: str,
    summarize: bool | None,
    *,
    hook_input: dict[str, Any] | None,
) -> tuple[str, Any, Any]:
    """(rendered text, RenderedBrief, layout) for the current work tree."""
    from resume_kit.infra.collector import fewer_collections

    with fewer_collections():
        return _build(max_tokens, fmt, summarize, hook_input=hook_input)


def _build(
    max_tokens: int | None,
    fmt: str,
    summarize: bool | None,
    *,
    hook_input: dict[str, Any] | None,
) -> tuple[str, Any, Any]:
    from resume_kit.facts.git import EarlyStatus
    from resume_kit.infra.paths import find_layout

    hook_mode = hook_input is not None
    start: Path | None = None
    transcript_path: Path | None = None
    if hook_input:
        cwd = hook_input.get("cwd")
        if isinstance(cwd, str) and Path(cwd).is_dir():
            start = Path(cwd)
        if isinstance(hook_input.get("transcript_path"), str):
            transcript_path = Path(hook_input["transcript_path"])
    layout = find_layout(start, config_ahead=True)
    # git's tree walk runs while the rest of the brief's modules load and the progress model
    # is built: on a big tree it is the longest single step
    status = EarlyStatus(layout.root)
    from resume_kit.brief.build import build_brief, next_unleased
    from resume_kit.brief.render import render
    from resume_kit.core.reconcile import reconcile
    from resume_kit.facts.snapshot import take_snapshot
    from resume_kit.facts.snapshot_store import Encoded, save_snapshot
    from resume_kit.progress_file import config as config_mod
    from resume_kit.progress_file import io as progress_io

    progress = progress_io.load(layout).progress
    config = config_mod.load(layout)
    snapshot = take_snapshot(
        layout,
        config,
        "brief",
        progress=progress,
        transcript_path=transcript_path,
        hook=hook_input,
        status=status,
        encoded=(encoded := Encoded()),
    )
    session = hook_input.get("session_id") if hook_input else None
    save_snapshot(
        layout,
        snapshot,
        config.keep_snapshots,
        session=session if isinstance(session, str) else None,
        encoded=encoded,
    )
    from resume_kit.facts.activity_log import for_brief

    activity = for_brief(str(layout.root), hook_input, snapshot, config.no_progress)
    findings = reconcile(progress, snapshot, activity)
    if hook_mode:
        from resume_kit.brief.fastpath import observe_hook
        from resume_kit.core.reconcile import last_verified

        observe_hook(
            str(layout.root), snapshot.get("transcript"), activity, last_verified(progress)
        )

    summary = None
    from resume_kit.progress_file.config import should_summarize

    if should_summarize(config, summarize, hook_mode):
        from resume_kit.brief.fastpath import refuse

        refuse("a session summary was asked for")
        from resume_kit.brief.summarize import SummaryInputs
        from resume_kit.brief.summarize import summarize as run_summary

        inputs = SummaryInputs.from_snapshot(
            snapshot, goal=progress.goal, references=[u.id for u in progress.units]
        )
        result = run_summary(inputs, config=config, cache_dir=layout.user_cache, force=summarize)
        if result.note:
            from resume_kit.infra.messages import say

            say(result.note)
        summary = result.summary

    from resume_kit.facts.leases import who_holds_what

    leases = who_holds_what(
        layout.root, common_dir=layout.git_common_dir
    )  # the refs stored locally: never a fetch here
    brief = build_brief(
        progress,
        snapshot,
        findings,
        summary=summary,
        next_approved=_next_approved(layout, progress, leases),
        leases=leases,
    )
    budget = max_tokens if max_tokens is not None else config.brief_max_tokens
    rendered = render(brief, fmt, budget, _approved_template(layout.root))
    _remember(layout, rendered.text, next_unleased(progress, leases), summary, hook_input)
    return rendered.text, rendered, layout


def _remember(layout: Any, text: str, next_unit: Any, summary: Any, hook: Any) -> None:
    """The brief (and the session summary it carried) into the state library (fails open)."""
    from resume_kit.facts.history_db import append

    session = hook.get("session_id") if isinstance(hook, dict) else None
    trace = session if isinstance(session, str) and session else None
    unit = next_unit.id if next_unit is not None else None
    append(layout, "brief", text, unit=unit, trace=trace)
    if summary is not None:
        append(layout, "summary", str(summary), unit=unit, trace=trace)


def _next_approved(layout: Any, progress: Any, leases: dict[str, str]) -> bool:
    """Whether a person approved the next unit's verify command on this machine."""
    from resume_kit.brief.build import next_unleased
    from resume_kit.infra.trust import is_trusted

    unit = next_unleased(progress, leases)
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
        from resume_kit.brief.fastpath import refuse

        refuse("an approved repository template renders it")
        return found
    from resume_kit.infra.messages import warning

    warning(
        f"{found.rel_path} is not approved on this machine, so the "
        "shipped brief template is used; a person must review it and approve it with "
        "`resume-kit trust`"
    )
    return None
