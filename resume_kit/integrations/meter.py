"""The no-progress meter at the agent's Stop hook: when compactions, sessions or tokens passed
with no new verified unit (core/activity.no_progress), the first Stop of that session is
blocked once with the report to give the person; the next Stop lets the session end."""

from __future__ import annotations

from resume_kit.infra.paths import Layout


def stop_report(layout: Layout, session: str | None) -> str | None:
    """The reason to block this Stop with, once per session and stall; else None.
    ``""`` means: stalled and already reported, let the session end."""
    from resume_kit.core.activity import describe_no_progress, no_progress
    from resume_kit.facts import activity_log
    from resume_kit.progress_file import config as config_file
    from resume_kit.progress_file import io as progress_io

    progress = progress_io.load(layout).progress
    limits = config_file.load(layout).no_progress
    verified = [u.evidence.verified_at for u in progress.units if u.evidence is not None]
    since = max(verified, default=None)
    root = str(layout.root)
    stalled = no_progress(activity_log.events(root), since, {}, limits)
    if stalled is None:
        return None
    if activity_log.stopped_once(root, session or "", since):
        return ""
    done = sum(1 for u in progress.units if u.status == "done")
    return (
        f"resume-kit NO_PROGRESS: {describe_no_progress(stalled)}. Stop here: do not start "
        "another attempt. Report to the person in your final message: what was done "
        f"({done}/{len(progress.units)} units done), what keeps failing, what you tried, and "
        "what you need from them. Then end the session."
    )
