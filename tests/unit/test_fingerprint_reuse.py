"""Fingerprints and artifacts' facts reused from the previous snapshot's record equal a full
recomputation.

Real git repositories; each step changes the work tree (edits, reverts, staging, commits,
checkouts, renames, deletes, untracked and ignored files, assume-unchanged and skip-worktree
flags, line-ending attributes) and the snapshot's units (fingerprints, missing artifacts), its
artifacts (size, SHA-256) and its DONE_BUT_CHANGED findings are compared with a recomputation
of every unit and a fresh read of every artifact. The racy
margin is set to 0 so that files written a moment ago may be recorded at all.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from resume_kit.core.reconcile import reconcile
from resume_kit.facts import fingerprint_reuse
from resume_kit.facts.artifacts import read_artifacts
from resume_kit.facts.fingerprint import fingerprint
from resume_kit.facts.snapshot import (
    add_evidence_history,
    declared_artifacts,
    take_snapshot,
    unit_fingerprints,
)
from resume_kit.infra.paths import Layout, find_layout
from resume_kit.model.progress import Evidence, Progress, Unit
from resume_kit.progress_file.config import Config
from tests.conftest import git

UNITS = (  # id, files, artifacts
    ("u-a", ["src/a.py"], ["out/a.json"]),
    ("u-b", ["src/b.py"], []),
    ("u-c", ["src/c.py"], ["ignored/c.out"]),  # an ignored artifact: never reused
    ("u-glob", ["src/*.py"], []),  # a glob: never reused
    ("u-new", ["src/new.py"], []),  # not there at first
    ("u-d", ["src/d.py"], ["out/d.json"]),
    ("u-d2", ["src/d.py"], ["out/d.json"]),  # the same files as u-d
)
PATHS = ["src/a.py", "src/b.py", "src/c.py", "src/d.py", "src/new.py", "out/a.json", "out/d.json"]


@pytest.fixture(autouse=True)
def _no_racy_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fingerprint_reuse, "RACY_NS", 0)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())


def _make_repo(root: Path) -> tuple[Layout, Progress]:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    _write(root, ".gitignore", "ignored/\n*.log\n")
    for rel in PATHS:
        if rel != "src/new.py":
            _write(root, rel, f"{rel} v1\nline two\n")
    _write(root, "ignored/c.out", "ignored artifact\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    git(root, "branch", "side")
    git(root, "checkout", "-q", "side")
    _write(root, "src/b.py", "b on side\n")
    git(root, "commit", "-q", "-am", "side")
    git(root, "checkout", "-q", "main")
    (root / ".resume-kit").mkdir()
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    units = [
        Unit(
            id=uid,
            title=uid,
            status="done",
            verify="true",
            files=files,
            artifacts=artifacts,
            evidence=Evidence(
                verified_at="2026-12-01T00:00:00Z",
                commit=head,
                dirty=False,
                fingerprint=fingerprint(root, files, artifacts),
                duration_s=0.1,
            ),
        )
        for uid, files, artifacts in UNITS
    ]
    return find_layout(root), Progress(goal="g", units=units)


def _changed_ids(findings: list[object]) -> set[str]:
    return {
        str(getattr(f, "unit", None) or getattr(f, "unit_id", None))
        for f in findings
        if getattr(f, "code", None) == "DONE_BUT_CHANGED"
    }


def _check(layout: Layout, progress: Progress) -> dict[str, object]:
    """A snapshot (with reuse) against every unit recomputed and every artifact read afresh;
    returns the snapshot's units."""
    snapshot = take_snapshot(layout, Config(), "manual", progress=progress)
    head = snapshot["repo"]["head"]
    full = add_evidence_history(layout, progress, unit_fingerprints(layout, progress, []), head, [])
    assert snapshot["units"] == full
    refused: list[str] = []
    paths = declared_artifacts(layout.root, progress, Config())[0]
    assert snapshot["artifacts"] == read_artifacts(layout.root, paths, notes=refused)
    assert [n for n in snapshot["notes"] if n.startswith("artifacts not read")] == refused
    recomputed = dict(snapshot)
    recomputed["units"] = full
    assert _changed_ids(reconcile(progress, snapshot)) == _changed_ids(
        reconcile(progress, recomputed)  # type: ignore[arg-type]
    )
    return dict(snapshot["units"])


def _record(layout: Layout) -> dict[str, object]:
    file = layout.user_cache / fingerprint_reuse.FILE_NAME
    return dict(json.loads(file.read_text())) if file.exists() else {}


# --------------------------------------------------------------------------- the steps


def _git(root: Path, *args: str) -> None:
    git(root, *args, check=False)


STEPS = {
    "edit": lambda root, rel: _write(root, rel, f"{rel} changed\n"),
    "same-bytes": lambda root, rel: _write(root, rel, f"{rel} v1\nline two\n"),
    "crlf": lambda root, rel: _write(root, rel, f"{rel} v1\r\nline two\r\n"),
    "refresh": lambda root, rel: _git(root, "update-index", "-q", "--refresh"),
    "revert": lambda root, rel: _git(root, "checkout", "-q", "--", rel),
    "stage": lambda root, rel: _git(root, "add", "-A", "--", rel),
    "commit": lambda root, rel: _git(root, "commit", "-q", "-a", "--allow-empty", "-m", "c"),
    "commit-all": lambda root, rel: (_git(root, "add", "-A"), _git(root, "commit", "-qm", "c")),
    "side": lambda root, rel: _git(root, "checkout", "-q", "-f", "side"),
    "main": lambda root, rel: _git(root, "checkout", "-q", "-f", "main"),
    "rename": lambda root, rel: _git(root, "mv", "-f", rel, rel + ".moved"),
    "rename-back": lambda root, rel: _git(root, "mv", "-f", rel + ".moved", rel),
    "delete": lambda root, rel: (root / rel).unlink(missing_ok=True),
    "untracked": lambda root, rel: _write(root, "src/new.py", "new\n"),
    "ignored": lambda root, rel: _write(root, "ignored/c.out", "another\n"),
    "assume-unchanged": lambda root, rel: (
        _git(root, "update-index", "--assume-unchanged", "--", rel),
        _write(root, rel, f"{rel} behind git's back\n"),
    ),
    "skip-worktree": lambda root, rel: (
        _git(root, "update-index", "--skip-worktree", "--", rel),
        (root / rel).unlink(missing_ok=True),
    ),
    "attributes": lambda root, rel: _write(root, ".gitattributes", "* text eol=lf\n"),
    "no-attributes": lambda root, rel: (root / ".gitattributes").unlink(missing_ok=True),
    "folder-link": lambda root, rel: _swap_folder_for_link(root),
}


def _swap_folder_for_link(root: Path) -> None:
    """``out/`` becomes a symlink to a copy of itself: same bytes, but no longer in the tree."""
    out = root / "out"
    if out.is_symlink() or not out.is_dir():
        return
    copy = root / "ignored" / "out-copy"
    copy.mkdir(parents=True, exist_ok=True)
    for child in out.iterdir():
        (copy / child.name).write_bytes(child.read_bytes())
        child.unlink()
    out.rmdir()
    out.symlink_to(copy)


@st.composite
def scripts(draw: st.DrawFn) -> list[tuple[str, str]]:
    steps = st.tuples(st.sampled_from(sorted(STEPS)), st.sampled_from(PATHS))
    return draw(st.lists(steps, min_size=1, max_size=6))


def _temp_repo() -> Iterator[tuple[Path, Layout, Progress]]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "repo"
        layout, progress = _make_repo(root)
        yield root, layout, progress


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(script=scripts())
# out/a.json read while git runs and out/d.json after it (deferred), both then refused behind
# the symlinked folder: one note names both, as one read of them all would
@example(script=[("assume-unchanged", "out/a.json"), ("folder-link", "src/a.py")])
def test_reused_fingerprints_equal_a_full_recomputation(script: list[tuple[str, str]]) -> None:
    for root, layout, progress in _temp_repo():
        _check(layout, progress)  # the first snapshot records
        for step, rel in script:
            STEPS[step](root, rel)
            _check(layout, progress)
            _check(layout, progress)  # and the one after it, from that record


@pytest.mark.parametrize("step", sorted(STEPS))
def test_each_step_on_each_path(step: str) -> None:
    for rel in PATHS:
        for root, layout, progress in _temp_repo():
            _check(layout, progress)
            STEPS[step](root, rel)
            _check(layout, progress)
            _check(layout, progress)


def test_only_plain_tracked_clean_units_are_recorded() -> None:
    for root, layout, progress in _temp_repo():
        _check(layout, progress)
        assert sorted(_record(layout)["units"]) == ["u-a", "u-b", "u-d", "u-d2"]  # type: ignore[call-overload]
        assert sorted(_record(layout)["artifacts"]) == ["out/a.json", "out/d.json"]  # type: ignore[call-overload]
        _write(root, "src/a.py", "edited\n")
        _write(root, "out/d.json", "edited\n")
        _check(layout, progress)
        assert sorted(_record(layout)["units"]) == ["u-b"]  # type: ignore[call-overload]
        assert sorted(_record(layout)["artifacts"]) == ["out/a.json"]  # type: ignore[call-overload]


def test_a_recorded_fingerprint_is_what_the_snapshot_shows() -> None:
    """The reuse is real: a (planted) recorded value is shown while git says nothing changed,
    and recomputed as soon as the file is touched, the HEAD's tree or the index flags change."""
    for root, layout, progress in _temp_repo():
        _check(layout, progress)
        file = layout.user_cache / fingerprint_reuse.FILE_NAME
        planted = "sha256:" + "0" * 64
        data = json.loads(file.read_text())
        data["units"]["u-b"][0] = planted
        file.write_text(json.dumps(data))
        snapshot = take_snapshot(layout, Config(), "manual", progress=progress)
        assert snapshot["units"]["u-b"]["fingerprint"] == planted
        assert snapshot["units"]["u-a"]["fingerprint"] == progress.units[0].evidence.fingerprint  # type: ignore[union-attr]
        git(root, "checkout", "-q", "side")  # src/b.py differs on side
        assert _check(layout, progress)["u-b"]["fingerprint"] != planted  # type: ignore[index]


def test_recorded_artifact_facts_are_what_the_snapshot_shows() -> None:
    """The artifacts' reuse is real: a (planted) recorded hash is shown while git says the
    file did not change, without the file being looked at, and read again once it did."""
    for root, layout, progress in _temp_repo():
        _check(layout, progress)
        _check(layout, progress)  # the artifacts read after git's status, from the record
        file = layout.user_cache / fingerprint_reuse.FILE_NAME
        planted = "0" * 64
        data = json.loads(file.read_text())
        data["artifacts"]["out/a.json"][1] = planted
        file.write_text(json.dumps(data))
        snapshot = take_snapshot(layout, Config(), "manual", progress=progress)
        shown = {a["path"]: a["sha256"] for a in snapshot["artifacts"]}
        assert shown["out/a.json"] == planted
        _write(root, "out/a.json", "out/a.json v2\nline two\n")  # same size, other bytes
        _check(layout, progress)
        _write(root, "out/a.json", "out/a.json v1\nline two\n")
        _check(layout, progress)  # clean again, recorded again
        data = json.loads(file.read_text())
        data["artifacts"]["out/a.json"][1] = planted
        file.write_text(json.dumps(data))
        git(root, "add", "out/a.json")  # the index changes, the file does not: still reused
        snapshot = take_snapshot(layout, Config(), "manual", progress=progress)
        assert {a["path"]: a["sha256"] for a in snapshot["artifacts"]}["out/a.json"] == planted
        git(root, "update-index", "--assume-unchanged", "out/a.json")  # git stops looking
        _check(layout, progress)


def test_attribute_conversion_is_never_trusted() -> None:
    """Under ``ident`` git compares the collapsed ``$Id$``: a same-size edit of the expanded
    id is clean to git, other bytes to the fingerprint; no record is trusted there."""
    for root, layout, progress in _temp_repo():
        _write(root, ".gitattributes", "src/b.py ident\n")
        _write(root, "src/b.py", "x $Id$\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "ident")
        (root / "src/b.py").unlink()
        git(root, "checkout", "-q", "--", "src/b.py")  # now with the expanded id
        _check(layout, progress)
        text = (root / "src/b.py").read_text()
        at = text.index("$Id: ") + 5  # the first hex digit of the id, overwritten
        _write(root, "src/b.py", text[:at] + "Z" + text[at + 1 :])
        assert git(root, "status", "--porcelain", "--", "src/b.py").stdout == ""
        _check(layout, progress)


def test_autocrlf_config_turns_reuse_off() -> None:
    for root, layout, progress in _temp_repo():
        git(root, "config", "core.autocrlf", "true")
        _check(layout, progress)
        assert _record(layout) == {}


def test_damaged_record_means_computing() -> None:
    for _root, layout, progress in _temp_repo():
        _check(layout, progress)
        file = layout.user_cache / fingerprint_reuse.FILE_NAME
        record = json.loads(file.read_text())
        bad_artifacts = [{"out/a.json": [None, "x"]}, {"out/a.json": 3}, {"out/a.json": [1]}, []]
        damaged = [json.dumps({**record, "artifacts": bad}) for bad in bad_artifacts]
        for text in ("", "[]", "{", json.dumps({"format": 1, "units": {"u-b": 3}}), *damaged):
            file.write_text(text)
            _check(layout, progress)


_RAW = "raw\udcff.py"  # b"raw\xff.py" as git's bytes decode: not UTF-8
_NAMES = st.sampled_from(
    ["a.py", "b\tc.py", "dir/x.json", "dir/.gitattributes", ".gitattributes", _RAW]
)
_ENTRIES = st.tuples(
    st.sampled_from(["H", "h", "S", "M"]),
    st.sampled_from(["100644", "100755", "120000", "160000"]),
    st.sampled_from(["0", "1", "2"]),
    st.one_of(
        _NAMES,
        st.text(st.characters(blacklist_characters="\0"), min_size=1, max_size=8),
        st.binary(min_size=1, max_size=8)
        .filter(lambda raw: b"\0" not in raw)
        .map(lambda raw: raw.decode("utf-8", "surrogateescape")),
    ),
)


@given(st.lists(_ENTRIES, max_size=12), st.sets(_NAMES, max_size=4))
def test_parsing_only_the_needed_paths_says_of_them_what_the_whole_listing_says(
    entries: list[tuple[str, str, str, str]], needed: set[str]
) -> None:
    """``git ls-files -z -s -v``, any tags, modes, stages and names (tabs, newlines and
    names that are not UTF-8 included): read for a few paths it settles them as read whole,
    and finds the same .gitattributes folders."""
    out = b"".join(
        f"{tag} {mode} {'a' * 40} {stage}\t".encode()
        + name.encode("utf-8", "surrogateescape")
        + b"\0"
        for tag, mode, stage, name in entries
    )
    whole, whole_dirs = fingerprint_reuse.parse_ls_files(out)
    some, some_dirs = fingerprint_reuse.parse_ls_files(out, needed)
    assert {p: some.get(p, False) for p in needed} == {p: whole.get(p, False) for p in needed}
    assert some_dirs == whole_dirs
