"""Run a verify command so that it dies with resume-kit, even when resume-kit is SIGKILLed.

:func:`resume_kit.runner.verify.run_command` starts ``python -I -S supervisor.py PARENT_PID ARGV...``
as the leader of a new process group; this forks ARGV into the same group and waits for it.
When resume-kit (``PARENT_PID``) dies, the whole group is stopped: SIGTERM, then SIGKILL after
:data:`GRACE_S`. So a killed ``verify-next``/``run`` leaves no command running that would keep
the unit claimed.

How the death is noticed: on Linux the kernel sends a parent-death signal (``prctl
PR_SET_PDEATHSIG`` through ctypes; tested in tests/adversarial/test_security_hooks.py); elsewhere (macOS,
the BSDs: the fallback, tested on Linux by forcing it) an interval timer checks every
:data:`POLL_S` whether ``os.getppid()`` changed. Either way the test is ``getppid() !=
PARENT_PID``: Linux also sends the signal when the parent *thread* that started us exits.

Started ahead of its command (``PARENT_PID -``), it reads the command NUL-separated from
standard input, so its start-up overlaps resume-kit's own work; end of file with no command:
it exits 0.

Exit status: the command's; killed by a signal, it is killed by the same signal. Run as a
script with ``-I -S``: stdlib only, nothing from the work tree or site-packages.
"""

from __future__ import annotations

import os
import sys
import time

# The C module behind `signal`: the same functions and constants without importing enum,
# which is about 7 ms of the supervisor's start-up.
try:
    import _signal as signal  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - not CPython
    import signal  # type: ignore[no-redef,unused-ignore]

GRACE_S = 3.0  # as verify.KILL_GRACE_S
POLL_S = 0.25
_PR_SET_PDEATHSIG = 1
_SIGNAL = signal.SIGALRM  # both the parent-death signal and the fallback timer's
FORCE_POLL_ENV = "RESUME_KIT_SUPERVISOR_POLL"  # "1": use the fallback even on Linux (tests)


def parent_death_signal(sig: int) -> bool:
    """Ask Linux to send ``sig`` when our parent dies; False where that is not available."""
    if not sys.platform.startswith("linux") or os.environ.get(FORCE_POLL_ENV) == "1":
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def stop_group(child: int, grace_s: float = GRACE_S) -> None:
    """SIGTERM our process group, wait up to ``grace_s`` for the command, SIGKILL the group
    (ourselves included)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    group = os.getpgrp()
    try:  # noqa: SIM105 - contextlib is one import more before every verify command
        os.killpg(group, signal.SIGTERM)
    except OSError:
        pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            break
        time.sleep(0.02)
    os.killpg(group, signal.SIGKILL)


def command_from_stdin() -> list[bytes]:
    """The command, NUL-separated on standard input until end of file (empty: none); standard
    input is then /dev/null, for us and the command."""
    chunks = []
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    data = b"".join(chunks)
    return data.split(b"\0") if data else []


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        sys.stderr.write("resume-kit supervisor: usage: PARENT_PID (COMMAND [ARG...] | -)\n")
        return 2
    parent = int(argv[0])
    command: list[str] | list[bytes] = argv[1:]
    child = 0

    def check(signum: int, frame: object) -> None:
        if os.getppid() != parent:
            stop_group(child)

    signal.signal(_SIGNAL, check)
    if not parent_death_signal(_SIGNAL):
        signal.setitimer(signal.ITIMER_REAL, POLL_S, POLL_S)
    if os.getppid() != parent:  # died before we could ask to be told
        return 1
    if command == ["-"]:  # started ahead of its command (verify.spare_supervisor)
        command = command_from_stdin()
        if not command:
            return 0
    child = os.fork()
    if child == 0:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(_SIGNAL, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            # a copy of messages.say: run by path with -I -S, resume_kit is not importable
            name = os.fsdecode(command[0])
            sys.stderr.write(f"resume-kit: cannot run {name}: {exc.strerror}\n")
        os._exit(127)
    _, status = os.waitpid(child, 0)
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    # Without the interpreter's teardown: it delayed the end of every verify command by ~3 ms.
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
