"""What the agent's own hooks saw, judged (pure): the same failing call again and again
(REPEATED_CALLS, the loop guard) and sessions, compactions and tokens that verified nothing
(NO_PROGRESS, the meter). The records come from the activity log in the user's cache."""

from __future__ import annotations

from resume_kit.core.digest import sha256
from resume_kit.core.lazy_regex import lazy
from resume_kit.core.light_dataclass import dataclass, field

TYPE_CHECKING = False  # not typing's: the served hook brief judges the log with this module
if TYPE_CHECKING:
    from collections.abc import Sequence

REPEATS = 3  # identical failing calls in a row that make a loop
# The meter's defaults (config.yaml `no_progress:`): this many compactions, or sessions started
# or resumed, or tokens, since the last unit was verified, and the brief says stop and report.
NO_PROGRESS_COMPACTIONS = 3
NO_PROGRESS_SESSIONS = 4
NO_PROGRESS_TOKENS = 3_000_000


@dataclass(frozen=True)
class CallRecord:
    session: str | None
    sig: str  # the tool's name and arguments, hashed
    failed: bool
    result: str  # the failure's text, normalised and hashed ("" for a success)
    shown: str  # the call, redacted and short, for a person
    error: str  # the failure's first line, redacted and short
    at: str


def call_signature(tool: str, tool_input: object) -> str:
    """The identity of a call: its tool and arguments (the shell tool's free-text
    ``description`` left out: the same command described twice is the same call)."""
    if isinstance(tool_input, dict):
        tool_input = {k: v for k, v in tool_input.items() if k != "description"}
    from resume_kit.core.light_json import dumps  # json's text; json costs the hooks ~2 ms

    try:
        text = dumps(tool_input, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(tool_input)
    return sha256(f"{tool}\0{text}".encode()).hexdigest()[:16]


_NUMBER = lazy(r"\d+(?:\.\d+)?")


def result_signature(text: str) -> str:
    """A failure's identity: numbers (times, ids, line counts) and white space do not count."""
    normal = " ".join(_NUMBER.sub("0", text).split())
    return sha256(normal.encode()).hexdigest()[:16]


def repeated(
    calls: Sequence[CallRecord], session: str | None, sig: str | None = None
) -> list[CallRecord]:
    """The last :data:`REPEATS` calls of ``session`` when they are one call (``sig``, when
    given) failing the same way each time; else []."""
    mine = [c for c in calls if c.session == session][-REPEATS:]
    if len(mine) < REPEATS:
        return []
    first = mine[0]
    if sig is not None and first.sig != sig:
        return []
    if all(c.failed and c.sig == first.sig and c.result == first.result for c in mine):
        return mine
    return []


def describe_loop(loop: Sequence[CallRecord]) -> str:
    """The three results summarised, for the finding and the hook's reason."""
    times = ", ".join(c.at for c in loop)
    return (
        f"the same call failed {len(loop)} times in a row with the same result: `{loop[-1].shown}`"
        f" -> {loop[-1].error or 'failed'} (at {times})"
    )


@dataclass(frozen=True)
class MeterEvent:
    at: str
    kind: str  # startup | resume | compact | clear (SessionStart's source)
    session: str | None
    tokens: int | None  # the session's transcript tokens at that moment, when known


@dataclass(frozen=True)
class Limits:
    compactions: int = NO_PROGRESS_COMPACTIONS
    sessions: int = NO_PROGRESS_SESSIONS
    tokens: int = NO_PROGRESS_TOKENS


@dataclass(frozen=True)
class NoProgress:
    compactions: int
    sessions: int
    tokens: int
    since: str | None  # the last verification, None when no unit was ever verified


def no_progress(
    events: Sequence[MeterEvent],
    last_verified: str | None,
    tokens_now: dict[str, int],
    limits: Limits,
) -> NoProgress | None:
    """The counts since ``last_verified`` (ISO times compare as text) when any reaches its
    limit; None otherwise. ``tokens_now`` is each session's latest transcript total."""
    after = [e for e in events if last_verified is None or e.at > last_verified]
    compactions = sum(1 for e in after if e.kind == "compact")
    sessions = len({e.session for e in after if e.kind in ("startup", "resume", "clear")})
    tokens = 0
    for session in {e.session for e in after if e.session is not None}:
        seen = [e.tokens for e in after if e.session == session and e.tokens is not None]
        latest = tokens_now.get(session, max(seen, default=0))
        # spent since the session's first event after the last verification (about 0 for a
        # session that started then; what a resumed session had spent before does not count)
        tokens += max(0, latest - (seen[0] if seen else 0))
    if compactions >= limits.compactions or sessions >= limits.sessions or tokens >= limits.tokens:
        return NoProgress(compactions, sessions, tokens, last_verified)
    return None


@dataclass(frozen=True)
class Activity:
    """What reconcile is given about the agent's recent activity (the activity log's records,
    the transcripts' token totals, the meter's limits)."""

    calls: tuple[CallRecord, ...] = ()
    session: str | None = None  # the session the brief is for; None: the log's newest
    events: tuple[MeterEvent, ...] = ()
    tokens_now: dict[str, int] = field(default_factory=dict)
    limits: Limits = Limits()


def judge(
    activity: Activity, last_verified: str | None
) -> tuple[list[CallRecord], NoProgress | None]:
    """(the loop of the brief's session, the meter's verdict): all that reconcile's activity
    findings say. The session is the brief's, else the newest call's."""
    session = activity.session or (activity.calls[-1].session if activity.calls else None)
    stalled = no_progress(activity.events, last_verified, activity.tokens_now, activity.limits)
    return repeated(activity.calls, session), stalled


def describe_no_progress(found: NoProgress) -> str:
    since = (
        f"the last verified unit ({found.since})" if found.since else "the start (no unit verified)"
    )
    return (
        f"{found.compactions} compactions, {found.sessions} sessions started or resumed and "
        f"about {found.tokens:,} tokens since {since}, with no new verified unit"
    )
