"""HEAD read from the git dir's files (facts/head_ref): in real repositories, the commit git's
own ``rev-parse`` gives, or None (then the caller asks git); never another answer, and never
a read through a link, of a FIFO, or outside the git dir."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.facts.head_ref import head_commit
from tests.conftest import git


def rev_parse(cwd: Path) -> str | None:
    done = git(cwd, "rev-parse", "--verify", "-q", "HEAD", check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def dirs(cwd: Path) -> tuple[Path, Path]:
    found = git(cwd, "rev-parse", "--absolute-git-dir", "--git-common-dir").stdout.split("\n")
    return Path(found[0]), (cwd / found[1]).resolve()


def commit(repo: Path, name: str) -> str:
    (repo / name).write_text(name + "\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", name)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


LAYOUTS: dict[str, Callable[[Path], object]] = {
    "a loose branch": lambda r: None,
    "packed refs": lambda r: git(r, "pack-refs", "--all"),
    "a loose ref newer than its packed line": lambda r: (
        git(r, "pack-refs", "--all"),
        commit(r, "after-pack.txt"),
    ),
    "a branch in a folder": lambda r: git(r, "checkout", "-q", "-b", "feature/deep/x"),
    "a packed branch in a folder": lambda r: (
        git(r, "checkout", "-q", "-b", "feature/y"),
        git(r, "pack-refs", "--all"),
    ),
    "a detached HEAD": lambda r: git(r, "checkout", "-q", "--detach"),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_commit_git_gives(repo: Path, layout: str) -> None:
    commit(repo, "second.txt")
    LAYOUTS[layout](repo)
    assert head_commit(*dirs(repo)) == rev_parse(repo) is not None


def test_a_linked_work_tree_reads_its_own_head(repo: Path, tmp_path: Path) -> None:
    first = rev_parse(repo)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    later = commit(linked, "side.txt")
    assert head_commit(*dirs(linked)) == rev_parse(linked) == later
    assert head_commit(*dirs(repo)) == rev_parse(repo) == first


def test_a_sha256_repository(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--object-format=sha256", "-b", "main")
    oid = commit(tmp_path, "a.txt")
    assert len(oid) == 64
    assert head_commit(*dirs(tmp_path)) == rev_parse(tmp_path) == oid


def test_an_unborn_branch_is_left_to_git(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    assert head_commit(*dirs(tmp_path)) is None
    git(tmp_path, "pack-refs", "--all")
    (tmp_path / ".git" / "packed-refs").write_text("# pack-refs with: peeled\n")
    assert head_commit(*dirs(tmp_path)) is None


def _hostile(repo: Path, how: str, outside: Path) -> None:
    git_dir = repo / ".git"
    oid = rev_parse(repo) or ""
    outside.write_text(oid + "\n")  # a well-formed oid where nothing may be read
    if how == "HEAD a link":
        os.replace(git_dir / "HEAD", git_dir / "HEAD.real")
        os.symlink(git_dir / "HEAD.real", git_dir / "HEAD")
    elif how == "HEAD a FIFO":
        (git_dir / "HEAD").unlink()
        os.mkfifo(git_dir / "HEAD")
    elif how == "the ref a link out":
        (git_dir / "refs" / "heads" / "main").unlink()
        os.symlink(outside, git_dir / "refs" / "heads" / "main")
    elif how == "the ref a FIFO":
        (git_dir / "refs" / "heads" / "main").unlink()
        os.mkfifo(git_dir / "refs" / "heads" / "main")
    elif how == "HEAD climbs out":  # team/.. is refs/heads: the name climbs from .git
        (git_dir / "refs" / "heads" / "team").mkdir()
        rel = os.path.relpath(outside, git_dir)
        (git_dir / "HEAD").write_text(f"ref: refs/heads/team/../../../{rel}\n")
    elif how == "packed-refs a FIFO":
        (git_dir / "refs" / "heads" / "main").unlink()
        os.mkfifo(git_dir / "packed-refs")


@pytest.mark.parametrize(
    "how",
    [
        "HEAD a link",
        "HEAD a FIFO",
        "the ref a link out",
        "the ref a FIFO",
        "HEAD climbs out",
        "packed-refs a FIFO",
    ],
)
def test_a_hostile_git_dir_gives_none_without_blocking(
    repo: Path, tmp_path: Path, how: str
) -> None:
    _hostile(repo, how, tmp_path / "outside")
    assert head_commit(repo / ".git", repo / ".git") is None


_PIECES = st.sampled_from(
    ["main", "feature", "x", "..", ".", "", ".hidden", "x.lock", "x.", "a b", "@{1}", "é"]
)


@st.composite
def head_texts(draw: st.DrawFn) -> bytes:
    """What HEAD may hold: an oid (real, changed case, cut, spaced) or a symbolic ref to a
    name built from pieces that are good and bad branch names, with and without newlines."""
    if draw(st.booleans()):
        text = "OID"
    else:
        name = "/".join(draw(st.lists(_PIECES, min_size=1, max_size=3)))
        prefix = draw(st.sampled_from(["ref: refs/heads/", "ref: refs/", "ref:refs/heads/"]))
        text = prefix + name
    text += draw(st.sampled_from(["\n", "", "\n\n", " \n", "\r\n"]))
    return text.encode("utf-8")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(head=head_texts(), packed=st.booleans(), case=st.sampled_from(["lower", "upper", "cut"]))
def test_any_head_gives_what_git_gives_or_none(
    repo: Path, head: bytes, packed: bool, case: str
) -> None:
    git(repo, "checkout", "-q", "-B", "feature/x")
    git(repo, "checkout", "-q", "main")
    if packed:
        git(repo, "pack-refs", "--all")
    oid = rev_parse(repo) or ""
    shown = {"lower": oid, "upper": oid.upper(), "cut": oid[:39]}[case]
    head_file = repo / ".git" / "HEAD"
    saved = head_file.read_bytes()
    try:
        head_file.write_bytes(head.replace(b"OID", shown.encode()))
        found = head_commit(repo / ".git", repo / ".git")
        assert found is None or found == rev_parse(repo)
    finally:
        head_file.write_bytes(saved)
