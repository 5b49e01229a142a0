"""`brief` and `verify-next` started without typer: a stdlib parser for their common forms.

These two run at every agent session start and after every unit, and typer with its command
tree costs them ~30 ms before any work. :func:`parse` understands ``COMMAND [--opt VALUE |
--opt=VALUE | --flag]...`` with values typer would accept unchanged; for anything else
(``--help``, an unknown, repeated or malformed option, a value typer would reject or convert
in a way this parser does not repeat, a shell-completion request) it returns None and typer
parses as always, printing its own usage errors. The option tables below are checked against
the typer declarations in :mod:`resume_kit.cli.verbs` (tests/unit/test_fast_start.py).

Standard library only, and not even :mod:`typing`: this is the start of the brief.
"""

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Convert = Callable[[str], object]


def _at_least(kind: "Callable[[str], int | float]", low: float) -> "Convert":
    """A number written in plain ASCII digits (one ``.`` for a float), at least ``low``.

    Signs, exponents, underscores, spaces, ``nan``/``inf`` and non-ASCII digits are declined:
    ``int()``/``float()`` take them and typer would too, but then the two parsers' results
    would need proving equal on forms nobody types."""

    def convert(text: str) -> object:
        whole, dot, part = text.partition(".")
        if (dot and kind is int) or not (whole + part) or not (whole + part).isascii():
            raise ValueError(text)
        if not all(piece == "" or piece.isdigit() for piece in (whole, part)):
            raise ValueError(text)
        value = kind(text)
        if value < low:
            raise ValueError(text)  # typer prints the range error
        return value

    return convert


def _choice(*names: str) -> "Convert":
    def convert(text: str) -> object:
        if text not in names:
            raise ValueError(text)
        return text

    return convert


def _text(text: str) -> object:
    return text


def _path(text: str) -> object:
    """typer's Path option: refused when the path exists but may not be read."""
    from pathlib import Path

    try:
        os.stat(text)  # a ValueError (a NUL) is a decline too
    except OSError:
        return Path(text)
    if not os.access(text, os.R_OK):
        raise ValueError(text)  # typer: "... is not readable."
    return Path(text)


# An option's spellings -> (the command's parameter, its value converter or a flag's constant).
# The minimums are the at_least() of the declarations; the choices are params.BriefFormat.
BRIEF_FORMATS = ("markdown", "json", "claude-hook", "copilot-hook")
OPTIONS: "dict[str, dict[str, tuple[str, Convert | bool]]]" = {
    "brief": {
        "--max-tokens": ("max_tokens", _at_least(int, 50)),
        "--format": ("fmt", _choice(*BRIEF_FORMATS)),
        "-o": ("output", _path),
        "--output": ("output", _path),
        "--summarize": ("summarize", True),
        "--no-summarize": ("summarize", False),
    },
    "verify-next": {
        "--unit": ("unit", _text),
        "--stale": ("stale", True),
        "--dry-run": ("dry_run", True),
        "--timeout": ("timeout", _at_least(float, 0.01)),
        "--json": ("json_out", True),
        "--force": ("force", True),
    },
}
DEFAULTS: "dict[str, dict[str, object]]" = {
    "brief": {"max_tokens": None, "fmt": "markdown", "output": None, "summarize": None},
    "verify-next": {
        "unit": None,
        "stale": False,
        "dry_run": False,
        "timeout": None,
        "json_out": False,
        "force": False,
    },
}
COMPLETION_VARIABLE = "_RESUME_KIT_COMPLETE"  # click's shell completion for prog "resume-kit"


def parse(args: "list[str]") -> "tuple[str, dict[str, object]] | None":
    """``(command, its parameters)`` for an argv (without the program and ``--debug``) this
    parser is sure to read as typer would; None for typer to parse."""
    if not args or args[0] not in OPTIONS or COMPLETION_VARIABLE in os.environ:
        return None
    command, known = args[0], OPTIONS[args[0]]
    values = dict(DEFAULTS[command])
    seen: set[str] = set()
    rest = args[1:]
    while rest:
        word = rest.pop(0)
        name, equals, attached = word.partition("=") if word.startswith("--") else (word, "", "")
        spec = known.get(name)
        if spec is None:
            return None  # --help, an unknown option, an argument, "--": typer's to say
        dest, action = spec
        if dest in seen:
            return None  # typer keeps the last; not worth proving equal
        seen.add(dest)
        if isinstance(action, bool):
            if equals:
                return None  # "--stale=1": typer's error
            values[dest] = action
            continue
        if equals:
            text = attached
        elif rest:
            text = rest.pop(0)
        else:
            return None  # "requires an argument"
        if text == "" or text.startswith("-"):
            return None  # typer reads these too, but they are nearly always a mistake
        try:
            values[dest] = action(text)
        except ValueError:
            return None
    return command, values


def invoke(command: str, values: "dict[str, object]") -> int:
    """Run the parsed command as its typer declaration would; its exit code."""
    if command == "brief":
        from resume_kit.cli.commands import brief

        return brief.run(**values)  # type: ignore[arg-type]
    from resume_kit.cli.commands import verify

    rest = dict(values)
    return verify.run(unit_id=rest.pop("unit"), **rest)  # type: ignore[arg-type]
