"""The state library: every snapshot, brief, verify outcome and ledger attempt as one row of a
SQLite database with an FTS5 index (docs/history.md).

One database per work tree in the user's data directory (``history/<key>.sqlite3``, the key as
for the cache folder), so a clone cannot ship a forged one; in ``.resume-kit/history.sqlite``
only when the person asked (facts/history_place). WAL journal, ``synchronous=NORMAL``:
a kill -9 loses at most the row being written, never the file. Size cap :data:`MAX_BYTES`: when
the file grows past it, the oldest :data:`PRUNE_FRACTION` of the rows go. An append is one
INSERT (the FTS index follows by trigger); ``sqlite3`` is imported only when a row is written.
Appends fail open: the history never stops a command or a hook.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

    from resume_kit.infra.paths import Layout

TRACE_ENV = "RESUME_KIT_TRACE"  # a run or agent session passes its trace id to what it starts
# "off": write nothing (a drill's throwaway work tree); "in-repo" / "user-data": where it is
# kept (facts/history_place), over the person's stored choice
OFF_ENV = "RESUME_KIT_HISTORY"
MAX_BYTES = 64 * 1024 * 1024
PRUNE_FRACTION = 0.25
PRUNE_EVERY = 200  # rows between two size checks
EXCERPT_CHARS = 4000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    unit TEXT,
    commit_sha TEXT,
    trace TEXT,
    signature TEXT,
    passed INTEGER,
    root TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_unit ON records(unit, at);
CREATE INDEX IF NOT EXISTS records_trace ON records(trace);
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
    text, unit, kind, content='records', content_rowid='id'
);
CREATE TRIGGER IF NOT EXISTS records_ai AFTER INSERT ON records BEGIN
    INSERT INTO records_fts(rowid, text, unit, kind) VALUES (new.id, new.text, new.unit, new.kind);
END;
CREATE TRIGGER IF NOT EXISTS records_ad AFTER DELETE ON records BEGIN
    INSERT INTO records_fts(records_fts, rowid, text, unit, kind)
    VALUES ('delete', old.id, old.text, old.unit, old.kind);
END;
"""
_TRACE: dict[str, str] = {}  # this process's trace id, made once


def trace_id(session: str | None = None) -> str:
    """The one trace id rule: the one this process was started with (``RESUME_KIT_TRACE``, set
    by ``drill`` or by the person), else the agent session id a hook gave (``session``), else
    one made once for this process (so all units of one ``run`` share it)."""
    given = os.environ.get(TRACE_ENV, "").strip()
    if given:
        return _clean_trace(given)
    if session and session.strip():
        return _clean_trace(session)
    if "id" not in _TRACE:
        _TRACE["id"] = os.urandom(6).hex()
    return _TRACE["id"]


def _clean_trace(text: str) -> str:
    """At most 64 printable characters, no spaces (it goes into a log's header line)."""
    return "".join(c for c in text.strip() if c.isprintable() and not c.isspace())[:64] or "-"


def history_root() -> Path:
    """``platformdirs.user_data_dir("resume-kit")/history``, without importing platformdirs on
    Linux and macOS (it costs milliseconds on the snapshot path)."""
    import sys

    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_DATA_HOME", "").strip() or os.path.expanduser("~/.local/share")
        return Path(base) / "resume-kit" / "history"
    if sys.platform == "darwin":
        return Path(os.path.expanduser("~/Library/Application Support/resume-kit/history"))
    from platformdirs import user_data_dir

    return Path(user_data_dir("resume-kit", appauthor=False)) / "history"


def db_path(root: str, git_common_dir: str) -> Path:
    from resume_kit.core.digest import sha256_hex

    key = sha256_hex(f"{root}\0{git_common_dir}".encode("utf-8", "surrogateescape"))[:32]
    return history_root() / f"{key}.sqlite3"


def connect(path: Path) -> sqlite3.Connection:
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    con = sqlite3.connect(str(path), timeout=5.0, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.executescript(_SCHEMA)
    return con


def append(
    layout: Layout,
    kind: str,
    text: str,
    *,
    unit: str | None = None,
    commit: str | None = None,
    signature: str | None = None,
    passed: bool | None = None,
    trace: str | None = None,
) -> int | None:
    """Add one record; its id, or None when the history could not be written (fail open)."""
    if os.environ.get(OFF_ENV) == "off":
        return None
    try:
        from resume_kit.facts.history_place import own_db
        from resume_kit.infra.redact import redact

        path = own_db(layout)  # a refused in-repo file: nothing written (fails open)
        shared = _SHARED.get(_thread_key())
        con = shared.get(path) if shared is not None else None
        if con is None:
            con = connect(path)
            if shared is not None:
                shared[path] = con
        try:
            cur = con.execute(
                "INSERT INTO records(at, kind, unit, commit_sha, trace, signature, passed, root,"
                " text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    kind,
                    unit,
                    commit,
                    trace_id(trace),
                    signature,
                    None if passed is None else int(passed),
                    str(layout.root),
                    redact(text[:EXCERPT_CHARS]),  # stored redacted, not only shown so
                ),
            )
            row = cur.lastrowid
            if row is not None and row % PRUNE_EVERY == 0:
                prune(con, path)
            return row
        finally:
            if shared is None:
                con.close()
    except Exception:  # the history never stops a command or a hook
        return None


# Connections kept open inside one_connection(), per thread (a sqlite3 connection stays in its
# thread) and file.
_SHARED: dict[tuple[int, int], dict[Path, sqlite3.Connection]] = {}


def _thread_key() -> tuple[int, int]:
    import _thread

    return os.getpid(), _thread.get_ident()


@contextlib.contextmanager
def one_connection() -> Iterator[None]:
    """Appends of this thread inside the block share one connection per file, closed when it
    ends: closing a connection checkpoints the WAL (an fsync), and a brief appends twice (its
    snapshot, itself)."""
    key = _thread_key()
    if key in _SHARED:  # nested: the outer block closes them
        yield
        return
    _SHARED[key] = {}
    try:
        yield
    finally:
        for con in _SHARED.pop(key).values():
            with contextlib.suppress(Exception):
                con.close()


def prune(con: sqlite3.Connection, path: Path, max_bytes: int = MAX_BYTES) -> int:
    """Delete the oldest :data:`PRUNE_FRACTION` of the rows while the file is over the cap."""
    deleted = 0
    for _ in range(8):
        size = path.stat().st_size + _wal_size(path)
        if size <= max_bytes:
            break
        (count,) = con.execute("SELECT count(*) FROM records").fetchone()
        drop = max(1, int(count * PRUNE_FRACTION))
        con.execute(
            "DELETE FROM records WHERE id IN (SELECT id FROM records ORDER BY id LIMIT ?)", (drop,)
        )
        deleted += drop
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("VACUUM")
    return deleted


def _wal_size(path: Path) -> int:
    try:
        return path.with_name(path.name + "-wal").stat().st_size
    except OSError:
        return 0


_COLUMNS = "id, at, kind, unit, commit_sha, trace, signature, passed, root, text"


def _rows(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def fts_query(text: str) -> str:
    """``text`` as an FTS5 phrase (every word, in order; quotes doubled): user text is data."""
    return '"' + text.replace('"', '""') + '"'


def search(paths: list[Path], text: str, limit: int = 200) -> list[dict[str, Any]]:
    """Records matching ``text`` in the databases ``paths``, oldest first."""
    found: list[dict[str, Any]] = []
    for path in paths:
        if not path.is_file():
            continue
        con = connect(path)
        try:
            cur = con.execute(
                f"SELECT {', '.join('r.' + c for c in _COLUMNS.split(', '))} FROM records_fts"
                " JOIN records r ON r.id = records_fts.rowid WHERE records_fts MATCH ?"
                " ORDER BY r.at LIMIT ?",
                (fts_query(text), limit),
            )
            found += [dict(row, db=str(path)) for row in _rows(cur)]
        finally:
            con.close()
    return sorted(found, key=lambda r: r["at"])


def unit_records(path: Path, ident: str) -> list[dict[str, Any]]:
    """Every record of unit ``ident``, or of trace ``ident`` when no unit has that id."""
    if not path.is_file():
        return []
    con = connect(path)
    try:
        rows = _rows(
            con.execute(f"SELECT {_COLUMNS} FROM records WHERE unit = ? ORDER BY at, id", (ident,))
        )
        if not rows:
            rows = _rows(
                con.execute(
                    f"SELECT {_COLUMNS} FROM records WHERE trace = ? ORDER BY at, id", (ident,)
                )
            )
        return rows
    finally:
        con.close()


def later_pass(path: Path, unit: str | None, after: float) -> bool:
    if unit is None or not path.is_file():
        return False
    con = connect(path)
    try:
        row = con.execute(
            "SELECT 1 FROM records WHERE unit = ? AND kind = 'verify' AND passed = 1 AND at > ?",
            (unit, after),
        ).fetchone()
        return row is not None
    finally:
        con.close()


def all_records(path: Path) -> list[dict[str, Any]]:
    """Every record, oldest first (the timeline)."""
    if not path.is_file():
        return []
    con = connect(path)
    try:
        return _rows(con.execute(f"SELECT {_COLUMNS} FROM records ORDER BY at, id"))
    finally:
        con.close()
