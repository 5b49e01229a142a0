"""What a build read, make/ninja style, and the stat signature that says whether it changed.

:class:`Watch` watches one build in this process: every file it opened (CPython's ``open``
audit event, which fires before the open, so a missing file is seen too), every folder it
listed (``os.listdir``/``os.scandir``), every database it connected to, every program it started
(``subprocess.Popen``, ``os.posix_spawn``), and every path it only looked at
(``os.stat``/``os.lstat``, which have no audit event, are wrapped while recording;
``os.path.exists``, ``pathlib`` and ``glob`` go through them). The served brief
(:mod:`resume_kit.brief.fastpath`) compares the signatures later. Standard library only: the
served path imports this module.
"""

from __future__ import annotations

import _thread
import os
import stat
import sys

TYPE_CHECKING = False  # typing costs milliseconds on the served path; mypy reads the guard
if TYPE_CHECKING:
    from resume_kit.core.typing_light import Any

# (mode, dev, ino, size, mtime_ns, ctime_ns) of the path itself (never a symlink's target), and
# for a symlink the same six of what it points at; None when nothing is there: a file that
# appears, goes, is replaced or is written differs. A folder only looked at (not listed) is
# compared by what it is (mode, dev, ino): files coming and going in it do not matter then.
Signature = tuple[int, ...] | None


def signature(path: str, *, listed: bool = True) -> Signature:
    """The stat signature of ``path`` (``lstat``, then ``stat`` for a symlink: a FIFO or a
    device is looked at, never opened); ``listed=False``: a folder's identity only."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    found: tuple[int, ...] = (st.st_mode, st.st_dev, st.st_ino)
    if listed or not stat.S_ISDIR(st.st_mode):
        found += (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
        except (OSError, ValueError):
            return (*found, -1)
        found += (target.st_mode, target.st_dev, target.st_ino, target.st_size)
        found += (target.st_mtime_ns, target.st_ctime_ns)
    return found


class Recorder:
    """The paths and programs of one build; ``doubtful`` says a read could not be placed (a
    file descriptor relative path, a change of folder): then nothing recorded can be trusted."""

    def __init__(self) -> None:
        self.paths: dict[str, None] = {}
        self.listed: dict[str, None] = {}  # folders listed: new and removed entries matter
        self.written: dict[str, None] = {}  # created, written, renamed or removed by the build
        self.programs: list[list[str]] = []
        self.doubtful: list[str] = []
        self.git_status: tuple[str, list[str], bytes] | None = None  # (cwd, argv, output)

    def _place(self, path: Any) -> str | None:
        if isinstance(path, int) or path is None:
            return None  # an open file descriptor: its path was noted when it was opened
        try:
            text = os.fsdecode(os.fspath(path))
        except (TypeError, ValueError):
            self.doubtful.append(f"unreadable path {type(path).__name__}")
            return None
        return os.path.abspath(text) if text else os.getcwd()

    def note(self, path: Any, *, written: bool = False, listed: bool = False) -> None:
        placed = self._place(path)
        if placed is not None:
            self.paths[placed] = None
            if written:
                self.written[placed] = None
            if listed:
                self.listed[placed] = None


_current: Recorder | None = None
_hooked = False
_quiet: dict[int, int] = {}  # threads inside not_an_input(): how deep
_real_stat = os.stat
_real_lstat = os.lstat


def _audit(event: str, args: tuple[Any, ...]) -> None:
    rec = _current
    if rec is None or (_quiet and _thread.get_ident() in _quiet):
        return
    if event == "open":
        path, mode, flags = (*args, None, None, None)[:3]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) != 0
        )
        rec.note(path, written=writing)
    elif event in ("os.listdir", "os.scandir"):
        rec.note((args[0] if args else None) or ".", listed=True)
    elif event == "sqlite3.connect":
        rec.note(args[0] if args else None)
    elif event in ("os.rename", "os.remove", "os.mkdir", "os.rmdir", "os.unlink"):
        for path in args[:2] if event == "os.rename" else args[:1]:
            rec.note(path, written=True)
    elif event in ("subprocess.Popen", "os.posix_spawn"):  # args: (program, argv, ...)
        argv = args[1]
        rec.programs.append(
            [os.fsdecode(a) for a in (argv if isinstance(argv, list | tuple) else [argv])]
        )
    elif event == "os.chdir":
        rec.doubtful.append("the build changed folder")


def _stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
    rec = _current
    if rec is not None and not (_quiet and _thread.get_ident() in _quiet):
        if kwargs.get("dir_fd") is not None:
            rec.doubtful.append("a stat relative to a folder descriptor")
        rec.note(path)
    return _real_stat(path, *args, **kwargs)


def _lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
    rec = _current
    if rec is not None and not (_quiet and _thread.get_ident() in _quiet):
        if kwargs.get("dir_fd") is not None:
            rec.doubtful.append("an lstat relative to a folder descriptor")
        rec.note(path)
    return _real_lstat(path, *args, **kwargs)


class not_an_input:
    """A block of this thread whose reads no output depends on (listing a folder for the
    temporaries a killed write left behind): not recorded. Blocks nest (an atomic write
    inside a block that is not an input either)."""

    def __enter__(self) -> None:
        ident = _thread.get_ident()
        _quiet[ident] = _quiet.get(ident, 0) + 1

    def __exit__(self, *exc: object) -> None:
        ident = _thread.get_ident()
        depth = _quiet.pop(ident, 1) - 1
        if depth > 0:
            _quiet[ident] = depth


def note_git_status(cwd: str, argv: list[str], output: bytes) -> None:
    """The ``git status`` a recorded build ran (its full argv) and what it printed."""
    rec = _current
    if rec is not None:
        if rec.git_status is not None and rec.git_status[0] != cwd:
            rec.doubtful.append("git status ran in two work trees")
        rec.git_status = (cwd, list(argv), output)


# A ``git status`` the served brief started and could not use (an input changed, or its
# output did): the build that follows in this process takes it instead of walking the tree a
# second time (facts/git.EarlyStatus). (cwd, full argv, time.time_ns() before it started,
# the handle: ``collect() -> (output, ok)`` and ``abandon()``.)
_status_handoff: tuple[str, list[str], int, Any] | None = None


def hand_over_status(cwd: str, argv: list[str], started_ns: int, handle: Any) -> None:
    """Offer a ``git status`` the served path ran (or is running) to the build."""
    global _status_handoff
    _status_handoff = (cwd, list(argv), started_ns, handle)


def take_status() -> tuple[str, list[str], int, Any] | None:
    """The status handed over, once (the taker collects or abandons it), else None."""
    global _status_handoff
    handed, _status_handoff = _status_handoff, None
    return handed


class Watch:
    """Record what the code inside the ``with`` block reads (one recording at a time per
    process; an audit hook cannot be removed, so it stays installed and idle afterwards)."""

    def __enter__(self) -> Recorder:
        global _current, _hooked
        if _current is not None:
            raise RuntimeError("already recording")
        if not _hooked:
            sys.addaudithook(_audit)
            _hooked = True
        rec = Recorder()
        os.stat, os.lstat = _stat, _lstat
        _current = rec
        return rec

    def __exit__(self, *exc: object) -> None:
        global _current
        _current = None
        os.stat, os.lstat = _real_stat, _real_lstat
