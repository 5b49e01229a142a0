"""reconcile: for each finding code, a real workspace that produces it and a close one that must
not (real git repositories, real files, a progress.yaml written here, the real snapshot)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from resume_kit.core.reconcile import Ownership, reconcile
from resume_kit.model.findings import Finding
from resume_kit.model.progress import Evidence, LastFailure, Progress, Unit
from tests.conftest import git
from tests.helpers_snapshot import (
    by_code,
    codes,
    commit_file,
    conflicting_branches,
    evidence,
    findings_for,
    head,
    write_progress,
)

# --------------------------------------------------------------------------- git operations


def test_conflicts_during_a_merge(repo: Path) -> None:
    conflicting_branches(repo, "side")
    write_progress(repo, [{"id": "a", "title": "A", "verify": "true"}])
    assert git(repo, "merge", "side", check=False).returncode != 0
    found = findings_for(repo)
    assert {"OPERATION_IN_PROGRESS", "CONFLICTS"} <= codes(found)
    conflicts = by_code(found, "CONFLICTS")
    assert conflicts.severity == "error" and "notes.md" in conflicts.message
    operation = by_code(found, "OPERATION_IN_PROGRESS")
    assert "merge" in operation.message and "git merge --abort" in operation.message
    # close: the conflict resolved and added, the merge not yet committed
    (repo / "notes.md").write_text("resolved\n")
    git(repo, "add", "notes.md")
    found = findings_for(repo)
    assert "CONFLICTS" not in codes(found)
    assert "OPERATION_IN_PROGRESS" in codes(found)


def test_operation_in_progress_bisect_then_reset(repo: Path) -> None:
    first = head(repo)
    commit_file(repo, "b.txt", "b\n")
    commit_file(repo, "c.txt", "c\n")
    write_progress(repo, [{"id": "a", "title": "A", "verify": "true"}])
    git(repo, "bisect", "start", "HEAD", first)
    found = findings_for(repo)
    operation = by_code(found, "OPERATION_IN_PROGRESS")
    assert operation.severity == "error" and "git bisect reset" in operation.message
    assert "CONFLICTS" not in codes(found)
    git(repo, "bisect", "reset")
    assert "OPERATION_IN_PROGRESS" not in codes(findings_for(repo))


# --------------------------------------------------------------------------- done units


def test_done_but_changed_when_an_owned_file_is_edited(repo: Path) -> None:
    commit_file(repo, "src/calc.py", "def add(a, b):\n    return a + b\n")
    commit_file(repo, "other.txt", "x\n")
    ev = evidence(repo, ["src/*.py"])
    write_progress(
        repo,
        [
            {
                "id": "calc",
                "title": "Calc",
                "status": "done",
                "verify": "true",
                "files": ["src/*.py"],
                "evidence": ev,
            }
        ],
    )
    assert "DONE_BUT_CHANGED" not in codes(findings_for(repo))
    # close: touching the file (same bytes) and editing a file the unit does not own
    os.utime(repo / "src/calc.py", (1, 1))
    (repo / "other.txt").write_text("changed\n")
    assert "DONE_BUT_CHANGED" not in codes(findings_for(repo))
    (repo / "src/calc.py").write_text("def add(a, b):\n    return a - b\n")
    found = by_code(findings_for(repo), "DONE_BUT_CHANGED")
    assert found.unit == "calc" and found.severity == "error"
    # the edit is uncommitted: named, with the re-verify of this one unit (issue 14.4)
    assert "verify-next --unit calc" in found.message and "2 h ago" in found.message
    # a new file matching the unit's glob changes the fingerprint too
    (repo / "src/calc.py").write_text("def add(a, b):\n    return a + b\n")
    assert "DONE_BUT_CHANGED" not in codes(findings_for(repo))
    (repo / "src/extra.py").write_text("X = 1\n")
    assert "DONE_BUT_CHANGED" in codes(findings_for(repo))


def test_done_artifact_missing(repo: Path) -> None:
    (repo / "out").mkdir()
    (repo / "out/001.json").write_text('{"party": "a"}\n')
    ev = evidence(repo, [], ["out/001.json"])
    write_progress(
        repo,
        [
            {
                "id": "doc-001",
                "title": "Doc 1",
                "status": "done",
                "verify": "true",
                "artifacts": ["out/001.json"],
                "evidence": ev,
            }
        ],
    )
    assert codes(findings_for(repo)) == set()
    # close: the artifact is there but different -> changed, not missing
    (repo / "out/001.json").write_text('{"party": "b"}\n')
    found = findings_for(repo)
    assert "DONE_BUT_CHANGED" in codes(found) and "DONE_ARTIFACT_MISSING" not in codes(found)
    (repo / "out/001.json").unlink()
    found = findings_for(repo)
    missing = by_code(found, "DONE_ARTIFACT_MISSING")
    assert missing.unit == "doc-001" and "out/001.json" in missing.message
    assert missing.severity == "error"
    assert "DONE_BUT_CHANGED" not in codes(found)  # one finding per cause


def test_done_unverified(repo: Path) -> None:
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "status": "done", "verify": "true"},
            {
                "id": "b",
                "title": "B",
                "status": "done",
                "verify": "true",
                "evidence": evidence(repo),
            },
        ],
    )
    found = [f for f in findings_for(repo) if f.code == "DONE_UNVERIFIED"]
    assert [f.unit for f in found] == ["a"]
    assert found[0].severity == "warn" and "verify-next" in found[0].message


def test_evidence_not_in_history_after_a_reset(repo: Path) -> None:
    base = head(repo)
    verified = commit_file(repo, "a.txt", "a\n")
    write_progress(
        repo,
        [
            {
                "id": "kept",
                "title": "Kept",
                "status": "done",
                "verify": "true",
                "evidence": evidence(repo, commit=base),
            },
            {
                "id": "lost",
                "title": "Lost",
                "status": "done",
                "verify": "true",
                "evidence": evidence(repo, commit=verified),
            },
        ],
    )
    assert "EVIDENCE_NOT_IN_HISTORY" not in codes(findings_for(repo))
    git(repo, "reset", "-q", "--hard", base)
    found = [f for f in findings_for(repo) if f.code == "EVIDENCE_NOT_IN_HISTORY"]
    assert [f.unit for f in found] == ["lost"]
    assert found[0].severity == "error" and verified[:7] in found[0].message
    assert "verify-next --unit lost" in found[0].message


def test_evidence_commit_that_does_not_exist_or_is_not_a_sha(repo: Path) -> None:
    write_progress(
        repo,
        [
            {
                "id": "gone",
                "title": "Gone",
                "status": "done",
                "verify": "true",
                "evidence": evidence(repo, commit="0123456789abcdef0123456789abcdef01234567"),
            },
            {
                "id": "odd",
                "title": "Odd",
                "status": "done",
                "verify": "true",
                "evidence": evidence(repo, commit="--output=/tmp/x"),
            },
        ],
    )
    found = [f.unit for f in findings_for(repo) if f.code == "EVIDENCE_NOT_IN_HISTORY"]
    assert found == ["gone", "odd"]


def test_many_distinct_evidence_commits_use_one_rev_list(repo: Path) -> None:
    shas = [commit_file(repo, f"f{i}.txt", f"{i}\n") for i in range(15)]
    git(repo, "checkout", "-q", "-b", "other", shas[0])
    stray = commit_file(repo, "stray.txt", "s\n")
    git(repo, "checkout", "-q", "main")
    units = [
        {
            "id": f"u{i:02d}",
            "title": f"U{i}",
            "status": "done",
            "verify": "true",
            "evidence": evidence(repo, commit=sha),
        }
        for i, sha in enumerate(shas)
    ]
    units.append(
        {
            "id": "stray",
            "title": "S",
            "status": "done",
            "verify": "true",
            "evidence": evidence(repo, commit=stray),
        }
    )
    write_progress(repo, units)
    found = [f.unit for f in findings_for(repo) if f.code == "EVIDENCE_NOT_IN_HISTORY"]
    assert found == ["stray"]


# --------------------------------------------------------------------------- changes, tests, logs


def test_unaccounted_changes_only_when_units_declare_files(repo: Path) -> None:
    commit_file(repo, "src/app.py", "x = 1\n")
    units = [
        {
            "id": "app",
            "title": "App",
            "verify": "true",
            "files": ["src/**/*.py"],
            "artifacts": ["out/result.json"],
        }
    ]
    write_progress(repo, units)
    (repo / "src/app.py").write_text("x = 2\n")
    (repo / "src/new").mkdir()
    (repo / "src/new/mod.py").write_text("y = 1\n")  # untracked folder, collapsed by git
    (repo / "out").mkdir()
    (repo / "out/result.json").write_text("{}\n")
    (repo / ".resume-kit/scratch.txt").write_text("tool state never counts\n")
    assert "UNACCOUNTED_CHANGES" not in codes(findings_for(repo))
    (repo / "notes.txt").write_text("stray\n")
    (repo / "README.md").write_text("changed\n")
    found = by_code(findings_for(repo), "UNACCOUNTED_CHANGES")
    assert "notes.txt" in found.message and "README.md" in found.message
    assert "src/app.py" not in found.message and ".resume-kit" not in found.message
    assert found.severity == "info"  # nothing else is wrong
    # close: the same stray changes, but no unit declares files
    write_progress(repo, [{"id": "app", "title": "App", "verify": "true"}])
    assert "UNACCOUNTED_CHANGES" not in codes(findings_for(repo))


def _last_failed(repo: Path, ids: list[str]) -> None:
    cache = repo / ".pytest_cache/v/cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "lastfailed").write_text(json.dumps(dict.fromkeys(ids, True)))


def test_tests_failing_from_pytest_last_failed(repo: Path) -> None:
    write_progress(repo, [{"id": "a", "title": "A", "verify": "true"}])
    _last_failed(repo, [])
    assert "TESTS_FAILING" not in codes(findings_for(repo))
    _last_failed(repo, ["tests/test_calc.py::test_add"])
    found = by_code(findings_for(repo), "TESTS_FAILING")
    assert "tests/test_calc.py::test_add" in found.message and found.severity == "warn"


def test_log_errors_info_alone_warn_with_other_findings(repo: Path) -> None:
    write_progress(repo, [{"id": "a", "title": "A", "verify": "true"}])
    (repo / "build.log").write_text("starting\nall good\nINFO done\n")
    assert "LOG_ERRORS" not in codes(findings_for(repo))
    (repo / "build.log").write_text("starting\nERROR: could not open db.sqlite\ndone\n")
    found = by_code(findings_for(repo), "LOG_ERRORS")
    assert found.severity == "info" and "build.log" in found.message
    assert "could not open db.sqlite" in found.message
    write_progress(repo, [{"id": "a", "title": "A", "status": "done", "verify": "true"}])
    found_all = findings_for(repo)
    assert by_code(found_all, "LOG_ERRORS").severity == "warn"
    assert "DONE_UNVERIFIED" in codes(found_all)


def test_side_effect_unknown(repo: Path) -> None:
    actions = [
        {"key": "mail-1", "description": "Mailed the client", "status": "success"},
        {"key": "pr-42", "description": "Opened PR 42", "status": "failed"},
    ]
    write_progress(repo, [], actions)
    assert "SIDE_EFFECT_UNKNOWN" not in codes(findings_for(repo))
    actions.append({"key": "notify-42", "description": "Pinged reviewer", "status": "unknown"})
    write_progress(repo, [], actions)
    found = by_code(findings_for(repo), "SIDE_EFFECT_UNKNOWN")
    assert "notify-42" in found.message and "check" in found.message


def _failure(repeats: int) -> dict[str, Any]:
    return {
        "at": "2026-11-29T07:58:00Z",
        "exit_code": 1,
        "signature": "9c1e",
        "repeats": repeats,
        "excerpt": "KeyError: 'party_b' (src/extract.py:88)",
    }


def test_unit_stuck_at_three_repeats(repo: Path) -> None:
    write_progress(
        repo,
        [
            {
                "id": "x",
                "title": "X",
                "status": "in_progress",
                "verify": "false",
                "last_failure": _failure(2),
            }
        ],
    )
    assert "UNIT_STUCK" not in codes(findings_for(repo))
    write_progress(
        repo,
        [
            {
                "id": "x",
                "title": "X",
                "status": "in_progress",
                "verify": "false",
                "last_failure": _failure(3),
            }
        ],
    )
    found = by_code(findings_for(repo), "UNIT_STUCK")
    assert found.unit == "x" and found.severity == "error" and "party_b" in found.message


def _claude_session(path: Path, cwd: Path, todos: list[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "type": "assistant",
        "uuid": "11111111-1111-4111-8111-111111111111",
        "parentUuid": None,
        "sessionId": "s-1",
        "timestamp": "2026-11-29T08:00:00.000Z",
        "cwd": str(cwd),
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": todos}}
            ],
        },
    }
    path.write_text(json.dumps(record) + "\n")
    return path


def test_transcript_disagrees(repo: Path, tmp_path: Path) -> None:
    write_progress(
        repo,
        [
            {"id": "parse-dates", "title": "Parse dates", "verify": "true"},
            {
                "id": "amounts",
                "title": "Extract amounts",
                "status": "done",
                "verify": "true",
                "evidence": evidence(repo),
            },
        ],
    )
    session = tmp_path / "session.jsonl"
    _claude_session(
        session,
        repo,
        [
            {"content": "Parse dates", "status": "in_progress", "activeForm": "Parsing"},
            {"content": "Extract amounts", "status": "completed", "activeForm": "Extracting"},
        ],
    )
    assert "TRANSCRIPT_DISAGREES" not in codes(findings_for(repo, transcript_path=session))
    _claude_session(
        session,
        repo,
        [
            {"content": "  parse DATES ", "status": "completed", "activeForm": "Parsing"},
            {"content": "Extract amounts", "status": "completed", "activeForm": "Extracting"},
        ],
    )
    found = by_code(findings_for(repo, transcript_path=session), "TRANSCRIPT_DISAGREES")
    assert found.unit == "parse-dates" and found.severity == "warn"


# --------------------------------------------------------------------------- pure behaviour


def _snapshot(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "created_at": "2026-11-29T10:00:00Z",
        "repo": {"head": "a" * 40, "operation": None, "conflicts": []},
        "changes": {"staged": [], "unstaged": [], "untracked": [], "truncated": False},
        "logs": [],
        "tests": {"pytest_last_failed": []},
        "artifacts": [],
        "transcript": None,
        "units": {},
        "notes": [],
    }
    base.update(extra)
    return base


def _unit(uid: str, **kw: Any) -> Unit:
    return Unit(id=uid, title=uid.upper(), verify="true", **kw)


def test_sorted_by_severity_then_unit_order() -> None:
    ev = Evidence("2026-11-29T07:00:00Z", "b" * 40, False, "sha256:old", 1.0)
    progress = Progress(
        goal="g",
        units=[
            _unit("first", status="done"),
            _unit("second", status="done", evidence=ev),
            _unit(
                "third",
                status="in_progress",
                last_failure=LastFailure("2026-11-29T08:00:00Z", 1, "s", 4, "boom"),
            ),
        ],
    )
    snapshot = _snapshot(
        repo={
            "head": "a" * 40,
            "operation": "rebase",
            "conflicts": [{"path": "x", "status": "UU"}],
        },
        tests={"pytest_last_failed": ["t::a"]},
        units={
            "first": {"status": "done"},
            "second": {
                "status": "done",
                "fingerprint": "sha256:new",
                "missing_artifacts": [],
                "evidence_in_history": True,
            },
        },
    )
    found = reconcile(progress, snapshot)
    order = [(f.severity, f.code, f.unit) for f in found]
    assert order == [
        ("error", "OPERATION_IN_PROGRESS", None),
        ("error", "CONFLICTS", None),
        ("error", "DONE_BUT_CHANGED", "second"),
        ("error", "UNIT_STUCK", "third"),
        ("warn", "TESTS_FAILING", None),
        ("warn", "DONE_UNVERIFIED", "first"),
    ]
    assert "3 h ago" in found[2].message
    assert all("\n" not in f.message for f in found)


def test_no_progress_reports_invalid_file_and_workspace_facts() -> None:
    snapshot = _snapshot(
        progress={"valid": False, "error": "progress.yaml:3: goal must be a string"},
        notes=["progress.yaml is not usable: progress.yaml:3: goal must be a string"],
        repo={"head": None, "operation": "merge", "conflicts": []},
    )
    found = reconcile(None, snapshot)
    assert [f.code for f in found] == ["PROGRESS_INVALID", "OPERATION_IN_PROGRESS"]
    assert any("progress.yaml:3" in f.message for f in found)


def test_reconcile_is_pure_and_repeatable() -> None:
    progress = Progress(goal="g", units=[_unit("a", status="done")])
    snapshot = _snapshot()
    frozen = json.dumps(snapshot, sort_keys=True)
    first: list[Finding] = reconcile(progress, snapshot)
    assert reconcile(progress, snapshot) == first
    assert json.dumps(snapshot, sort_keys=True) == frozen


@pytest.mark.parametrize(
    ("patterns", "path", "owned"),
    [
        (["src/*.py"], "src/a.py", True),
        (["src/*.py"], "src/sub/a.py", False),
        (["src/**/*.py"], "src/sub/deep/a.py", True),
        (["src/**/*.py"], "src/a.py", True),
        (["**/*.md"], "README.md", True),
        (["docs"], "docs/guide/intro.md", True),
        (["./out/1.json"], "out/1.json", True),
        (["out/[0-9].json"], "out/7.json", True),
        (["out/[!0-9].json"], "out/7.json", False),
        (["src/*.py"], "src/", True),  # collapsed untracked folder that may hold owned files
        (["src/**/*.py"], "src/new/", True),
        (["*.py"], "notes/", False),
        (["src/a.py"], "lib/", False),
    ],
)
def test_ownership_globs(patterns: list[str], path: str, owned: bool) -> None:
    assert Ownership(patterns).owns(path) is owned


def test_a_files_pattern_that_is_no_valid_glob_is_taken_as_a_plain_name() -> None:
    from resume_kit.core.reconcile import Ownership

    owner = Ownership(["[!]x]", "[]", "src/*.py"])
    assert owner.owns("src/a.py")
    assert owner.owns("[!]x]")
    assert not owner.owns("x")


# --------------------------------------------------------------------------- problems linked to units


def test_a_conflict_in_a_done_units_file_names_the_unit_and_the_reverify(repo: Path) -> None:
    conflicting_branches(repo, "side")
    commit_file(repo, "src/other.py", "x = 1\n")
    done = {
        "id": "notes",
        "title": "Notes",
        "status": "done",
        "verify": "true",
        "files": ["notes.md"],
        "evidence": evidence(repo, ["notes.md"]),
    }
    bystander = {**done, "id": "other", "files": ["src/other.py"]}
    bystander["evidence"] = evidence(repo, ["src/other.py"])
    write_progress(repo, [done, bystander])
    assert git(repo, "merge", "side", check=False).returncode != 0
    found = findings_for(repo)
    conflict = by_code(found, "DONE_UNIT_CONFLICT")
    assert conflict.unit == "notes" and conflict.severity == "error"
    assert "`notes.md`" in conflict.message
    assert "`resume-kit verify-next --unit notes`" in conflict.message
    assert [f.unit for f in found if f.code == "DONE_UNIT_CONFLICT"] == ["notes"]


def test_an_uncommitted_change_in_a_done_units_file_says_reverify_that_unit(repo: Path) -> None:
    commit_file(repo, "src/calc.py", "def add(a, b):\n    return a + b\n")
    write_progress(
        repo,
        [
            {
                "id": "calc",
                "title": "Calc",
                "status": "done",
                "verify": "true",
                "files": ["src/*.py"],
                "evidence": evidence(repo, ["src/*.py"]),
            }
        ],
    )
    (repo / "src/calc.py").write_text("def add(a, b):\n    return a - b\n")
    found = by_code(findings_for(repo), "DONE_BUT_CHANGED")
    assert "`src/calc.py` is uncommitted" in found.message
    assert "`resume-kit verify-next --unit calc`" in found.message
    assert "--stale" not in found.message
    # committed: changed since verified, nothing uncommitted: the old advice
    git(repo, "commit", "-qam", "edit")
    found = by_code(findings_for(repo), "DONE_BUT_CHANGED")
    assert "uncommitted" not in found.message and "verify-next --stale" in found.message


def test_stray_changes_with_a_unit_in_progress_are_never_told_to_be_reverted(repo: Path) -> None:
    commit_file(repo, "src/app.py", "x = 1\n")
    units = [
        {"id": "app", "title": "App", "verify": "true", "files": ["src/*.py"]},
        {"id": "docs", "title": "Docs", "verify": "true", "status": "in_progress"},
    ]
    write_progress(repo, units)
    (repo / "guide.md").write_text("half-written\n")  # the in-progress unit's work
    found = by_code(findings_for(repo), "UNACCOUNTED_CHANGES")
    assert "`guide.md`" in found.message and "docs's work in progress" in found.message
    assert "revert" not in found.message
    # close: no unit in progress, the old advice
    units[1]["status"] = "todo"
    write_progress(repo, units)
    assert "commit or revert" in by_code(findings_for(repo), "UNACCOUNTED_CHANGES").message


def test_files_staged_by_an_ongoing_merge_are_not_stray(repo: Path) -> None:
    conflicting_branches(repo, "side")
    git(repo, "checkout", "-q", "side")
    commit_file(repo, "merged.txt", "from side\n")
    git(repo, "checkout", "-q", "main")
    write_progress(repo, [{"id": "n", "title": "N", "verify": "true", "files": ["notes.md"]}])
    assert git(repo, "merge", "side", check=False).returncode != 0
    assert "UNACCOUNTED_CHANGES" not in codes(findings_for(repo))
    # close: the same file staged by hand once the merge is aborted is stray
    git(repo, "merge", "--abort")
    (repo / "merged.txt").write_text("by hand\n")
    git(repo, "add", "merged.txt")
    assert "merged.txt" in by_code(findings_for(repo), "UNACCOUNTED_CHANGES").message
