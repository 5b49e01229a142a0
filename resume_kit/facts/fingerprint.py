"""The evidence fingerprint (SPEC 2), shared by verify-next and reconcile.

SHA-256 over the sorted list of (path, content hash) of the files matching a unit's ``files``
globs and its ``artifacts``; a missing artifact is recorded as missing; a unit with neither
gets the hash of the empty list. Paths are relative to the work tree root, ``.git`` and
``.resume-kit`` excluded.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from resume_kit.core.digest import sha256
from resume_kit.core.typing_light import TYPE_CHECKING
from resume_kit.model.globs import WILDCARD, glob_regex

if TYPE_CHECKING:
    from resume_kit.facts.hashcache import HashCache

MISSING = "missing"
_EXCLUDED_TOP = (".git", ".resume-kit")


def file_digest(path: Path, cache: HashCache | None = None) -> str:
    """sha256 of a file's bytes (of the link text for a symlink), streamed in 1 MiB blocks;
    with ``cache``, a regular file whose stat data is unchanged is not read again."""
    from resume_kit.infra.safefs import open_regular

    if cache is not None:
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode):
            return cache.digest(str(path), info)
    if path.is_symlink():
        return sha256(b"symlink:" + os.fsencode(os.readlink(path))).hexdigest()
    with open_regular(path) as handle:  # never follows a link, never blocks on a FIFO
        digest = sha256(size_hint=os.fstat(handle.fileno()).st_size)
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


def expand_globs(
    root: Path, patterns: Iterable[str], folders: dict[str, bool] | None = None
) -> list[str]:
    """Files (relative, forward slashes) under ``root`` matching any pattern; ``**`` recurses.

    Only paths that stay below ``root`` with no symlinked folder on the way (safefs.inside):
    a pattern through ``out -> /etc`` or with ``..`` above the root matches nothing."""
    from resume_kit.infra.safefs import inside

    found: set[str] = set()
    base = str(root)
    memo: dict[str, bool] = {} if folders is None else folders
    for pattern in patterns:
        if os.path.isabs(pattern) or pattern.startswith(".."):
            continue
        if pattern and not pattern.endswith(("/", os.sep)) and not WILDCARD.search(pattern):
            # a plain path (the common case): what iglob would yield, without its machinery
            rel = _posix(pattern)
            full = inside(base, rel, memo)
            if not _excluded(rel) and full is not None and _file_or_link(full) is not None:
                found.add(rel)
            continue
        if "**" in pattern:
            matches = _recursive_matches(base, pattern)
        else:
            import glob  # a pattern's few folders: glob's own walk

            matches = glob.iglob(pattern, root_dir=root, recursive=True)
        for match in matches:
            rel = Path(match).as_posix()
            if _excluded(rel):
                continue
            safe = inside(base, rel, memo)
            if safe is not None and _file_or_link(safe) is not None:
                found.add(rel)
    return sorted(found)


def _recursive_matches(base: str, pattern: str) -> Iterable[str]:
    """What ``glob.iglob(pattern, recursive=True)`` yields, except that folders reached through
    a symbolic link are not entered: with links like ``logs/a -> .`` and ``logs/b -> .`` glob
    visits 2^40 paths before the kernel's link limit stops it. The walk starts at the pattern's
    literal folder prefix and skips hidden folders, as glob does."""
    parts = pattern.split("/")
    prefix: list[str] = []
    while len(parts) > 1 and not WILDCARD.search(parts[0]):
        prefix.append(parts.pop(0))
    start = os.path.join(base, *prefix)
    wants_hidden = any(part.startswith(".") for part in parts)
    regex = glob_regex(pattern)
    for folder, dirs, files in os.walk(start, followlinks=False):
        rel_folder = os.path.relpath(folder, base)
        rel_folder = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
        if not wants_hidden:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        for name in (*files, *links):
            rel = rel_folder + name
            if regex.match(rel):
                yield rel


def _digest_or_missing(full: str, cache: HashCache | None) -> str:
    info = _file_or_link(full)
    if info is None:
        return MISSING
    try:
        if stat.S_ISLNK(info.st_mode):
            link = os.fsencode(os.readlink(full))
            return sha256(b"symlink:" + link).hexdigest()
        if cache is not None:
            return cache.digest(full, info)
        return file_digest(Path(full))
    except OSError:
        return MISSING


def fingerprint(
    root: Path,
    files: Iterable[str],
    artifacts: Iterable[str],
    cache: HashCache | None = None,
    folders: dict[str, bool] | None = None,
) -> str:
    """``folders``: the folder checks of :func:`resume_kit.infra.safefs.inside`, shared by callers
    that fingerprint many units. An artifact outside the tree or through a symlinked folder
    counts as missing: nothing outside the work tree is ever read."""
    from resume_kit.infra.safefs import inside

    base = str(root)
    memo: dict[str, bool] = {} if folders is None else folders
    entries: dict[str, str] = {}
    for rel in expand_globs(root, files, memo):
        entries[rel] = _digest_or_missing(os.path.join(base, rel), cache)
    for artifact in artifacts:
        rel = _posix(artifact)
        full = inside(base, rel, memo)
        entries[rel] = MISSING if full is None else _digest_or_missing(full, cache)
    canonical = json.dumps(sorted(entries.items()), separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + sha256(canonical.encode("utf-8", "surrogateescape")).hexdigest()
