"""Printing: payload on stdout, diagnostics on stderr; colour only on a terminal without NO_COLOR."""

from __future__ import annotations

import json
import os
import sys
from functools import cache

from resume_kit.core.typing_light import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

from resume_kit.infra import messages
from resume_kit.infra.messages import PROG

__all__ = ["PROG", "error_line", "hint", "info", "note", "out", "print_json", "say", "warn"]


def is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def colour_allowed(stream: Any) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return is_terminal(stream)


@cache
def stdout_console() -> Console:
    from rich.console import Console

    return Console(
        file=sys.stdout,
        no_color=not colour_allowed(sys.stdout),
        highlight=False,
        soft_wrap=not colour_allowed(sys.stdout),
    )


@cache
def stderr_console() -> Console:
    from rich.console import Console

    return Console(
        file=sys.stderr, stderr=True, no_color=not colour_allowed(sys.stderr), highlight=False
    )


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n")
    sys.stdout.flush()


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def info(text: str) -> None:
    """A plain diagnostic line on stderr (no markup interpretation)."""
    messages.emit(text)


def warn(text: str) -> None:
    messages.warning(text)


def error_line(message: str, hint: str | None = None) -> None:
    messages.error(message, hint)


def say(text: str) -> None:
    """``resume-kit: <text>``: what happened (a skip, a file written)."""
    messages.say(text)


def hint(text: str) -> None:
    """``hint: <text>``: what to do about the line before."""
    messages.hint(text)


def note(text: str) -> None:
    """``note: <text>``: something the command did on the side (no ``resume-kit:`` prefix)."""
    messages.note(text, prefix=False)
