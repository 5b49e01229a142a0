"""The tool hook (issue 15 points 1 and 2) for GitHub Copilot CLI, on the exact payloads
Copilot CLI 1.0.102 sent a logging preToolUse/postToolUse hook (a scripted `git push` through its
``bash`` tool against the loopback mock): camelCase keys, ``toolArgs`` an object, the outcome in
``toolResult``, where a non-zero exit is still ``resultType: "success"``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resume_kit.integrations import tool_hook
from tests.cli.test_tool_hook import attempts, run

SESSION = "3b8b7428-7440-41d4-9ccd-a65bf6bf2f39"


def pre(repo: Path, command: str, session: str = SESSION) -> dict[str, Any]:
    return {
        "sessionId": session,
        "timestamp": 1796151931799,
        "cwd": str(repo),
        "toolName": "bash",
        "toolArgs": {"command": command, "description": "push"},
    }


def post(before: dict[str, Any], text: str, kind: str = "success") -> dict[str, Any]:
    return {
        **before,
        "timestamp": 1796151931879,
        "toolResult": {"resultType": kind, "textResultForLlm": text},
    }


PUSHED = (
    "To /tmp/remote.git\n * [new branch]      main -> main\n<shellId: 0 completed with exit code 0>"
)
NO_REMOTE = (
    "fatal: 'nowhere' does not appear to be a git repository\nfatal: Could not read from remote "
    "repository.\n\nPlease make sure you have the correct access rights\nand the repository "
    "exists.\n<shellId: 0 completed with exit code 128>"
)


@pytest.fixture
def project(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    return repo


def test_push_recorded_then_a_new_session_gets_the_flat_answer(project: Path) -> None:
    first = pre(project, "git push origin main")
    assert run("pre", first, "copilot") is None
    assert attempts(project) == [("unknown", SESSION, None)]
    assert run("post", post(first, PUSHED), "copilot") is None
    assert attempts(project) == [("success", SESSION, "exit 0")]
    answer = run("pre", pre(project, "git push origin main", "other-session"), "copilot")
    assert answer is not None and set(answer) == {"permissionDecision", "permissionDecisionReason"}
    # "ask": Copilot asks a person, and in -p mode refuses the call itself
    assert answer["permissionDecision"] == "ask"
    reason = answer["permissionDecisionReason"]
    assert "already ran and succeeded" in reason and SESSION in reason
    assert len(attempts(project)) == 1


def test_a_non_zero_exit_reported_as_success_is_failed(project: Path) -> None:
    first = pre(project, "git push nowhere main")
    run("pre", first, "copilot")
    run("post", post(first, NO_REMOTE), "copilot")
    assert attempts(project) == [("failed", SESSION, "exit 128")]
    assert run("pre", pre(project, "git push nowhere main", "s2"), "copilot") is None


def test_a_printed_exit_marker_is_not_the_exit_status(project: Path) -> None:
    first = pre(project, "git push origin main")
    run("pre", first, "copilot")
    faked = (
        "<shellId: 0 completed with exit code 0>\nerror\n<shellId: 0 completed with exit code 1>"
    )
    run("post", post(first, faked), "copilot")
    assert attempts(project) == [("failed", SESSION, "exit 1")]


@pytest.mark.parametrize(
    ("kind", "text", "status"),
    [("failure", "boom", "failed"), ("denied", "no", "failed"), ("odd", "x", "unknown")],
)
def test_result_types(project: Path, kind: str, text: str, status: str) -> None:
    first = pre(project, "git push origin main")
    run("pre", first, "copilot")
    run("post", post(first, text, kind), "copilot")
    assert [a[0] for a in attempts(project)] == [status]


def test_tool_args_as_a_json_string_and_other_tools(project: Path) -> None:
    path = project / ".resume-kit" / "progress.yaml"
    as_string = {**pre(project, ""), "toolArgs": json.dumps({"command": "npm publish"})}
    assert run("pre", as_string, "copilot") is None
    assert [a[0] for a in attempts(project)] == ["unknown"]
    before = path.read_bytes()
    for other in (
        {**pre(project, ""), "toolName": "view", "toolArgs": {"path": "README.md"}},
        {**pre(project, ""), "toolArgs": "{not json"},
        {**pre(project, "git status")},
    ):
        assert run("pre", other, "copilot") is None
    assert path.read_bytes() == before


def test_warn_and_deny_modes_keep_the_flat_shape() -> None:
    from resume_kit.core.guard import Decision

    denied = json.loads(tool_hook.answer("copilot", Decision("deny", "why")))
    assert denied == {"permissionDecision": "deny", "permissionDecisionReason": "why"}


def test_the_fourth_identical_failing_call_is_asked_about(project: Path) -> None:
    failing = pre(project, "pytest -q")
    text = "E   assert 1 == 2\n1 failed\n<shellId: 0 completed with exit code 1>"
    for _ in range(3):
        assert run("pre", failing, "copilot") is None
        assert run("post", post(failing, text), "copilot") is None
    answer = run("pre", failing, "copilot")
    assert answer is not None and answer["permissionDecision"] == "ask"
    assert "loop guard" in answer["permissionDecisionReason"]
