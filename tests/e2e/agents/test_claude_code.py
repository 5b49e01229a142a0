"""Claude Code (the pinned npm release) against the loopback Messages API: after
``resume-kit integrate claude`` the SessionStart hook's brief reaches the model, on startup,
resume and compact; without ``integrate`` it does not."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.agent_server import Part, Text, ToolCall
from tests.e2e.agents.conftest import AgentRun, Workspace

pytestmark = [pytest.mark.agents, pytest.mark.slow]

HOOK_CONTEXT = "SessionStart hook additional context:"
# The instruction Claude Code sends when it asks the model for a compaction summary.
COMPACTION_PROMPT = "create a detailed summary of the conversation so far"


def claude(ws: Workspace, prompt: str, *args: str) -> dict[str, Any]:
    ws.env.update({"ANTHROPIC_BASE_URL": ws.server.url, "ANTHROPIC_API_KEY": "test-key"})
    run: AgentRun = ws.run(ws.bins.claude, "-p", prompt, "--output-format", "json", *args)
    assert run.code == 0, (run.stdout, run.stderr)
    result: dict[str, Any] = json.loads(run.stdout)
    assert result.get("is_error") is False, result
    return result


def integrate(ws: Workspace) -> None:
    proc = ws.resume_kit("integrate", "claude")
    assert proc.returncode == 0, proc.stderr
    # the brief hook this agent runs starts the entry script isolated (settings.ENTRY_SCRIPT)
    hooks = json.loads((ws.root / ".claude" / "settings.json").read_text())["hooks"]
    assert ' -I -S "$E" brief ' in hooks["SessionStart"][0]["hooks"][0]["command"]


def messages_bodies(ws: Workspace) -> list[str]:
    return ws.bodies("/v1/messages")


def test_brief_reaches_the_model_on_startup_only_after_integrate(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    claude(ws, "hello")
    before = messages_bodies(ws)
    assert before, "Claude Code sent the mock server no request"
    assert not any("Startup-marker-c1a7" in body for body in before)

    integrate(ws)
    ws.server.clear()
    claude(ws, "hello")
    bodies = messages_bodies(ws)
    assert bodies
    assert all(HOOK_CONTEXT in body and "Startup-marker-c1a7" in body for body in bodies)


def test_brief_reaches_the_model_on_resume(workspace: Workspace) -> None:
    ws = workspace
    integrate(ws)
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    session = claude(ws, "first prompt")["session_id"]
    # A different goal now: only a hook that ran on resume can put it in the request.
    ws.write_goal("Resume-marker-5e02 extract the contracts")
    ws.server.clear()
    claude(ws, "second prompt", "--resume", session)
    bodies = messages_bodies(ws)
    assert bodies
    assert "Resume-marker-5e02" in bodies[-1]


def test_brief_reaches_the_model_after_compact(workspace: Workspace) -> None:
    ws = workspace
    integrate(ws)
    ws.write_goal("Startup-marker-c1a7 extract the contracts")

    def script(protocol: str, request: dict[str, Any]) -> list[Part]:
        if COMPACTION_PROMPT in json.dumps(request.get("messages", [])):
            # The goal changes while the model summarises: only a hook that runs after
            # the compaction (SessionStart "compact") can report the new one.
            ws.write_goal("Compact-marker-93c4 extract the contracts")
            return [Text("<analysis>a</analysis>\n<summary>Worked on unit-001.</summary>")]
        return [Text("OK.")]

    ws.server.script = script
    session = claude(ws, "first prompt")["session_id"]
    claude(ws, "/compact", "--resume", session)
    summaries = [body for body in messages_bodies(ws) if COMPACTION_PROMPT in body]
    assert summaries, "no compaction request reached the mock server"
    assert not any("Compact-marker-93c4" in body for body in summaries)

    ws.write_goal("After-marker-d4f1 extract the contracts")
    ws.server.clear()
    claude(ws, "third prompt", "--resume", session)
    last = messages_bodies(ws)[-1]
    assert "After-marker-d4f1" in last  # the resume hook of this run
    assert "Compact-marker-93c4" in last  # the compact hook of the run before
    # SessionStart(compact) and PostCompact both carry the brief: one of them delivers (point 7)
    assert last.count("Compact-marker-93c4") == 1
    assert ws.snapshot_triggers().count("pre-compact") == 1  # the PreCompact hook ran


def test_post_compact_event_fires(workspace: Workspace) -> None:
    """Claude Code 2.1.332 has a PostCompact event (issue 21 point 7 wants the brief there)."""
    ws = workspace
    integrate(ws)
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    settings_path = ws.root / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    fired = ws.root.parent / "post-compact-fired"
    command = (
        f"{sys.executable} -c \"import sys; open({str(fired)!r}, 'w').write(sys.stdin.read())\""
    )
    settings["hooks"]["PostCompact"] = [{"hooks": [{"type": "command", "command": command}]}]
    settings_path.write_text(json.dumps(settings))
    session = claude(ws, "first prompt")["session_id"]
    claude(ws, "/compact", "--resume", session)
    assert json.loads(fired.read_text())["hook_event_name"] == "PostCompact"


def test_integrate_registers_post_compact_and_fork(workspace: Workspace) -> None:
    integrate(workspace)
    hooks = json.loads((workspace.root / ".claude" / "settings.json").read_text())["hooks"]
    assert "PostCompact" in hooks
    assert "fork" in hooks["SessionStart"][0]["matcher"].split("|")


@pytest.mark.parametrize(("size", "delivered"), [(10_000, True), (10_001, False)])
def test_hook_context_cap(workspace: Workspace, size: int, delivered: bool) -> None:
    """Claude Code 2.1.332 passes at most 10,000 characters of SessionStart context; a longer
    one reaches the model only as a 2 KB preview in `<persisted-output>`."""
    ws = workspace
    context = "Cap-start-marker " + "x" * (size - 32) + " Cap-end-marker"
    assert len(context) == size
    hook = ws.root.parent / "hook.py"
    answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    hook.write_text(f"import json\nprint(json.dumps({answer!r}))\n")
    settings = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": ""}]}]}}
    settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] = f"{sys.executable} {hook}"
    (ws.root / ".claude").mkdir()
    (ws.root / ".claude" / "settings.json").write_text(json.dumps(settings))
    claude(ws, "hello")
    body = messages_bodies(ws)[-1]
    assert "Cap-start-marker" in body
    assert ("Cap-end-marker" in body) is delivered
    assert ("<persisted-output>" in body) is not delivered


def test_hook_format_fits_the_cap() -> None:
    from resume_kit.brief.render import HOOK_MAX_CHARS

    assert HOOK_MAX_CHARS <= 10_000


@pytest.mark.parametrize(
    "command",
    [
        "resume-kit trust --yes",
        "cd . && resume-kit trust --yes",
        f"{sys.executable} -m resume_kit trust --yes",
    ],
    ids=["on-path", "chained", "python-m"],
)
def test_the_agent_is_denied_resume_kit_trust(workspace: Workspace, command: str) -> None:
    """The deny rules `integrate claude` adds stop Claude Code's Bash tool from running
    `resume-kit trust`, even with Bash allowed on the command line."""
    ws = workspace
    integrate(ws)
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    calls: list[int] = []

    def script(protocol: str, request: dict[str, Any]) -> list[Part]:
        if calls:
            return [Text("Done.")]
        calls.append(1)
        return [ToolCall("Bash", {"command": command, "description": "approve"})]

    ws.server.script = script
    claude(ws, "approve the verify commands", "--allowedTools", "Bash")
    last = ws.server.requests_to("/v1/messages")[-1]
    results = [
        block
        for message in last["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 1 and results[0].get("is_error") is True, results
    assert "denied" in json.dumps(results[0]["content"]).lower(), results
    assert "NEEDS_APPROVAL" in ws.resume_kit("brief").stdout  # nothing was approved


STOP_VERIFY = "test -f out/001.json"


def test_stop_hook_blocks_while_the_unit_fails(workspace: Workspace) -> None:
    """`integrate claude --stop-verify`: the Stop hook runs the (person-approved) verify
    command and, while it fails, sends the agent back to work once."""
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts", verify=STOP_VERIFY)
    proc = ws.resume_kit("integrate", "claude", "--stop-verify")
    assert proc.returncode == 0, proc.stderr
    assert ws.resume_kit("trust", "--yes").returncode == 0  # the person's approval
    claude(ws, "hello")
    bodies = messages_bodies(ws)
    assert len(bodies) == 2, "the Stop hook did not send the agent back"
    reason = f"Unit unit-001 is in progress and its verify command exited 1: {STOP_VERIFY}"
    assert reason not in bodies[0]
    assert "Stop hook feedback" in bodies[1] and reason in bodies[1]
