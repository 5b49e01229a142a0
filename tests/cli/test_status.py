"""`status` (and `snapshot`) through the real CLI on real repositories, including the issue's
"done when": a rebase stopped on a conflict, a dirty tree, a failing pytest test, and a done
unit whose file was edited after it was verified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import git, run_cli
from tests.helpers_snapshot import commit_file, conflicting_branches, evidence, write_progress


def _rebase_stopped_on_a_conflict(repo: Path) -> None:
    conflicting_branches(repo, "feature")
    git(repo, "checkout", "-q", "feature")
    assert git(repo, "rebase", "main", check=False).returncode != 0


def test_done_when_rebase_dirty_tree_failing_test_and_edited_done_unit(repo: Path) -> None:
    commit_file(repo, "src/calc.py", "def add(a, b):\n    return a + b\n")
    commit_file(
        repo,
        "tests/test_calc.py",
        "import sys\nsys.path.insert(0, 'src')\nfrom calc import add\n\n\n"
        "def test_add():\n    assert add(2, 2) == 4\n",
    )
    (repo / ".gitignore").write_text(".pytest_cache/\n__pycache__/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore caches")
    write_progress(
        repo,
        [
            {
                "id": "calc",
                "title": "Add numbers",
                "status": "done",
                "verify": "python -m pytest -q tests/test_calc.py",
                "files": ["src/calc.py"],
                "evidence": evidence(repo, ["src/calc.py"], hours_ago=3),
            },
            {"id": "docs", "title": "Write the notes", "verify": "test -s notes.md"},
        ],
    )
    _rebase_stopped_on_a_conflict(repo)
    # after the stop: the done unit's file is edited, which breaks its test; plus a stray file
    (repo / "src/calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "scratch.txt").write_text("todo\n")
    pytest_run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "tests/test_calc.py"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert pytest_run.returncode == 1, pytest_run.stdout

    snap = run_cli("snapshot", "--json", cwd=repo)
    assert snap.code == 0, snap.stderr
    data = json.loads(snap.stdout)
    assert data["repo"]["operation"] == "rebase"
    assert [c["path"] for c in data["repo"]["conflicts"]] == ["notes.md"]
    assert (
        data["changes"]["counts"]["unstaged"] >= 1 and data["changes"]["counts"]["untracked"] >= 1
    )
    assert data["tests"]["pytest_last_failed"] == ["tests/test_calc.py::test_add"]

    text = run_cli("snapshot", cwd=repo)
    assert text.code == 0, text.stderr
    for fact in (
        "rebase in progress",
        "1 conflicted: notes.md",
        "uncommitted changes",
        "scratch.txt",
        "src/calc.py",
        "1 failing test ",
        "tests/test_calc.py::test_add",
    ):
        assert fact in text.stdout, (fact, text.stdout)

    status = run_cli("status", "--json", cwd=repo)
    assert status.code == 0, status.stderr
    found = {(f["code"], f["unit"]) for f in json.loads(status.stdout)["findings"]}
    assert {
        ("OPERATION_IN_PROGRESS", None),
        ("CONFLICTS", None),
        ("TESTS_FAILING", None),
        ("DONE_BUT_CHANGED", "calc"),
    } <= found

    human = run_cli("status", cwd=repo)
    assert human.code == 0, human.stderr
    out = human.stdout
    for fact in (
        "rebase in progress",
        "notes.md",
        "uncommitted changes",
        "tests/test_calc.py::test_add",
        "DONE_BUT_CHANGED",
        "calc: its files changed",
        "verify-next --unit calc",  # its edit is uncommitted (issue 14.4)
        "3 h ago",
        "git rebase --continue",
    ):
        assert fact in out, (fact, out)


def test_status_json_shape_and_no_writes(repo: Path) -> None:
    progress = write_progress(
        repo,
        [
            {
                "id": "a",
                "title": "A",
                "status": "done",
                "verify": "true",
                "evidence": evidence(repo),
            },
            {"id": "b", "title": "B", "verify": "true", "after": ["a"]},
        ],
        actions=[{"key": "k", "description": "mail", "status": "unknown"}],
    )
    progress.write_text("# my comment\n" + progress.read_text())
    before = progress.read_bytes()
    result = run_cli("status", "--json", cwd=repo)
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data) == [
        "schema_version", "goal", "units", "findings", "counts", "next", "blocked", "workspace",
        "operation", "summary",
    ]  # fmt: skip
    assert data["schema_version"] == 2 and data["goal"] == "Finish the task"
    assert [u["id"] for u in data["units"]] == ["a", "b"]
    assert data["units"][0]["evidence"]["commit"] and data["units"][1]["after"] == ["a"]
    assert data["findings"] == [
        {
            "code": "SIDE_EFFECT_UNKNOWN",
            "severity": "warn",
            "unit": None,
            "message": data["findings"][0]["message"],
        }
    ]
    assert progress.read_bytes() == before
    state = repo / ".resume-kit"
    assert not (state / "history").exists() and not (state / "snapshots").exists()


def test_status_with_an_invalid_progress_file_exits_2_with_file_and_line(repo: Path) -> None:
    (repo / ".resume-kit").mkdir()
    path = repo / ".resume-kit/progress.yaml"
    path.write_text(
        "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    title: A\n    verify: true\n"
    )
    before = path.read_bytes()
    result = run_cli("status", cwd=repo)
    assert result.code == 2
    assert "progress.yaml:6" in result.stderr and "quote" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert path.read_bytes() == before


def test_status_without_a_progress_file_says_how_to_start(repo: Path) -> None:
    result = run_cli("status", cwd=repo)
    assert result.code == 2 and "resume-kit init" in result.stderr


def test_many_units_collapse_into_ranges(repo: Path) -> None:
    units = [
        {
            "id": f"doc-{i:03d}",
            "title": f"Doc {i}",
            "status": "done",
            "verify": "true",
            "evidence": evidence(repo, hours_ago=1),
        }
        for i in range(1, 101)
    ]
    units[41]["evidence"]["commit"] = "0" * 40  # not in history: must get its own row
    units += [
        {"id": f"doc-{i:03d}", "title": f"Doc {i}", "verify": "true"} for i in range(101, 151)
    ]
    units[100]["status"] = "in_progress"
    write_progress(repo, units)
    result = run_cli("status", cwd=repo)
    assert result.code == 0, result.stderr
    out = result.stdout
    assert "doc-001 … doc-041" in out and "41 units" in out
    assert "doc-042" in out and "EVIDENCE_NOT_IN_HISTORY" in out
    assert "doc-043 … doc-100" in out
    assert "doc-101" in out and "in_progress" in out
    assert "doc-102 … doc-150" in out
    assert "doc-077" not in out
    assert len(out.splitlines()) < 40
    assert "100/150 done · 1 in progress · 49 to do" in out and "next: doc-101" in out


def test_small_status_lists_every_unit_with_age_and_failure(repo: Path) -> None:
    sha = git(repo, "rev-parse", "HEAD").stdout.strip()
    write_progress(
        repo,
        [
            {
                "id": "one",
                "title": "First [bold]x",
                "status": "done",
                "verify": "true",
                "evidence": evidence(repo, hours_ago=5),
            },
            {
                "id": "two",
                "title": "Second",
                "status": "in_progress",
                "verify": "false",
                "last_failure": {
                    "at": "2026-11-29T08:00:00Z",
                    "exit_code": 1,
                    "signature": "s",
                    "repeats": 2,
                    "excerpt": "AssertionError: 3 != 4",
                },
            },
        ],
    )
    result = run_cli("status", cwd=repo, env={"COLUMNS": "120"})
    assert result.code == 0, result.stderr
    out = result.stdout
    assert "First [bold]" in out  # titles are data, not markup
    assert f"5 h ago · {sha[:7]}" in out
    assert "2x exit 1: AssertionError: 3 != 4" in out
    assert "working tree clean" in out or "uncommitted changes" in out
    assert "1/2 done · 1 in progress" in out and "no findings" in out
