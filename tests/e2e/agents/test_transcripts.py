"""What the real binaries write (transcripts, rollouts, task files) is read right by
resume-kit's readers: a scripted turn (task creation and update, a failing shell command), then
a compaction, then ``read_transcript`` on the work tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resume_kit.facts.transcripts import read_transcript
from tests.agent_server import Part, Script, Text, ToolCall
from tests.e2e.agents import test_claude_code as claude_e2e
from tests.e2e.agents import test_codex as codex_e2e
from tests.e2e.agents.conftest import Workspace, save_fixture

pytestmark = [pytest.mark.agents, pytest.mark.slow]

PROMPT = "Extract the contracts, one unit at a time"
MISSING = "/nonexistent-dir-e2e"
# Claude Code 2.1.332 gives its newest default model neither the Task tools nor TodoWrite
# ("TaskCreate is disabled for this session"); an older model gets the Task tools.
TASK_MODEL = "claude-sonnet-4-5"


def _tool_results(request: dict[str, Any]) -> int:
    return json.dumps(request.get("messages", [])).count('"type": "tool_result"')


def claude_script(protocol: str, request: dict[str, Any]) -> list[Part]:
    if claude_e2e.COMPACTION_PROMPT in json.dumps(request.get("messages", [])):
        return [Text("<analysis>a</analysis>\n<summary>Worked on contract 001.</summary>")]
    steps: list[Part] = [
        ToolCall(
            "TaskCreate",
            {
                "subject": "Extract contract 001",
                "description": "Parse docs/001 into out/001.json",
                "activeForm": "Extracting contract 001",
            },
        ),
        ToolCall("TaskUpdate", {"taskId": "1", "status": "in_progress"}),
        ToolCall("Bash", {"command": f"ls {MISSING}", "description": "List the inputs"}),
        Text("Stopping here."),
    ]
    return [steps[min(_tool_results(request), len(steps) - 1)]]


@pytest.fixture
def claude_session(workspace: Workspace) -> tuple[Workspace, dict[str, Any]]:
    ws = workspace
    ws.server.script = claude_script
    args = ("--model", TASK_MODEL, "--allowedTools", "Bash")
    session = claude_e2e.claude(ws, PROMPT, *args)["session_id"]
    claude_e2e.claude(ws, "/compact", "--resume", session, *args)
    tasks = ws.home / ".claude" / "tasks" / session
    assert json.loads((tasks / "1.json").read_text())["status"] == "in_progress"
    transcript = read_transcript(ws.root)
    assert transcript is not None
    assert transcript["session_id"] == session
    version = ws.bins.claude_version
    save_fixture("claude-code", version, Path(transcript["path"]), "session.jsonl")
    save_fixture("claude-code", version, tasks / "1.json", "tasks/1.json")
    return ws, transcript


def test_claude_code_transcript_errors_request_compaction(
    claude_session: tuple[Workspace, dict[str, Any]],
) -> None:
    _, transcript = claude_session
    assert transcript["agent"] == "claude-code"
    assert transcript["notes"] == []
    assert transcript["last_request"] == PROMPT
    errors = transcript["tool_errors"]
    assert [e["tool"] for e in errors] == ["Bash"], errors
    assert MISSING in errors[0]["message"] and "No such file or directory" in errors[0]["message"]
    assert transcript["compactions"]["count"] == 1


def test_claude_code_task_list(claude_session: tuple[Workspace, dict[str, Any]]) -> None:
    _, transcript = claude_session
    assert transcript["todos"] == [{"content": "Extract contract 001", "status": "in_progress"}]


def codex_script() -> Script:
    calls: list[int] = []

    def script(protocol: str, request: dict[str, Any]) -> list[Part]:
        text = json.dumps(request.get("input", []))
        if codex_e2e.COMPACTION_PROMPT in text:
            return [Text("Summary: worked on contract 001.")]
        if calls:  # one failing command, then text (a compaction drops the call's output)
            return [Text("Stopping here.")]
        calls.append(1)
        return [ToolCall("exec_command", {"cmd": f"ls {MISSING}", "yield_time_ms": 1000})]

    return script


def test_codex_rollout_errors_request_compaction(workspace: Workspace) -> None:
    ws = workspace
    codex_e2e.write_config(ws)
    ws.server.script = codex_script()
    thread = codex_e2e.codex(ws, PROMPT)
    # Every mock reply reports 1,220 tokens: above this limit Codex compacts before the turn.
    codex_e2e.write_config(ws, extra="model_auto_compact_token_limit = 1000\n")
    codex_e2e.codex(ws, "resume", thread, "carry on")  # compacts first (tokens over the limit)
    assert any(codex_e2e.COMPACTION_PROMPT in body for body in ws.bodies("/v1/responses"))
    transcript = read_transcript(ws.root)
    assert transcript is not None
    assert transcript["agent"] == "codex"
    assert transcript["session_id"] == thread
    save_fixture("codex", ws.bins.codex_version, Path(transcript["path"]), "rollout.jsonl")
    assert transcript["notes"] == []
    assert transcript["last_request"] == "carry on"
    errors = transcript["tool_errors"]
    assert len(errors) == 1 and MISSING in errors[0]["message"], errors
    assert transcript["compactions"]["count"] == 1


def transcript_section(body: str) -> str:
    """What the brief in a request body says about the agent transcript (for messages)."""
    start = body.find("Agent transcript")
    return body[start : start + 400] if start >= 0 else "(no transcript section)"


def test_claude_code_fresh_start_reports_the_session_before(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    ws.server.script = claude_script
    claude_e2e.claude(ws, PROMPT, "--model", TASK_MODEL, "--allowedTools", "Bash")
    # the session above ended (a crash, say); a new one starts with the hooks in place
    claude_e2e.integrate(ws)
    ws.server.clear()
    claude_e2e.claude(ws, "hello")
    body = claude_e2e.messages_bodies(ws)[-1]
    assert "Startup-marker-c1a7" in body  # the brief arrived
    assert MISSING in body and PROMPT in body, transcript_section(body)


def test_codex_fresh_start_reports_the_session_before(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    codex_e2e.write_config(ws)
    ws.server.script = codex_script()
    codex_e2e.codex(ws, PROMPT)
    codex_e2e.integrate(ws)
    codex_e2e.approve_hooks(ws)
    ws.server.clear()
    codex_e2e.codex(ws, "hello")
    body = ws.bodies("/v1/responses")[-1]
    assert "Startup-marker-c1a7" in body
    assert MISSING in body and PROMPT in body, transcript_section(body)
