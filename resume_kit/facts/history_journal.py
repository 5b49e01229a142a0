"""The journal new history records wait in until a reader moves them into the database.

An append is one line of JSON added to ``<database>.pending`` (``O_APPEND``, 0600, no symlink
followed, never a FIFO or device): no ``sqlite3`` import, no connection, no WAL to create and
checkpoint at every brief, verify and snapshot (~7 ms of a small brief, 2026-12-03). Whoever
reads the history first moves the journal in (:func:`resume_kit.facts.history_db.ingest`),
and so does the writer whose line makes it larger than :data:`INGEST_BYTES`.

Claiming: the reader renames the journal to ``<database>.pending.<12 hex>`` and takes an
exclusive ``flock`` on it; a writer holds a shared one while it writes and, once it holds it,
checks that the name still leads to the file it opened (else the journal was claimed between
its open and its lock, and it opens the new one). So a claimed journal is complete when the
reader holds its lock, and no line goes to a file no one reads.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

SUFFIX = ".pending"
INGEST_BYTES = 1024 * 1024  # a journal past this is moved in by the writer that grew it
MAX_CLAIMED_BYTES = 64 * 1024 * 1024
_CLAIMED = re.compile(r"\.pending\.[0-9a-f]{12}")  # after the database's own name
_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class NotAJournal(OSError):
    """The journal's name holds something else than a regular file (a symlink, a FIFO)."""


def journal_path(db: Path) -> Path:
    return db.with_name(db.name + SUFFIX)


def write(db: Path, line: bytes) -> int:
    """Append ``line`` (one record, ending in a newline) to the journal of ``db``; the
    journal's size after it."""
    import fcntl

    path = journal_path(db)
    for _ in range(16):  # each retry follows a claim that happened during this call
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _FLAGS, 0o600)
        except FileNotFoundError:
            db.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            continue
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                raise NotAJournal(f"{path} is not a regular file")
            fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                named = os.lstat(path)
            except FileNotFoundError:
                continue
            if (named.st_ino, named.st_dev) != (opened.st_ino, opened.st_dev):
                continue
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            return os.fstat(fd).st_size
        finally:
            os.close(fd)  # releases the lock
    raise OSError(f"{path} kept being claimed while this record was written")


def claim(db: Path) -> list[Path]:
    """Rename the live journal of ``db`` to a claimed name of its own; every claimed journal
    waiting to be moved in (this one, and any a reader that stopped halfway left), oldest
    claim first."""
    live = journal_path(db)
    with contextlib.suppress(FileNotFoundError):
        os.rename(live, live.with_name(f"{live.name}.{os.urandom(6).hex()}"))
    try:
        names = os.listdir(db.parent)
    except FileNotFoundError:
        return []
    mine = [n for n in names if n.startswith(db.name) and _CLAIMED.fullmatch(n[len(db.name) :])]
    found: list[tuple[int, str]] = []
    for name in mine:
        try:
            found.append((os.lstat(db.parent / name).st_ctime_ns, name))
        except FileNotFoundError:
            continue
    return [db.parent / name for _, name in sorted(found)]


def read_claimed(fd: int, path: Path) -> list[dict[str, object]]:
    """The records of the claimed journal open as ``fd`` (its exclusive lock held): each
    whole line that is a JSON object; a line cut short by a killed writer is left out."""
    import json

    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise NotAJournal(f"{path} is not a regular file")
    chunks: list[bytes] = []
    left = MAX_CLAIMED_BYTES
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    records: list[dict[str, object]] = []
    for raw in b"".join(chunks).split(b"\n")[:-1]:  # the last piece has no newline: cut short
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def open_claimed(path: Path) -> int | None:
    """``path`` opened for reading with its exclusive lock held (waiting for the writers that
    opened it before it was claimed), or None when another reader moved it in meanwhile."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | _FLAGS)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.path.lexists(path):
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None
