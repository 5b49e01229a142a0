"""Leases are looked up without starting git only when the clone surely holds none: the answer
always equals git's own (real repositories: loose, packed and linked-worktree refs)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from resume_kit.facts.leases import read_leases, surely_no_leases
from resume_kit.infra.paths import find_layout
from tests.conftest import git


def _lease_blob(repo: Path) -> str:
    body = '{"unit": "u1", "holder": {"user": "a", "host": "h", "worktree": "/w"}}'
    done = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo,
        input=body,
        text=True,
        capture_output=True,
        check=True,
    )
    return done.stdout.strip()


def _answers(repo: Path) -> tuple[bool, list[str], list[str]]:
    common = find_layout(repo).git_common_dir
    shortcut = [item.ref for item in read_leases(repo, common_dir=common)]
    asked = [item.ref for item in read_leases(repo)]
    return surely_no_leases(common), shortcut, asked


def test_the_shortcut_answers_as_git_does_for_loose_and_packed_refs(repo: Path) -> None:
    git(repo, "update-ref", "refs/heads/other", "HEAD")
    git(repo, "pack-refs", "--all")  # a packed-refs file naming other refs only
    assert _answers(repo) == (True, [], [])
    oid = _lease_blob(repo)
    git(repo, "update-ref", "refs/resume-kit/leases/u1", oid)
    sure, shortcut, asked = _answers(repo)
    assert not sure and shortcut == asked == ["refs/resume-kit/leases/u1"]
    git(repo, "pack-refs", "--all")
    for folder in sorted((repo / ".git" / "refs" / "resume-kit").rglob("*"), reverse=True):
        folder.rmdir()  # what a `git gc` on an old git leaves: the ref only in packed-refs
    (repo / ".git" / "refs" / "resume-kit").rmdir()
    sure, shortcut, asked = _answers(repo)
    assert not sure and shortcut == asked == ["refs/resume-kit/leases/u1"]


def test_a_linked_worktree_sees_the_shared_refs(repo: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "--detach", str(linked))
    assert _answers(linked) == (True, [], [])
    git(repo, "update-ref", "refs/resume-kit/leases/u1", _lease_blob(repo))
    sure, shortcut, asked = _answers(linked)
    assert not sure and shortcut == asked == ["refs/resume-kit/leases/u1"]


def test_an_odd_packed_refs_means_asking_git_and_never_blocks(repo: Path) -> None:
    packed = repo / ".git" / "packed-refs"
    os.mkfifo(packed)  # opening it for reading would block: it is never opened so
    assert not surely_no_leases(find_layout(repo).git_common_dir)
    packed.unlink()
    os.symlink(repo / "elsewhere", packed)
    assert not surely_no_leases(find_layout(repo).git_common_dir)
