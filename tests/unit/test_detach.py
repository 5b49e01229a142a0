"""Work left for after a command's answer (resume_kit.infra.detach): real processes, each
ending as the console script ends (cli.process_end), ordered by file locks, never by sleeps."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from resume_kit.infra import collector, detach

ROOT = Path(__file__).resolve().parents[2]

# A one-shot process like the console script's: an answer on stdout, then the end. The work it
# defers takes the lock on GATE (held by the test while it looks) and then writes DONE.
SCRIPT = """\
import fcntl, os, sys, threading
from resume_kit.infra.collector import one_shot_process
from resume_kit.infra.detach import defer
from resume_kit.cli.process_end import end_process

gate, done, busy = sys.argv[1], sys.argv[2], sys.argv[3] == "busy"
one_shot_process()
if busy:  # a thread of ours still running when the process ends
    threading.Thread(target=threading.Event().wait, daemon=True).start()

def work():
    fd = os.open(gate, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    with open(done, "w") as out:
        out.write(str(os.getpid()))

defer(work)
print("answer", os.getpid(), flush=True)
end_process(0)
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


def run_script(tmp_path: Path, busy: bool) -> tuple[subprocess.CompletedProcess[str], Path]:
    gate, done = tmp_path / "gate", tmp_path / "done"
    gate.touch()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(gate), str(done), "busy" if busy else "alone"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # a child that kept the answer's pipe open would hold this up
    )
    return proc, done


def test_the_answer_and_the_exit_do_not_wait_for_the_work(tmp_path: Path, cache: Path) -> None:
    gate = os.open(tmp_path / "gate", os.O_RDWR | os.O_CREAT)
    fcntl.flock(gate, fcntl.LOCK_EX)  # the work cannot finish while this is held
    try:
        proc, done = run_script(tmp_path, busy=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        answer, parent = proc.stdout.split()
        assert answer == "answer"
        assert not done.exists()  # the process ended, its pipes closed, the work still waits
    finally:
        os.close(gate)
    detach.wait_for_detached()
    assert done.read_text() != parent  # done by another process, the detached child
    assert (cache / "resume-kit" / detach.LOCK_NAME).is_file()


def test_with_a_thread_still_running_the_work_is_done_before_the_exit(
    tmp_path: Path, cache: Path
) -> None:
    proc, done = run_script(tmp_path, busy=True)
    assert proc.returncode == 0, proc.stderr
    assert done.read_text() == proc.stdout.split()[1]  # by the process itself, before it ended


def test_in_a_process_that_goes_on_the_work_is_done_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(collector, "_one_shot", False)  # main() called here, as the tests do
    done: list[int] = []
    detach.defer(lambda: done.append(1))
    assert done == [1]
    assert detach._pending == []


def test_waiting_with_no_work_left_returns(cache: Path) -> None:
    detach.wait_for_detached()
    assert (cache / "resume-kit" / detach.LOCK_NAME).is_file()
