"""The ledger keeps history (issue 15 point 3): every attempt kept, `action check` for scripts,
`action forget` for a person, old single-record files still read."""

from __future__ import annotations

import json
from pathlib import Path

from resume_kit.infra.paths import find_layout
from resume_kit.progress_file import io as progress_io

OLD_FILE = """\
schema_version: 1
goal: g
units: []
actions:
  - key: push-branch   # a person's comment
    description: Pushed feature/x
    status: success
    at: '2026-11-29T07:30:00Z'
"""


def test_recording_again_appends_an_attempt(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli("init", "--goal", "g")
    first = cli("action", "record", "push-branch", "--description", "Pushed feature/x")
    assert first.code == 0 and "recorded action push-branch (success)" in first.stderr
    again = cli("action", "record", "push-branch", "--description", "", "--status", "failed")
    assert again.code == 0 and "recorded attempt 2 of action push-branch (failed)" in again.stderr
    (entry,) = json.loads(cli("action", "list", "--json").stdout)
    assert entry["key"] == "push-branch" and entry["status"] == "failed"
    assert entry["description"] == "Pushed feature/x"  # an empty description keeps the old one
    assert [a["status"] for a in entry["attempts"]] == ["success", "failed"]
    assert all(a["at"] for a in entry["attempts"])
    listed = cli("action", "list").stdout.splitlines()
    assert listed[0].startswith("failed   push-branch")
    assert [line.split()[1] for line in listed[1:]] == ["success", "failed"]


def test_an_old_single_record_loads_and_is_kept_as_the_first_attempt(
    repo: Path,
    cli,  # type: ignore[no-untyped-def]
) -> None:
    path = repo / ".resume-kit" / "progress.yaml"
    path.parent.mkdir()
    path.write_text(OLD_FILE)
    (entry,) = json.loads(cli("action", "list", "--json").stdout)
    assert entry["attempts"] == [{"status": "success", "at": "2026-11-29T07:30:00Z"}]
    assert cli("action", "check", "push-branch").code == 1
    assert (
        cli("action", "record", "push-branch", "--description", "", "--status", "unknown").code == 0
    )
    text = path.read_text()
    # The first write migrates the file to schema 2 (SPEC 8); the comment survives.
    assert "# a person's comment" in text and "schema_version: 2" in text
    action = progress_io.load(find_layout(repo)).progress.actions[0]
    assert [a.status for a in action.attempts] == ["success", "unknown"]
    assert action.attempts[0].at == "2026-11-29T07:30:00Z"
    assert action.status == "unknown"
    assert action.last_success() is action.attempts[0]


def test_check_exits_one_once_it_succeeded(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli("init", "--goal", "g")
    assert cli("action", "check", "deploy").code == 0  # never recorded
    cli("action", "record", "deploy", "--description", "d", "--status", "failed")
    cli("action", "record", "deploy", "--description", "d", "--status", "unknown")
    checked = cli("action", "check", "deploy")
    assert checked.code == 0
    assert "never succeeded (2 attempts: failed, unknown)" in checked.stdout
    assert "may have run" in checked.stderr
    cli("action", "record", "deploy", "--description", "d")
    cli("action", "record", "deploy", "--description", "d", "--status", "failed")
    done = cli("action", "check", "deploy")
    assert done.code == 1 and done.stdout.startswith("deploy: succeeded ")


def test_forget_clears_an_entry(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli("init", "--goal", "g")
    cli("action", "record", "deploy", "--description", "d")
    cli("action", "record", "other", "--description", "o")
    assert cli("action", "check", "deploy").code == 1
    forgot = cli("action", "forget", "deploy")
    assert forgot.code == 0 and "forgot action deploy (1 attempts)" in forgot.stderr
    assert cli("action", "check", "deploy").code == 0
    assert [a["key"] for a in json.loads(cli("action", "list", "--json").stdout)] == ["other"]
    missing = cli("action", "forget", "deploy")
    assert missing.code == 2 and "no ledger entry 'deploy'" in missing.stderr


def test_a_bad_attempt_is_a_file_line_error(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".resume-kit" / "progress.yaml"
    path.parent.mkdir()
    path.write_text(OLD_FILE + "    attempts:\n      - status: maybe\n        why: x\n")
    listed = cli("action", "list")
    assert listed.code == 2
    assert "progress.yaml:11: action 'push-branch': attempts[0]: unknown key 'why'" in listed.stderr
