"""Reading ISO-8601 times written by resume-kit or by the agents (standard library only)."""

from __future__ import annotations

import datetime as dt


def parse_utc(value: object) -> dt.datetime | None:
    """``value`` as an aware UTC datetime (a trailing ``Z`` and a missing offset mean UTC);
    None when it is not a string ``datetime.fromisoformat`` reads."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed.astimezone(dt.timezone.utc)
