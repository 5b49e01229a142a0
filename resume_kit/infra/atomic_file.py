"""``atomic_write``: a temporary file in the target's folder, fsynced, renamed over the target,
the folder fsynced: a reader sees the old file or the new one, never half. Temporaries that
killed writes left behind are cleared first.

``os`` calls only (no pathlib, re or contextlib): the served SessionStart hook brief writes the
activity log's meter event with it at every session start. :mod:`resume_kit.infra.store`, with
the lock file and the history ring, re-exports it for everything else.
"""

from __future__ import annotations

import os
import stat
import time

from resume_kit.infra.errors import NotAFileTargetError
from resume_kit.infra.safefs import file_kind

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Creating a file: never through a symlink that carries its name, never over anything.
CREATE_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
STALE_TEMPORARY_S = 600.0  # a temporary this old is stale even if its pid was reused
_DIGITS = "0123456789"
_HEX = "0123456789abcdef"


def _folder(path: str | os.PathLike[str]) -> str:
    return os.path.dirname(os.fspath(path)) or "."


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def temporary_path(path: str | os.PathLike[str]) -> str:
    """``.<name>.<pid>.<random hex>.tmp`` next to ``path``: the one name a write uses."""
    text = os.fspath(path)
    name = f".{os.path.basename(text)}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    return os.path.join(os.path.dirname(text), name)


def temporary_pid(file_name: str, name: str) -> int | None:
    """The process id in ``file_name`` when it is :func:`temporary_path`'s name for a file
    called ``name``, else None. The form is ``.<name>.<pid>.<hex>.tmp``; neither the pid nor
    the hex holds a dot, so they are the last two dot-separated parts before ``.tmp``."""
    if not (file_name.startswith(".") and file_name.endswith(".tmp")):
        return None
    rest, dot, hex_part = file_name[1:-4].rpartition(".")
    own_name, dot_before, pid = rest.rpartition(".")
    if not (dot and dot_before and pid and hex_part):
        return None
    if pid.strip(_DIGITS) or hex_part.strip(_HEX) or own_name != name:
        return None
    return int(pid)


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(folder: str | os.PathLike[str], name: str) -> int:
    """Delete what killed writes of ``name`` left in ``folder``: regular files with exactly
    :func:`temporary_path`'s name whose process is gone (or that are very old). Returns how
    many went. Symlinks and anything else are left alone."""
    removed = 0
    from resume_kit.infra.deps import not_an_input

    try:
        with not_an_input():  # a clean-up: no brief depends on what this folder holds
            entries = list(os.scandir(folder))
    except OSError:
        return 0
    now = time.time()
    for entry in entries:
        pid = temporary_pid(entry.name, name)
        if pid is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        if pid == os.getpid() or (pid_alive(pid) and now - info.st_mtime < STALE_TEMPORARY_S):
            continue
        try:
            os.unlink(entry.path)
            removed += 1
        except OSError:
            pass
    return removed


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes | str,
    mode: int | None = None,
    *,
    durable: bool = True,
) -> None:
    """Replace ``path`` with ``data`` atomically (temporary file, fsync, rename).

    The temporary is created in the target's folder with ``O_EXCL|O_NOFOLLOW`` and renamed
    within that folder, so a symlink at the target is replaced, never written through. A
    rewrite keeps the file's permission bits unless ``mode`` is given. Temporaries that killed
    writes of the same file left behind are removed first. ``durable=False`` leaves out the
    two fsyncs, for a cache that is checked when read: readers still see the old file or the
    new one, but after a power cut it may be empty.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = _folder(path)
    os.makedirs(folder, exist_ok=True)
    try:
        info: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        # Renaming over a device, FIFO or socket would replace it (as root: /dev/null too).
        raise NotAFileTargetError(
            f"{os.fspath(path)} is {file_kind(info.st_mode)}: resume-kit writes only regular files",
            hint="give the path of a file, or of one that does not exist yet",
        )
    if mode is None and info is not None and stat.S_ISREG(info.st_mode):
        mode = stat.S_IMODE(info.st_mode)
    remove_stale_temporaries(folder, os.path.basename(os.fspath(path)))
    tmp = temporary_path(path)
    fd = os.open(tmp, CREATE_EXCLUSIVE, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)  # exactly this mode, whatever the umask
            handle.write(payload)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:  # noqa: SIM105 - contextlib is not on the served hook brief's path
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(folder)
