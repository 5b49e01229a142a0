"""The loop guard (issue 15 point 5): three identical tool calls failing the same way give
REPEATED_CALLS in the brief, and the before-tool hook answers "ask" on the fourth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resume_kit.core.activity import CallRecord, repeated, result_signature
from resume_kit.integrations import tool_hook
from tests.cli.test_tool_hook import claude_post, claude_pre


@pytest.fixture
def project(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    return repo


def fail(
    repo: Path, command: str, error: str = "Exit code 1\nE   assert 1 == 2", n: int = 1
) -> None:
    for i in range(n):
        pre = claude_pre(repo, command, call=f"t{command}{i}")
        assert tool_hook.handle("pre", "claude", pre) is None
        post = {**claude_post(pre, ok=False), "error": f"{error} (took {i}.{i}s)"}
        tool_hook.handle("post", "claude", post)


def ask(repo: Path, command: str) -> dict[str, Any] | None:
    text = tool_hook.handle("pre", "claude", claude_pre(repo, command, call="t-next"))
    return None if text is None else json.loads(text)


def test_the_fourth_identical_failing_call_is_asked_about(project: Path) -> None:
    fail(project, "pytest -q tests/test_a.py", n=2)
    assert ask(project, "pytest -q tests/test_a.py") is None  # two failures: go on
    fail(project, "pytest -q tests/test_a.py")
    answer = ask(project, "pytest   -q tests/test_a.py".replace("   ", " "))
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask"
    reason = out["permissionDecisionReason"]
    assert "failed 3 times in a row with the same result" in reason
    assert "pytest -q tests/test_a.py" in reason and "Exit code 1" in reason
    assert ask(project, "pytest -q tests/test_b.py") is None  # another call is not a loop


@pytest.mark.parametrize("between", ["edit", "success", "other-error", "other-session"])
def test_a_streak_is_broken(project: Path, between: str) -> None:
    fail(project, "make", n=2)
    if between == "edit":  # the agent changed something: the after-hook sees every tool
        edit = {**claude_pre(project, ""), "tool_name": "Edit",
                "tool_input": {"file_path": "a.py", "old_string": "x", "new_string": "y"}}  # fmt: skip
        tool_hook.handle("post", "claude", claude_post(edit))
    elif between == "success":
        tool_hook.handle("post", "claude", claude_post(claude_pre(project, "make")))
    elif between == "other-error":
        fail(project, "make", error="Exit code 2\nmake: *** No rule to make target")
    fail(project, "make", n=1 if between != "other-session" else 0)
    if between == "other-session":
        pre = claude_pre(project, "make", session="s2", call="x")
        tool_hook.handle("post", "claude", {**claude_post(pre, ok=False), "error": "Exit code 1"})
    assert ask(project, "make") is None


def test_the_brief_reports_repeated_calls(project: Path, cli) -> None:  # type: ignore[no-untyped-def]
    fail(project, "cargo test", n=3)
    brief = json.loads(cli("brief", "--format", "json").stdout)
    (found,) = [f for f in brief["findings"] if f["code"] == "REPEATED_CALLS"]
    assert found["severity"] == "warn"
    assert "failed 3 times in a row" in found["message"] and "`cargo test`" in found["message"]
    assert "REPEATED_CALLS" in cli("brief").stdout


def test_repeated_is_pure_and_exact() -> None:
    def rec(sig: str, failed: bool = True, result: str = "r", session: str = "s") -> CallRecord:
        return CallRecord(session, sig, failed, result, "cmd", "err", "2026-12-01T10:00:00Z")

    assert len(repeated([rec("a")] * 3, "s")) == 3
    assert repeated([rec("a")] * 3, "s", sig="b") == []
    assert repeated([rec("a"), rec("a"), rec("a", result="q")], "s") == []
    assert repeated([rec("a"), rec("a", failed=False), rec("a")], "s") == []
    assert repeated([rec("a"), rec("a")], "s") == []
    assert result_signature("took 1.2 s\nE x") == result_signature("took  3.45 s E x")
