"""The state library: every snapshot, brief, verify outcome and ledger attempt as one row of a
SQLite database with an FTS5 index (docs/history.md).

One database per work tree in the user's data directory (``history/<key>.sqlite3``, the key as
for the cache folder), so a clone cannot ship a forged one; in ``.resume-kit/history.sqlite``
only when the person asked (facts/history_place). WAL journal, ``synchronous=NORMAL``:
a kill -9 loses at most the row being written, never the file. Size cap :data:`MAX_BYTES`: when
the file grows past it, the oldest :data:`PRUNE_FRACTION` of the rows go. An append is one line
in the database's journal (facts/history_journal: no ``sqlite3`` on the command's path); every
reader first moves the journal in (:func:`ingest`). Appends fail open: the history never stops
a command or a hook.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from resume_kit.core.typing_light import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

    from resume_kit.infra.paths import Layout

TRACE_ENV = "RESUME_KIT_TRACE"  # a run or agent session passes its trace id to what it starts
# "off": write nothing (a drill's throwaway work tree); "in-repo" / "user-data": where it is
# kept (facts/history_place), over the person's stored choice
OFF_ENV = "RESUME_KIT_HISTORY"
MAX_BYTES = 64 * 1024 * 1024
PRUNE_FRACTION = 0.25
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
CREATE TABLE IF NOT EXISTS ingested (name TEXT PRIMARY KEY);
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


def user_databases() -> list[Path]:
    """The databases in the user's data directory, with those whose records are all still in
    their journal (facts/history_journal)."""
    found: set[Path] = set()
    with contextlib.suppress(OSError):
        for path in history_root().iterdir():
            name, dot, _ = path.name.partition(".sqlite3")
            if dot and name:
                found.add(path.with_name(name + dot))
    return sorted(found)


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
) -> bool:
    """Add one record (to the database's journal); whether it was written (fail open)."""
    if os.environ.get(OFF_ENV) == "off":
        return False
    try:
        import json

        from resume_kit.facts import history_journal
        from resume_kit.facts.history_place import own_db
        from resume_kit.infra.redact import redact

        path = own_db(layout)  # a refused in-repo file: nothing written (fails open)
        record = {
            "at": time.time(),
            "kind": kind,
            "unit": unit,
            "commit_sha": commit,
            "trace": trace_id(trace),
            "signature": signature,
            "passed": None if passed is None else int(passed),
            "root": str(layout.root),
            "text": redact(text[:EXCERPT_CHARS]),  # stored redacted, not only shown so
        }
        line = (json.dumps(record) + "\n").encode("ascii")  # lone surrogates stay escaped
        if history_journal.write(path, line) > history_journal.INGEST_BYTES:
            ingest(path)
        return True
    except Exception:  # the history never stops a command or a hook
        return False


_RECORD_KEYS = ("at", "kind", "unit", "commit_sha", "trace", "signature", "passed", "root", "text")


def ingest(path: Path) -> int:
    """Move the journaled records of the database ``path`` into it (each claimed journal in
    one transaction, remembered by name until its file is gone: a reader stopped halfway
    never adds a record twice); how many rows were added. Readers call it first."""
    import sqlite3

    from resume_kit.facts import history_journal

    claimed = history_journal.claim(path)
    if not claimed:
        return 0
    added = 0
    con = connect(path)
    try:
        for journal in claimed:
            try:
                fd = history_journal.open_claimed(journal)
            except OSError:  # a symlink under that name: never followed, never moved in
                continue
            if fd is None:
                continue  # another reader moved it in
            try:
                try:
                    records = history_journal.read_claimed(fd, journal)
                except history_journal.NotAJournal:
                    continue
                con.execute("BEGIN IMMEDIATE")
                done = con.execute("SELECT 1 FROM ingested WHERE name = ?", (journal.name,))
                if done.fetchone() is None:
                    for record in records:
                        with contextlib.suppress(sqlite3.Error, UnicodeEncodeError):
                            con.execute(
                                f"INSERT INTO records({', '.join(_RECORD_KEYS)})"
                                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [record.get(key) for key in _RECORD_KEYS],
                            )
                            added += 1
                    con.execute("INSERT INTO ingested(name) VALUES (?)", (journal.name,))
                con.execute("COMMIT")
                os.unlink(journal)
                con.execute("DELETE FROM ingested WHERE name = ?", (journal.name,))
            finally:
                os.close(fd)
        if added:
            prune(con, path)
    finally:
        con.close()
    return added


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


def _ingest_quietly(path: Path) -> None:
    """:func:`ingest` for a reader: what cannot be moved in now waits for the next one."""
    with contextlib.suppress(Exception):
        ingest(path)


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
        _ingest_quietly(path)
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
    _ingest_quietly(path)
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
    _ingest_quietly(path)
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
    _ingest_quietly(path)
    if not path.is_file():
        return []
    con = connect(path)
    try:
        return _rows(con.execute(f"SELECT {_COLUMNS} FROM records ORDER BY at, id"))
    finally:
        con.close()
