"""An unexpected exception (a bug): a crash log in the user's cache folder, one error line.

Modelled on pre-commit's ``error_handler``: the log holds the versions (resume-kit, Python,
platform, git), the command line and the traceback, redacted like every other text resume-kit
keeps; the terminal gets one ``resume-kit: error:`` line naming the log, plus the hint. Logs go
to ``user_cache_dir("resume-kit")`` (never the repository: a clone must not receive them), each
created anew (``O_EXCL|O_NOFOLLOW``, mode 0600), and only the newest :data:`KEEP` stay. If the
log cannot be written the line is printed all the same; nothing here raises.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

from resume_kit.core.typing_light import TYPE_CHECKING
from resume_kit.infra.errors import EXIT_INTERNAL
from resume_kit.infra.messages import error

if TYPE_CHECKING:
    from datetime import datetime

KEEP = 20
GIT_TIMEOUT_S = 5.0
LOG_NAME = re.compile(r"crash-\d{8}T\d{6}\.\d{6}Z-\d+(?:-\d+)?\.log")
HINT = "this is a bug in resume-kit; rerun with --debug for the traceback and report it"
LOG_HINT = (
    "this is a bug in resume-kit; please report it with that crash log "
    "(--debug also prints the traceback)"
)


def _clean(text: str) -> str:
    """Redacted, with terminal controls escaped (the log is read with ``cat``)."""
    from resume_kit.core.escape import escape_controls
    from resume_kit.infra.redact import redact

    return escape_controls(redact(text), keep="\n\t")


def summary(exc: BaseException) -> str:
    """``unexpected ValueError: its first line`` (the message part redacted)."""
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"unexpected {type(exc).__name__}: {_clean(first)}".rstrip(": ")


def git_version() -> str:
    """``git --version``, run from ``/`` with a cleaned environment and a timeout (best effort)."""
    import subprocess

    from resume_kit.infra.gitcmd import clean_git_env

    try:
        proc = subprocess.run(
            ["git", "--version"],
            cwd="/",
            env=clean_git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({type(exc).__name__})"
    return proc.stdout.strip() or f"unknown (exit {proc.returncode})"


def log_text(exc: BaseException, argv: Sequence[str], now: str) -> str:
    import platform
    import shlex
    import traceback

    from resume_kit import __version__

    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    fields = [
        ("time", now),
        ("version", f"resume-kit {__version__}"),
        ("python", f"{platform.python_implementation()} {sys.version}"),
        ("executable", sys.executable),
        ("platform", platform.platform()),
        ("git", git_version()),
        ("argv", shlex.join(["resume-kit", *argv])),
        ("error", summary(exc)),
    ]
    head = "".join(f"{name}: {' '.join(_clean(value).split())}\n" for name, value in fields)
    return f"# resume-kit crash log\n{head}\n{_clean(trace)}"


def crash_folder() -> str:
    """The user's cache folder (made 0700); refused when it is not an absolute path, since a
    relative ``XDG_CACHE_HOME`` would put the log inside the current repository."""
    from resume_kit.infra.cachedir import user_cache_root

    folder = user_cache_root()
    if not os.path.isabs(folder):
        raise OSError(f"the cache folder {folder!r} is not an absolute path")
    os.makedirs(folder, 0o700, exist_ok=True)
    return folder


def write_log(exc: BaseException, argv: Sequence[str], stamp: datetime | None = None) -> str:
    """Write the crash log; its path. Raises OSError when it cannot be written."""
    from datetime import datetime, timezone

    stamp = stamp or datetime.now(timezone.utc)
    folder = crash_folder()
    data = log_text(exc, argv, stamp.isoformat(timespec="seconds")).encode("utf-8", "replace")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for attempt in range(1, 100):
        path = os.path.join(folder, log_name(stamp, attempt))
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except OSError:
            os.unlink(path)  # no half-written log (a full disk): the error line says why
            raise
        prune(folder)
        return path
    raise FileExistsError(f"no free crash log name in {folder}")


def prune(folder: str, keep: int = KEEP) -> None:
    """Remove all but the ``keep`` newest crash logs (the names sort by time)."""
    try:
        names = sorted(n for n in os.listdir(folder) if LOG_NAME.fullmatch(n))
    except OSError:
        return
    for name in names[: max(len(names) - keep, 0)]:
        try:  # noqa: SIM105 - one removal may fail, the others still go
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass


def log_name(stamp: datetime, attempt: int = 1) -> str:
    suffix = f"-{attempt}" if attempt > 1 else ""
    return f"crash-{stamp.strftime('%Y%m%dT%H%M%S.%f')}Z-{os.getpid()}{suffix}.log"


def report_crash(exc: BaseException, argv: Sequence[str]) -> int:
    """Write the crash log for ``exc``, print the error line naming it; the exit code (70)."""
    try:
        what = summary(exc)
    except Exception:  # the message itself could not be shown
        what = f"unexpected {type(exc).__name__}"
    try:
        path = write_log(exc, argv)
    except Exception as failure:
        reason = getattr(failure, "strerror", None) or str(failure) or type(failure).__name__
        error(f"{what} (no crash log: {' '.join(reason.split())})", HINT)
    else:
        error(f"{what} (crash log: {path})", LOG_HINT)
    return EXIT_INTERNAL
