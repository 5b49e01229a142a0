"""Which part of an `A && B` verify command failed when it printed nothing (issue 14.2)."""

from __future__ import annotations

import pytest
import yaml

from resume_kit.runner.chain import silent_failure
from tests.conftest import run_cli


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (
            "grep -q TODO src/a.py && pytest -q",
            "`grep -q TODO src/a.py` failed without output (so `pytest -q` after it never ran)",
        ),
        (
            "grep -q x a && test -s b && python -m pytest",
            "one of `grep -q x a`, `test -s b` failed without output"
            " (so `python -m pytest` never ran)",
        ),
    ],
)
def test_a_silent_part_before_a_tool_that_always_prints(command: str, said: str) -> None:
    assert silent_failure(command) == said


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",  # not a chain
        "pytest && grep -q x f",  # the printer first: it ran, so the output was not empty
        "grep -q x f && make",  # make may print nothing: unknown
        "true && pytest > out.log",  # redirected: it could have run silently
        "grep x f || true && pytest",  # another operator
        "grep -q x f && mypy --no-error-summary .",  # told to be quiet
        "echo 'a && b'",  # && inside quotes
        "grep 'unbalanced && pytest",
    ],
)
def test_nothing_is_said_when_it_cannot_be_known(command: str) -> None:
    assert silent_failure(command) is None


def test_verify_next_records_which_part_failed(repo) -> None:  # type: ignore[no-untyped-def]
    (repo / "notes.md").write_text("nothing to see\n")
    assert run_cli("init", "--goal", "Chains", cwd=repo).code == 0
    command = "grep -q DONE notes.md && python -m pytest -q"
    assert run_cli("add", "Notes", "--id", "notes", "--verify", command, cwd=repo).code == 0
    assert run_cli("verify-next", cwd=repo).code == 1
    progress = yaml.safe_load((repo / ".resume-kit" / "progress.yaml").read_text())
    (unit,) = progress["units"]
    assert unit["last_failure"]["excerpt"] == (
        "`grep -q DONE notes.md` failed without output (so `python -m pytest -q` after it never ran)"
    )
