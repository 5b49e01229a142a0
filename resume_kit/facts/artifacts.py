"""Artifact facts: whether each declared path exists, its size and a content hash.

Files up to 64 MiB are hashed whole: ``"sha256": "<hex>"``. Larger files are hashed from a
sample so a snapshot never reads gigabytes: SHA-256 over the size as decimal ASCII and a newline,
then the first, the middle and the last MiB of the file (the middle one starting at
``(size - 1 MiB) // 2``), marked ``"sha256": "sampled:<hex>"``. A change confined to an
unsampled region of a huge file therefore goes unseen unless it changes the size; that is the
price of a bounded snapshot, and the ``sampled:`` prefix says so wherever the value is shown.

Directories exist with null size and hash; an unreadable file exists with a null hash; a
missing path is ``exists: false``. A path outside the work tree or through a symlink (the
artifact itself included) is never looked at: it is left out with a note.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from resume_kit.core.digest import sha256
from resume_kit.core.typing_light import TYPE_CHECKING, Any, BinaryIO
from resume_kit.infra.paths import as_posix
from resume_kit.infra.safefs import contained_lstats

if TYPE_CHECKING:
    from resume_kit.facts.hashcache import HashCache

FULL_HASH_LIMIT = 64 * 1024 * 1024
SAMPLE_BYTES = 1024 * 1024
SAMPLED_PREFIX = "sampled:"
_BLOCK = 1024 * 1024


def _read_exactly(handle: BinaryIO, offset: int, length: int) -> bytes:
    handle.seek(offset)
    return handle.read(length)


def content_hash(path: Path, size: int) -> str:
    """Full SHA-256 hex for files up to 64 MiB; ``sampled:<hex>`` (see module doc) above."""
    from resume_kit.infra.safefs import open_regular

    digest = sha256(size_hint=min(size, FULL_HASH_LIMIT))
    with open_regular(path) as handle:
        if size <= FULL_HASH_LIMIT:
            for block in iter(lambda: handle.read(_BLOCK), b""):
                digest.update(block)
            return digest.hexdigest()
        digest.update(str(size).encode("ascii") + b"\n")
        for offset in (0, (size - SAMPLE_BYTES) // 2, size - SAMPLE_BYTES):
            digest.update(_read_exactly(handle, offset, SAMPLE_BYTES))
    return SAMPLED_PREFIX + digest.hexdigest()


def _existing(rel: str, full: str, info: os.stat_result, cache: HashCache | None) -> dict[str, Any]:
    """The facts of an artifact that exists, whose ``lstat`` is ``info``."""
    if not stat.S_ISREG(info.st_mode):
        return {"path": rel, "exists": True, "size": None, "sha256": None}
    digest = None
    try:
        if cache is not None and info.st_size <= FULL_HASH_LIMIT:
            digest = cache.digest(full, info)
        else:
            digest = content_hash(Path(full), info.st_size)
    except OSError:  # unreadable: exists, size known, no hash
        pass
    return {"path": rel, "exists": True, "size": info.st_size, "sha256": digest}


def read_artifacts(
    root: Path,
    paths: Iterable[str],
    cache: HashCache | None = None,
    notes: list[str] | None = None,
) -> list[dict[str, Any]]:
    """``[{"path", "exists", "size", "sha256"}]`` for each path (relative to ``root``), once each,
    in the order given; ``cache`` remembers the hashes of files that did not change. A path
    that leaves the work tree or goes through a symlink is left out, with a note."""
    found, refused = read_artifact_facts(root, paths, cache)
    if refused and notes is not None:
        notes.append(refused_note(refused))
    return found


def read_artifact_facts(
    root: Path, paths: Iterable[str], cache: HashCache | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """:func:`read_artifacts` without the note: (the facts, the paths left out)."""
    seen: dict[str, None] = {}
    for raw in paths:
        rel = as_posix(raw) if raw else raw
        if rel and rel not in seen:
            seen[rel] = None
    found: list[dict[str, Any]] = []
    refused: list[str] = []
    for rel, full, info in contained_lstats(str(root), seen):
        if full is None:  # nothing about what it points at is looked at
            refused.append(rel)
        elif info is None:
            found.append({"path": rel, "exists": False, "size": None, "sha256": None})
        else:
            found.append(_existing(rel, full, info, cache))
    return found, refused


def refused_note(refused: list[str]) -> str:
    """The snapshot's note naming the artifacts left out (the first three of ``refused``)."""
    from resume_kit.infra.redact import redact

    shown = ", ".join(redact(r) for r in refused[:3])
    more = f" and {len(refused) - 3} more" if len(refused) > 3 else ""
    return f"artifacts not read (a symlink on the way or outside the work tree): {shown}{more}"
