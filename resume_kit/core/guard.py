"""The tool hook's decisions (pure): whether a side effect about to run is a repeat the agent
must not make without asking, and the reason it is told. Never an objection to a call that is
not a known side effect (the caller only asks about matches)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from resume_kit.core.inert import one_line
from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.side_effects import DEFAULT_MODE, Match
from resume_kit.core.timeutil import age
from resume_kit.model.progress import Action, Attempt


@dataclass(frozen=True)
class Decision:
    mode: str  # ask | deny | warn
    reason: str


def mode_for(match: Match, modes: Sequence[tuple[str, str]]) -> str:
    """The configured answer for ``match``: its pattern's, its rule's, the default, else ask."""
    if match.mode is not None:
        return match.mode
    table = dict(modes)
    return table.get(match.rule) or table.get("default") or DEFAULT_MODE


def when(attempt: Attempt, now: dt.datetime) -> str:
    """``3 h ago (2026-12-01T14:00:00Z), in session 5e02…, exit 0``: every part that is known.
    Every value comes from the progress file: made inert, clipped."""
    parts = []
    ago = age(attempt.at, now)
    if ago is not None:
        parts.append(f"{ago} ({one_line(attempt.at, 40)})")
    if attempt.session:
        parts.append(f"in session {one_line(attempt.session, 40)}")
    if attempt.result:
        parts.append(f"result: {one_line(attempt.result, 80)}")
    return ", ".join(parts) or "at an unknown time"


def repeat_decision(
    match: Match, key: str, action: Action | None, mode: str, now: dt.datetime
) -> Decision | None:
    """The answer before ``match`` runs, given its ledger entry: None when it never ran or only
    failed before; ``mode`` with a reason when it succeeded, or may have (outcome unknown)."""
    if action is None:
        return None
    shown = one_line(match.shown(), 160)
    forget = f"`resume-kit action forget {one_line(key, 60)}`"
    done = action.last_success()
    if done is not None:
        return Decision(
            mode,
            f"resume-kit's side-effect ledger: `{shown}` already ran and succeeded "
            f"{when(done, now)}. It acts outside the work tree, so running it again is a second "
            f"side effect, not a retry. Do not repeat it unless the person confirms; {forget} "
            "clears the record.",
        )
    newest = action.history()[-1]
    if newest.status == "unknown":
        return Decision(
            mode,
            f"resume-kit's side-effect ledger: `{shown}` may have run: its last attempt "
            f"({when(newest, now)}) has no known outcome (the session may have stopped mid-call). "
            "Check before repeating (for a push: is the commit on the remote already?); "
            f"{forget} clears the record once it is known not to have happened.",
        )
    return None
