"""Content hashes of files, remembered by their stat data (as git's index does).

A snapshot hashes every done unit's files and artifacts; on a workspace with thousands of
done units that is most of a brief's time, although almost none of those files changed since
the last brief. :class:`HashCache` keeps ``sha256`` hex digests in
``hashes.json`` in the work tree's user cache folder (``Layout.user_cache``) keyed by the path and its (size, mtime_ns, ctime_ns, inode,
device): any write to a file changes its ctime, so a hit is the hash of the current content.
A file whose mtime or ctime is less than :data:`RACY_S` seconds old is hashed but not
remembered: a write still to come could land within the same timestamp tick. The cache is only an accelerator: a missing,
damaged or unwritable file just means hashing again.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from resume_kit.core.digest import sha256

FORMAT = 1
MAX_CACHE_BYTES = 256 * 1024 * 1024
RACY_S = 2.0
_BLOCK = 1 << 20


def sha256_file(path: str) -> str:
    """SHA-256 hex of the regular file at ``path``: never follows a final symlink nor blocks
    (a FIFO or a device raises ``NotARegularFile``, an ``OSError``)."""
    from resume_kit.infra.safefs import open_regular

    with open_regular(path) as handle:
        digest = sha256(size_hint=os.fstat(handle.fileno()).st_size)
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def _key(info: os.stat_result) -> list[int]:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]


class HashCache:
    """``digest(path, info)``: the SHA-256 hex of a regular file, from the cache when its stat
    data is unchanged. ``save()`` writes what this run used (entries not used are dropped)."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self._old: dict[str, list[object]] = {}
        self._new: dict[str, list[object]] = {}
        self._changed = False
        if file is not None:
            from resume_kit.infra.safefs import read_regular

            with contextlib.suppress(OSError, ValueError, AttributeError):
                data = json.loads(read_regular(file, MAX_CACHE_BYTES))
                if data.get("format") == FORMAT and isinstance(data.get("entries"), dict):
                    self._old = data["entries"]
        self._now_ns = time.time_ns()

    def digest(self, path: str, info: os.stat_result) -> str:
        """SHA-256 hex of the regular file at ``path`` whose ``os.stat`` is ``info``."""
        key = _key(info)
        entry = self._new.get(path) or self._old.get(path)
        if isinstance(entry, list) and entry[:-1] == key:
            self._new[path] = entry
            return str(entry[-1])
        hexdigest = sha256_file(path)
        if self._now_ns - max(info.st_mtime_ns, info.st_ctime_ns) >= RACY_S * 1e9:
            self._new[path] = [*key, hexdigest]
            self._changed = True
        return hexdigest

    def save(self) -> None:
        if self.file is None:
            return
        if not self._changed and len(self._new) == len(self._old):
            return
        from resume_kit.infra.store import atomic_write

        payload = json.dumps({"format": FORMAT, "entries": self._new}, separators=(",", ":"))
        with contextlib.suppress(OSError):
            atomic_write(self.file, payload, durable=False)
