"""The state library: real SQLite files in the user's data dir, fed by real commands."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from resume_kit.facts import history_db, history_journal
from tests.conftest import git, run_cli

TRUST = {"RESUME_KIT_TRUST": "all"}
CHECK = 'test -f ok.txt || { echo "FrobError: widget frobnication failed" >&2; exit 1; }'


def _db(repo: Path) -> Path:
    root = repo.resolve()
    return history_db.db_path(str(root), str(root / ".git"))


def _setup(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    assert cli("add", "Widget", "--verify", CHECK).code == 0


def test_a_failure_is_found_with_first_last_unit_commit_and_the_later_pass(
    repo: Path,
    cli,
    isolated_home: Path,  # type: ignore[no-untyped-def]
) -> None:
    _setup(cli, repo)
    cli("verify-next", env=TRUST)
    cli("verify-next", env=TRUST)
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    found = json.loads(cli("history", "search", "frobnication failed", "--json").stdout)
    assert found["matches"] == 2
    assert found["first"]["unit"] == found["last"]["unit"] == "widget"
    assert found["first"]["commit"] == head
    assert found["passed_later"] is False
    (repo / "ok.txt").write_text("")
    assert cli("verify-next", env=TRUST).code == 0
    again = json.loads(cli("history", "search", "frobnication failed", "--json").stdout)
    assert again["passed_later"] is True
    # kept in the user's data dir, WAL, never in the repository
    path = _db(repo)
    assert path.is_relative_to(isolated_home / ".local" / "share" / "resume-kit" / "history")
    assert not list(repo.rglob("*.sqlite3"))
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    shown = cli("history", "show", "widget")
    lines = shown.stdout.splitlines()
    outcomes = [x.split(" verify ")[1].split()[0] for x in lines if " verify " in x]
    assert outcomes == ["failed", "failed", "passed"]


def test_every_kind_is_recorded_with_the_trace_of_its_run(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    _setup(cli, repo)
    env = {**TRUST, history_db.TRACE_ENV: "trace-abc"}
    cli("verify-next", env=env)
    cli("snapshot", env=env)
    cli("brief", env=env)
    cli("action", "record", "deploy-1", "--description", "deployed", env=env)
    shown = json.loads(cli("history", "show", "trace-abc", "--json").stdout)
    kinds = {r["kind"] for r in shown["records"]}
    assert {"verify", "snapshot", "brief", "ledger"} <= kinds
    assert {r["trace"] for r in shown["records"]} == {"trace-abc"}


def test_all_repos_reads_the_other_work_trees(repo: Path, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    git(other, "commit", "-q", "--allow-empty", "-m", "init")
    assert run_cli("init", "--goal", "o", cwd=other).code == 0
    assert run_cli("add", "Zap", "--verify", "echo QuuxFailure >&2; exit 1", cwd=other).code == 0
    run_cli("verify-next", cwd=other, env=TRUST)
    assert cli("init", "--goal", "g").code == 0
    assert cli("history", "search", "QuuxFailure").code == 3
    found = cli("history", "search", "QuuxFailure", "--all-repos", "--json")
    data = json.loads(found.stdout)
    assert data["matches"] == 1 and data["first"]["root"] == str(other.resolve())


def test_a_query_is_data_not_fts_syntax(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    _setup(cli, repo)
    cli("verify-next", env=TRUST)
    for text in ['"', "widget OR NEAR(", "*", "frob' --"]:
        assert cli("history", "search", text).code in (0, 3)


def test_the_size_cap_prunes_the_oldest_rows(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    con = history_db.connect(path)
    for i in range(2000):
        con.execute(
            "INSERT INTO records(at, kind, root, text) VALUES (?, 'verify', '/r', ?)",
            (float(i), f"row {i} " + "x" * 400),
        )
    deleted = history_db.prune(con, path, max_bytes=300_000)
    size = path.stat().st_size
    oldest = con.execute("SELECT min(at) FROM records").fetchone()[0]
    con.close()
    assert deleted > 0 and size <= 300_000
    assert oldest == float(deleted)  # the oldest went first
    assert history_db.search([path], "row 1999")


def test_the_history_folder_is_platformdirs_data_dir() -> None:
    from platformdirs import user_data_dir

    assert (
        history_db.history_root() == Path(user_data_dir("resume-kit", appauthor=False)) / "history"
    )


def test_a_secret_in_a_failure_is_stored_redacted(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    leak = 'echo "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" >&2; exit 1'
    assert cli("add", "Leak", "--verify", leak).code == 0
    assert cli("verify-next", env=TRUST).code == 1
    journaled = history_journal.journal_path(_db(repo)).read_text()
    assert "wJalrXUtnFEMI" not in journaled and "REDACTED" in journaled
    assert history_db.ingest(_db(repo)) >= 1
    stored = "\n".join(
        row[0] for row in sqlite3.connect(_db(repo)).execute("SELECT text FROM records")
    )
    assert "wJalrXUtnFEMI" not in stored and "REDACTED" in stored


def test_the_search_line_names_what_a_record_has_and_leaves_out_what_it_lacks(
    repo: Path,
    cli,
    isolated_home: Path,  # type: ignore[no-untyped-def]
) -> None:
    _setup(cli, repo)
    cli("verify-next", env=TRUST)
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    line = cli("history", "search", "frobnication failed").stdout.splitlines()[0]
    assert line.startswith("1 record; first ")
    assert f"(unit widget, commit {head[:10]})" in line
    assert "None" not in line


WRITER = """
import sys
from pathlib import Path
from resume_kit.facts.history_db import append
from resume_kit.infra.paths import Layout
root, name = Path(sys.argv[1]), sys.argv[2]
layout = Layout(root=root, git_dir=root / ".git", git_common_dir=root / ".git")
for i in range(int(sys.argv[3])):
    assert append(layout, "verify", f"{name} row {i} " + "z" * 3000, unit=name)
"""


def test_an_append_writes_one_journal_line_and_opens_no_database(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    _setup(cli, repo)
    db = _db(repo)
    journal = history_journal.journal_path(db)
    assert cli("verify-next", env=TRUST).code == 1
    assert not db.exists() and journal.stat().st_mode & 0o777 == 0o600
    lines = journal.read_bytes().splitlines()
    assert [json.loads(x)["kind"] for x in lines] == ["verify"]
    found = json.loads(cli("history", "search", "frobnication failed", "--json").stdout)
    assert found["matches"] == 1 and db.is_file() and not journal.exists()


def test_concurrent_writers_and_readers_lose_and_repeat_no_record(
    repo: Path,
    cli,  # type: ignore[no-untyped-def]
) -> None:
    """Four writer processes append while this one keeps moving the journal in (and the
    writers cross the size that makes them move it in too): every record lands once."""
    import subprocess
    import sys

    assert cli("init", "--goal", "g").code == 0
    root = repo.resolve()
    db = _db(repo)
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), f"w{n}", "150"])
        for n in range(4)
    ]
    while any(w.poll() is None for w in writers):
        history_db.ingest(db)
    assert [w.returncode for w in writers] == [0, 0, 0, 0]
    history_db.ingest(db)
    with sqlite3.connect(db) as con:
        texts = [row[0].split(" z")[0] for row in con.execute("SELECT text FROM records")]
    assert sorted(texts) == sorted(f"w{n} row {i}" for n in range(4) for i in range(150))
    assert not [p for p in db.parent.iterdir() if ".pending" in p.name]


def test_a_journal_moved_in_by_a_reader_that_stopped_before_deleting_it_is_not_added_twice(
    repo: Path,
    cli,  # type: ignore[no-untyped-def]
) -> None:
    _setup(cli, repo)
    cli("verify-next", env=TRUST)
    db = _db(repo)
    (claimed,) = history_journal.claim(db)
    records = history_journal.read_claimed(os.open(claimed, os.O_RDONLY), claimed)
    con = history_db.connect(db)  # what a reader killed between its COMMIT and the unlink left
    con.execute(
        "INSERT INTO records(at, kind, unit, root, text) VALUES (?, ?, ?, ?, ?)",
        [records[0][k] for k in ("at", "kind", "unit", "root", "text")],
    )
    con.execute("INSERT INTO ingested(name) VALUES (?)", (claimed.name,))
    con.close()
    assert history_db.ingest(db) == 0 and not claimed.exists()
    assert len(history_db.unit_records(db, "widget")) == 1
    cli("verify-next", env=TRUST)  # the next claim is moved in as usual
    assert len(history_db.unit_records(db, "widget")) == 2
