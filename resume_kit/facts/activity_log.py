"""The activity log of one work tree: the agent's recent tool calls (the loop guard) and its
session starts, resumes and compactions (the no-progress meter), in the user's cache folder
(``activity/<sha256 of the work tree's path>.json``), never in the repository: a clone must not
ship a forged history. Bounded; a write replaces the file atomically (two hooks at once may
lose a record: a heuristic's input, not the ledger)."""

from __future__ import annotations

import os

from resume_kit.core.activity import Activity, CallRecord, Limits, MeterEvent
from resume_kit.core.digest import sha256_hex
from resume_kit.core.light_dataclass import asdict
from resume_kit.core.light_json import dumps, loads
from resume_kit.infra.cachedir import ensure_private, user_cache_root

# Not typing, json, pathlib or contextlib: the served hook brief reads and writes this log at
# every session start, and those modules (with re and enum) would be most of its time.
TYPE_CHECKING = False  # mypy reads the guard
if TYPE_CHECKING:
    from resume_kit.core.typing_light import Any

MAX_CALLS = 30
MAX_EVENTS = 200
MAX_BYTES = 1 << 20


def log_path(root: str) -> str:
    digest = sha256_hex(os.path.realpath(root).encode("utf-8", "surrogateescape"))
    return os.path.join(user_cache_root(), "activity", f"{digest[:32]}.json")


def read(root: str) -> dict[str, Any]:
    """The log's data (``calls``, ``events``, ``stops``); empty lists when absent or unusable."""
    from resume_kit.infra.safefs import read_regular

    data: Any = {}
    try:  # noqa: SIM105 - no contextlib here (see the imports)
        data = loads(read_regular(log_path(root), MAX_BYTES, follow=False).decode("utf-8"))
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        pass
    if not isinstance(data, dict):
        data = {}
    return {
        key: v if isinstance(v := data.get(key), list) else []
        for key in ("calls", "events", "stops")
    }


def _write(root: str, data: dict[str, Any]) -> None:
    from resume_kit.infra.atomic_file import atomic_write

    path = log_path(root)
    ensure_private(os.path.dirname(path))
    # not durable: a heuristic's input (see above), written at every session start; a power
    # cut may leave it empty, which the meter reads as no history
    atomic_write(path, dumps(data), mode=0o600, durable=False)


def calls(root: str) -> list[CallRecord]:
    return _calls(read(root)["calls"])


def _calls(raws: list[Any]) -> list[CallRecord]:
    found: list[CallRecord] = []
    for raw in raws:
        try:
            record = CallRecord(**raw)
        except (TypeError, ValueError):
            continue
        if all(
            isinstance(getattr(record, f), str) for f in ("sig", "result", "shown", "error", "at")
        ):
            found.append(record)
    return found


def events(root: str) -> list[MeterEvent]:
    return _events(read(root)["events"])


def _events(raws: list[Any]) -> list[MeterEvent]:
    found: list[MeterEvent] = []
    for raw in raws:
        try:
            event = MeterEvent(**raw)
        except (TypeError, ValueError):
            continue
        if isinstance(event.at, str) and isinstance(event.kind, str):
            found.append(event)
    return found


def add_call(root: str, record: CallRecord) -> None:
    data = read(root)
    data["calls"] = [*data["calls"], asdict(record)][-MAX_CALLS:]
    _write(root, data)


def add_event(root: str, event: MeterEvent) -> None:
    data = read(root)
    data["events"] = [*data["events"], asdict(event)][-MAX_EVENTS:]
    _write(root, data)


def stopped_once(root: str, session: str, since: str | None) -> bool:
    """Whether the Stop hook already blocked ``session`` for this lack of progress (since the
    same last verification); records it when not, so the next Stop lets the session end."""
    data = read(root)
    mark = {"session": session, "since": since}
    if mark in data["stops"]:
        return True
    data["stops"] = [*data["stops"], mark][-MAX_EVENTS:]
    _write(root, data)
    return False


SESSION_SOURCES = ("startup", "resume", "compact", "clear")


def for_brief(
    root: str, hook_input: dict[str, Any] | None, snapshot: Any, limits: Limits
) -> Activity:
    """The activity reconcile judges for a brief; a SessionStart hook's start, resume or
    compaction is added to the meter first (with the session's transcript tokens)."""
    transcript = snapshot.get("transcript") if isinstance(snapshot, dict) else None
    session, tokens = brief_session(hook_input, transcript)
    event = session_event(hook_input, session, tokens)
    if event is not None:
        try:  # noqa: SIM105 - no contextlib here (see the imports)
            add_event(root, event)
        except OSError:
            pass
    return with_event(root, session, tokens, None, limits)


def brief_session(
    hook_input: dict[str, Any] | None, transcript: Any
) -> tuple[str | None, int | None]:
    """(the session a brief is for: the hook's, else the transcript's; its transcript tokens)."""
    transcript = transcript if isinstance(transcript, dict) else {}
    session = (hook_input or {}).get("session_id") or transcript.get("session_id")
    session = session if isinstance(session, str) else None
    total = (transcript.get("tokens") or {}).get("total")
    tokens = total if isinstance(total, int) and not isinstance(total, bool) else None
    return session, tokens


def session_event(
    hook_input: dict[str, Any] | None, session: str | None, tokens: int | None
) -> MeterEvent | None:
    """The meter event a SessionStart hook's brief records, or None (not a session start)."""
    source = (hook_input or {}).get("source")
    if source in SESSION_SOURCES and (hook_input or {}).get("hook_event_name") in (
        None,
        "SessionStart",
    ):
        from resume_kit.core.clock import now_utc

        return MeterEvent(now_utc(), str(source), session, tokens)
    return None


def with_event(
    root: str, session: str | None, tokens: int | None, event: MeterEvent | None, limits: Limits
) -> Activity:
    """The activity of the log as it is, with ``event`` added as :func:`add_event` would (the
    served hook brief judges it before it writes the event)."""
    data = read(root)
    raw_events = data["events"]
    if event is not None:
        raw_events = [*raw_events, asdict(event)][-MAX_EVENTS:]
    now = {session: tokens} if session is not None and tokens is not None else {}
    return Activity(tuple(_calls(data["calls"])), session, tuple(_events(raw_events)), now, limits)
