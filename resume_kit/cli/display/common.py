"""What both progress displays share: the terminal test, one-line clipping, durations, id
lists and JSON lines."""

from __future__ import annotations

import json
import os
import sys

from resume_kit.core.typing_light import Any
from resume_kit.infra.messages import warning_text

LIST_MAX = 8  # ids shown in one line before "and N more"
LINE_CHARS = 160  # a command's output line shown in a progress line, at most


def live_terminal() -> bool:
    """Whether stderr is a terminal that can take a live display (NO_COLOR only takes the
    colour away; TERM=dumb gets plain lines)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return isatty is not None and bool(isatty()) and os.environ.get("TERM", "") != "dumb"


def shown(text: str) -> str:
    """A title or command from the progress file as one printable line."""
    from resume_kit.core.escape import escape_controls

    return escape_controls(text)


def clip(text: str, limit: int = LINE_CHARS) -> str:
    """A command's output line, redacted and escaped, cut to ``limit`` characters."""
    from resume_kit.core.inert import clip as clip_text
    from resume_kit.infra.redact import redact
    from resume_kit.infra.trust import display_command

    return clip_text(display_command(redact(text)), limit)


def id_list(ids: list[str], limit: int = LIST_MAX) -> str:
    shown_ids = ", ".join(ids[:limit])
    return shown_ids + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def rate(passed: int, elapsed: float) -> str:
    if passed == 0 or elapsed <= 0:
        return "-"
    per_s = passed / elapsed
    return f"{per_s:.1f} units/s" if per_s >= 1 else f"{elapsed / passed:.1f} s/unit"


def json_line(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def not_recorded_line(unit_id: str) -> str:
    return warning_text(
        f"unit '{unit_id}' was removed or its verify command changed while it ran; nothing recorded"
    )
