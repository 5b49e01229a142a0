"""Typed facts (issue 13 item 2): a stored snapshot round-trips through the type byte for byte,
and every kind of bad shape is refused by the one shape check with one line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from resume_kit.facts.snapshot import _admitted, take_snapshot
from resume_kit.facts.snapshot_store import (
    compute_checksum,
    dump_snapshot,
    load_latest,
    read_snapshot,
    save_snapshot,
)
from resume_kit.infra.paths import Layout, find_layout
from resume_kit.model.facts import SECTIONS, parse_snapshot
from resume_kit.progress_file.config import Config
from tests.brief_cases import interrupted
from tests.conftest import git
from tests.helpers_snapshot import commit_file, evidence, write_progress


def _store(layout: Layout, data: dict[str, Any], name: str) -> Path:
    """``data`` written as a checksummed snapshot file, as resume-kit lays it out."""
    body = {k: v for k, v in data.items() if k != "checksum"}
    body["checksum"] = compute_checksum(body)
    layout.snapshots.mkdir(parents=True, exist_ok=True)
    path = layout.snapshots / name
    path.write_text(dump_snapshot(body), encoding="utf-8")  # type: ignore[arg-type]
    return path


def test_a_real_stored_snapshot_round_trips_byte_identically(repo: Path) -> None:
    commit_file(repo, "src/a.py", "A = 1\n")
    (repo / "out").mkdir()
    (repo / "out" / "a.json").write_text("{}\n")
    (repo / "src" / "a.py").write_text("A = 2\n")  # unstaged
    (repo / "caf\u00e9 \u202e.txt").write_text("x")  # untracked, an odd name
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "status": "done", "verify": "true",
             "files": ["src/a.py"], "artifacts": ["out/a.json", "out/gone.json"],
             "evidence": evidence(repo, ["src/a.py"], ["out/a.json"])},
            {"id": "b", "title": "B", "verify": "true"},
        ],
    )  # fmt: skip
    layout = find_layout(repo)
    snapshot = take_snapshot(layout, Config(), "manual")
    assert snapshot["units"]["a"]["missing_artifacts"] == ["out/gone.json"]
    path = save_snapshot(layout, snapshot, 5)
    stored = path.read_bytes()
    loaded, problem = read_snapshot(path)
    assert problem is None and loaded is not None
    assert dump_snapshot(loaded).encode("utf-8") == stored  # load → type → dump
    assert loaded == snapshot


def test_hand_made_snapshot_with_unknown_keys_round_trips(tmp_path: Path) -> None:
    """Unknown keys, at the top and inside sections, survive in place (a newer minor writer)."""
    layout = Layout(root=tmp_path, git_dir=tmp_path / ".git", git_common_dir=tmp_path / ".git")
    _, snap, _ = interrupted()
    data = copy.deepcopy(snap)
    data["x_future"] = {"any": [1, 2.5, None, True]}
    data["repo"]["x_future"] = "kept"
    data["units"] = {"doc-001": {"status": "done", "fingerprint": None, "x": 1}}
    path = _store(layout, data, "20261129T080000000Z-abcdef.json")
    stored = path.read_bytes()
    loaded, problem = read_snapshot(path)
    assert problem is None and loaded is not None
    assert dump_snapshot(loaded).encode("utf-8") == stored
    assert list(loaded) == list(json.loads(stored))


def test_a_snapshot_stored_before_trace_ids_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RESUME_KIT_TRACE", raising=False)
    layout = Layout(root=tmp_path, git_dir=tmp_path / ".git", git_common_dir=tmp_path / ".git")
    _, snap, _ = interrupted()
    old = {k: v for k, v in copy.deepcopy(snap).items() if k != "trace"}
    _store(layout, old, "20261129T080000000Z-abcdef.json")
    latest, warnings = load_latest(layout)
    assert latest is not None and "trace" not in latest and warnings == []
    fresh = copy.deepcopy(old)
    save_snapshot(layout, fresh, 5, session="sess-7")  # type: ignore[arg-type]
    latest, _ = load_latest(layout)
    assert latest is not None and latest["trace"] == "sess-7"  # inside the checksum


# One wrong value for every kind of place the type promises something: a section of the
# wrong kind, a scalar of the wrong kind (bool is not an int), a list item, a map value, an
# optional that is not null or the thing, a list of strings holding something else.
BAD_SHAPES: list[tuple[str, dict[str, Any], str]] = [
    ("id not a string", {"id": 5}, "'id'"),
    ("created_at not a string", {"created_at": None}, "'created_at'"),
    ("trace not a string", {"trace": 7}, "'trace'"),
    ("repo not an object", {"repo": []}, "'repo'"),
    ("head not a string", {"repo": {"head": 7}}, "'repo.head'"),
    ("ahead a bool", {"repo": {"ahead": True}}, "'repo.ahead'"),
    ("stash_count a string", {"repo": {"stash_count": "2"}}, "'repo.stash_count'"),
    ("unborn a number", {"repo": {"unborn": 0}}, "'repo.unborn'"),
    ("conflicts not a list", {"repo": {"conflicts": {"path": "x"}}}, "'repo.conflicts'"),
    ("a conflict not an object", {"repo": {"conflicts": ["x"]}}, "'repo.conflicts[]'"),
    ("a conflict's path not a string", {"repo": {"conflicts": [{"path": ["x"]}]}}, "'repo.conflicts[].path'"),
    ("changes not an object", {"changes": 12}, "'changes'"),
    ("staged not a list", {"changes": {"staged": 1}}, "'changes.staged'"),
    ("a change not an object", {"changes": {"untracked": ["a"]}}, "'changes.untracked[]'"),
    ("a change's added a string", {"changes": {"unstaged": [{"path": "a", "added": "4"}]}}, "'changes.unstaged[].added'"),
    ("counts not an object", {"changes": {"counts": [0, 0, 0]}}, "'changes.counts'"),
    ("a count a float", {"changes": {"counts": {"staged": 1.5}}}, "'changes.counts.staged'"),
    ("truncated a string", {"changes": {"truncated": "no"}}, "'changes.truncated'"),
    ("recent_commits not a list", {"recent_commits": "no"}, "'recent_commits'"),
    ("a commit's subject not a string", {"recent_commits": [{"sha": "a", "subject": 1}]}, "'recent_commits[].subject'"),
    ("logs not a list", {"logs": {"a": 1}}, "'logs'"),
    ("a log's error lines not strings", {"logs": [{"path": "l", "error_lines": ["a", 2]}]}, "'logs[].error_lines[]'"),
    ("tests not an object", {"tests": []}, "'tests'"),
    ("failing tests not a list", {"tests": {"pytest_last_failed": "t::a"}}, "'tests.pytest_last_failed'"),
    ("artifacts not a list", {"artifacts": {}}, "'artifacts'"),
    ("an artifact's exists a string", {"artifacts": [{"path": "a", "exists": "yes"}]}, "'artifacts[].exists'"),
    ("transcript a list", {"transcript": []}, "'transcript'"),
    ("todos not a list", {"transcript": {"todos": "write x"}}, "'transcript.todos'"),
    ("a todo's content a number", {"transcript": {"todos": [{"content": 3, "status": "pending"}]}}, "'transcript.todos[].content'"),
    ("a tool error's message null", {"transcript": {"tool_errors": [{"message": None}]}}, "'transcript.tool_errors[].message'"),
    ("compaction count a string", {"transcript": {"compactions": {"count": "2"}}}, "'transcript.compactions.count'"),
    ("transcript notes not strings", {"transcript": {"notes": [{}]}}, "'transcript.notes[]'"),
    ("progress not an object", {"progress": 1}, "'progress'"),
    ("progress error not a string", {"progress": {"valid": False, "error": 3}}, "'progress.error'"),
    ("units not an object", {"units": 3}, "'units'"),
    ("a unit not an object", {"units": {"alpha": 7}}, "'units[]'"),
    ("a unit's fingerprint a number", {"units": {"a": {"status": "done", "fingerprint": 1}}}, "'units[].fingerprint'"),
    ("a unit's missing artifacts not strings", {"units": {"a": {"missing_artifacts": [None]}}}, "'units[].missing_artifacts[]'"),
    ("evidence_in_history a string", {"units": {"a": {"evidence_in_history": "yes"}}}, "'units[].evidence_in_history'"),
    ("notes not strings", {"notes": [1]}, "'notes[]'"),
]  # fmt: skip


def test_every_section_has_a_bad_shape_case() -> None:
    tried = {next(iter(bad)) for _, bad, _ in BAD_SHAPES}
    assert tried >= set(SECTIONS) - {"schema_version", "checksum", "trigger"}


@pytest.mark.parametrize(("what", "bad", "where"), BAD_SHAPES, ids=[c[0] for c in BAD_SHAPES])
def test_each_kind_of_bad_shape_is_refused_with_one_line(
    tmp_path: Path, what: str, bad: dict[str, Any], where: str
) -> None:
    layout = Layout(root=tmp_path, git_dir=tmp_path / ".git", git_common_dir=tmp_path / ".git")
    _, good, _ = interrupted()
    older = _store(layout, good, "20261129T080000000Z-aaaaaa.json")
    data = copy.deepcopy(good)
    for key, value in bad.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict) and key != "units":
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    path = _store(layout, data, "20261129T090000000Z-bbbbbb.json")
    loaded, problem = read_snapshot(path)
    assert loaded is None
    assert problem == f"{where} is not what a snapshot holds"
    latest, warnings = load_latest(layout)  # skipped with one line, the one before it used
    assert latest is not None and latest["id"] == good["id"] and older.exists()
    assert warnings == [
        f"skipped snapshot {path.name}: {where} is not what a snapshot holds; using the one before it"
    ]


def test_a_reader_slip_is_left_out_of_a_fresh_snapshot_with_a_note(tmp_path: Path) -> None:
    layout = Layout(root=tmp_path, git_dir=tmp_path / ".git", git_common_dir=tmp_path / ".git")
    _, good, _ = interrupted()
    data = copy.deepcopy(good)
    data["logs"] = [{"path": "l", "error_lines": "one line, not a list"}]
    data["transcript"] = {"todos": [{"content": None}]}
    snapshot = _admitted(data, layout)
    assert snapshot["logs"] == [] and snapshot["transcript"] is None
    assert snapshot["notes"][-2:] == [
        "'logs[].error_lines' is not what a snapshot holds: left out of this snapshot",
        "'transcript.todos[].content' is not what a snapshot holds: left out of this snapshot",
    ]
    assert parse_snapshot(snapshot) == (snapshot, None)


def test_every_snapshot_the_brief_cases_use_passes_the_check() -> None:
    """The hand-made snapshots the brief and reconcile tests feed in are in the typed shape."""
    _, snap, _ = interrupted()
    assert parse_snapshot(snap) == (snap, None)


def test_a_fresh_snapshot_of_a_real_repository_is_admitted(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature/x")
    snapshot = take_snapshot(find_layout(repo), Config(), "manual")
    assert parse_snapshot(snapshot) == (snapshot, None)
    assert snapshot["repo"]["branch"] == "feature/x"
    assert not any("left out" in note for note in snapshot["notes"])
