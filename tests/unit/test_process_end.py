"""resume_kit.cli.process_end: the process ends as CPython's shutdown would have ended it (the
threads waited for, the atexit callbacks run, the streams flushed, the same exit status)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from resume_kit.cli.process_end import exit_status

pytestmark = pytest.mark.subprocess
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as users run it


def run(body: str) -> subprocess.CompletedProcess[bytes]:
    code = "from resume_kit.cli.process_end import end_process\n" + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, check=False, env=BUFFERED
    )


def test_buffered_output_is_flushed_and_atexit_callbacks_run_in_order() -> None:
    done = run(
        """
        import atexit, sys
        atexit.register(lambda: sys.stdout.write("first registered, run last\\n"))
        atexit.register(lambda: sys.stdout.write("run first\\n"))
        sys.stdout.write("x" * 200_000 + "\\n")
        sys.stderr.write("to stderr")
        end_process(3)
        """
    )
    assert done.returncode == 3
    lines = done.stdout.decode().splitlines()
    assert lines == ["x" * 200_000, "run first", "first registered, run last"]
    assert done.stderr == b"to stderr"


def test_a_running_thread_is_waited_for() -> None:
    done = run(
        """
        import threading
        gate = threading.Event()
        def late():
            gate.wait()
            print("the thread finished")
        threading.Thread(target=late).start()
        threading.Thread(target=gate.set).start()
        end_process(0)
        """
    )
    assert (done.returncode, done.stdout) == (0, b"the thread finished\n")


def test_an_idle_thread_pool_does_not_keep_the_process_alive() -> None:
    """Its workers wait for work in non-daemon threads; the threading module's exit hook
    tells them to stop, as the interpreter's shutdown does."""
    done = run(
        """
        from concurrent.futures import ThreadPoolExecutor
        pool = ThreadPoolExecutor(2)
        print(pool.submit(lambda: "worked").result())
        end_process(0)
        """
    )
    assert (done.returncode, done.stdout) == (0, b"worked\n")


def test_a_closed_stdout_pipe_exits_120_without_a_traceback() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom resume_kit.cli.process_end import end_process\n"
            "sys.stdin.read()\nsys.stdout.write('x' * 100)\nend_process(0)\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=BUFFERED,
    )
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.close()  # the reader went away before the output was flushed
    _, err = proc.communicate(b"", timeout=60)
    assert proc.returncode == 120 and err == b""


@pytest.mark.parametrize(
    ("code", "status"), [(None, 0), (0, 0), (2, 2), (256 + 5, 5), (-1, 255), (True, 1)]
)
def test_exit_status_is_cpythons(code: object, status: int) -> None:
    assert exit_status(code) == status
    assert run(f"import sys\nsys.exit({code!r})").returncode == status


def test_a_message_as_the_exit_code_is_printed_and_exits_1() -> None:
    done = run("end_process('no progress file')")
    assert (done.returncode, done.stderr) == (1, b"no progress file\n")
