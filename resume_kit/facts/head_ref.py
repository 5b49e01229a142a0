"""HEAD's commit read from the git dir's files, without starting git (a ``rev-parse`` is a
process start, ~2.5 ms of every checkpoint on a large repository).

Only the plain layouts are read: HEAD holding an object id (detached), or naming a branch
under ``refs/heads/`` whose loose ref file, or else whose ``packed-refs`` line, holds one.
Anything else (a reftable, a symbolic ref inside a ref, a name git would refuse, a link, a
FIFO, a file too large) is None: the caller asks git. The files are the repository's own and
may have been shipped with it: each is read without following a final link or blocking, the
branch name must be a plain one (no ``..``, no climbing out), and what is returned is only
ever a lowercase hexadecimal object id.
"""

from __future__ import annotations

import os
import re

_OID = re.compile(rb"(?:[0-9a-f]{40}|[0-9a-f]{64})")  # SHA-1 or SHA-256 repositories
_SYMBOLIC = re.compile(rb"ref: (refs/heads/[A-Za-z0-9_][A-Za-z0-9_./-]{0,254})\n")
MAX_REF_BYTES = 4096
MAX_PACKED_REFS_BYTES = 64 * 1024 * 1024


def head_commit(git_dir: os.PathLike[str], common_dir: os.PathLike[str]) -> str | None:
    """HEAD's object id as git would resolve it, read from ``git_dir`` (this work tree's git
    dir: HEAD) and ``common_dir`` (the shared one: the branches); None when not certain."""
    from resume_kit.infra.safefs import read_regular

    try:
        head = read_regular(os.path.join(git_dir, "HEAD"), MAX_REF_BYTES)
    except OSError:
        return None
    detached = _oid_line(head)
    if detached is not None:
        return detached
    named = _SYMBOLIC.fullmatch(head)
    if named is None or not _plain_branch(named[1]):
        return None
    ref = named[1]
    try:
        loose = read_regular(os.path.join(common_dir, os.fsdecode(ref)), MAX_REF_BYTES)
    except FileNotFoundError:
        return _packed(common_dir, ref)
    except OSError:
        return None
    return _oid_line(loose)


def _oid_line(data: bytes) -> str | None:
    """The object id ``data`` holds as its one line, else None."""
    if data[-1:] == b"\n" and _OID.fullmatch(data, 0, len(data) - 1):
        return data[:-1].decode("ascii")
    return None


def _plain_branch(ref: bytes) -> bool:
    """Whether ``ref`` is a branch name git accepts and a path that stays in its folder."""
    parts = ref.split(b"/")
    names = all(
        part and not part.startswith(b".") and not part.endswith(b".lock") for part in parts
    )
    return names and not ref.endswith(b".")


def read_packed_refs(common_dir: str | os.PathLike[str]) -> bytes:
    """The shared git dir's ``packed-refs``, read without following a link or blocking, at
    most :data:`MAX_PACKED_REFS_BYTES` (OSError, FileNotFoundError when there is none)."""
    from resume_kit.infra.safefs import read_regular

    return read_regular(os.path.join(common_dir, "packed-refs"), MAX_PACKED_REFS_BYTES)


def _packed(common_dir: os.PathLike[str], ref: bytes) -> str | None:
    """The object id ``packed-refs`` gives ``ref`` (None without the file or the line; a
    reftable repository has neither, and its HEAD names a branch no file holds)."""
    if os.path.lexists(os.path.join(common_dir, "reftable")):
        return None
    try:
        packed = read_packed_refs(common_dir)
    except OSError:
        return None
    end = packed.find(b" " + ref + b"\n")
    if end < 0:
        return None  # an unborn branch, or one that is not there: git says which
    start = packed.rfind(b"\n", 0, end) + 1
    return packed[start:end].decode("ascii") if _OID.fullmatch(packed, start, end) else None
