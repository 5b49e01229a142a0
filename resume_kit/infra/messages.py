"""Every diagnostic line resume-kit prints on stderr, in its four forms (SPEC 3):

    resume-kit: error: <what went wrong>      error(), then "hint: <what to do>" when given
    resume-kit: warning: <what is off>        warning()
    resume-kit: note: <what was ignored>      note(); note(..., prefix=False): "note: ..."
    resume-kit: <what happened>               say() (progress and fail-open skips)

``hint()`` prints a bare "hint: ..." line and ``emit()`` any line as it is. This is the only
module that spells the "resume-kit: " prefix (tests/unit/test_messages.py enforces it). It
imports nothing but ``sys``, so the commit hook (``integrations/hook_entry.py``) can use it, and
it looks ``sys.stderr`` up at each call, so a redirected stream is honoured.
"""

from __future__ import annotations

import sys

PROG = "resume-kit"
PREFIX = f"{PROG}: "


def prefixed(text: str) -> str:
    """``text`` as a resume-kit line: ``resume-kit: <text>``."""
    return PREFIX + text


def error_text(message: str) -> str:
    return prefixed(f"error: {message}")


def warning_text(message: str) -> str:
    return prefixed(f"warning: {message}")


def note_text(message: str, *, prefix: bool = True) -> str:
    return prefixed(f"note: {message}") if prefix else f"note: {message}"


def hint_text(message: str) -> str:
    return f"hint: {message}"


def emit(line: str) -> None:
    """One line on stderr, flushed (no markup interpretation)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def say(message: str) -> None:
    emit(prefixed(message))


def error(message: str, hint: str | None = None) -> None:
    emit(error_text(message))
    if hint:
        emit(hint_text(hint))


def warning(message: str) -> None:
    emit(warning_text(message))


def note(message: str, *, prefix: bool = True) -> None:
    emit(note_text(message, prefix=prefix))


def hint(message: str) -> None:
    emit(hint_text(message))
