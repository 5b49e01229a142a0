"""The evidence's dirty flag stops at the first changed entry outside .resume-kit/: the same
answer as reading git's whole status, in real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from resume_kit.facts.git import parse_status_v2
from resume_kit.infra.gitcmd import run_git_bytes
from resume_kit.runner.verify import head_and_dirty
from tests.conftest import git


def whole_status(root: Path) -> tuple[str | None, bool]:
    """The flag as it was computed before: every entry parsed, then looked at."""
    _, out, _ = run_git_bytes(
        root, "status", "--porcelain=v2", "-z", "-uno", "--branch", check=False
    )
    status = parse_status_v2(out)

    def outside(path: str | None) -> bool:
        return path is not None and path != ".resume-kit" and not path.startswith(".resume-kit/")

    dirty = any(
        outside(e.get("path")) or outside(e.get("orig_path"))
        for e in status["entries"]
        if e["kind"] in ("1", "2", "u")
    )
    return status["oid"], dirty


def _commit_state_file(repo: Path) -> None:
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit" / "progress.yaml").write_text("x\n")
    (repo / "src.py").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "state")


CHANGES = {
    "clean": lambda r: None,
    "untracked only": lambda r: (r / "new.py").write_text("n\n"),
    "state file changed": lambda r: (r / ".resume-kit" / "progress.yaml").write_text("y\n"),
    "work tree change": lambda r: (r / "src.py").write_text("b\n"),
    "staged change": lambda r: ((r / "src.py").write_text("b\n"), git(r, "add", "src.py")),
    "staged then reverted": lambda r: (
        (r / "src.py").write_text("b\n"),
        git(r, "add", "src.py"),
        (r / "src.py").write_text("a\n"),
    ),
    "renamed into the state folder": lambda r: git(r, "mv", "src.py", ".resume-kit/src.py"),
    "renamed out of the state folder": lambda r: git(
        r, "mv", ".resume-kit/progress.yaml", "progress.yaml"
    ),
    "state change then outside": lambda r: (
        (r / ".resume-kit" / "progress.yaml").write_text("y\n"),
        (r / "src.py").write_text("b\n"),
    ),
    "deleted": lambda r: (r / "src.py").unlink(),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_the_dirty_flag_is_what_the_whole_status_says(repo: Path, change: str) -> None:
    _commit_state_file(repo)
    CHANGES[change](repo)
    expected = whole_status(repo)
    assert head_and_dirty(repo) == expected
    # a big index is asked in steps (diff --cached HEAD, then diff): the same answer
    assert head_and_dirty(repo, repo / ".git", split_above=0) == expected
    assert expected[1] == (
        change not in ("clean", "untracked only", "state file changed")
    )  # the cases differ


def test_before_the_first_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("a\n")
    git(tmp_path, "add", "a.py")
    assert head_and_dirty(tmp_path) == whole_status(tmp_path) == (None, True)
    git_dir = tmp_path / ".git"
    assert head_and_dirty(tmp_path, git_dir, split_above=0) == (None, True)  # status decides


def test_literal_pathspecs_in_the_environment_change_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stepped check excludes .resume-kit/ with pathspec magic, which
    GIT_LITERAL_PATHSPECS would turn into a file name: our git commands run without it."""
    _commit_state_file(repo)
    CHANGES["state file changed"](repo)
    monkeypatch.setenv("GIT_LITERAL_PATHSPECS", "1")
    head = whole_status(repo)[0]
    assert head_and_dirty(repo, repo / ".git", split_above=0) == (head, False)
