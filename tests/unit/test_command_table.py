"""README's command tables are generated from the commands (python -m
resume_kit.cli.command_table); this fails when README.md differs from what it would write."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer

from resume_kit.cli import command_table
from resume_kit.cli.app import app

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_command_table_is_what_the_commands_say() -> None:
    text = README.read_text(encoding="utf-8")
    assert command_table.updated(text) == text, (
        "README.md's command table is out of date: run `python -m resume_kit.cli.command_table`"
    )


def test_every_command_has_a_row_hidden_ones_too() -> None:
    block = command_table.render()
    group = typer.main.get_command(app)
    ctx = typer.Context(group, info_name="resume-kit")

    def leaves(command: typer.core.TyperGroup, path: list[str]) -> list[str]:
        found = []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if getattr(sub, "commands", None):
                found += leaves(sub, [*path, name])  # type: ignore[arg-type]
            else:
                found.append(" ".join([*path, name]))
        return found

    names = leaves(group, [])  # type: ignore[arg-type]
    assert {"edit", "rm", "rename", "note", "stop-check", "hook run"} <= set(names)
    for name in names:
        assert f"| `{name}" in block, name
    for args in ("brief --format claude-hook", "snapshot --quiet --trigger pre-compact"):
        assert f"| `{args}` |" in block


@pytest.mark.subprocess
def test_check_mode_says_when_the_readme_differs(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "resume_kit.cli.command_table", "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    stale = command_table.BEGIN + "\n| `old` | row |\n" + command_table.END
    assert command_table.updated(stale) != stale
