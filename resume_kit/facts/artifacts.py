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

import stat
from collections.abc import Iterable
from pathlib import Path

from resume_kit.core.digest import sha256
from resume_kit.core.typing_light import TYPE_CHECKING, Any, BinaryIO
from resume_kit.infra.paths import as_posix
from resume_kit.infra.safefs import UnsafePath, contained_lstat

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


def read_artifact(
    root: Path | str, rel: str, cache: HashCache | None = None, checked: set[str] | None = None
) -> dict[str, Any] | None:
    """The facts of one artifact, or None when it is not below ``root`` with no symlink on the
    way (the caller notes it; nothing about what it points at is looked at). ``checked``: the
    folders already found safe (see :func:`~resume_kit.infra.safefs.contained`)."""
    entry: dict[str, Any] = {"path": rel, "exists": False, "size": None, "sha256": None}
    try:
        full, info = contained_lstat(root, rel, checked=checked)
    except UnsafePath:
        return None
    except OSError:
        return entry
    entry["exists"] = True
    if not stat.S_ISREG(info.st_mode):
        return entry
    entry["size"] = info.st_size
    try:
        if cache is not None and info.st_size <= FULL_HASH_LIMIT:
            entry["sha256"] = cache.digest(full, info)
        else:
            entry["sha256"] = content_hash(Path(full), info.st_size)
    except OSError:  # unreadable: exists, size known, no hash
        pass
    return entry


def read_artifacts(
    root: Path,
    paths: Iterable[str],
    cache: HashCache | None = None,
    notes: list[str] | None = None,
) -> list[dict[str, Any]]:
    """``[{"path", "exists", "size", "sha256"}]`` for each path (relative to ``root``), once each,
    in the order given; ``cache`` remembers the hashes of files that did not change. A path
    that leaves the work tree or goes through a symlink is left out, with a note."""
    from resume_kit.infra.redact import redact

    seen: dict[str, None] = {}
    for raw in paths:
        rel = as_posix(raw) if raw else raw
        if rel and rel not in seen:
            seen[rel] = None
    found: list[dict[str, Any]] = []
    refused: list[str] = []
    checked: set[str] = set()
    top = str(root)
    for rel in seen:
        entry = read_artifact(top, rel, cache, checked)
        if entry is None:
            refused.append(rel)
        else:
            found.append(entry)
    if refused and notes is not None:
        shown = ", ".join(redact(r) for r in refused[:3])
        more = f" and {len(refused) - 3} more" if len(refused) > 3 else ""
        notes.append(
            f"artifacts not read (a symlink on the way or outside the work tree): {shown}{more}"
        )
    return found
