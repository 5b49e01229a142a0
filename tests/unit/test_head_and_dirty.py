"""The evidence's dirty flag stops at the first changed entry outside .resume-kit/: the same
answer as reading git's whole status, in real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.facts.git import parse_status_v2
from resume_kit.infra.gitcmd import run_git_bytes
from resume_kit.runner.verify import MAX_OWNED_PATHSPECS, head_and_dirty, owned_pathspecs
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
    # the stat changed, not the contents: clean, though `git diff --quiet` run without
    # rewriting the index (infra/gitcmd.py) calls it changed
    "touched only": lambda r: _later_mtime(r / "src.py"),
    "edited and put back": lambda r: (
        (r / "src.py").write_text("b\n"),
        (r / "src.py").write_text("a\n"),
        _later_mtime(r / "src.py"),
    ),
    "made executable": lambda r: (r / "src.py").chmod(0o755),
}
UNCHANGED = ("clean", "untracked only", "state file changed", "touched only", "edited and put back")


def _later_mtime(path: Path) -> None:
    """``path``'s mtime 10 s later than now: past what the index recorded, never racy."""
    import os
    import time

    later = time.time() + 10
    os.utime(path, (later, later))


@pytest.mark.parametrize("change", list(CHANGES))
def test_the_dirty_flag_is_what_the_whole_status_says(repo: Path, change: str) -> None:
    _commit_state_file(repo)
    CHANGES[change](repo)
    expected = whole_status(repo)
    assert head_and_dirty(repo) == expected
    # a big index is asked in steps (diff --cached HEAD, then status): the same answer
    assert head_and_dirty(repo, repo / ".git", split_above=0) == expected
    assert expected[1] == (change not in UNCHANGED)  # the cases differ


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


# --------------------------------------------------------------------------- the unit's own paths

OWNED = {
    "the changed file": (["src.py"], []),
    "a glob over it (left out)": (["*.py"], []),
    "as an artifact": ([], ["src.py"]),
    "paths that match nothing": (["nothing/**/here.py"], ["out/none.json"]),
    "text that looks like magic or an option": ([":(exclude)src.py", "-rf", "*"], [":(glob)*"]),
    "paths outside the work tree": (["../../**", "/etc/passwd"], ["../outside.json"]),
    "the state folder": ([".resume-kit/**"], [".resume-kit/progress.yaml"]),
}


@pytest.mark.parametrize("owned", list(OWNED))
@pytest.mark.parametrize("change", list(CHANGES))
def test_the_unit_s_own_paths_change_no_answer(repo: Path, change: str, owned: str) -> None:
    """Diffed alone while the whole work tree's status runs: whatever a unit lists, the flag
    is what the whole status says."""
    _commit_state_file(repo)
    CHANGES[change](repo)
    files, artifacts = OWNED[owned]
    asked = head_and_dirty(repo, repo / ".git", split_above=0, files=files, artifacts=artifacts)
    assert asked == whole_status(repo)


# Lone surrogates included: YAML's "\ud800" escape gives one, and no argument can hold it.
ANY_CHARACTER = st.characters(blacklist_categories=())


@settings(max_examples=40, deadline=None)
@given(
    files=st.lists(st.text(ANY_CHARACTER, max_size=12), max_size=4),
    artifacts=st.lists(st.text(ANY_CHARACTER, max_size=12), max_size=3),
    edited=st.booleans(),
)
def test_any_text_a_unit_lists_leaves_the_flag_exact(
    tmp_path_factory: pytest.TempPathFactory, files: list[str], artifacts: list[str], edited: bool
) -> None:
    """progress.yaml's text goes to git only behind our own pathspec magic: any of it (NULs,
    magic, options, newlines, globs, lone surrogates) still gives the whole status's answer,
    never an error."""
    repo = tmp_path_factory.mktemp("owned")
    git(repo, "init", "-q", "-b", "main")
    _commit_state_file(repo)
    if edited:
        CHANGES["work tree change"](repo)
    specs = owned_pathspecs(files, artifacts)
    assert len(specs) <= MAX_OWNED_PATHSPECS
    assert all(spec.startswith(":(top,literal)") for spec in specs)
    asked = head_and_dirty(repo, repo / ".git", split_above=0, files=files, artifacts=artifacts)
    assert asked == whole_status(repo)


# The whole work tree's status waits until the test lets it go; every other git runs as usual.
BLOCKING_GIT = """#!/bin/sh
case " $* " in
  *" status "*" -uno -- . :(exclude).resume-kit "*)
    touch "$BLOCKED_DIR/started"
    while [ ! -f "$BLOCKED_DIR/release" ]; do sleep 0.02; done ;;
esac
exec "$REAL_GIT" "$@"
"""


def _blocked_git_env(repo: Path) -> dict[str, str]:
    import os
    import shutil

    wrappers = repo.parent / "bin"
    wrappers.mkdir()
    (wrappers / "git").write_text(BLOCKING_GIT)
    (wrappers / "git").chmod(0o755)
    env = dict(os.environ, PATH=f"{wrappers}{os.pathsep}{os.environ['PATH']}")
    return env | {"REAL_GIT": shutil.which("git") or "git", "BLOCKED_DIR": str(repo.parent)}


ASK = (
    "import sys; from pathlib import Path; from resume_kit.runner.verify import head_and_dirty; "
    "root = Path(sys.argv[1]); "
    "print(head_and_dirty(root, root / '.git', split_above=0, files=sys.argv[2:])[1])"
)


@pytest.mark.parametrize("index_written", ["before the edit", "after the edit"])
def test_a_changed_own_file_answers_without_waiting_for_the_whole_tree(
    repo: Path, index_written: str
) -> None:
    """The unit's edited file settles the flag while the whole work tree's status is held (the
    answer would never come if it were waited for). Edited since git last wrote its index, it
    is asked first and the status never starts; edited before (a person's `git status` wrote
    the index since), it is asked beside the status, which is stopped."""
    import os
    import subprocess
    import sys

    _commit_state_file(repo)
    (repo / "src.py").write_text("a longer line\n")  # its size differs: git sees it either way
    if index_written == "after the edit":  # as when a person's `git status` wrote it since
        later = os.stat(repo / "src.py").st_mtime + 10
        os.utime(repo / ".git" / "index", (later, later))
    env = _blocked_git_env(repo)
    try:
        done = subprocess.run(
            [sys.executable, "-c", ASK, str(repo), "src.py"],
            env=env, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert done.stdout.strip() == "True"
        started = (repo.parent / "started").exists()
        assert started == (index_written == "after the edit")
    finally:
        (repo.parent / "release").touch()


def test_when_the_unit_s_files_are_unchanged_the_whole_tree_answers(repo: Path) -> None:
    """Not the unit's file: its diff finds nothing, so the answer waits for the status."""
    import subprocess
    import sys

    _commit_state_file(repo)
    CHANGES["work tree change"](repo)
    env = _blocked_git_env(repo)
    try:
        waiting = subprocess.Popen(
            [sys.executable, "-c", ASK, str(repo), "README.md"],
            env=env, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        while not (repo.parent / "started").exists():
            assert waiting.poll() is None, "answered before the status ran"
        assert waiting.poll() is None
        (repo.parent / "release").touch()
        out, _ = waiting.communicate(timeout=60)
        assert out.strip() == "True"
    finally:
        (repo.parent / "release").touch()
