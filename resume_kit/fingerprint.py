"""The evidence fingerprint (SPEC 2), shared by verify-next and reconcile.

SHA-256 over the sorted list of (path, content hash) of the files matching a unit's ``files``
globs and its ``artifacts``; a missing artifact is recorded as missing; a unit with neither
gets the hash of the empty list. Paths are relative to the work tree root, ``.git`` and
``.resume-kit`` excluded.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resume_kit.hashcache import HashCache

MISSING = "missing"
_EXCLUDED_TOP = (".git", ".resume-kit")


def file_digest(path: Path, cache: HashCache | None = None) -> str:
    """sha256 of a file's bytes (of the link text for a symlink), streamed in 1 MiB blocks;
    with ``cache``, a regular file whose stat data is unchanged is not read again."""
    digest = hashlib.sha256()
    if cache is not None:
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode):
            return cache.digest(str(path), info)
    if path.is_symlink():
        digest.update(b"symlink:" + os.fsencode(os.readlink(path)))
        return digest.hexdigest()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _excluded(rel: str) -> bool:
    top = rel.split("/", 1)[0]
    return top in _EXCLUDED_TOP


def _posix(path: str) -> str:
    """``Path(path).as_posix()``, without building a Path for an already normal relative path."""
    if (
        path
        and path != "."
        and not path.startswith(("/", "./"))
        and not path.endswith(("/", "/."))
        and "//" not in path
        and "/./" not in path
    ):
        return path
    return Path(path).as_posix()


def _file_or_link(full: str) -> os.stat_result | None:
    """``lstat`` of a regular file or a symlink (what ``is_file() or is_symlink()`` accepts)."""
    try:
        info = os.lstat(full)
    except (OSError, ValueError):
        return None
    if stat.S_ISLNK(info.st_mode) or stat.S_ISREG(info.st_mode):
        return info
    return None  # a directory, fifo, device...: is_file() is false too


def expand_globs(root: Path, patterns: Iterable[str]) -> list[str]:
    """Files (relative, forward slashes) under ``root`` matching any pattern; ``**`` recurses."""
    found: set[str] = set()
    base = str(root)
    for pattern in patterns:
        if os.path.isabs(pattern) or pattern.startswith(".."):
            continue
        if pattern and not pattern.endswith(("/", os.sep)) and not glob.has_magic(pattern):
            # a plain path (the common case): what iglob would yield, without its machinery
            rel = _posix(pattern)
            if not _excluded(rel) and _file_or_link(os.path.join(base, rel)) is not None:
                found.add(rel)
            continue
        for match in glob.iglob(pattern, root_dir=root, recursive=True):
            rel = Path(match).as_posix()
            if _excluded(rel):
                continue
            full = root / rel
            if full.is_file() or full.is_symlink():
                found.add(rel)
    return sorted(found)


def _digest_or_missing(full: str, cache: HashCache | None) -> str:
    info = _file_or_link(full)
    if info is None:
        return MISSING
    try:
        if stat.S_ISLNK(info.st_mode):
            link = os.fsencode(os.readlink(full))
            return hashlib.sha256(b"symlink:" + link).hexdigest()
        if cache is not None:
            return cache.digest(full, info)
        return file_digest(Path(full))
    except OSError:
        return MISSING


def fingerprint(
    root: Path, files: Iterable[str], artifacts: Iterable[str], cache: HashCache | None = None
) -> str:
    base = str(root)
    entries: dict[str, str] = {}
    for rel in expand_globs(root, files):
        entries[rel] = _digest_or_missing(os.path.join(base, rel), cache)
    for artifact in artifacts:
        rel = _posix(artifact)
        entries[rel] = _digest_or_missing(os.path.join(base, rel), cache)
    canonical = json.dumps(sorted(entries.items()), separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogateescape")).hexdigest()
