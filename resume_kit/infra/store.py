"""Atomic writes, the lock file and the history ring (the git-lockfile model).

* ``atomic_write`` (from :mod:`resume_kit.infra.atomic_file`, os calls only) writes a temporary
  file in the target's folder, fsyncs it, renames it over the target and fsyncs the folder: a
  reader sees the old file or the new one, never half.
* ``FileLock`` creates ``<file>.lock`` with ``O_CREAT|O_EXCL`` holding pid, host and time,
  retries with jittered backoff, removes a lock whose process is gone (same host only) and
  otherwise names the holder in its error.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import time
from pathlib import Path

from resume_kit.infra.atomic_file import (
    CREATE_EXCLUSIVE,
    atomic_write,
    fsync_dir,
    pid_alive,
    remove_stale_temporaries,
    temporary_path,
)
from resume_kit.infra.errors import LockError
from resume_kit.infra.paths import GITIGNORE_BODY, Layout
from resume_kit.infra.safefs import (
    FileTooLarge,
    NotARegularFile,
    UnsafePath,
    file_kind,
    open_regular,
    read_regular,
)

__all__ = ["FileTooLarge", "NotARegularFile", "atomic_write", "open_regular", "read_regular"]

DEFAULT_LOCK_TIMEOUT_S = 5.0
_NO_HARD_LINKS = {
    getattr(errno, name)
    for name in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK")
    if hasattr(errno, name)
}
HISTORY_KEEP = 20


def hostname() -> str:
    """This machine's name, as locks and leases record their holder: ``uname``'s node name,
    which is what ``gethostname`` returns on Linux and macOS (without importing socket)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def group_alive(pgid: int) -> bool:
    """True while a process of group ``pgid`` is still running.

    Zombies do not count: an orphan that died waits for PID 1 to reap it, and in containers
    without an init process that can take seconds. On Linux /proc tells zombies apart;
    elsewhere any member counts.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # fields after the command name: state, ppid, pgrp, ...
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _read_holder(lock_path: Path) -> dict[str, object] | None:
    try:  # a lock that is a FIFO or a link to one must not block (issue 12 item 9)
        raw = read_regular(lock_path, 64 * 1024).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        holder = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return holder if isinstance(holder, dict) else None


def lock_timeout() -> float:
    try:
        return float(os.environ.get("RESUME_KIT_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT_S))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT_S


class FileLock:
    """An exclusive lock on ``target`` held through ``<target>.lock``."""

    def __init__(self, target: Path, timeout: float | None = None):
        self.target = target
        self.path = target.with_name(target.name + ".lock")
        self.timeout = lock_timeout() if timeout is None else timeout
        self._held = False

    def _try_create(self) -> bool:
        """Create the lock with its holder already in it: the body goes into a temporary file
        that is then hard-linked to the lock's name (fails if the lock exists). A process
        killed at any moment, or a write that fails on a full disk, never leaves an empty lock
        that would block every command until it ages out."""
        body = json.dumps({"pid": os.getpid(), "host": hostname(), "created": time.time()}).encode()
        tmp = temporary_path(self.path)
        fd = os.open(tmp, CREATE_EXCLUSIVE, 0o644)
        try:
            try:
                os.write(fd, body)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                return False
            except OSError as exc:
                if exc.errno not in _NO_HARD_LINKS:
                    raise
                return self._create_in_place(body)
            return True
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _create_in_place(self, body: bytes) -> bool:
        """For file systems without hard links: create exclusively, then write the holder."""
        try:
            fd = os.open(self.path, CREATE_EXCLUSIVE, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, body)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            raise
        os.close(fd)
        return True

    def _break_if_stale(self) -> bool:
        """Remove the lock if its holder is a dead process on this host. True if removed."""
        holder = _read_holder(self.path)
        if holder is None:
            # Half-written or foreign lock: treat as stale only once it is clearly old.
            try:
                age = time.time() - os.lstat(self.path).st_mtime
            except FileNotFoundError:
                return True
            if age > 2 * max(self.timeout, 1.0):
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
                return True
            return False
        pid, pgid = holder.get("pid"), holder.get("pgid")
        if isinstance(pgid, int) and group_alive(pgid):
            return False  # the holder died, but the command it started is still running
        if holder.get("host") == hostname() and isinstance(pid, int) and not pid_alive(pid):
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return True
        return False

    def describe_holder(self) -> str:
        holder = _read_holder(self.path)
        if holder is None:
            return "an unknown process"
        pid, host, pgid = holder.get("pid"), holder.get("host"), holder.get("pgid")
        local = host == hostname()
        orphaned = isinstance(pgid, int) and group_alive(pgid)
        if local and isinstance(pid, int) and not pid_alive(pid) and orphaned:
            return (
                f"pid {pid} on {host} (not running, but the command it started, "
                f"process group {pgid}, still is: stop it with `kill -- -{pgid}`)"
            )
        state = (
            ("alive" if pid_alive(pid) else "not running")
            if (local and isinstance(pid, int))
            else "on another host"
        )
        return f"pid {pid} on {host} ({state})"

    def _refuse_foreign(self) -> None:
        """A lock path that is not a regular file (a committed symlink, a FIFO, a folder) was
        never made by resume-kit: refused at once, never followed, waited for or removed."""
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(
                f"{self.path} is {file_kind(info.st_mode)}, not a lock resume-kit made",
                hint=f"remove {self.path} (it may have come with the repository)",
            )

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(self.path.parent, self.path.name)
        deadline = time.monotonic() + self.timeout
        delay = 0.005
        while True:
            try:
                created = self._try_create()
            except FileNotFoundError:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                continue
            except PermissionError as exc:
                raise LockError(
                    f"cannot create {self.path}: {exc.strerror}",
                    hint="check the permissions of the .resume-kit folder",
                ) from None
            if created:
                self._held = True
                return
            self._refuse_foreign()
            if self._break_if_stale():
                continue
            if time.monotonic() >= deadline:
                raise LockError(
                    f"{self.target.name} is locked by {self.describe_holder()}: {self.path}",
                    hint="wait for that command to finish; if no resume-kit command is running, "
                    f"delete {self.path}",
                )
            import random  # only when waiting, not at import: the hooks import this module

            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.2)

    def annotate(self, **fields: object) -> None:
        """Add facts to the held lock's holder record (e.g. the process group it started)."""
        if not self._held:
            return
        holder = _read_holder(self.path) or {}
        holder.update(fields)
        # Replaced by rename, never rewritten in place: a kill mid-write must not leave an
        # empty lock. No fsync: the record only matters while this machine stays up.
        tmp = temporary_path(self.path)
        try:
            fd = os.open(tmp, CREATE_EXCLUSIVE, 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(json.dumps(holder).encode("utf-8"))
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def release(self) -> None:
        if self._held:
            self._held = False
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def history_name_pattern(target: Path) -> re.Pattern[str]:
    """The names :func:`keep_history` gives copies of ``target``, and only those."""
    return re.compile(
        rf"{re.escape(target.stem)}-([0-9]{{8}}T[0-9]{{6}})-([0-9]{{9}}){re.escape(target.suffix)}"
    )


def _history_ns(match: re.Match[str]) -> int:
    # not time.strptime: its import and first call cost ~15 ms on every checkpoint
    import datetime as dt

    stamp = match.group(1)
    year, month, day = int(stamp[0:4]), int(stamp[4:6]), int(stamp[6:8])
    hour, minute, second = int(stamp[9:11]), int(stamp[11:13]), int(stamp[13:15])
    moment = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.timezone.utc)
    return int(moment.timestamp()) * 1_000_000_000 + int(match.group(2))


def keep_history(target: Path, history_dir: Path, keep: int = HISTORY_KEEP) -> Path | None:
    """Keep the current ``target`` in ``history_dir`` (newest ``keep`` kept), for a caller that
    then replaces ``target`` (:func:`atomic_write`: a new file under the old name).

    The copy is a hard link when ``target`` is a regular file with no other name: no bytes
    are read or written, since the replace leaves the old file to the history alone (a 4 MB
    progress file took ~8 ms to copy with its fsync). Where links fail (another file system,
    one without hard links) the bytes are copied. A copy is named by one clock reading in
    nanoseconds, moved past the newest copy already there when the clock has not (coarse
    clocks, a clock set back), so names sort in the order the copies were written and
    pruning always drops the oldest.
    """
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None
    pattern = history_name_pattern(target)
    newest = -1
    with contextlib.suppress(FileNotFoundError):
        # the names are fixed-width: the greatest is the newest (one that is not a date, say
        # put there by hand, is passed over)
        matches = filter(None, map(pattern.fullmatch, os.listdir(history_dir)))
        for match in sorted(matches, key=lambda found: found.group(0), reverse=True):
            with contextlib.suppress(ValueError):
                newest = _history_ns(match)
                break
    ns = max(time.time_ns(), newest + 1)
    seconds, fraction = divmod(ns, 1_000_000_000)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds))
    dest = history_dir / f"{target.stem}-{stamp}-{fraction:09d}{target.suffix}"
    if not (stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and _linked(target, dest, info)):
        try:
            with open_regular(target) as handle:
                data = handle.read()
                mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)  # a private file stays so
        except FileNotFoundError:
            return None
        atomic_write(dest, data, mode=mode)
    prune(history_dir, pattern, keep)
    return dest


def _linked(target: Path, dest: Path, info: os.stat_result) -> bool:
    """Whether ``dest`` is now a second name of the regular file ``info`` describes (a file
    put in its place since, or a symlink, is unlinked again: then the bytes are copied)."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.link(target, dest, follow_symlinks=False)
    except OSError:
        return False
    try:
        linked = os.lstat(dest)
    except OSError:
        return False
    if (linked.st_ino, linked.st_dev) != (info.st_ino, info.st_dev):
        with contextlib.suppress(OSError):
            os.unlink(dest)
        return False
    fsync_dir(dest.parent)
    return True


def prune(folder: Path, names: re.Pattern[str], keep: int) -> None:
    """Delete all but the newest ``keep`` regular files whose whole name matches ``names``
    (names that sort by time). Nothing else in ``folder`` is touched, a symlink never."""
    try:
        entries = [
            entry.name
            for entry in os.scandir(folder)
            if names.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)
        ]
    except OSError:
        return
    entries.sort()
    for name in entries[: max(0, len(entries) - keep)]:
        with contextlib.suppress(OSError):
            os.unlink(folder / name)


def ensure_gitignore(layout: Layout) -> None:
    """``.resume-kit/.gitignore`` is the tool's own: written when missing and rewritten when it
    holds anything but exactly :data:`GITIGNORE_BODY` (a repository's copy with ``!runs/``
    would otherwise get run logs, snapshots and history committed by ``git add -A``)."""
    with contextlib.suppress(OSError):
        if read_regular(layout.gitignore, 64 * 1024) == GITIGNORE_BODY.encode("utf-8"):
            return
    atomic_write(layout.gitignore, GITIGNORE_BODY)
