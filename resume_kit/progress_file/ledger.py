"""The side-effect ledger in progress.yaml (``actions``): append an attempt, settle the attempt
of a tool call, forget a key; each a locked transaction, so two hooks at once never lose one."""

from __future__ import annotations

from resume_kit.core.typing_light import Literal
from resume_kit.infra.paths import Layout
from resume_kit.model.progress import Action, Attempt, record_attempt
from resume_kit.progress_file import io as progress_io

Status = Literal["success", "unknown", "failed"]


def entry(layout: Layout, key: str) -> Action | None:
    """The ledger entry ``key`` as the file holds it now (no lock: a read)."""
    return next((a for a in progress_io.load(layout).progress.actions if a.key == key), None)


def record(layout: Layout, key: str, attempt: Attempt, description: str = "") -> Action:
    """Append ``attempt`` to ``key`` (a new entry when there is none)."""
    with progress_io.transaction(layout) as doc:
        action = record_attempt(doc.progress, key, attempt, description)
    from resume_kit.facts.history_db import append

    text = f"{key} {attempt.status} {attempt.command or description}"
    append(layout, "ledger", text, passed=attempt.status == "success", trace=attempt.session)
    return action


def settle(
    layout: Layout,
    key: str,
    status: Status,
    *,
    call: str | None,
    session: str | None,
    result: str | None,
    at: str,
) -> bool:
    """Set the outcome of the newest ``unknown`` attempt of ``key`` made by tool call ``call``
    (else, with no call id, the newest unknown one of ``session``). False when none matched."""
    with progress_io.transaction(layout) as doc:
        action = next((a for a in doc.progress.actions if a.key == key), None)
        if action is None:
            return False
        for attempt in reversed(action.attempts):
            if attempt.status != "unknown":
                continue
            if (call is not None and attempt.call == call) or (
                call is None and attempt.call is None and attempt.session == session
            ):
                attempt.status, attempt.result, attempt.at = status, result, at
                action.refresh()
                return True
        return False


def forget(layout: Layout, key: str) -> Action | None:
    """Remove the entry ``key``; the removed entry, or None when there was none."""
    with progress_io.transaction(layout) as doc:
        found = next((a for a in doc.progress.actions if a.key == key), None)
        if found is not None:
            doc.progress.actions.remove(found)
        return found
