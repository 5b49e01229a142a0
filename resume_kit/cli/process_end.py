"""The end of a resume-kit process: the steps of CPython's shutdown that matter here, then
``os._exit``, without tearing down every module and object one by one.

That teardown is pure cost for a command that has finished: after a brief of the large bench
workspace (a 35 MB heap) it took ~13 ms of 175, after verify-next on huge (75 MB) ~35 ms of
270 (2026-12-02, paired runs). What the shutdown does that matters is kept, in its order:
non-daemon threads are waited for, the atexit callbacks run, stdout and stderr are flushed.
The files a command writes are closed by the code that wrote them (each with ``with``), and
the operating system releases the locks and descriptors. Only the console script and
``python -m resume_kit`` end this way; ``main()`` called in a process of its own (the tests)
returns or raises as before.
"""

from __future__ import annotations

import atexit
import os
import sys

TYPE_CHECKING = False  # not typing's: the served brief imports no typing (mypy reads the guard)
if TYPE_CHECKING:
    from resume_kit.core.typing_light import NoReturn

FLUSH_FAILED = 120  # CPython's exit status when flushing stdout at exit fails


def exit_status(code: object) -> int:
    """The process exit status of ``sys.exit(code)``, as CPython computes it (a code that is
    not an int is printed to stderr and exits 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    import contextlib

    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{code}\n")
    return 1


def end_process(code: object) -> NoReturn:
    """Wait for the non-daemon threads, run the atexit callbacks, flush the standard streams
    and exit with ``code``'s status."""
    threading = sys.modules.get("threading")  # never imported: no thread was started
    if threading is not None:
        # what the interpreter's shutdown calls first: the threading module's own exit hooks
        # (they stop idle ThreadPoolExecutor workers), then a join of every non-daemon thread
        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
        else:  # pragma: no cover - an interpreter without it
            main = threading.main_thread()
            for thread in threading.enumerate():
                if thread is not main and not thread.daemon:
                    thread.join()
    atexit._run_exitfuncs()
    status = exit_status(code)
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:
            continue
        try:
            stream.flush()
        except OSError:  # a closed pipe: CPython's status, without its message
            if stream is sys.stdout and status == 0:
                status = FLUSH_FAILED
    detach = sys.modules.get("resume_kit.infra.detach")  # never imported: nothing deferred
    if detach is not None:
        detach.run_pending()  # in a detached child: this process's answer is complete
    os._exit(status)
