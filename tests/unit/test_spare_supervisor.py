"""The supervisor started ahead of its command (runner/verify.spare_supervisor): it runs the
command it is handed as the one started with it would, and one never handed a command goes
away, whether the block ends or resume-kit is killed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from resume_kit.runner import verify
from tests.cli.test_verify import process_gone


def test_a_spare_supervisor_runs_the_command_it_is_handed(tmp_path: Path) -> None:
    groups: list[int] = []
    with verify.spare_supervisor(tmp_path):
        spare = verify._SPARE[0][1]
        result = verify.run_command(
            "echo started; read line && echo read-stdin; pwd; exit 3",
            cwd=tmp_path,
            log_path=tmp_path / "run.log",
            timeout_s=60,
            on_start=groups.append,
        )
        assert not verify._SPARE  # handed over, not started anew
    assert groups == [spare.pid]  # the spare leads the command's process group
    assert result.exit_code == 3
    log = (tmp_path / "run.log").read_text()
    assert "started" in log
    assert "read-stdin" not in log  # its standard input is /dev/null, not the pipe
    assert str(tmp_path.resolve()) in log


def test_a_command_for_another_folder_starts_its_own(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with verify.spare_supervisor(tmp_path):
        spare = verify._SPARE[0][1]
        result = verify.run_command("pwd", cwd=other, log_path=tmp_path / "run.log", timeout_s=60)
        assert verify._SPARE  # still waiting: it was started in tmp_path
    assert result.passed
    assert str(other.resolve()) in (tmp_path / "run.log").read_text()
    assert spare.returncode == 0  # told there is no command, it exited


def test_a_spare_never_handed_a_command_exits(tmp_path: Path) -> None:
    with verify.spare_supervisor(tmp_path):
        spare = verify._SPARE[0][1]
    assert spare.returncode == 0
    assert not verify._SPARE


WAITER = """
import sys

import pytest
from pathlib import Path
from resume_kit.runner import verify
with verify.spare_supervisor(Path(sys.argv[1])):
    print(verify._SPARE[0][1].pid, flush=True)
    sys.stdin.read()  # until the test kills us
"""


def test_a_spare_goes_when_resume_kit_is_killed(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", WAITER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(verify.__file__).parents[2])},
    )
    assert proc.stdout is not None
    spare = int(proc.stdout.readline())  # printed while it waits for its command
    gone = False
    try:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        gone = process_gone(spare, within_s=30)
        assert gone
    finally:
        proc.kill()
        proc.wait()
        if not gone:
            with contextlib.suppress(ProcessLookupError):
                os.kill(spare, signal.SIGKILL)


def test_no_spare_without_an_interpreter_to_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no supervisor can run (no sys.executable, as when embedded), none is started ahead
    and the command runs as it would have (unsupervised, as supervised() says)."""
    monkeypatch.setattr(sys, "executable", "")
    with verify.spare_supervisor(tmp_path):
        assert not verify._SPARE
        result = verify.run_command(
            "true", cwd=tmp_path, log_path=tmp_path / "run.log", timeout_s=60
        )
    assert result.passed
