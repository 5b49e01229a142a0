"""infra.gitcmd's start_program: programs started without subprocess behave as subprocess would run them: found
on the given environment's PATH, stdin on the null device, both pipes read to the end without
a stall, the signals Python ignores back at their defaults, nothing else inherited. And git
started through it is started in the folder asked for."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.infra import gitcmd
from resume_kit.infra.gitcmd import run_git_bytes, start_git
from tests.conftest import git

ENV = dict(os.environ)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def run(argv: list[str], env: dict[str, str] = ENV) -> tuple[int | None, bytes, bytes]:
    child = gitcmd.start_program(argv, env)
    out, err = child.communicate()
    return child.returncode, out, err


def test_both_pipes_are_read_together_so_a_child_filling_stderr_first_does_not_stall() -> None:
    # 4 MiB to stderr before a byte to stdout: more than a pipe holds, so reading stdout to its
    # end first would wait forever
    code = "import sys; sys.stderr.write('e' * (4 << 20)); sys.stderr.flush(); print('o' * 70000)"
    done: list[tuple[int | None, bytes, bytes]] = []
    reader = threading.Thread(target=lambda: done.append(run(python(code))), daemon=True)
    reader.start()
    reader.join(120)  # a stall fails here instead of hanging the suite
    assert done, "the reads stalled"
    status, out, err = done[0]
    assert (status, len(out), len(err)) == (0, 70001, 4 << 20)


WRITER = """
import os, sys
def write(fd, data):
    while data:
        data = data[os.write(fd, data):]
write(1, bytes.fromhex(sys.argv[1]))
write(2, bytes.fromhex(sys.argv[2]))
sys.exit(int(sys.argv[3]))
"""


@settings(max_examples=25, deadline=None)
@given(st.binary(max_size=60_000), st.binary(max_size=60_000), st.integers(0, 255))
def test_what_the_child_writes_arrives_whole_with_its_exit_status(
    out: bytes, err: bytes, code: int
) -> None:
    # up to 60 KB each (hex in argv stays under Linux's 128 KiB an argument); stdout and
    # stderr together fill more than one pipe's buffer
    assert run([*python(WRITER), out.hex(), err.hex(), str(code)]) == (code, out, err)


def test_stdin_is_the_null_device_and_no_descriptor_of_this_process_is_passed(
    tmp_path: Path,
) -> None:
    if not Path("/proc/self/fd").is_dir():  # pragma: no cover - not Linux
        pytest.skip("lists /proc/self/fd")
    kept = os.open(tmp_path / "kept", os.O_WRONLY | os.O_CREAT)  # close-on-exec (PEP 446)
    try:
        code = "import os, sys; print(repr(sys.stdin.read()), *os.listdir('/proc/self/fd'))"
        status, out, _ = run(python(code))
        # what this process's own parent passed on inheritable is passed on, as posix_spawnp
        # and a shell do; the harness running the tests may hold some
        passed_on = {fd for fd in range(3, 1024) if _inheritable(fd)}
    finally:
        os.close(kept)
    stdin, *fds = out.decode().split()
    assert status == 0 and stdin == "''"
    listed = {int(fd) for fd in fds} - passed_on
    assert kept not in listed and len(listed - {0, 1, 2}) == 1  # the listing's own descriptor


def _inheritable(fd: int) -> bool:
    try:
        return os.get_inheritable(fd)
    except OSError:
        return False


def test_sigpipe_and_sigxfsz_are_back_at_their_defaults_in_the_child() -> None:
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN  # Python ignores it here
    if not Path("/proc/self/status").is_file():  # pragma: no cover - not Linux
        pytest.skip("reads /proc/self/status")
    # not a Python child: Python ignores SIGPIPE again as it starts
    status, out, _ = run(["grep", "^SigIgn:", "/proc/self/status"])
    ignored = int(out.split()[1], 16)
    assert status == 0 and not ignored & (1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1))


def test_the_program_is_found_on_the_path_of_the_environment_given(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    tool = folder / "rk-spawn-probe"
    tool.write_text("#!/bin/sh\necho found here\n")
    tool.chmod(0o755)
    (tmp_path / "rk-spawn-probe").write_text("not executable\n")
    env = dict(ENV, PATH=f"{tmp_path}:{folder}")
    assert run(["rk-spawn-probe"], env) == (0, b"found here\n", b"")
    assert gitcmd.find_program("rk-spawn-probe", env) == str(tool)
    with pytest.raises(FileNotFoundError):
        gitcmd.start_program(["rk-spawn-probe"], ENV)  # not on this process's PATH


def _found_by_os_get_exec_path(name: str, env: dict[str, str]) -> str | None:
    for folder in os.get_exec_path(env):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None


@pytest.mark.parametrize("path", [None, "", ":", "{bin}", "{tmp}:{bin}", ":{bin}", "/nowhere"])
def test_the_path_is_searched_as_os_get_exec_path_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str | None
) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    for place in (folder, tmp_path):
        (place / "rk-path-probe").write_text("#!/bin/sh\n")
        (place / "rk-path-probe").chmod(0o755)
    monkeypatch.chdir(tmp_path)  # an empty entry is the current folder
    env = {} if path is None else {"PATH": path.format(bin=folder, tmp=tmp_path)}
    for name in ("rk-path-probe", "sh"):  # "sh": found on os.defpath when there is no PATH
        assert gitcmd.find_program(name, env) == _found_by_os_get_exec_path(name, env)


def test_a_killed_child_is_reaped_with_its_signal() -> None:
    child = gitcmd.start_program(
        python("import time; print('up', flush=True); time.sleep(60)"), ENV
    )
    seen = b""
    while not seen.endswith(b"\n"):  # it runs: print may write the line in two pieces
        piece = os.read(child._pipes[0], 3)
        assert piece, "the child ended early"
        seen += piece
    assert seen == b"up\n"
    child.kill()
    child.communicate()
    assert child.returncode == -signal.SIGKILL
    child.kill()  # reaped already: nothing happens
    assert child.communicate() == (b"", b"")  # and nothing is left to read


def test_with_stderr_on_the_null_device_only_stdout_is_read() -> None:
    code = "import sys; print('out'); print('err', file=sys.stderr)"
    child = gitcmd.start_program(python(code), ENV, stderr=False)
    assert child.communicate() == (b"out\n", b"") and child.returncode == 0


def test_git_runs_in_the_folder_asked_for_and_a_missing_one_is_refused_as_subprocess_would(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q")
    assert run_git_bytes(repo / "sub", "rev-parse", "--show-prefix")[1] == b"sub/\n"
    started = start_git(repo, "rev-parse", "--show-toplevel")
    assert started.communicate()[0].strip() == os.fsencode(os.path.realpath(repo))
    with pytest.raises(FileNotFoundError):
        run_git_bytes(tmp_path / "gone", "status")
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        run_git_bytes(tmp_path / "file", "status")
