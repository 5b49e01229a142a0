"""The snapshot's remembered answers: evidence commits known to be ancestors of HEAD."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from resume_kit.facts.ancestry import evidence_ancestry, load_known_ancestors, save_known_ancestors
from resume_kit.infra.paths import as_posix
from tests.conftest import git

A = "a" * 40
B = "b" * 40


def test_known_ancestors_need_no_git(tmp_path: Path) -> None:
    # tmp_path is not a repository: any git call would fail and answer "not an ancestor"
    result, notes = evidence_ancestry(tmp_path, "c" * 40, [A, A.upper()], known=[A])
    assert result == {A: True} and notes == []


def test_real_answers_with_and_without_known(repo: Path, tmp_path: Path) -> None:
    first = git(repo, "rev-parse", "HEAD").stdout.strip()
    (repo / "x.txt").write_text("x\n")
    git(repo, "add", "x.txt")
    git(repo, "commit", "-q", "-m", "x")
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    git(repo, "checkout", "-q", "-b", "side", first)
    (repo / "y.txt").write_text("y\n")
    git(repo, "add", "y.txt")
    git(repo, "commit", "-q", "-m", "y")
    side = git(repo, "rev-parse", "HEAD").stdout.strip()
    plain, _ = evidence_ancestry(repo, head, [first, side, B])
    assert plain == {first: True, side: False, B: False}

    store = tmp_path / "ancestry.json"
    save_known_ancestors(store, head, plain, [])
    known, _ = load_known_ancestors(store, head)
    assert known == [first]  # a "no" is never remembered
    assert evidence_ancestry(repo, head, [first, side, B], known)[0] == plain
    assert load_known_ancestors(store, side, repo) == ([], False)  # not a descendant


def test_damaged_or_foreign_store_is_ignored(tmp_path: Path) -> None:
    store = tmp_path / "ancestry.json"
    for text in ("", "[]", "not json", json.dumps({"head": A, "ancestors": "x"})):
        store.write_text(text)
        assert load_known_ancestors(store, A) == ([], False)
    store.write_text(json.dumps({"head": A, "ancestors": [B, 3]}))
    assert load_known_ancestors(store, A) == ([B], False)
    assert load_known_ancestors(None, A) == ([], False)
    assert load_known_ancestors(store, None) == ([], False)
    # another head, recorded as no commit id (never handed to git) or unknown to git here
    for head in ("--output=x", "c" * 40):
        store.write_text(json.dumps({"head": head, "ancestors": [B]}))
        assert load_known_ancestors(store, A, tmp_path) == ([], False)


def test_ancestors_of_an_earlier_head_carry_over_to_a_descendant(
    repo: Path, tmp_path: Path
) -> None:
    """After a commit the recorded answers still hold (one git call, not one per evidence
    commit), and are remembered for the new head; a branch switch to a head that does not
    descend from the recorded one starts afresh."""
    first = git(repo, "rev-parse", "HEAD").stdout.strip()
    store = tmp_path / "ancestry.json"
    save_known_ancestors(store, first, {first: True}, [])
    (repo / "x.txt").write_text("x\n")
    git(repo, "add", "x.txt")
    git(repo, "commit", "-q", "-m", "x")
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    known, carried = load_known_ancestors(store, head, repo)
    assert (known, carried) == ([first], True)
    result, _ = evidence_ancestry(tmp_path, head, [first], known)  # tmp_path: no git asked
    assert result == {first: True}
    save_known_ancestors(store, head, result, known, carried)
    assert json.loads(store.read_text()) == {"head": head, "ancestors": [first]}
    git(repo, "checkout", "-q", "--orphan", "elsewhere")
    git(repo, "commit", "-q", "-m", "unrelated")
    other = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert load_known_ancestors(store, other, repo) == ([], False)


def test_abbreviated_ids_are_not_remembered(tmp_path: Path) -> None:
    store = tmp_path / "ancestry.json"
    save_known_ancestors(store, A, {"abc1234": True, B: None}, [])
    assert not store.exists()
    save_known_ancestors(store, A, {B: True}, [B])  # nothing new: not rewritten
    assert not store.exists()


def test_saved_snapshot_is_json_with_a_line_per_top_level_key(repo: Path) -> None:
    from resume_kit.facts.snapshot import take_snapshot
    from resume_kit.facts.snapshot_store import read_snapshot, save_snapshot
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.config import Config

    layout = find_layout(repo)
    snapshot = take_snapshot(layout, Config(), "manual")
    snapshot["notes"].append('caf\\xe9 "quoted"\nnew line, ünïcode')
    path = save_snapshot(layout, snapshot, 5)
    text = path.read_text(encoding="utf-8")
    data, problem = read_snapshot(path)
    assert problem is None and data == snapshot
    keys = [line.split(":", 1)[0].strip() for line in text.splitlines()[1:-1]]
    assert keys == [json.dumps(key) for key in snapshot]
    assert "ünïcode" in text  # not escaped


@given(st.text(alphabet="ab./\\ ~-_\x00é", max_size=12))
def test_as_posix_is_pathlibs(path: str) -> None:
    assert as_posix(path) == PurePosixPath(path).as_posix()
