"""Snapshots: assembling the facts, canonical checksum, atomic storage, pruning, skipping damaged
files, the `snapshot` command's output and hook behaviour."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resume_kit.core.reconcile import reconcile
from resume_kit.core.snapshot_diff import diff_snapshots
from resume_kit.facts.fingerprint import fingerprint
from resume_kit.facts.snapshot import json_safe, take_snapshot
from resume_kit.facts.snapshot_store import (
    canonical_bytes,
    compute_checksum,
    load_latest,
    new_snapshot_id,
    save_snapshot,
)
from resume_kit.infra.paths import find_layout
from resume_kit.model.progress import Evidence, Progress, Unit
from resume_kit.progress_file.config import Config
from resume_kit.progress_file.io import load
from tests.conftest import git, run_cli
from tests.helpers_snapshot import commit_file, evidence, write_progress

TOP_KEYS = {
    "schema_version",
    "id",
    "created_at",
    "trigger",
    "repo",
    "changes",
    "recent_commits",
    "logs",
    "tests",
    "artifacts",
    "transcript",
    "progress",
    "notes",
    "checksum",
}
REPO_KEYS = {
    "root",
    "head",
    "branch",
    "unborn",
    "upstream",
    "ahead",
    "behind",
    "operation",
    "conflicts",
    "stash_count",
    "worktree",
    "submodules",
}


def _save(repo: Path, keep: int = 20, trigger: str = "manual") -> tuple[Path, dict[str, Any]]:
    layout = find_layout(repo)
    snapshot = take_snapshot(layout, Config(), trigger)
    return save_snapshot(layout, snapshot, keep), snapshot


# --------------------------------------------------------------------------- storage


def test_saved_snapshot_has_a_canonical_checksum_and_loads_back(repo: Path) -> None:
    write_progress(repo, [{"id": "a", "title": "A", "verify": "true"}])
    path, snapshot = _save(repo)
    assert path.parent == repo / ".resume-kit" / "snapshots"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == snapshot
    assert set(data) >= TOP_KEYS and set(data["repo"]) >= REPO_KEYS
    body = {k: v for k, v in data.items() if k != "checksum"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert data["checksum"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    loaded, warnings = load_latest(find_layout(repo))
    assert loaded == data and warnings == []
    assert data["progress"] == {"valid": True, "error": None}
    # the snapshots folder is ignored: a snapshot never shows up as work
    assert "snapshots" not in git(repo, "status", "--porcelain", "-uall").stdout


@pytest.mark.parametrize("damage", ["corrupt", "truncate", "tamper", "empty", "not-an-object"])
def test_a_damaged_newest_snapshot_is_skipped_for_the_previous(repo: Path, damage: str) -> None:
    first, first_data = _save(repo)
    second, _ = _save(repo)
    assert second.name > first.name
    raw = second.read_bytes()
    if damage == "corrupt":
        second.write_bytes(b"\x00\xff garbage {" + raw[40:])
    elif damage == "truncate":
        second.write_bytes(raw[: len(raw) // 2])
    elif damage == "tamper":
        data = json.loads(raw)
        data["repo"]["branch"] = "someone-else"
        second.write_text(json.dumps(data))
    elif damage == "empty":
        second.write_bytes(b"")
    else:
        second.write_text("[1, 2, 3]")
    loaded, warnings = load_latest(find_layout(repo))
    assert loaded == first_data
    assert len(warnings) == 1 and second.name in warnings[0]
    # the command says so on stderr and still compares with the intact one
    result = run_cli("snapshot", cwd=repo)
    assert result.code == 0, result.stderr
    assert second.name in result.stderr and "warning" in result.stderr
    assert f"since {first_data['id']}" in result.stdout


def test_every_snapshot_damaged_gives_none_with_warnings(repo: Path) -> None:
    paths = [_save(repo)[0] for _ in range(2)]
    for path in paths:
        path.write_text('{"checksum": "sha256:00", "schema_version": 1}')
    loaded, warnings = load_latest(find_layout(repo))
    assert loaded is None and len(warnings) == 2


def test_a_snapshot_from_a_newer_version_is_skipped(repo: Path) -> None:
    _first, first_data = _save(repo)
    second, data = _save(repo)
    data["schema_version"] = 99
    data["checksum"] = compute_checksum(data)
    second.write_text(json.dumps(data))
    loaded, warnings = load_latest(find_layout(repo))
    assert loaded == first_data and "newer" in warnings[0]


def test_keep_snapshots_prunes_the_oldest(repo: Path, isolated_home: Path) -> None:
    (repo / ".resume-kit").mkdir()
    # below what a repository's config may set (5): only the person's own config goes lower
    user_config = isolated_home / ".config" / "resume-kit" / "config.yaml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text("keep_snapshots: 3\n")
    names = []
    for _ in range(5):
        result = run_cli("snapshot", "--json", cwd=repo)
        assert result.code == 0, result.stderr
        names.append(json.loads(result.stdout)["id"] + ".json")
    kept = sorted(p.name for p in (repo / ".resume-kit/snapshots").iterdir())
    assert kept == sorted(names)[-3:]
    assert names == sorted(names)  # ids sort by creation time


def test_ids_sort_by_time() -> None:
    base = 1_800_000_000_000_000_000
    steps = [0, 1_000_000, 999_000_000, 1_000_000_000, 86_400 * 10**9]
    ids = [new_snapshot_id(base + step) for step in steps]
    assert ids == sorted(ids)
    assert ids[0].startswith("20270115T") and ids[0][15:19] == "000Z"


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=12,
    )
)
def test_json_safe_values_always_have_a_checksum(value: Any) -> None:
    safe = json_safe({"value": value})
    canonical_bytes(safe)  # never raises, even for lone surrogates
    assert compute_checksum(safe) == compute_checksum(json.loads(json.dumps(safe)))


@given(
    st.dictionaries(
        st.text(),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
            ),
            max_leaves=12,
        ),
        max_size=5,
    )
)
def test_the_stored_text_and_the_checksum_come_from_one_encoding(body: dict[str, Any]) -> None:
    """save_snapshot encodes each top-level value once: joined, those texts are the canonical
    form the checksum covers (the whole body through json.dumps, sorted and compact, as the
    stored snapshots' checksums were made), and the stored text reads back as the same data."""
    from resume_kit.facts.snapshot_store import _top_level_lines, _value_texts

    safe = json_safe(body)
    texts = _value_texts(safe)
    whole = {key: value for key, value in safe.items() if key != "checksum"}
    expected = json.dumps(whole, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_bytes(safe) == expected.encode("utf-8")
    assert compute_checksum(safe) == "sha256:" + hashlib.sha256(expected.encode()).hexdigest()
    assert json.loads(_top_level_lines(texts)) == safe


def test_undecodable_names_are_escaped() -> None:
    assert json_safe({"path": "caf\udce9.txt"}) == {"path": "caf\\xe9.txt"}


def test_non_utf8_file_name_survives_a_snapshot(repo: Path) -> None:
    name = b"caf\xe9.txt"
    (repo / name.decode("utf-8", "surrogateescape")).write_bytes(b"x\n")
    path, snapshot = _save(repo)
    untracked = [entry["path"] for entry in snapshot["changes"]["untracked"]]
    assert "caf\\xe9.txt" in untracked
    assert load_latest(find_layout(repo))[0] == json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- assembling


def test_snapshot_without_a_progress_file_notes_it(repo: Path) -> None:
    result = run_cli("snapshot", "--json", cwd=repo)
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["progress"]["valid"] is False and "no progress file" in data["progress"]["error"]
    assert any("progress.yaml" in note for note in data["notes"])
    assert data["trigger"] == "manual"


def test_snapshot_with_an_invalid_progress_file_still_works(repo: Path) -> None:
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit/progress.yaml").write_text("schema_version: 1\ngoal: [not, text]\n")
    result = run_cli("snapshot", cwd=repo)
    assert result.code == 0, result.stderr
    assert "progress.yaml not usable" in result.stdout and "progress.yaml:2" in result.stdout


def test_units_summary_and_artifacts(repo: Path) -> None:
    commit_file(repo, "src/a.py", "a = 1\n")
    (repo / "out").mkdir()
    (repo / "out/1.json").write_text("{}\n")
    (repo / "reports").mkdir()
    (repo / "reports/r.csv").write_text("a,b\n")
    write_progress(
        repo,
        [
            {
                "id": "one",
                "title": "One",
                "status": "done",
                "verify": "true",
                "files": ["src/*.py"],
                "artifacts": ["out/1.json", "out/2.json"],
                "evidence": evidence(repo, ["src/*.py"], ["out/1.json", "out/2.json"]),
            },
            {"id": "two", "title": "Two", "verify": "true", "artifacts": ["out/3.json"]},
        ],
    )
    (repo / ".resume-kit/config.yaml").write_text("artifacts: ['reports/*.csv']\n")
    layout = find_layout(repo)
    from resume_kit.progress_file.config import load as load_config

    snapshot = take_snapshot(layout, load_config(layout), "verify")
    one = snapshot["units"]["one"]
    assert one["missing_artifacts"] == ["out/2.json"]
    assert one["fingerprint"] == load(layout).progress.units[0].evidence.fingerprint  # type: ignore[union-attr]
    assert one["evidence_in_history"] is True
    assert snapshot["units"]["two"] == {"status": "todo"}
    paths = {a["path"]: a for a in snapshot["artifacts"]}
    assert set(paths) == {"out/1.json", "out/2.json", "out/3.json", "reports/r.csv"}
    assert paths["out/1.json"]["exists"] is True and paths["out/2.json"]["exists"] is False
    assert snapshot["trigger"] == "verify" and snapshot["notes"] == []


def test_facts_of_a_dirty_tree_with_commits(repo: Path) -> None:
    commit_file(repo, "a.txt", "a\n", "add a\n\nResume-Unit: unit-a")
    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    (repo / "staged.txt").write_text("s\n")
    git(repo, "add", "staged.txt")
    _, snapshot = _save(repo)
    changes = snapshot["changes"]
    assert changes["counts"] == {"staged": 1, "unstaged": 1, "untracked": 1}
    assert snapshot["recent_commits"][0]["unit"] == "unit-a"
    assert snapshot["repo"]["branch"] == "main" and snapshot["repo"]["operation"] is None


# --------------------------------------------------------------------------- the command


def test_snapshot_reports_what_changed_since_the_previous(repo: Path) -> None:
    write_progress(repo, [{"id": "one", "title": "One", "verify": "true"}])
    first = run_cli("snapshot", cwd=repo)
    assert first.code == 0 and "first snapshot" in first.stdout
    commit_file(repo, "feature.py", "x = 1\n", "Add the feature")
    (repo / "README.md").write_text("edited\n")
    write_progress(repo, [{"id": "one", "title": "One", "status": "in_progress", "verify": "true"}])
    second = run_cli("snapshot", cwd=repo)
    assert second.code == 0, second.stderr
    out = second.stdout
    assert "1 new commit:" in out and "Add the feature" in out
    assert "newly changed: README.md" in out
    assert "unit one: todo -> in_progress" in out
    commit_file(repo, "README.md", "edited\n", "Commit the readme")
    third = run_cli("snapshot", cwd=repo)
    assert "no longer changed: README.md" in third.stdout


def test_snapshot_json_prints_the_saved_object_and_quiet_prints_nothing(repo: Path) -> None:
    result = run_cli("snapshot", "--json", "--trigger", "brief", cwd=repo)
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) >= TOP_KEYS and data["trigger"] == "brief"
    saved = repo / ".resume-kit/snapshots" / f"{data['id']}.json"
    assert json.loads(saved.read_text(encoding="utf-8")) == data
    assert data["checksum"] == compute_checksum(data)
    quiet = run_cli("snapshot", "--quiet", cwd=repo)
    assert quiet.code == 0 and quiet.stdout == "" and quiet.stderr == ""
    assert len(list((repo / ".resume-kit/snapshots").glob("*.json"))) == 2


def test_hook_trigger_outside_a_repository_exits_0_with_one_line(tmp_path: Path) -> None:
    result = run_cli("snapshot", "--trigger", "pre-compact", cwd=tmp_path, input="")
    assert result.code == 0 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "skipped" in result.stderr
    plain = run_cli("snapshot", cwd=tmp_path)
    assert plain.code == 2 and "Traceback" not in plain.stderr


def test_pre_compact_reads_the_hook_payload(repo: Path, tmp_path: Path) -> None:
    session = tmp_path / "agent" / "session.jsonl"
    session.parent.mkdir()
    session.write_text(
        json.dumps(
            {
                "type": "user",
                "uuid": "u1",
                "sessionId": "abc",
                "cwd": str(repo),
                "timestamp": "2026-11-29T08:00:00Z",
                "message": {"role": "user", "content": "go on"},
            }
        )
        + "\n"
    )
    payload = {
        "session_id": "abc",
        "transcript_path": str(session),
        "cwd": str(repo),
        "hook_event_name": "PreCompact",
        "trigger": "auto",
    }
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_cli(
        "snapshot", "--trigger", "pre-compact", "--quiet", cwd=elsewhere, input=json.dumps(payload)
    )
    assert result.code == 0 and result.stdout == "", result.stderr
    loaded, _ = load_latest(find_layout(repo))
    assert loaded is not None and loaded["trigger"] == "pre-compact"
    assert loaded["transcript"] is not None and loaded["transcript"]["path"] == str(session)


def test_diff_of_identical_snapshots_is_empty(repo: Path) -> None:
    _, snapshot = _save(repo)
    diff = diff_snapshots(snapshot, snapshot)
    assert diff["previous"] == snapshot["id"]
    assert not any(
        diff[k]
        for k in (
            "new_commits",
            "files_changed",
            "files_cleaned",
            "units",
            "head",
            "branch",
            "operation",
        )
    )


def test_snapshot_is_fast_with_many_done_units(repo: Path) -> None:
    """1,500 done units with artifacts and a few evidence commits: the unit summary (current
    fingerprints, missing artifacts, history checks) stays far under a second."""
    out = repo / "out"
    out.mkdir()
    shas = []
    for batch in range(3):
        for i in range(batch * 500, (batch + 1) * 500):
            (out / f"{i:04d}.json").write_text(f'{{"n": {i}}}\n')
        git(repo, "add", "out")
        git(repo, "commit", "-q", "-m", f"batch {batch}")
        shas.append(git(repo, "rev-parse", "HEAD").stdout.strip())
    units = []
    for i in range(1500):
        art = [f"out/{i:04d}.json"]
        ev = Evidence(
            "2026-11-29T08:00:00Z", shas[i // 500], False, fingerprint(repo, [], art), 0.1
        )
        units.append(Unit(f"doc-{i:04d}", f"Doc {i}", "done", "true", [], art, [], ev))
    (out / "0007.json").write_text("changed\n")
    progress = Progress(goal="g", units=units)
    layout = find_layout(repo)
    started = time.perf_counter()
    snapshot = take_snapshot(layout, Config(), "post-commit", progress=progress)
    elapsed = time.perf_counter() - started
    assert all(u["evidence_in_history"] is True for u in snapshot["units"].values())
    assert len(snapshot["artifacts"]) == 1500 and snapshot["notes"] == []
    changed = [f.unit for f in reconcile(progress, snapshot) if f.code == "DONE_BUT_CHANGED"]
    assert changed == ["doc-0007"]
    assert elapsed < 2.0, elapsed  # measured 0.12-0.15 s; generous for 2 shared CI cores
