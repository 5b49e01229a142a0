"""The side-effect ledger fed by the real agents' tool hooks (issue 15): Claude Code 2.1.332 and
Codex 0.171.0 run `git push` to a local bare remote through their shell tool; the after-hook
records the push, and after a compaction the next session's identical push is stopped by the
before-hook's answer (Claude Code in `-p` mode cannot ask anyone, so "ask" refuses the call)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from resume_kit.infra.paths import find_layout
from resume_kit.progress_file import io as progress_io
from tests.agent_server import Part, Text, ToolCall
from tests.conftest import git
from tests.e2e.agents import test_claude_code as claude_e2e
from tests.e2e.agents import test_codex as codex_e2e
from tests.e2e.agents.conftest import Workspace

pytestmark = [pytest.mark.agents, pytest.mark.slow]

PUSH = "git push origin main"


def with_remote(ws: Workspace) -> Path:
    remote = ws.root.parent / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(ws.root, "remote", "add", "origin", str(remote))
    return remote


def remote_head(remote: Path) -> str | None:
    proc = subprocess.run(
        ["git", "--git-dir", str(remote), "rev-parse", "--verify", "-q", "refs/heads/main"],
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip() or None


def one_call(command: str, tool: str = "Bash") -> Any:
    """A model that runs ``command`` once, then answers "Done."."""
    sent: list[int] = []

    arguments = {"cmd": command} if tool == "exec_command" else {"command": command}

    def script(protocol: str, request: dict[str, Any]) -> list[Part]:
        if sent:
            return [Text("Done.")]
        sent.append(1)
        return [ToolCall(tool, {**arguments, "description": "push"})]

    return script


def tool_results(ws: Workspace) -> list[dict[str, Any]]:
    last = ws.server.requests_to("/v1/messages")[-1]
    return [
        block
        for message in last["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def ledger(ws: Workspace) -> list[Any]:
    return progress_io.load(find_layout(ws.root)).progress.actions


def commit(ws: Workspace, name: str) -> str:
    (ws.root / name).write_text(name)
    git(ws.root, "add", name)
    git(ws.root, "commit", "-q", "-m", name)
    return git(ws.root, "rev-parse", "HEAD").stdout.strip()


def test_claude_push_is_recorded_and_not_repeated_after_a_compaction(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Ship the branch")
    git(ws.root, "add", ".resume-kit")
    git(ws.root, "commit", "-q", "-m", "goal")
    remote = with_remote(ws)
    claude_e2e.integrate(ws)
    settings = json.loads((ws.root / ".claude" / "settings.json").read_text())
    pre = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert ' -I "$E" hook-tool pre || ' in pre  # the entry script, not the CLI

    ws.server.script = one_call(PUSH)
    first = claude_e2e.claude(ws, "push the branch", "--allowedTools", "Bash")
    pushed = remote_head(remote)
    assert pushed == git(ws.root, "rev-parse", "HEAD").stdout.strip()
    (entry,) = ledger(ws)
    assert entry.key.startswith("git-push-")
    assert [(a.status, a.session, a.command) for a in entry.attempts] == [
        ("success", first["session_id"], PUSH)
    ]

    ws.server.script = lambda protocol, request: [
        Text("<analysis>a</analysis>\n<summary>Pushed the branch.</summary>")
    ]
    claude_e2e.claude(ws, "/compact", "--resume", first["session_id"])

    newer = commit(ws, "more.txt")
    ws.server.clear()
    ws.server.script = one_call(PUSH)
    second = claude_e2e.claude(ws, "push the branch", "--allowedTools", "Bash")
    assert second["session_id"] != first["session_id"]
    (result,) = tool_results(ws)
    assert result.get("is_error") is True
    text = json.dumps(result["content"])
    assert "already ran and succeeded" in text and first["session_id"] in text
    assert f"resume-kit action forget {entry.key}" in text
    assert remote_head(remote) == pushed != newer  # the repeat did not run
    (after,) = ledger(ws)
    assert len(after.attempts) == 1  # a refused call is no attempt

    # a person clears the record: the same push runs and is recorded again
    assert ws.resume_kit("action", "forget", entry.key).returncode == 0
    ws.server.script = one_call(PUSH)
    claude_e2e.claude(ws, "push the branch", "--allowedTools", "Bash")
    assert remote_head(remote) == newer
    assert [a.status for a in ledger(ws)[0].attempts] == ["success"]


def test_claude_failed_push_is_failed_and_may_be_retried(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Ship the branch")
    claude_e2e.integrate(ws)
    ws.server.script = one_call("git push nowhere main")  # no such remote: exit 128
    claude_e2e.claude(ws, "push", "--allowedTools", "Bash")
    (entry,) = ledger(ws)
    assert entry.attempts[0].status == "failed"
    assert "Exit code 128" in (entry.attempts[0].result or "")
    ws.server.clear()
    ws.server.script = one_call("git push nowhere main")
    claude_e2e.claude(ws, "push", "--allowedTools", "Bash")
    (result,) = tool_results(ws)
    assert "already ran" not in json.dumps(result)  # only failed before: not guarded
    assert [a.status for a in ledger(ws)[0].attempts] == ["failed", "failed"]


def test_codex_push_is_recorded_and_the_repeat_denied(workspace: Workspace) -> None:
    """Codex 0.171 has PreToolUse/PostToolUse but refuses "ask" and reports no exit status:
    the push is recorded as unknown, and the repeat is denied with the reason."""
    ws = workspace
    ws.write_goal("Ship the branch")
    remote = with_remote(ws)
    codex_e2e.write_config(ws)
    codex_e2e.integrate(ws)
    codex_e2e.approve_hooks(ws)
    ws.server.script = one_call(PUSH, tool="exec_command")
    codex_e2e.codex(ws, "push the branch")
    pushed = remote_head(remote)
    assert pushed is not None
    (entry,) = ledger(ws)
    assert [(a.status, a.result) for a in entry.attempts] == [
        ("unknown", "codex reports no exit status")
    ]
    newer = commit(ws, "more.txt")
    ws.server.clear()
    ws.server.script = one_call(PUSH, tool="exec_command")
    codex_e2e.codex(ws, "push the branch")
    outputs = [
        item
        for body in ws.server.requests_to("/responses")
        for item in body.get("input", [])
        if item.get("type") == "function_call_output"
    ]
    assert outputs and "may have run" in json.dumps(outputs[-1])
    assert remote_head(remote) == pushed != newer


def test_claude_fourth_identical_failing_call_is_refused(workspace: Workspace) -> None:
    """Loop guard: the model runs the same failing command four times; Claude Code's own
    PostToolUseFailure events feed the log, and the fourth call gets "ask" (refused in -p)."""
    ws = workspace
    ws.write_goal("Fix the tests")
    claude_e2e.integrate(ws)
    command = "ls does-not-exist-7f3a"
    calls: list[int] = []

    def script(protocol: str, request: dict[str, Any]) -> list[Part]:
        if len(calls) == 4:
            return [Text("Done.")]
        calls.append(1)
        return [ToolCall("Bash", {"command": command, "description": f"try {len(calls)}"})]

    ws.server.script = script
    claude_e2e.claude(ws, "make it pass", "--allowedTools", "Bash")
    results = tool_results(ws)
    assert len(results) == 4 and all(r.get("is_error") for r in results)
    assert "No such file" in json.dumps(results[2]["content"])
    fourth = json.dumps(results[3]["content"])
    assert "failed 3 times in a row with the same result" in fourth
    brief = json.loads(ws.resume_kit("brief", "--format", "json").stdout)
    assert "REPEATED_CALLS" in {f["code"] for f in brief["findings"]}
