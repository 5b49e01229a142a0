"""The harness in tests/conftest.py: the in-process CLI runner sees what a subprocess sees and
leaves nothing behind (the same Result for the same call, cwd/env/streams restored,
per-process state emptied before each call); the development tier narrows Hypothesis."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import conftest
from tests.conftest import FAST_EXAMPLES, fast_tier, run_cli, run_cli_in_process, run_cli_subprocess
from tests.helpers_snapshot import write_progress

TRUST_ALL = {"RESUME_KIT_TRUST": "all"}


def init(repo: Path) -> None:
    """Two units whose verify commands came with the repository (never approved here)."""
    write_progress(
        repo,
        [
            {"id": "echo", "title": "Echo", "status": "todo", "verify": "echo from-the-child"},
            {"id": "again", "title": "Again", "status": "todo", "verify": "echo again"},
        ],
    )


def test_this_tier_runs_in_process(repo: Path) -> None:
    assert conftest._runner is run_cli_in_process
    assert run_cli("--version", cwd=repo).code == 0


@pytest.mark.subprocess
def test_the_subprocess_marker_chooses_a_subprocess() -> None:
    assert conftest._runner is run_cli_subprocess


@pytest.mark.parametrize(
    "args",
    [
        ("status", "--json"),
        ("status",),
        ("brief",),
        ("no-such-command",),
        ("add",),  # a usage error: exit 2 and the usage line on stderr
        ("verify-next",),  # never approved: refused, exit 4
    ],
)
def test_same_result_as_a_subprocess(repo: Path, args: tuple[str, ...]) -> None:
    init(repo)
    here = run_cli_in_process(*args, cwd=repo)
    there = run_cli_subprocess(*args, cwd=repo)
    assert (here.code, here.stdout, here.stderr) == (there.code, there.stdout, there.stderr)


def test_children_output_and_stdin_are_captured(repo: Path) -> None:
    init(repo)
    result = run_cli_in_process("verify-next", cwd=repo, env=TRUST_ALL)
    assert result.code == 0, result.stderr
    assert "from-the-child" in result.stdout + result.stderr
    payload = '{"hook_event_name": "SessionStart", "source": "startup"}'
    args = ("brief", "--format", "claude-hook")
    assert run_cli_in_process(*args, cwd=repo, input=payload) == run_cli_subprocess(
        *args, cwd=repo, input=payload
    )


def test_cwd_env_argv_and_streams_are_restored(repo: Path, tmp_path: Path) -> None:
    before = (os.getcwd(), dict(os.environ), sys.argv, sys.stdin, sys.stdout, sys.stderr)
    run_cli_in_process("status", cwd=repo, env={"RESUME_KIT_TRUST": "all", "EXTRA": "1"})
    with pytest.raises(FileNotFoundError):
        run_cli_in_process("status", cwd=tmp_path / "missing")
    after = (os.getcwd(), dict(os.environ), sys.argv, sys.stdin, sys.stdout, sys.stderr)
    assert after == before


def test_once_per_process_messages_come_once_per_call(repo: Path) -> None:
    """The RESUME_KIT_TRUST=all warning is printed once per process: each in-process call is a
    fresh process, so each prints it (a leaked flag would silence the second)."""
    init(repo)
    first = run_cli_in_process("verify-next", cwd=repo, env=TRUST_ALL)
    second = run_cli_in_process("verify-next", cwd=repo, env=TRUST_ALL)
    assert (first.code, second.code) == (0, 0), first.stderr + second.stderr
    assert "RESUME_KIT_TRUST=all" in first.stderr
    assert "RESUME_KIT_TRUST=all" in second.stderr


def test_every_listed_state_exists() -> None:
    """A module-level cache that moves must move in PROCESS_STATE too."""
    import importlib

    for module_name, attr in conftest.PROCESS_STATE:
        assert hasattr(importlib.import_module(module_name), attr), (module_name, attr)
    conftest.reset_process_state()


SEEN: list[int] = []


@settings(max_examples=FAST_EXAMPLES * 3, deadline=None, database=None)
@given(st.integers())
def test_examples_are_counted(value: int) -> None:
    SEEN.append(value)


def test_the_development_tier_tries_fewer_examples(request: pytest.FixtureRequest) -> None:
    """``-m "not slow"`` narrows an explicit count to FAST_EXAMPLES; plain ``pytest`` keeps it."""
    expected = FAST_EXAMPLES if fast_tier(request.config) else FAST_EXAMPLES * 3
    narrowed = test_examples_are_counted._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    assert narrowed.max_examples == expected
    if SEEN:  # ran before this test (file order): at most that many examples
        assert len(SEEN) <= expected


def test_every_slow_listing_names_a_test() -> None:
    """A renamed or moved test must not silently join the development tier."""
    import importlib

    for node in sorted(conftest.SLOW_TESTS | conftest.SAMPLED_TABLES):
        path, _, name = node.partition("::")
        assert (conftest.REPO_ROOT / path).is_file(), node
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        assert callable(getattr(module, name.split("::")[0], None)), node
