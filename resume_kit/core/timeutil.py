"""Reading ISO-8601 times written by resume-kit or by the agents (standard library only)."""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable

from resume_kit.core.clock import ISO_FORMAT
from resume_kit.core.clock import now_utc as now_utc  # its writers import it from here


def format_utc(moment: dt.datetime) -> str:
    """``moment`` in resume-kit's one time format; a naive datetime is taken as UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc)
    return moment.strftime(ISO_FORMAT)


def from_epoch(seconds: float) -> str:
    """A Unix time in resume-kit's one time format."""
    return format_utc(dt.datetime.fromtimestamp(seconds, dt.timezone.utc))


# While a brief is recorded for serving (resume_kit.brief.fastpath): how many whole seconds
# after the brief's own time every age in it still reads the same, and the epoch time before
# which every clock comparison it made still comes out the same, and the brief's own time
# (whole epoch seconds). None when not recording.
_steady: list[float] | None = None
_steady_base: int | None = None
STEADY_CAP_S = 24 * 3600.0


def track_steadiness() -> None:
    global _steady, _steady_base
    _steady, _steady_base = [STEADY_CAP_S, float("inf")], None


def tracked_steadiness() -> tuple[float, float, int | None] | None:
    """(seconds every age stays the same, epoch time the clock comparisons hold until, the
    brief's time); stops tracking."""
    global _steady
    found, _steady = _steady, None
    return None if found is None else (found[0], found[1], _steady_base)


def steady_base(seconds: int) -> None:
    """The time the brief's ages are measured from (its snapshot's ``created_at``)."""
    global _steady_base
    if _steady is not None:
        _steady_base = seconds


def steady_until(epoch: float) -> None:
    """A clock comparison made now changes its answer at ``epoch``."""
    if _steady is not None:
        _steady[1] = min(_steady[1], epoch)


def _note_steady(text_at: Callable[[float], str], offset: float = 0.0) -> None:
    """Narrow the ages' steadiness to the whole seconds ``d`` for which ``text_at(d)`` reads as
    ``text_at(0)`` (each text holds on one interval of time: search for its end)."""
    if _steady is None:
        return
    cap = int(_steady[0])
    same = text_at(offset)
    good, bad = 0, 1
    while bad <= cap and text_at(offset + bad) == same:
        good, bad = bad, bad * 2
    bad = min(bad, cap + 1)
    while bad - good > 1:
        middle = (good + bad) // 2
        if text_at(offset + middle) == same:
            good = middle
        else:
            bad = middle
    _steady[0] = min(_steady[0], float(good))


_FRACTION = re.compile(r"(?<=T\d\d:\d\d:\d\d)\.(\d+)")


def parse_utc(value: object) -> dt.datetime | None:
    """``value`` as an aware UTC datetime (a trailing ``Z`` and a missing offset mean UTC);
    None when it is not a string ``datetime.fromisoformat`` reads."""
    if not isinstance(value, str) or not value:
        return None
    return _parse_text(value)


# A brief reads each done unit's evidence time several times (reconcile, the latest pass, the
# progress line): thousands of calls on a few distinct strings. Datetimes are immutable.
@functools.lru_cache(maxsize=8192)
def _parse_text(value: str) -> dt.datetime | None:
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python 3.10 reads only 3 or 6 fractional digits; agents write 1 to 9 (Codex: nanoseconds).
    fraction = _FRACTION.search(text)
    if fraction is not None:
        digits = (fraction.group(1) + "000000")[:6]
        text = text[: fraction.start()] + "." + digits + text[fraction.end() :]
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed.astimezone(dt.timezone.utc)


def duration(seconds: float) -> str:
    """``12 min``, ``3 h``, ``2 d``: rounded in the largest unit that fits, at least 1 min."""
    if seconds < 90 * 60:
        return f"{max(1, round(seconds / 60))} min"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} d"


def age(then: object, now: object) -> str | None:
    """The one form of an age (SPEC 4): ``"just now"``, ``"12 min ago"``, ``"3 h ago"``,
    ``"2 d ago"``; ``now`` is a datetime or an ISO time; None when either cannot be read."""
    start = parse_utc(then)
    end = now if isinstance(now, dt.datetime) else parse_utc(now)
    if start is None or end is None:
        return None
    seconds = (end - start).total_seconds()
    _note_steady(lambda later: _age_text(seconds + later))
    return _age_text(seconds)


def _age_text(seconds: float) -> str:
    return "just now" if seconds < 60 else f"{duration(seconds)} ago"


def age_span(seconds: list[float]) -> str:
    """``5 h–2 d ago`` for the youngest and the oldest of some ages (``5 h ago`` when alike)."""
    # only those two are read: the steadiness search probes them alone, not thousands of ages
    youngest, oldest = min(seconds), max(seconds)
    _note_steady(lambda later: _span_text(youngest + later, oldest + later))
    return _span_text(youngest, oldest)


def _span_text(youngest: float, oldest: float) -> str:
    low, high = duration(youngest), duration(oldest)
    return f"{low} ago" if low == high else f"{low}–{high} ago"
