"""One brief per compaction: Claude Code (2.1.332) fires SessionStart(compact) and PostCompact
for one compaction, and either may be the one that delivers (SessionStart(compact) is the
one a known bug class drops).

A marker in the user's cache, keyed by the session id, names the event that delivered last.
The other event of the same compaction finds it, takes it away and stays silent; the same
event again (the next compaction, the other event missing) delivers. A marker older than
:data:`PAIR_SECONDS` belongs to an earlier compaction and is ignored. Stdlib only (hook path).
"""

from __future__ import annotations

import os
import time

COMPACT_EVENTS = ("SessionStart", "PostCompact")
PAIR_SECONDS = 120.0


def compaction_event(hook_input: dict[str, object]) -> str | None:
    """``SessionStart`` (source compact) or ``PostCompact``, else None (not a compaction)."""
    event = hook_input.get("hook_event_name")
    if event == "PostCompact":
        return "PostCompact"
    if event in (None, "SessionStart") and hook_input.get("source") == "compact":
        return "SessionStart"
    return None


def session_marker(cache_root: str, folder: str, session_id: str) -> str:
    """The marker file of ``session_id`` in ``folder`` of the user's cache (a hash names it:
    the id comes from the agent's payload)."""
    from resume_kit.core.digest import sha256_hex

    key = sha256_hex(session_id.encode("utf-8", "surrogateescape"))[:32]
    return os.path.join(cache_root, folder, key)


def write_marker(path: str, text: str) -> None:
    """Replace the marker at ``path`` with ``text`` (best effort: a hook never fails on it;
    no fsync: a marker only pairs the two events of one compaction)."""
    from resume_kit.infra.atomic_file import atomic_write

    try:  # no contextlib: this module is on the served hook brief's path
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        atomic_write(path, f"{text}\n", durable=False)
    except OSError:
        pass


def should_deliver(cache_root: str, session_id: str, event: str, now: float | None = None) -> bool:
    """Whether this ``event`` of a compaction delivers the brief (and record that it did)."""
    now = time.time() if now is None else now
    path = session_marker(cache_root, "compactions", session_id)
    try:
        with open(path, encoding="ascii") as handle:
            other, stamp = handle.read(64).split()
        if other != event and other in COMPACT_EVENTS and 0 <= now - float(stamp) < PAIR_SECONDS:
            try:  # noqa: SIM105 - no contextlib (see write_marker)
                os.unlink(path)
            except OSError:
                pass
            return False
    except (OSError, ValueError):
        pass  # no marker, or not one of ours: deliver
    write_marker(path, f"{event} {now:.3f}")
    return True
