"""One brief per Copilot CLI session start, delivered by the first prompt after it.

GitHub Copilot CLI (1.0.102) shows the model a ``sessionStart`` hook's ``additionalContext``
only on a new session and only in that request (it is not kept in the history), and not at all
on ``--resume``; a ``userPromptSubmitted`` hook's ``additionalContext`` reaches the model on
new and resumed sessions and stays in the history. So the brief goes with the first prompt
after each start, resume or compaction of a session, and not with the prompts after it.

A resumed session keeps its id, and Copilot runs the ``sessionStart`` and
``userPromptSubmitted`` hooks at the same time, so a marker armed by the start hook would race
the prompt. Instead the prompt hook reads the session's own event log
(``$COPILOT_HOME/session-state/<id>/events.jsonl``), takes the id of its newest
``session.start``, ``session.resume`` or ``session.compaction_complete`` record (the epoch), and
delivers when the marker in the user's cache names another epoch. Copilot writes that log a
moment behind (a new session's file may not exist yet when the hook starts), so the hook waits
up to :data:`WAIT_SECONDS` for the log to show this very invocation (a ``hook.start`` record of
``userPromptSubmitted`` whose input has the payload's ``timestamp``): then the epoch it sees is
current. Without a readable log the epoch is the session id itself: once per session.
Stdlib only (hook path).
"""

from __future__ import annotations

import json
import os
import re
import time

EPOCH_EVENTS = ("session.start", "session.resume", "session.compaction_complete")
TAIL_BYTES = 1 << 20  # the newest epoch is near the end; a log is read tail-first, capped
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def copilot_home() -> str:
    configured = os.environ.get("COPILOT_HOME")
    return configured if configured else os.path.join(os.path.expanduser("~"), ".copilot")


def events_file(session_id: str, home: str | None = None) -> str | None:
    """The session's event log, or None when the id is not a plain file name."""
    if not _SESSION_ID.fullmatch(session_id):
        return None
    return os.path.join(home or copilot_home(), "session-state", session_id, "events.jsonl")


WAIT_SECONDS = 2.0
POLL_SECONDS = 0.025


def _is_this_prompt(record: dict[str, object], stamp: int) -> bool:
    data = record.get("data")
    if record.get("type") != "hook.start" or not isinstance(data, dict):
        return False
    given = data.get("input")
    return (
        data.get("hookType") == "userPromptSubmitted"
        and isinstance(given, dict)
        and given.get("timestamp") == stamp
    )


def scan(
    path: str, stamp: int | None = None, tail_bytes: int = TAIL_BYTES
) -> tuple[str | None, bool]:
    """(the ``id`` of the newest start, resume or compaction record in the last ``tail_bytes``
    of the log at ``path``, whether the log already shows the prompt hook of ``stamp`` (always,
    without a ``stamp``)); no epoch when the file cannot be read."""
    from resume_kit.infra.safefs import open_regular

    try:
        with open_regular(path, follow=True) as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - tail_bytes))
            tail = handle.read(tail_bytes)
    except OSError:
        return None, stamp is None
    epoch: str | None = None
    seen = stamp is None
    for line in reversed(tail.split(b"\n")):
        wanted = not seen and b'"hook.start"' in line
        if epoch is None and any(event.encode() in line for event in EPOCH_EVENTS):
            wanted = True
        if not wanted:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the first line of the tail may be cut, the last one half written
        if not isinstance(record, dict):
            continue
        if not seen and stamp is not None and _is_this_prompt(record, stamp):
            seen = True
        if epoch is None and record.get("type") in EPOCH_EVENTS:
            found = record.get("id")
            epoch = found if isinstance(found, str) and found else None
        if epoch is not None and seen:
            break
    return epoch, seen


def newest_epoch(path: str, stamp: int | None = None, wait: float = WAIT_SECONDS) -> str | None:
    """The newest epoch of the log at ``path``, once the log shows the prompt of ``stamp``
    (waiting up to ``wait`` seconds for it; no wait without a ``stamp``)."""
    deadline = time.monotonic() + wait
    while True:
        epoch, seen = scan(path, stamp)
        if seen or time.monotonic() >= deadline:
            return epoch
        time.sleep(POLL_SECONDS)


def take(
    cache_root: str,
    session_id: str,
    stamp: int | None = None,
    home: str | None = None,
    wait: float = WAIT_SECONDS,
) -> bool:
    """Whether the prompt of ``stamp`` (its payload's ``timestamp``) delivers the brief (and
    record that it did)."""
    log = events_file(session_id, home)
    epoch = (newest_epoch(log, stamp, wait) if log else None) or f"session {session_id}"
    from resume_kit.integrations.compact_once import session_marker, write_marker

    path = session_marker(cache_root, "prompt-briefs", session_id)
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read(512).strip() == epoch:
                return False
    except (OSError, ValueError):
        pass  # no marker, or not one of ours: deliver
    write_marker(path, epoch)
    return True
