"""The one trust check of verify-next and run (cli/approval.require_approved): one refused
command is named with its text, several are counted and listed; nothing runs (exit 4)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.helpers_snapshot import write_progress


def _hand_edited(repo: Path, count: int) -> None:
    units = [
        {"id": f"u{n}", "title": f"U{n}", "verify": f"touch marker{n}"} for n in range(1, count + 1)
    ]
    write_progress(repo, units)  # written by hand: no command approved on this machine


def test_one_refused_command_is_named_with_its_text_by_run_and_verify_next(repo: Path) -> None:
    _hand_edited(repo, 1)
    expected = (
        "resume-kit: error: unit 'u1': verify command not approved on this machine: touch marker1"
    )
    for args in (("run",), ("verify-next",)):
        result = run_cli(*args, cwd=repo)
        assert result.code == 4, result.stderr
        assert expected in result.stderr.splitlines(), (args, result.stderr)
        assert "approve it with `resume-kit trust`" in result.stderr
    assert not list(repo.glob("marker*"))


def test_several_refused_commands_are_counted_and_listed(repo: Path) -> None:
    _hand_edited(repo, 3)
    result = run_cli("run", cwd=repo)
    assert result.code == 4
    line = "resume-kit: error: 3 verify commands are not approved on this machine: u1, u2, u3"
    assert line in result.stderr.splitlines(), result.stderr
    assert "approve them with `resume-kit trust`" in result.stderr
    assert not list(repo.glob("marker*"))
