"""Two processes never run the same unit at once, even after a resume-kit was killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import run_cli

TRUST_ALL = {"RESUME_KIT_TRUST": "all"}


def _wait_for(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def _blocking_unit(repo: Path) -> Path:
    fifo = repo.parent / "gate"
    os.mkfifo(fifo)
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    command = f"touch {repo.parent}/started && cat {fifo} > /dev/null"
    assert run_cli("add", "Slow", "--verify", command, "--id", "slow", cwd=repo).code == 0
    return fifo


def _start_verify(repo: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "resume_kit", "verify-next"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **TRUST_ALL},
    )


def test_a_unit_being_verified_is_not_started_twice(repo: Path) -> None:
    fifo = _blocking_unit(repo)
    first = _start_verify(repo)
    _wait_for(repo.parent / "started")
    second = run_cli("verify-next", "--unit", "slow", cwd=repo, env=TRUST_ALL)
    assert second.code == 2
    assert f"unit 'slow' is already being verified by pid {first.pid}" in second.stderr
    assert "(alive)" in second.stderr
    with open(fifo, "w") as gate:
        gate.write("go\n")
    first.communicate(timeout=60)
    assert first.returncode == 0
    assert "done" in (repo / ".resume-kit" / "progress.yaml").read_text()


def test_the_command_of_a_killed_verify_keeps_its_unit_claimed(repo: Path) -> None:
    """The supervisor normally stops the command when verify-next dies
    (tests/adversarial/test_security_hooks.py); with the supervisor SIGKILLed too, the command outlives
    both, and the claim says which process group still runs and how to stop it."""
    fifo = _blocking_unit(repo)
    first = _start_verify(repo)
    _wait_for(repo.parent / "started")
    lock = repo / ".resume-kit" / "running" / "slow.lock"
    deadline = time.monotonic() + 30
    while '"pgid"' not in lock.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(json.loads(lock.read_text())["pgid"], signal.SIGKILL)  # the supervisor leads it
    first.kill()
    first.communicate(timeout=30)
    second = run_cli("verify-next", cwd=repo, env=TRUST_ALL)
    assert second.code == 2
    assert "still is: stop it with `kill -- -" in second.stderr
    pgid = int(second.stderr.split("kill -- -")[1].split("`")[0])
    os.killpg(pgid, signal.SIGKILL)  # its reader gone, the FIFO is never opened for writing
    deadline = time.monotonic() + 30
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline
        time.sleep(0.01)
    (repo.parent / "started").unlink()
    third = subprocess.Popen(
        [sys.executable, "-m", "resume_kit", "verify-next"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **TRUST_ALL},
    )
    _wait_for(repo.parent / "started")
    with open(fifo, "w") as gate:
        gate.write("go\n")
    _, err = third.communicate(timeout=60)
    assert third.returncode == 0, err
