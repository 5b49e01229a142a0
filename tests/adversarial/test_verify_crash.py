"""A real ``kill -9`` of a running verify-next never leaves a broken file or a false done (SPEC 5).

The verify command talks to the test through FIFOs: it writes its shell pid into
``ready.fifo`` once running and blocks on ``gate.fifo`` until the test lets it finish, so
every kill lands at a known stage without sleeping for timing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

from resume_kit.infra.paths import find_layout
from resume_kit.progress_file.io import load
from tests.cli.test_verify import process_gone, wait_ready
from tests.conftest import run_cli
from tests.helpers_snapshot import write_progress

GATED = "echo $$ > ready.fifo; cat gate.fifo > /dev/null; echo passed > result.txt"


def start(repo: Path, extra_env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "RESUME_KIT_TRUST": "all", **(extra_env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "resume_kit", "verify-next"],
        cwd=repo,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def fifos(repo: Path) -> None:
    os.mkfifo(repo / "ready.fifo")
    os.mkfifo(repo / "gate.fifo")


def open_gate(repo: Path) -> None:
    with open(repo / "gate.fifo", "w") as gate:
        gate.write("go\n")


@contextlib.contextmanager
def cleanup_group(pgid_holder: list[int]) -> Iterator[None]:
    """Whatever happens in the test, no orphaned verify command outlives it."""
    try:
        yield
    finally:
        for pgid in pgid_holder:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)


def assert_valid_and_not_done(repo: Path, unit_id: str) -> None:
    doc = load(find_layout(repo))  # parses and validates like every command does
    unit = doc.progress.require_unit(unit_id)
    assert unit.status != "done"
    assert unit.evidence is None
    assert not list((repo / ".resume-kit").glob("progress.yaml.lock"))


def test_kill_9_while_the_command_runs(repo: Path) -> None:
    fifos(repo)
    path = write_progress(
        repo,
        [{"id": "a", "title": "A", "verify": GATED}, {"id": "b", "title": "B", "verify": "true"}],
    )
    before = path.read_text()
    proc = start(repo)
    shell = int(wait_ready(repo / "ready.fifo", proc))
    with cleanup_group([shell]):
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        # The command dies with resume-kit (resume_kit/runner/supervisor.py): no orphan finishes
        # unrecorded or keeps the unit claimed.
        assert process_gone(shell)
    assert not (repo / "result.txt").exists()
    assert path.read_text() == before
    assert_valid_and_not_done(repo, "a")
    # The next run starts cleanly (no stale lock in the way) and records a real pass.
    rerun = start(repo)
    wait_ready(repo / "ready.fifo", rerun)
    open_gate(repo)
    _, err = rerun.communicate(timeout=60)
    assert rerun.returncode == 0, err
    assert yaml.safe_load(path.read_text())["units"][0]["status"] == "done"


def test_kill_9_after_a_pass_but_before_the_result_is_written(repo: Path) -> None:
    fifos(repo)
    path = write_progress(repo, [{"id": "a", "title": "A", "verify": GATED}])
    before = path.read_text()
    # Hold the progress lock as a live process would, so the result cannot be written yet.
    lock = path.with_name("progress.yaml.lock")
    lock.write_text(
        json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "created": time.time()})
    )
    proc = start(repo, {"RESUME_KIT_LOCK_TIMEOUT": "120"})
    shell = int(wait_ready(repo / "ready.fifo", proc))
    with cleanup_group([shell]):
        open_gate(repo)
        assert process_gone(shell)  # the command passed; verify-next now waits for the lock
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert path.read_text() == before
    lock.unlink()
    assert_valid_and_not_done(repo, "a")


def test_a_lock_left_by_a_killed_run_is_recovered(repo: Path) -> None:
    path = write_progress(repo, [{"id": "a", "title": "A", "verify": "true"}])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path.with_name("progress.yaml.lock").write_text(
        json.dumps({"pid": dead.pid, "host": socket.gethostname(), "created": time.time()})
    )
    result = run_cli("verify-next", cwd=repo, env={"RESUME_KIT_TRUST": "all"})
    assert result.code == 0, result.stderr
    assert yaml.safe_load(path.read_text())["units"][0]["status"] == "done"
