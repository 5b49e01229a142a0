"""Log and transcript facts carried over from the previous snapshot when every input they were
computed from is proven unchanged (issue 18), so a brief neither re-reads nor re-parses them
and does not import their readers.

A record in the user cache (``facts.json``, never in the repository: what arrives with a
repository is hostile) keeps, per fact, the computed (already redacted) value, the notes its
reader wrote, the options that shaped it (globs, limits, root, agent folders, the readers'
source files' stat data, resume-kit's version) and the signature of every input:

* a file: its ``lstat`` (type, device, inode, size, mtime_ns, ctime_ns), and for a symlink in
  the user's own agent folders also what it points at; a missing file is recorded as missing;
* a folder: its own signature and its listing (every entry's name and type; for the agent
  folders, whose entries' mtimes order the sessions, every entry's signature).

The logs' inputs are the folders their globs walk (computed here by the globs' rules), the
folders on the way to them and every log matched; the transcript's are what its readers
opened or listed, recorded as they did it (:func:`note_file`, :func:`note_folder`). A fact is
reused only if every option and every signature matches. An input changed less than
:data:`RACY_NS` before the computation, or not strictly before the record was written (the
file system's own clock), could change again within its timestamp tick: such a fact is not
reused. Validating never follows a symlink in the work tree (folders are opened with
``O_NOFOLLOW`` and listed by descriptor) and never opens a file. Anything missing, unreadable
or odd means computing. ``RESUME_KIT_NO_FACT_REUSE=1`` disables the reuse (docs/brief.md).
"""

from __future__ import annotations

import _thread
import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from resume_kit.core.typing_light import Any, TypeVar
from resume_kit.model.globs import WILDCARD

FORMAT = 1
FILE_NAME = "facts.json"
DISABLE_ENV = "RESUME_KIT_NO_FACT_REUSE"
MAX_RECORD_BYTES = 16 * 1024 * 1024
RACY_NS = 2_000_000_000  # a write this close to the computation may share its timestamp tick
MAX_FOLDERS = 2000  # more folders walked than this: not worth recording, compute
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the readers' sources: an edited reader (or redaction rule) must not serve an old value
LOG_SOURCES = ("facts/logs.py", "facts/fingerprint.py", "infra/redact.py", "core/escape.py")
TRANSCRIPT_SOURCES = (
    "facts/transcripts/__init__.py",
    "facts/transcripts/claude_code.py",
    "facts/transcripts/claude_tasks.py",
    "facts/transcripts/codex.py",
    "facts/transcripts/records.py",
    "facts/transcripts/tail.py",
    "facts/transcripts/usage.py",
    "facts/transcripts/zst.py",
    "infra/redact.py",
)
AGENT_ENV = ("HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME")

T = TypeVar("T")

# kinds of input: "l" a work-tree path (lstat only), "L" a work-tree folder (no symlink
# followed), "f" a file of the user's agent folders, "d" a folder of the user's agent folders
# followed by thread (git runs in another one while the readers read); a dict, not a
# ContextVar: importing contextvars costs more than the whole lookup
_TRACES: dict[int, dict[str, str]] = {}


class Unsure(Exception):
    """An input could not be looked at: no reuse, no record."""


def note_file(path: str | os.PathLike[str]) -> None:
    """Called by the transcript readers for every file they open (no-op unless tracing)."""
    trace = _TRACES.get(_thread.get_ident()) if _TRACES else None
    if trace is not None:
        trace.setdefault(os.fspath(path), "f")


def note_folder(path: str | os.PathLike[str]) -> None:
    """Called by the transcript readers for every folder they list (no-op unless tracing)."""
    trace = _TRACES.get(_thread.get_ident()) if _TRACES else None
    if trace is not None:
        trace[os.fspath(path)] = "d"


def enabled() -> bool:
    return not os.environ.get(DISABLE_ENV)


# --------------------------------------------------------------------------- signatures


def _stat_sig(info: os.stat_result) -> list[int]:
    return [
        stat.S_IFMT(info.st_mode),
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    ]


def _lstat(path: str) -> list[int] | None:
    try:
        return _stat_sig(os.lstat(path))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise Unsure(str(exc)) from None


def _file_sig(path: str, follow: bool) -> list[Any] | None:
    own = _lstat(path)
    if own is None or not follow or not stat.S_ISLNK(own[0]):
        return own
    try:
        return [*own, _stat_sig(os.stat(path))]
    except (FileNotFoundError, NotADirectoryError):
        return [*own, None]
    except OSError as exc:
        raise Unsure(str(exc)) from None


def _entry_type(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "l"
    if entry.is_dir(follow_symlinks=False):
        return "d"
    if entry.is_file(follow_symlinks=False):
        return "f"
    return "o"


def _folder_sig(path: str, follow: bool) -> list[Any] | None:
    """The folder's own signature and its listing, sorted by name. In the work tree
    (``follow`` false) the folder is opened with O_NOFOLLOW and listed by descriptor, and
    the entries are named with their types only (the logs are recorded themselves)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        own = _lstat(path)  # missing, or what is there instead of a folder (never listed)
        if own is None or not stat.S_ISDIR(own[0]) or (not follow and stat.S_ISLNK(own[0])):
            return None if own is None else ["not a folder", *own]
        raise Unsure(str(exc)) from None
    # Listed by descriptor, which the served brief's recorder (infra/deps.py) cannot place:
    # the audit event it listens to is raised here with the folder's path.
    sys.audit("os.scandir", path)
    try:
        own = _stat_sig(os.fstat(fd))
        listing: list[list[Any]] = []
        with os.scandir(fd) as entries:
            for entry in entries:
                kind = _entry_type(entry)
                if not follow:
                    listing.append([entry.name, kind])
                    continue
                item: list[Any] = [entry.name, kind, _stat_sig(entry.stat(follow_symlinks=False))]
                if kind == "l":
                    with contextlib.suppress(OSError):
                        item.append(_stat_sig(entry.stat()))
                listing.append(item)
    except OSError as exc:
        raise Unsure(str(exc)) from None
    finally:
        os.close(fd)
    listing.sort()
    return [own, listing]


def signature(kind: str, path: str) -> Any:
    if kind in ("L", "d"):
        return _folder_sig(path, follow=kind == "d")
    return _file_sig(path, follow=kind == "f")


def _times(kind: str, sig: Any) -> Iterable[int]:
    """The mtimes and ctimes a signature holds that a racy write could leave unchanged."""
    if not sig or sig[0] == "not a folder":
        return
    if kind in ("L", "d"):
        yield from sig[0][4:6]
        return
    yield from sig[4:6]
    if len(sig) > 6 and sig[6]:
        yield from sig[6][4:6]


def signatures(inputs: Iterable[tuple[str, str]]) -> list[list[Any]]:
    """``[[path, kind, signature]]`` in path order (a folder before what is below it)."""
    return [[path, kind, signature(kind, path)] for path, kind in sorted(set(inputs))]


def sources_key(sources: Sequence[str]) -> list[Any]:
    return [[name, _lstat(os.path.join(_PACKAGE, name))] for name in sources]


# --------------------------------------------------------------------------- the logs' inputs


def _real_folders(base: str, parts: list[str]) -> bool:
    """Whether each folder from ``base`` down ``parts`` is a folder, not a symlink."""
    for depth in range(len(parts) + 1):
        try:
            if not stat.S_ISDIR(os.lstat(os.path.join(base, *parts[:depth])).st_mode):
                return False
        except OSError:
            return False
    return True


def log_inputs(
    root: Path, patterns: Iterable[str], matched: Iterable[str]
) -> list[tuple[str, str]]:
    """What :func:`resume_kit.facts.logs.read_logs` depends on: the folders the globs walk
    (as :func:`resume_kit.facts.fingerprint.expand_globs` does: ``**`` and folders below a
    magic part are walked without entering symlinks, hidden folders only when the pattern
    names one), every folder on the way to them, and the logs ``matched``."""
    base = str(root)
    inputs: set[tuple[str, str]] = {(base, "l")}
    for pattern in patterns:
        if os.path.isabs(pattern) or pattern.startswith(".."):
            continue
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if not parts:
            continue
        prefix: list[str] = []
        while len(parts) > 1 and not WILDCARD.search(parts[0]):
            prefix.append(parts.pop(0))
        for depth in range(1, len(prefix) + 1):  # the way down: no symlink may appear
            inputs.add((os.path.join(base, *prefix[:depth]), "l"))
        start = os.path.join(base, *prefix)
        if len(parts) == 1 and not WILDCARD.search(parts[0]):
            inputs.add((os.path.join(start, parts[0]), "l"))
            continue
        inputs.add((start, "L"))
        if len(parts) == 1 and "**" not in parts[0]:
            continue
        if not _real_folders(base, prefix):
            continue  # a symlink on the way (os.walk would follow its top): nothing to walk
        wants_hidden = any(part.startswith(".") for part in parts)
        for count, (folder, dirs, _) in enumerate(os.walk(start, followlinks=False)):
            dirs[:] = [
                d
                for d in dirs
                if (wants_hidden or not d.startswith("."))
                and not os.path.islink(os.path.join(folder, d))
            ]
            for name in dirs:
                inputs.add((os.path.join(folder, name), "L"))
            if count > MAX_FOLDERS:
                raise Unsure("too many folders")
    for rel in matched:
        inputs.add((os.path.join(base, rel), "l"))
    return sorted(inputs)


# --------------------------------------------------------------------------- the record


class FactCache:
    """The previous snapshot's facts (``lookup``) and this one's (``store``, ``save``)."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self._old: dict[str, Any] = {}
        self._new: dict[str, Any] = {}
        self._written_ns = 0
        if file is not None:
            from resume_kit.infra.deps import not_an_input

            # what a brief says never depends on the record, only on the inputs it names
            # (their signatures are looked at, and so recorded, when a fact is reused)
            with not_an_input():
                self._old, self._written_ns = _load(file)

    def lookup(self, name: str, options: Any) -> tuple[Any, list[str]] | None:
        """(value, notes) of fact ``name`` if its options and every input's signature still
        match and none was written too close to its computation or to the record's write."""
        entry = self._old.get(name)
        if not isinstance(entry, dict) or entry.get("options") != _plain(options):
            return None
        inputs = entry.get("inputs")
        if not isinstance(inputs, list) or not isinstance(entry.get("notes"), list):
            return None
        try:
            for path, kind, stored in inputs:
                if kind not in ("l", "L", "f", "d") or not isinstance(path, str):
                    return None
                if any(t >= self._written_ns for t in _times(kind, stored)):
                    return None
                if signature(kind, path) != stored:
                    return None
        except (Unsure, TypeError, ValueError):
            return None
        self._new[name] = entry
        return entry.get("value"), [str(n) for n in entry["notes"]]

    def store(
        self, name: str, options: Any, value: Any, notes: list[str], inputs: list[list[Any]]
    ) -> None:
        self._new[name] = {
            "options": _plain(options),
            "inputs": inputs,
            "value": value,
            "notes": notes,
        }

    def save(self) -> None:
        if self.file is None or self._new == self._old:
            return
        from resume_kit.infra.deps import not_an_input
        from resume_kit.infra.store import atomic_write

        payload = json.dumps({"format": FORMAT, "facts": self._new}, separators=(",", ":"))
        with contextlib.suppress(OSError, ValueError), not_an_input():
            atomic_write(self.file, payload, mode=0o600, durable=False)


def _plain(value: Any) -> Any:
    """``value`` as the record's JSON gives it back (tuples become lists)."""
    return json.loads(json.dumps(value))


def _load(file: Path) -> tuple[dict[str, Any], int]:
    """The record's facts and its mtime; nothing when it is not a regular file of this user
    below the size cap holding this format."""
    from resume_kit.infra.safefs import open_regular

    try:
        with open_regular(file) as handle:
            info = os.fstat(handle.fileno())
            if hasattr(os, "getuid") and info.st_uid != os.getuid():
                return {}, 0
            if info.st_size > MAX_RECORD_BYTES:
                return {}, 0
            data = json.loads(handle.read(MAX_RECORD_BYTES + 1))
        facts = data.get("facts") if data.get("format") == FORMAT else None
        return (facts, info.st_mtime_ns) if isinstance(facts, dict) else ({}, 0)
    except (OSError, ValueError, AttributeError):
        return {}, 0


def reuse_or_compute(
    cache: FactCache | None,
    name: str,
    options: Any,
    compute: Callable[[list[str]], T],
    inputs: Callable[[T], Iterable[tuple[str, str]]] | None,
    notes: list[str],
) -> T:
    """Fact ``name``: reused from ``cache`` when provably unchanged, else ``compute(notes)``
    (its notes go to ``notes``) and stored with the signatures of ``inputs(value)``, or of
    what the readers noted (:func:`note_file`, :func:`note_folder`) when ``inputs`` is None."""
    if cache is None:
        return compute(notes)
    found = cache.lookup(name, options)
    if found is not None:
        value, kept_notes = found
        notes.extend(kept_notes)
        result: T = value
        return result
    started = time.time_ns()
    own_notes: list[str] = []
    trace: dict[str, str] = {}
    ident = _thread.get_ident()
    outer = _TRACES.get(ident)
    _TRACES[ident] = trace
    try:
        computed = compute(own_notes)
    finally:
        if outer is None:
            del _TRACES[ident]
        else:
            _TRACES[ident] = outer
    notes.extend(own_notes)
    with contextlib.suppress(Unsure, OSError, TypeError, ValueError):
        listed = list(inputs(computed)) if inputs is not None else list(trace.items())
        recorded = signatures(listed)
        limit = started - RACY_NS
        if all(t < limit for _, kind, sig in recorded for t in _times(kind, sig)):
            cache.store(name, options, _plain(computed), own_notes, recorded)
    return computed
