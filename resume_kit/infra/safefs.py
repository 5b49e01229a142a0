"""Safe file access inside a repository that may be hostile (docs/security.md).

Everything under the work tree arrived with the repository, symlinks included. These helpers
are the one way resume-kit touches such paths:

* :func:`contained` walks a path below a trusted root one component at a time with ``lstat``
  and refuses a symlink anywhere on the way, ``..`` that climbs out, or an absolute path that
  is not below the root;
* :func:`open_regular` opens a file without following a final symlink (``O_NOFOLLOW``), never
  blocks on a FIFO or device (``O_NONBLOCK``) and checks on the open descriptor that it is a
  regular file, so there is no window between the check and the read.
"""

from __future__ import annotations

import errno
import os
import stat

from resume_kit.infra.errors import ResumeKitError

TYPE_CHECKING = False  # not typing's: pathlib and typing cost the commit hook ~20 ms
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

    from resume_kit.core.typing_light import BinaryIO

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafePath(ResumeKitError):
    """A path that leaves the work tree or goes through a symlink where resume-kit keeps
    state: refused, never followed (exit 2; hooks report it on stderr and exit 0)."""


class NotARegularFile(OSError):
    """A FIFO, device, socket, folder or symlink where a file was expected."""

    def __init__(self, path: Path | str, kind: str):
        super().__init__(f"not a regular file ({kind})")
        self.path = str(path)
        self.kind = kind


class FileTooLarge(OSError):
    def __init__(self, path: Path | str, size: int, limit: int):
        super().__init__(f"larger than {limit} bytes")
        self.path, self.size, self.limit = str(path), size, limit


def file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def contained(
    root: Path, path: Path | str, *, missing_ok: bool = True, checked: set[str] | None = None
) -> Path:
    """``path`` (relative to ``root`` or absolute) as an absolute path below ``root``, checked
    component by component: no symlink on the way (the last component included), no ``..``
    that climbs above ``root``. Components that do not exist yet are fine when ``missing_ok``.
    ``checked`` remembers the folders already found safe, for many paths checked at once
    (a snapshot's 2,000 artifacts share their folders).

    Raises :class:`UnsafePath`. ``root`` itself is trusted (the caller resolved it).
    """
    from pathlib import Path

    return Path(contained_text(root, path, missing_ok=missing_ok, checked=checked))


def contained_text(
    root: Path | str, path: Path | str, *, missing_ok: bool = True, checked: set[str] | None = None
) -> str:
    """:func:`contained` as a string, with no pathlib on the way (for paths checked by the
    thousand)."""
    return _walk(root, path, missing_ok, checked)[0]


def contained_lstat(
    root: Path | str, path: Path | str, *, checked: set[str] | None = None
) -> tuple[str, os.stat_result]:
    """:func:`contained_text` for a path that must exist (``FileNotFoundError`` otherwise),
    with the ``lstat`` of the path itself that the walk took: one system call less for callers
    that need it (a snapshot's thousands of artifacts)."""
    full, info = _walk(root, path, False, checked)
    return full, os.lstat(full) if info is None else info


def contained_lstats(
    root: str, paths: Iterable[str]
) -> Iterator[tuple[str, str | None, os.stat_result | None]]:
    """:func:`contained_lstat` of each of ``paths`` (relative to ``root``), for thousands at
    once (a snapshot's artifacts), the folders found safe remembered from one to the next (a
    path in one of them takes one ``lstat``): ``(path, absolute path, lstat)``; ``(path, None,
    None)`` where ``contained_lstat`` raises :class:`UnsafePath`, ``(path, "", None)`` where it
    raises another ``OSError`` (missing)."""
    checked: set[str] = set()
    for rel in paths:
        try:
            full, info = contained_lstat(root, rel, checked=checked)
        except UnsafePath:
            yield rel, None, None
        except OSError:
            yield rel, "", None
        else:
            yield rel, full, info


def _walk(
    root: Path | str, path: Path | str, missing_ok: bool, checked: set[str] | None
) -> tuple[str, os.stat_result | None]:
    """The checked absolute path and the ``lstat`` of its last component (None for the root
    itself or a missing path)."""
    top = os.fspath(root)
    raw = os.fspath(path)
    if checked:
        known = _in_checked_folder(top, raw, checked)
        if known is not None:
            return _last_component(known, raw, missing_ok)
    if raw.startswith("/"):
        base = top.rstrip("/")
        if raw != base and not raw.startswith(base + "/"):
            raise UnsafePath(
                f"{path} is outside the work tree {root}",
                hint="use a path inside the repository",
            )
        raw = raw[len(base) :]
    parts: list[str] = []
    for part in raw.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise UnsafePath(
                    f"{path} climbs out of the work tree {root}",
                    hint="use a path inside the repository",
                )
            parts.pop()
            continue
        parts.append(part)
    current = top
    last = len(parts) - 1
    info: os.stat_result | None = None
    for index, part in enumerate(parts):
        current = os.path.join(current, part)
        if checked is not None and index < last and current in checked:
            continue
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if missing_ok:
                return os.path.join(top, *parts), None
            raise
        if stat.S_ISLNK(info.st_mode):
            shown = "/".join(parts[: index + 1])
            raise UnsafePath(
                f"{shown} is a symlink; resume-kit does not follow symlinks here",
                hint=f"replace {shown} with a real file or folder (it may have come with the repository)",
            )
        if checked is not None and index < last:
            checked.add(current)
    return os.path.join(top, *parts), info if parts else None


def _in_checked_folder(top: str, raw: str, checked: set[str]) -> str | None:
    """The absolute path of ``raw`` (relative) when its folder is one the walk already found
    safe: ``checked`` holds only joins of plain components, so a folder spelled with ``.``,
    ``..`` or an empty part never matches one."""
    folder, _, name = raw.rpartition("/")
    if not folder or name in ("", ".", "..") or raw.startswith("/"):
        return None
    parent = top + folder if top.endswith("/") else f"{top}/{folder}"  # as os.path.join
    return f"{parent}/{name}" if parent in checked else None


def _last_component(full: str, raw: str, missing_ok: bool) -> tuple[str, os.stat_result | None]:
    """:func:`_walk`'s last step for a path in a checked folder: the lstat, no symlink."""
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        if missing_ok:
            return full, None
        raise
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(
            f"{raw} is a symlink; resume-kit does not follow symlinks here",
            hint=f"replace {raw} with a real file or folder (it may have come with the repository)",
        )
    return full, info


def open_regular(path: Path | str, *, follow: bool = False, append: bool = False) -> BinaryIO:
    """Open ``path`` for reading (``append``: also to append to it, an existing file only)
    only if it is a regular file.

    A final symlink is refused unless ``follow`` (for paths the user owns, such as files in
    their home directory that they chose to link). The open never blocks and the type is
    checked on the descriptor. Raises :class:`NotARegularFile` or the usual ``OSError``.
    """
    access = os.O_RDWR | os.O_APPEND if append else os.O_RDONLY
    flags = access | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise NotARegularFile(path, "a symlink") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(path, file_kind(info.st_mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "a+b" if append else "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, limit: int, *, follow: bool = False) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (:class:`FileTooLarge` beyond)."""
    with open_regular(path, follow=follow) as handle:
        # the size first: read(limit + 1) allocates the whole limit (128 MiB for a cache)
        size = min(os.fstat(handle.fileno()).st_size, limit)
        data = handle.read(size + 1)
        if len(data) > size:  # it grew, or says 0 (/proc): the rest, up to the limit
            data += handle.read(limit - len(data) + 1)
        if len(data) > limit:
            size = os.fstat(handle.fileno()).st_size
            raise FileTooLarge(path, max(size, len(data)), limit)
    return data


_COMPARE_CHUNK = 1 << 18


def holds_bytes(path: Path | str, expected: bytes) -> bool:
    """Whether the regular file ``path`` holds exactly ``expected``; False when it cannot be
    read. Compared a chunk at a time: reading a 4 MB file whole to compare it would fault in 4
    MB of new memory (~1,000 page faults, ~2 ms) every time."""
    try:
        with open_regular(path) as handle:
            if os.fstat(handle.fileno()).st_size != len(expected):
                return False
            at = 0
            while chunk := handle.read(_COMPARE_CHUNK):
                if chunk != expected[at : at + len(chunk)]:
                    return False
                at += len(chunk)
    except OSError:
        return False
    return at == len(expected)


def escapes(pattern: str) -> str | None:
    """Why a path or glob written in config.yaml or a unit obviously leaves the work tree (an
    absolute path, or a ``..`` that climbs above the root), or None. ``**`` may match no
    folder, so it climbs nothing back. Paths that leave only through a symlink are caught when
    read (:func:`contained`)."""
    text = pattern.replace("\\", "/") if os.sep == "\\" else pattern
    if text.startswith("/") or os.path.isabs(pattern) or (os.sep == "\\" and text[1:3] == ":/"):
        return "is an absolute path"
    depth = 0
    for part in text.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return "climbs out of the work tree with '..'"
        elif part not in ("", ".", "**"):
            depth += 1
    return None


def inside(root: str, rel: str, folders: dict[str, bool] | None = None) -> str | None:
    """``root/rel`` when ``rel`` stays below ``root`` and no folder on the way is a symlink,
    else None. Unlike :func:`contained` the last component may be anything: callers ``lstat``
    it and never follow it (a fingerprint hashes a link's text). ``folders`` remembers checked
    folder prefixes across calls; it is the hot path of fingerprints over thousands of units."""
    if escapes(rel) is not None:
        return None
    normal = os.path.normpath(rel)
    if normal in (".", "..") or normal.startswith(".." + os.sep):
        return None
    memo = {} if folders is None else folders
    parent = os.path.dirname(normal)
    start = 0
    while parent and start <= len(parent):
        end = parent.find(os.sep, start)
        prefix = parent if end < 0 else parent[:end]
        safe = memo.get(prefix)
        if safe is None:
            try:
                mode = os.lstat(os.path.join(root, prefix)).st_mode
            except OSError:
                mode = 0  # missing: nothing below it exists either
            safe = memo[prefix] = stat.S_ISDIR(mode)
        if not safe:
            return None
        if end < 0:
            break
        start = end + 1
    return os.path.join(root, normal)
