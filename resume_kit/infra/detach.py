"""Work that need not hold up a command's answer, run after it in a detached child.

The served brief's receipt (:mod:`resume_kit.brief.fastpath`) took ~33 ms of a 167 ms brief on
a 20,000-file tree and ~100 ms of 560 ms on 100,000 files (2026-12-07); the agent's
SessionStart hook waits for the process to exit, not for the receipt. A process that ends
through :mod:`resume_kit.cli.process_end` (the console script, ``python -m resume_kit``) forks
once its output is flushed: the parent exits with the command's status at once, the child (a
session of its own, the standard streams on the null device) does the work and exits.
Elsewhere the work runs at once, in the caller: ``main()`` called in a process that goes on
(the tests), no ``os.fork``, a thread of ours still running at the end (a fork copies only the
calling thread, and whatever lock another one held).

Whoever needs the work done (the benchmark, tests) calls :func:`wait_for_detached`: every
child holds a shared lock on one file of the user's cache from before the fork until it ends.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: the console script's end imports this module
if TYPE_CHECKING:
    from collections.abc import Callable

LOCK_NAME = "detached.lock"

_pending: list[Callable[[], None]] = []


def defer(work: Callable[[], None]) -> None:
    """``work`` after the command's answer (see the module doc), else now. It must not raise."""
    from resume_kit.infra.collector import is_one_shot

    if is_one_shot() and hasattr(os, "fork"):
        _pending.append(work)
    else:
        work()


def run_pending() -> None:
    """The deferred work, in a detached child when this process may fork, else here; once the
    standard streams are flushed (:func:`resume_kit.cli.process_end.end_process`)."""
    work = list(_pending)
    _pending.clear()
    if not work:
        return
    threading = sys.modules.get("threading")
    alone = threading is None or threading.active_count() == 1
    lock = _shared_lock() if alone else None
    if lock is not None:
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            _child(work)
        os.close(lock)  # the child's copy holds the lock until it ends
        if pid > 0:
            return
    for step in work:
        step()


def _child(work: list[Callable[[], None]]) -> None:
    try:
        os.setsid()  # no terminal's signals, no process group of the agent's
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the agent sees the output end once the parent exits
            os.dup2(null, fd)
        for step in work:
            step()
    finally:
        os._exit(0)


def lock_path() -> str:
    from resume_kit.infra.cachedir import user_cache_root

    return os.path.join(user_cache_root(), LOCK_NAME)


def _open_lock() -> int:
    """A descriptor of :func:`lock_path` (:func:`resume_kit.infra.cachedir.open_lock`), its
    folder created when missing."""
    from resume_kit.infra.cachedir import open_lock

    path = lock_path()
    os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
    return open_lock(path)


def _shared_lock() -> int | None:
    """A descriptor holding a shared lock on :func:`lock_path` (None: none to be had, so the
    work runs here)."""
    try:
        import fcntl

        fd = _open_lock()
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # someone waits with the exclusive lock: not worth waiting for here
        os.close(fd)
        return None
    return fd


def wait_for_detached() -> None:
    """Until every detached child of this user's resume-kit has ended."""
    import fcntl

    fd = _open_lock()
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)
