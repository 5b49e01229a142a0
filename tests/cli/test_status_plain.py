"""status through a pipe prints a plain layout that never clips ids or statuses, whatever
COLUMNS says (issue 16 point 8); status --json holds everything the text shows (point 9)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.conftest import git, run_cli
from tests.helpers_snapshot import conflicting_branches, evidence, write_progress

LONG = "types-boltons-debugutils-with-a-long-name"


def _units(repo: Path) -> None:
    write_progress(
        repo,
        [
            {"id": LONG, "title": ("Type debugutils " * 8).strip(), "status": "in_progress",
             "verify": "true", "notes": "half way through the stubs", "group": "Stubs"},
            {"id": "b", "title": "B", "status": "blocked", "verify": "true",
             "blocked_reason": "waiting for upstream", "group": "Stubs"},
            {"id": "c", "title": "C", "status": "done", "verify": "true",
             "evidence": evidence(repo)},
            {"id": "d", "title": "D", "status": "done", "verify": "true"},
        ],
    )  # fmt: skip


def _rows(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("id "))
    rows = []
    for line in lines[start + 1 :]:
        if line.endswith(":"):
            break
        rows.append(line.split())
    return rows


@pytest.mark.parametrize("columns", ["20", "300"])
def test_piped_status_never_clips_ids_or_statuses(repo: Path, columns: str) -> None:
    _units(repo)
    result = run_cli("status", cwd=repo, env={"COLUMNS": columns})
    assert result.code == 0, result.stderr
    assert "…" not in result.stdout
    header = result.stdout.splitlines()[1]
    assert header.split() == ["id", "status", "evidence", "group", "title"]
    rows = _rows(result.stdout)
    assert [(r[0], r[1]) for r in rows] == [
        (LONG, "in_progress"), ("b", "blocked"), ("c", "done"), ("d", "claimed"),
    ]  # fmt: skip
    assert ("Type debugutils " * 8).strip() in result.stdout  # titles whole too
    assert "blocked:\n  b: waiting for upstream\n" in result.stdout
    assert f"notes:\n  {LONG}: half way through the stubs\n" in result.stdout


@pytest.mark.subprocess
def test_status_into_a_real_pipe_with_narrow_columns(repo: Path) -> None:
    _units(repo)
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", "status"], cwd=repo, capture_output=True,
        text=True, env={**os.environ, "COLUMNS": "20"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert [(r[0], r[1]) for r in _rows(proc.stdout)][:2] == [
        (LONG, "in_progress"),
        ("b", "blocked"),
    ]
    assert "…" not in proc.stdout


@pytest.mark.subprocess
def test_a_terminal_still_gets_the_table_clipped_to_its_width(repo: Path) -> None:
    _units(repo)
    master, replica = pty.openpty()
    fcntl.ioctl(replica, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 110, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "resume_kit", "status"], cwd=repo, stdin=subprocess.DEVNULL,
        stdout=replica, stderr=subprocess.DEVNULL, env={**env, "TERM": "xterm"},
    )  # fmt: skip
    os.close(replica)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=60) == 0
    os.close(master)
    shown = re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode())
    assert LONG in shown and "in_progress" in shown  # facts keep their width
    assert "…" in shown  # the long title is clipped to the terminal
    table = [line for line in shown.splitlines() if "│" in line]
    assert table and max(len(line) for line in table) <= 110
    assert " Stubs " in shown and "(no group)" in shown  # group headings, not a column


def test_status_json_has_everything_the_text_shows(repo: Path) -> None:
    _units(repo)
    data = json.loads(run_cli("status", "--json", cwd=repo).stdout)
    assert data["counts"] == {
        "total": 4, "todo": 0, "in_progress": 1, "done": 2, "blocked": 1, "verified": 1,
        "claimed_done": 1,
    }  # fmt: skip
    assert data["next"] == {
        "id": LONG,
        "title": ("Type debugutils " * 8).strip(),
        "why": "it is in progress",
        "verify": "true",
        "approved": False,  # written by hand: no person approved it here
        "notes": "half way through the stubs",
    }
    assert data["blocked"] == [{"id": "b", "reason": "waiting for upstream"}]
    assert data["units"][0]["group"] == "Stubs"
    workspace = data["workspace"]
    assert workspace["branch"] == "main" and workspace["head"]
    assert workspace["lines"][0].startswith("branch main @ ")
    assert data["operation"] is None
    text = run_cli("status", cwd=repo).stdout
    assert text.rstrip().endswith(data["summary"])
    for line in workspace["lines"]:
        assert f"  {line}\n" in text


def test_status_json_names_the_operation_in_progress(repo: Path) -> None:
    conflicting_branches(repo, "feature")
    git(repo, "checkout", "-q", "feature")
    assert git(repo, "rebase", "main", check=False).returncode != 0
    write_progress(repo, [{"id": "a", "title": "A", "verify": "true"}])
    data = json.loads(run_cli("status", "--json", cwd=repo).stdout)
    operation = data["operation"]
    assert operation["kind"] == "rebase"
    assert operation["about"].startswith("rebasing")
    assert operation["detail"]["kind"] == "rebase"
    assert data["workspace"]["conflicts"] == ["notes.md"]
    assert data["workspace"]["changes"]["conflicted"] == 1
    assert data["next"]["why"] == "it is the first unit still to do"
