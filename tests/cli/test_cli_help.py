"""Every command's ``--help``, hidden ones included, in plain words: what each flag does, with a
metavar such as ID, N or GLOB, and no Python type annotations (``<str>``, ``<int range>
[x>=1]``, ``<bool>``) from typer or click."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer

from resume_kit.cli.app import app, main

# typer's <type> column (<bool>, <list[str]>), click's range suffix ([x>=1]), click's upper-case
# type names, typer's {ID} for a required argument and [[DIR]] for an optional one.
TYPE_MARKERS = re.compile(
    r"<[a-z][^>]*>|\[?x[<>]=?-?\d|\b(?:INTEGER|FLOAT|BOOLEAN|CHOICE|RANGE|UUID|DATETIME)\b"
    r"|\{[A-Za-z_]+\}|\[\["
)
# plan's own placeholders are words a person types into --title and --verify
PLACEHOLDERS = re.compile(r"\{(?:path|stem|name|n)\}")


def _commands() -> list[tuple[list[str], Any]]:
    found: list[tuple[list[str], Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        found.append((path, command))
        for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = _commands()


def _help(path: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*path, "--help"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0, (path, err)
    return out


def _plain(text: str) -> str:
    return " ".join(text.replace("\\[", "[").split())


def test_every_command_is_walked() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"", "brief", "run", "verify-next", "hook run", "action record", "stop-check"} <= names


@pytest.mark.parametrize(
    ("path", "command"), COMMANDS, ids=[" ".join(p) or "resume-kit" for p, _ in COMMANDS]
)
def test_help_is_plain_words(
    path: list[str], command: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("COLUMNS", "220")  # one row per parameter: each help text whole
    out = _help(path, capsys)
    markers = TYPE_MARKERS.findall(PLACEHOLDERS.sub("", out) if path == ["plan"] else out)
    assert not markers, (path, markers, out)
    text = _plain(out)
    for param in command.params:
        if param.name == "help":
            continue
        assert param.help, (path, param.name, "says nothing about what it does")
        assert _plain(param.help) in text, (path, param.name, out)  # shown, no markup eaten
        if param.param_type_name == "argument" or not param.is_flag:
            assert param.metavar and re.fullmatch(r"\[?[A-Z]+\]?(\.\.\.)?", param.metavar), (
                path,
                param.name,
                param.metavar,
            )
            assert param.metavar.strip("[].") in out, (path, param.name)


def test_range_checks_keep_their_messages(capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["brief", "--max-tokens", "10"], "Invalid value for '--max-tokens': 10 is not in the range x>=50."),
        (["run", "--jobs", "0"], "Invalid value for '--jobs' / '-j': 0 is not in the range x>=1."),
        (["run", "--max-failures", "0"], "Invalid value for '--max-failures': 0 is not in the range x>=1."),
        (["run", "--max-units", "0"], "Invalid value for '--max-units': 0 is not in the range x>=1."),
        (["verify-next", "--timeout", "0"], "Invalid value for '--timeout': 0.0 is not in the range x>=0.01."),
    ]  # fmt: skip
    for args, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code == 2, args
        err = capsys.readouterr().err
        assert err.splitlines()[0] == f"resume-kit: error: {message}", err


def test_the_markers_catch_what_typer_prints() -> None:
    for text in ("<bool>", "<list[str]>", "<int range> [x>=1]", "Usage: add {TITLE}", "[[DIR]]"):
        assert TYPE_MARKERS.search(text), text
    assert not TYPE_MARKERS.search("Usage: resume-kit add [OPTIONS] TITLE [DIR] [FILE]...")


def test_usage_lines_name_arguments_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    assert "Usage: resume-kit rename [OPTIONS] OLD NEW" in _help(["rename"], capsys)
    assert "Usage: resume-kit demo [OPTIONS] [DIR]" in _help(["demo"], capsys)


def test_plan_verify_lists_its_placeholders(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    text = _plain(_help(["plan"], capsys))
    for words in (
        "{path} the file's path from the repository root",
        "{stem} its name without the extension",
        "{name} its name",
        "{n} its number in the sorted matches",
    ):
        assert words in text


GROUPS = [(path, command) for path, command in COMMANDS if getattr(command, "commands", None)]


@pytest.mark.parametrize(
    ("path", "command"), GROUPS, ids=[" ".join(p) or "resume-kit" for p, _ in GROUPS]
)
def test_a_command_list_gives_each_summary_as_one_flowing_row(
    path: list[str], command: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """typer's rich command list keeps a docstring's line breaks ("known ones (same id or",
    then "title) updated" on the next row); wide enough, each summary is one row."""
    monkeypatch.setenv("COLUMNS", "220")
    rows = _help(path, capsys).splitlines()
    for name, sub in command.commands.items():
        if sub.hidden:
            continue
        summary = " ".join((sub.help or "").split("\n\n")[0].split())
        (row,) = [r for r in rows if re.match(rf"│ {re.escape(name)} ", r)]
        assert summary in _plain(row), (path, name, row)
