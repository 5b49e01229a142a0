"""Where a work tree's state library is kept: the user's data directory (the default), or
``.resume-kit/history.sqlite`` when the person asked for it (docs/history.md).

The choice is the person's, never the repository's: it is kept in the user's data directory
(``history/<key>.where``, next to the database) by ``resume-kit history keep``, which refuses
without a terminal, or given by ``RESUME_KIT_HISTORY=in-repo`` (``user-data``: the default; both
win over the stored choice). A database file that came with a clone is never opened unless the
person chose in-repo; the in-repo file, its ``-wal``/``-shm`` and its journal (``.pending``)
must be regular files or absent
(a symlink, FIFO or device is refused with one line), under a ``.resume-kit/`` with no symlink.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from resume_kit.core.typing_light import TYPE_CHECKING
from resume_kit.infra.errors import ResumeKitError

if TYPE_CHECKING:
    from resume_kit.infra.paths import Layout

IN_REPO = "in-repo"
USER_DATA = "user-data"
PLACES = (IN_REPO, USER_DATA)
IN_REPO_NAME = "history.sqlite"
# SQLite's database, write-ahead log and shared memory, and the journal of records not yet in
# the database (facts/history_journal)
SIDE_FILES = ("", "-wal", "-shm", ".pending")


def _user_db(layout: Layout) -> Path:
    from resume_kit.facts.history_db import db_path

    return db_path(str(layout.root), str(layout.git_common_dir))


def choice_file(layout: Layout) -> Path:
    db = _user_db(layout)
    return db.with_name(db.stem + ".where")


def stored_choice(layout: Layout) -> str:
    """The place the person chose with ``history keep`` (``user-data`` when never asked)."""
    return _choice_of(choice_file(layout))


def place(layout: Layout) -> str:
    """``in-repo`` or ``user-data``: ``RESUME_KIT_HISTORY`` when it names one, else the choice."""
    from resume_kit.facts.history_db import OFF_ENV

    given = os.environ.get(OFF_ENV, "").strip().lower()
    return given if given in PLACES else stored_choice(layout)


def in_repo_db(layout: Layout) -> Path:
    """``.resume-kit/history.sqlite``, checked: raises :class:`ResumeKitError` (one line) when
    it, its ``-wal``, ``-shm`` or journal is anything but a regular file or absent, or a folder
    on the way is a symlink."""
    path = layout._state(IN_REPO_NAME)  # no symlink on the way, nor the file itself
    _check_regular(layout, path)
    return path


def _check_regular(layout: Layout | None, path: Path) -> None:
    for suffix in SIDE_FILES:
        side = path.with_name(path.name + suffix)
        try:
            mode = os.lstat(side).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(mode):
            shown = layout.rel(side) if layout is not None else str(side)
            raise ResumeKitError(
                f"{shown} is not a regular file: the history is not kept there",
                hint="remove it (it may have come with the clone), or "
                "`resume-kit history keep user-data`",
            )


def _choice_of(choice: Path) -> str:
    try:
        with open(choice, encoding="utf-8") as handle:
            text = handle.read(64).split("\n", 1)[0].strip()
    except (OSError, UnicodeDecodeError):
        return USER_DATA
    return text if text in PLACES else USER_DATA


def superseded(db: Path) -> bool:
    """Whether a database in the data directory belongs to a work tree kept in-repo now (it
    is the copy left behind: ``--all-repos`` reads the in-repo one instead)."""
    return _choice_of(db.with_name(db.stem + ".where")) == IN_REPO


def other_in_repo_dbs() -> list[Path]:
    """The in-repo databases of the work trees whose person chose in-repo (for
    ``--all-repos``), each checked as :func:`in_repo_db` does; the ones refused are skipped."""
    from resume_kit.facts.history_db import history_root
    from resume_kit.facts.history_journal import journal_path
    from resume_kit.infra.safefs import contained

    found: list[Path] = []
    try:
        choices = sorted(history_root().glob("*.where"))
    except OSError:
        return found
    for choice in choices:
        try:
            lines = choice.read_text(encoding="utf-8")[:4096].splitlines()
            if len(lines) < 2 or lines[0] != IN_REPO or not os.path.isabs(lines[1]):
                continue
            path = contained(Path(lines[1]), f".resume-kit/{IN_REPO_NAME}")
            _check_regular(None, path)
        except (OSError, UnicodeDecodeError, ResumeKitError):
            continue
        if path.is_file() or os.path.lexists(journal_path(path)):
            found.append(path)
    return found


def own_db(layout: Layout) -> Path:
    """The database this work tree's history is written to and read from."""
    return in_repo_db(layout) if place(layout) == IN_REPO else _user_db(layout)


def keep(layout: Layout, where: str) -> list[str]:
    """Move the history to ``where`` and record the choice; what happened, as lines.

    To in-repo: refused when ``.resume-kit/history.sqlite`` already exists (it may be a
    stranger's, from the clone); the records so far are copied there (SQLite's backup), the
    copy in the data directory is left as it was. Back to the data directory: the in-repo
    database (which holds everything since the copy) replaces the data directory's, and the
    in-repo files are left for the person to delete."""
    from resume_kit.infra.store import ensure_gitignore

    if where not in PLACES:
        raise ResumeKitError(f"unknown place {where!r}", hint="use in-repo or user-data")
    current = stored_choice(layout)
    user = _user_db(layout)
    lines: list[str] = []
    if where == current:
        lines.append(f"the history is already kept in {_name(layout, where)}")
    elif where == IN_REPO:
        target = in_repo_db(layout)
        # the database, its side files, a journal a reader claimed: any of them is a stranger's
        present = (
            sorted(p for p in target.parent.iterdir() if p.name.startswith(target.name))
            if target.parent.is_dir()
            else []
        )
        if present:
            raise ResumeKitError(
                f"{layout.rel(present[0])} already exists and was not made here for you: not used",
                hint="move it away (it may have come with the clone), then ask again",
            )
        ensure_gitignore(layout)  # never committed
        copied = _copy(user, target)
        lines.append(
            f"the history is now kept in {layout.rel(target)}"
            + (f" ({copied} records copied from {user}, left there as they were)" if copied else "")
        )
    else:
        try:
            source = in_repo_db(layout)
        except ResumeKitError:  # a symlink or FIFO there now: go back, copy nothing from it
            source = None
        copied = _copy(source, user) if source is not None and source.is_file() else 0
        lines.append(
            f"the history is now kept in {user}"
            + (
                f" ({copied} records copied from {layout.rel(source)}, which you may delete)"
                if copied and source is not None
                else ""
            )
        )
    _write_choice(layout, where)
    return lines


def _name(layout: Layout, where: str) -> str:
    return f".resume-kit/{IN_REPO_NAME}" if where == IN_REPO else str(_user_db(layout))


def _copy(source: Path, target: Path) -> int:
    """``source``'s records into a new ``target`` (SQLite's online backup: consistent even
    while another process appends); how many records were copied."""
    import sqlite3

    from resume_kit.facts.history_db import connect, ingest

    ingest(source)  # the records still in its journal go with it
    if not source.is_file():
        return 0
    src = sqlite3.connect(str(source), timeout=5.0)
    try:
        dst = connect(target)
        try:
            src.backup(dst)
            (count,) = dst.execute("SELECT count(*) FROM records").fetchone()
            return int(count)
        finally:
            dst.close()
    finally:
        src.close()


def _write_choice(layout: Layout, where: str) -> None:
    from resume_kit.infra.store import atomic_write

    path = choice_file(layout)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(path, f"{where}\n{layout.root}\n")  # the root: for --all-repos
