"""The no-progress meter (issue 15 point 4): compactions, sessions started or resumed, or
tokens with no new verified unit give NO_PROGRESS in the brief; the opt-in Stop hook blocks
once with the report, then lets the session end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from resume_kit.core.activity import Limits, MeterEvent, no_progress
from tests.conftest import run_cli

PROGRESS = """\
schema_version: 1
goal: Extract the contracts
units:
  - id: doc-001
    title: Contract one
    status: in_progress
    verify: "true"
"""


def write_progress(root: Path) -> None:
    (root / ".resume-kit").mkdir(exist_ok=True)
    (root / ".resume-kit" / "progress.yaml").write_text(PROGRESS)


def session_start(root: Path, source: str, session: str = "s1") -> str:
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": "SessionStart",
               "source": source, "transcript_path": str(root / "none.jsonl")}  # fmt: skip
    result = run_cli("brief", "--format", "claude-hook", cwd=root, input=json.dumps(payload))
    assert result.code == 0, result.stderr
    return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"])


def stop(root: Path, session: str = "s1", active: bool = False) -> Any:
    payload = {"session_id": session, "cwd": str(root), "stop_hook_active": active}
    return run_cli(
        "stop-check", cwd=root, input=json.dumps(payload), env={"RESUME_KIT_TRUST": "all"}
    )


def test_compactions_without_a_verified_unit(repo: Path) -> None:
    write_progress(repo)
    session_start(repo, "startup")
    assert "NO_PROGRESS" not in session_start(repo, "compact")
    assert "NO_PROGRESS" not in session_start(repo, "compact")
    brief = session_start(repo, "compact")
    assert "NO_PROGRESS" in brief
    assert "3 compactions, 1 sessions started or resumed" in brief
    assert "stop working on the task and report to the person" in brief
    # a verified unit resets the meter
    assert run_cli("verify-next", cwd=repo, env={"RESUME_KIT_TRUST": "all"}).code == 0
    assert "NO_PROGRESS" not in session_start(repo, "compact")


def test_sessions_and_user_limits(repo: Path, isolated_home: Path) -> None:
    write_progress(repo)
    for n in range(3):
        assert "NO_PROGRESS" not in session_start(repo, "resume", f"s{n}")
    assert "4 sessions started or resumed" in session_start(repo, "startup", "s3")
    user = isolated_home / ".config" / "resume-kit" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("no_progress: {sessions: 10, compactions: 1}\n")
    assert "NO_PROGRESS" not in session_start(repo, "resume", "s4")
    assert "1 compactions" in session_start(repo, "compact", "s4")


def test_a_repository_cannot_silence_the_meter(repo: Path) -> None:
    write_progress(repo)
    (repo / ".resume-kit" / "config.yaml").write_text("no_progress: {compactions: 1000}\n")
    for _ in range(3):
        brief = session_start(repo, "compact")
    assert "NO_PROGRESS" in brief


def test_the_stop_hook_blocks_once_with_the_report(repo: Path) -> None:
    write_progress(repo)
    assert stop(repo).stdout == ""  # no stall: the unit passes its verify command
    for _ in range(3):
        session_start(repo, "compact")
    first = stop(repo)
    assert first.code == 0
    decision = json.loads(first.stdout)
    assert decision["decision"] == "block"
    assert decision["reason"].startswith("resume-kit NO_PROGRESS: 3 compactions")
    assert "Report to the person" in decision["reason"] and "0/1 units done" in decision["reason"]
    again = stop(repo)
    assert (again.code, again.stdout) == (0, "")  # reported once: the session may end
    assert json.loads(stop(repo, session="s2").stdout)["decision"] == "block"  # another session


def test_no_progress_counts() -> None:
    def ev(at: str, kind: str, session: str = "s", tokens: int | None = None) -> MeterEvent:
        return MeterEvent(f"2026-12-01T{at}:00Z", kind, session, tokens)

    events = [ev("09:00", "startup", tokens=0), ev("10:00", "compact", tokens=900_000),
              ev("11:00", "compact", tokens=1_900_000)]  # fmt: skip
    limits = Limits(compactions=3, sessions=4, tokens=2_000_000)
    assert no_progress(events, None, {}, limits) is None
    found = no_progress(events, None, {"s": 2_500_000}, limits)
    assert found is not None and (found.compactions, found.sessions, found.tokens) == (
        2, 1, 2_500_000,
    )  # fmt: skip
    # only what came after the last verification counts
    assert no_progress(events, "2026-12-01T10:30:00Z", {"s": 2_500_000}, limits) is None
    assert no_progress(events, "2026-12-01T08:00:00Z", {}, Limits(compactions=2)) is not None
