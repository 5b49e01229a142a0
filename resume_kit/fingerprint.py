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
from collections.abc import Iterable
from pathlib import Path

MISSING = "missing"
_EXCLUDED_TOP = (".git", ".resume-kit")


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (of the link text for a symlink), streamed in 1 MiB blocks."""
    digest = hashlib.sha256()
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


def expand_globs(root: Path, patterns: Iterable[str]) -> list[str]:
    """Files (relative, forward slashes) under ``root`` matching any pattern; ``**`` recurses."""
    found: set[str] = set()
    for pattern in patterns:
        if os.path.isabs(pattern) or pattern.startswith(".."):
            continue
        for match in glob.iglob(pattern, root_dir=root, recursive=True):
            rel = Path(match).as_posix()
            if _excluded(rel):
                continue
            full = root / rel
            if full.is_file() or full.is_symlink():
                found.add(rel)
    return sorted(found)


def fingerprint(root: Path, files: Iterable[str], artifacts: Iterable[str]) -> str:
    entries: dict[str, str] = {}
    for rel in expand_globs(root, files):
        try:
            entries[rel] = file_digest(root / rel)
        except OSError:
            entries[rel] = MISSING
    for artifact in artifacts:
        rel = Path(artifact).as_posix()
        full = root / rel
        try:
            entries[rel] = file_digest(full) if (full.is_file() or full.is_symlink()) else MISSING
        except OSError:
            entries[rel] = MISSING
    canonical = json.dumps(sorted(entries.items()), separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogateescape")).hexdigest()
