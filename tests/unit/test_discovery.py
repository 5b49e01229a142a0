"""The work tree found from git's files (infra/discovery): in real repositories, exactly what
``git rev-parse`` says, or None (then git is asked); never another answer."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from resume_kit.infra.discovery import MOVING_VARIABLES, discover
from resume_kit.infra.errors import NotARepositoryError
from resume_kit.infra.paths import LAYOUT_QUERY, find_layout
from tests.conftest import git
from tests.hostile import hostile_clone


def rev_parse(cwd: Path) -> tuple[str, str, str] | None:
    done = git(cwd, *LAYOUT_QUERY, check=False)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) < 3 or not lines[0]:
        return None
    root, git_dir, common = (os.path.realpath(line) for line in lines[:3])
    return root, git_dir, common


def linked(repo: Path) -> Path:
    other = repo.parent / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    (other / "deep" / "er").mkdir(parents=True)
    return other / "deep" / "er"


def submodule(repo: Path) -> Path:
    inner = repo.parent / "inner"
    inner.mkdir()
    git(inner, "init", "-q", "-b", "main")
    (inner / "x.txt").write_text("x\n")
    git(inner, "add", "x.txt")
    git(inner, "commit", "-q", "-m", "x")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub")
    return repo / "sub"


def subfolder(repo: Path) -> Path:
    (repo / "a" / "b").mkdir(parents=True)
    return repo / "a" / "b"


def config_line(line: str) -> Callable[[Path], Path]:
    def change(repo: Path) -> Path:
        with (repo / ".git" / "config").open("a") as config:
            config.write(line + "\n")
        return repo

    return change


# each: where the command runs, set up from a fresh repository; whether the files are read
LAYOUTS: dict[str, tuple[Callable[[Path], Path], bool]] = {
    "the root": (lambda r: r, True),
    "a subfolder": (subfolder, True),
    "a linked worktree's subfolder": (linked, True),
    "a symlinked path to a subfolder": (
        lambda r: (os.symlink(subfolder(r), r.parent / "via"), r.parent / "via")[1],
        True,
    ),
    "a submodule (core.worktree in its config)": (submodule, False),
    "inside .git": (lambda r: r / ".git" / "refs", False),
    "core.worktree set": (config_line("[core]\n\tworktree = .."), False),
    "core.bare true": (config_line("[core]\n\tbare = true"), False),
    "an include": (config_line("[include]\n\tpath = other"), False),
    "outside any repository": (lambda r: r.parent.parent, False),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_what_git_says_or_none(repo: Path, layout: str) -> None:
    setup, read = LAYOUTS[layout]
    where = setup(repo)
    found = discover(str(where))
    assert (found is not None) == read
    if found is not None:
        assert found == rev_parse(where)


def test_a_bare_repository_is_left_to_git(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    assert discover(str(tmp_path / "bare.git")) is None
    assert discover(str(tmp_path / "bare.git" / "refs")) is None


@pytest.mark.parametrize("name", MOVING_VARIABLES)
def test_a_variable_that_moves_the_repository_is_left_to_git(
    repo: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert discover(str(repo)) is not None
    monkeypatch.setenv(name, "1")
    assert discover(str(repo)) is None


def test_without_git_on_path_git_is_left_to_say_so(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert discover(str(repo)) is not None
    monkeypatch.setenv("PATH", "/nonexistent")
    assert discover(str(repo)) is None  # find_layout's rev-parse then says git is missing


@pytest.mark.parametrize(
    "how", ["a link", "a FIFO", "a gitdir line with spaces", "not owned", "its config a FIFO"]
)
def test_an_odd_dot_git_is_left_to_git(repo: Path, tmp_path: Path, how: str) -> None:
    """A `.git` that is a link or a FIFO, a `.git` file git would read differently, a folder
    owned by another user (git's safe.directory check), or a config that is a FIFO: git
    decides, never blocking."""
    real = repo / ".git"
    if how == "a link":
        os.replace(real, tmp_path / "moved.git")
        os.symlink(tmp_path / "moved.git", real)
    elif how == "a FIFO":
        os.replace(real, tmp_path / "moved.git")
        os.mkfifo(real)
    elif how == "a gitdir line with spaces":
        os.replace(real, tmp_path / "moved.git")
        real.write_text(f"gitdir: {tmp_path / 'moved.git'}  \n")
    elif how == "its config a FIFO":  # git's own file: read without blocking
        (real / "config").unlink()
        os.mkfifo(real / "config")
    elif how == "not owned":
        os.chown(repo, os.geteuid() + 1, -1) if os.geteuid() == 0 else pytest.skip("not root")
    assert discover(str(repo)) is None


def test_find_layout_takes_the_files_answer(repo: Path) -> None:
    layout = find_layout(subfolder(repo))
    assert (str(layout.root), str(layout.git_dir), str(layout.git_common_dir)) == rev_parse(repo)


def test_a_cloned_folder_that_looks_like_a_git_dir_is_left_to_git(tmp_path: Path) -> None:
    """A clone holding a folder with git dir names in it (`HEAD`, `objects/`, `refs/`, a
    `config`): below it, the files are not read (git decides what that folder is: a bare
    repository for git 2.39, which then has no work tree; the clone with
    `safe.bareRepository=explicit`), and the answer is git's own."""
    clone = hostile_clone(
        tmp_path,
        {
            "trap/HEAD": "ref: refs/heads/main\n",
            "trap/objects/keep": "",
            "trap/refs/keep": "",
            "trap/config": "[core]\n\tbare = false\n",
            "trap/inner/file.txt": "x\n",
            "file.txt": "x\n",
        },
    )
    where = clone / "trap" / "inner"
    assert discover(str(where)) is None
    assert discover(str(clone)) is not None
    expected = rev_parse(where)
    if expected is None:
        with pytest.raises(NotARepositoryError):
            find_layout(where)
        return
    layout = find_layout(where)
    assert (str(layout.root), str(layout.git_dir), str(layout.git_common_dir)) == expected
