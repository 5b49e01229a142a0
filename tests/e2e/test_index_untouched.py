"""resume-kit never writes the repository's index: a user's git command running at the same
moment (the post-commit hook's snapshot runs beside the user's next `git add`) would fail on
index.lock. `git diff` rewrites the index to record the stat of files whose stat changed but
not their content, with optional locks off or not; resume-kit's diffs switch that off
(infra/gitcmd._NO_INDEX_WRITE)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git


def _index(repo: Path) -> tuple[int, int, bytes]:
    index = repo / ".git" / "index"
    info = os.stat(index)
    return info.st_ino, info.st_mtime_ns, index.read_bytes()


def _stat_changed(repo: Path) -> None:
    """a.py's content changes; b.py's stat only (a new mtime, the same bytes)."""
    (repo / "a.py").write_text("A = 2\n")
    later = os.stat(repo / "b.py").st_mtime + 5
    os.utime(repo / "b.py", (later, later))


@pytest.fixture
def tracked(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "Leave the index alone").code == 0
    (repo / "a.py").write_text("A = 1\n")
    (repo / "b.py").write_text("B = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    return repo


def test_git_s_own_diff_rewrites_the_index_here(tracked: Path) -> None:
    """The case is real: plain `git --no-optional-locks diff` rewrites this index."""
    _stat_changed(tracked)
    before = _index(tracked)
    subprocess.run(
        ["git", "--no-optional-locks", "diff", "--numstat"], cwd=tracked, check=True,
        capture_output=True,
    )  # fmt: skip
    assert _index(tracked)[:2] != before[:2]


@pytest.mark.parametrize("args", [("status",), ("snapshot",), ("brief",)])
def test_status_snapshot_and_brief_leave_the_index_as_it_was(tracked: Path, cli, args) -> None:  # type: ignore[no-untyped-def]
    _stat_changed(tracked)
    before = _index(tracked)
    result = cli(*args)
    assert result.code == 0, result.stderr
    assert _index(tracked) == before
    if args == ("snapshot",):  # the diff still counted a.py's lines, and b.py is no change
        newest = max((tracked / ".resume-kit" / "snapshots").glob("*.json"), key=os.path.getmtime)
        unstaged = json.loads(newest.read_text())["changes"]["unstaged"]
        assert [(c["path"], c["added"], c["deleted"]) for c in unstaged] == [("a.py", 1, 1)]
