"""The state library survives a kill -9 in the middle of its writes (real process, real file)."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from resume_kit.facts import history_db
from resume_kit.infra.paths import Layout

pytestmark = pytest.mark.subprocess

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from resume_kit.facts.history_db import append
    from resume_kit.infra.paths import Layout
    root = Path(sys.argv[1])
    layout = Layout(root=root, git_dir=root / ".git", git_common_dir=root / ".git")
    i = 0
    while True:
        append(layout, "verify", f"KillNine row {i} " + "y" * 2000, unit="u", passed=False)
        i += 1
    """
)


def test_a_kill_9_during_writes_leaves_a_sound_database(tmp_path: Path) -> None:
    root = tmp_path / "wt"
    root.mkdir()
    layout = Layout(root=root, git_dir=root / ".git", git_common_dir=root / ".git")
    path = history_db.db_path(str(root), str(root / ".git"))
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(root)])
    try:
        rows, give_up = 0, time.monotonic() + 60  # a bound against a hang, not a timing
        while rows < 300:  # the event: the writer has committed 300 rows
            assert proc.poll() is None and time.monotonic() < give_up
            with (
                contextlib.suppress(sqlite3.Error),
                contextlib.closing(sqlite3.connect(path, timeout=5)) as con,
            ):
                rows = con.execute("SELECT count(*) FROM records").fetchone()[0]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("INSERT INTO records_fts(records_fts) VALUES('integrity-check')")
        count = con.execute("SELECT count(*) FROM records").fetchone()[0]
    assert count >= 300
    assert history_db.append(layout, "verify", "after the crash AfterCrash", unit="u")
    assert [r["text"] for r in history_db.search([path], "AfterCrash")] == [
        "after the crash AfterCrash"
    ]
    assert len(history_db.search([path], "KillNine")) == min(count, 200)
    with sqlite3.connect(path) as con:  # the journal moved in whatever the kill interrupted
        assert con.execute("SELECT count(*) - count(DISTINCT text) FROM records").fetchone() == (0,)
