"""What the command declarations share: option types and help-friendly parameter types."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _plain_type() -> Any:
    """A string parameter type whose help row names no Python type.

    typer prints an argument's type (``<str>``, ``<path>``) beside its metavar in ``--help``;
    this click type reports an empty metavar of its own, so only the argument's name shows.
    """
    try:  # typer >= 0.24 vendors click as typer._click
        from typer._click.types import StringParamType
    except ImportError:  # pragma: no cover - older typer on a real click
        from click.types import (  # type: ignore[no-redef,import-not-found,assignment,unused-ignore]
            StringParamType,
        )

    class PlainText(StringParamType):  # type: ignore[misc,valid-type,unused-ignore]
        def get_metavar(self, *args: Any, **kwargs: Any) -> str:
            return ""

    return PlainText()


PLAIN = _plain_type()


def plain_usage(command: Any) -> Any:
    """``command`` (and its subcommands) with each required argument shown as ``ID`` in the
    usage line, not typer's ``{ID}``, which reads like a placeholder to fill in; and each
    subcommand's line in a command list as one flowing sentence (typer's rich lists keep the
    docstring's line breaks: "known ones (same id or" then "title) updated" on the next line)."""
    from typer.core import TyperArgument

    class PlainArgument(TyperArgument):  # type: ignore[misc,valid-type,unused-ignore]
        def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
            text = str(super().make_metavar(ctx, usage=usage))
            if usage and text.startswith("{") and text.endswith("}"):
                return text[1:-1]
            return text

    stack = [command]
    while stack:
        current = stack.pop()
        for param in current.params:
            if type(param) is TyperArgument:
                param.__class__ = PlainArgument
        if current.short_help is None and current.help:
            current.short_help = " ".join(current.help.split("\n\n")[0].split())
        stack.extend((getattr(current, "commands", None) or {}).values())
    return command


def at_least(low: float) -> Callable[[Any], Any]:
    """The range check of typer's ``min=``, without the ``[x>=N]`` it adds to the help line."""

    def check(value: Any) -> Any:
        if value is not None and value < low:
            raise typer.BadParameter(f"{value} is not in the range x>={low}.")
        return value

    return check


class BriefFormat(str, Enum):
    markdown = "markdown"
    json = "json"
    claude_hook = "claude-hook"
    copilot_hook = "copilot-hook"


class Trigger(str, Enum):
    manual = "manual"
    post_commit = "post-commit"
    brief = "brief"
    verify = "verify"
    pre_compact = "pre-compact"


def exit_with(code: int) -> None:
    if code:
        raise typer.Exit(code)
