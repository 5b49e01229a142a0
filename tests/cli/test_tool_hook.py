"""The tool hook (issue 15 points 1 and 2) on payloads in the shapes the real binaries send
(recorded from Claude Code 2.1.332 and Codex 0.171.0 by a logging hook; Gemini CLI and Cursor
from their hook references): capture, guard, per-rule modes, fail-open."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from resume_kit.infra.paths import find_layout
from resume_kit.integrations import tool_hook
from resume_kit.progress_file import io as progress_io


def claude_pre(
    repo: Path, command: str, session: str = "s1", call: str = "toolu_1"
) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/nonexistent/{session}.jsonl",
        "cwd": str(repo),
        "prompt_id": "7f10f6cc",
        "permission_mode": "default",
        "effort": {"level": "medium"},
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "d"},
        "tool_use_id": call,
    }


def claude_post(pre: dict[str, Any], ok: bool = True) -> dict[str, Any]:
    if ok:
        return {
            **pre,
            "hook_event_name": "PostToolUse",
            "tool_response": {"stdout": "", "stderr": "", "interrupted": False, "isImage": False,
                              "noOutputExpected": False},
            "duration_ms": 84,
        }  # fmt: skip
    return {**pre, "hook_event_name": "PostToolUseFailure", "error": "Exit code 1",
            "is_interrupt": False, "duration_ms": 28}  # fmt: skip


def codex_pre(repo: Path, command: str, call: str = "call_1") -> dict[str, Any]:
    return {
        "session_id": "01a2328f",
        "turn_id": "01a2328f-3572",
        "transcript_path": "/nonexistent/rollout.jsonl",
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "model": "mock-model",
        "permission_mode": "bypassPermissions",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": call,
    }


@pytest.fixture
def project(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    return repo


def run(phase: str, data: dict[str, Any], agent: str = "claude") -> dict[str, Any] | None:
    text = tool_hook.handle(phase, agent, data)
    return None if text is None else json.loads(text)


def attempts(repo: Path) -> list[tuple[str, str | None, str | None]]:
    actions = progress_io.load(find_layout(repo)).progress.actions
    return [(a.status, a.session, a.result) for action in actions for a in action.attempts]


def test_claude_push_recorded_then_a_new_session_is_asked(project: Path) -> None:
    pre = claude_pre(project, "git push origin main")
    assert run("pre", pre) is None  # first time: no objection, an unknown attempt
    assert attempts(project) == [("unknown", "s1", None)]
    assert run("post", claude_post(pre)) is None
    assert attempts(project) == [("success", "s1", "exit 0")]
    again = run("pre", claude_pre(project, "git  push origin 'main'", "s2", "toolu_2"))
    assert again is not None
    out = again["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "ask"
    reason = out["permissionDecisionReason"]
    assert "already ran and succeeded just now" in reason
    assert "in session s1" in reason and "result: exit 0" in reason
    assert len(attempts(project)) == 1  # the asked call is no attempt until it runs
    # approved by the person, it ran: the after-event records it
    assert (
        run("post", claude_post(claude_pre(project, "git push origin main", "s2", "toolu_2")))
        is None
    )
    assert attempts(project)[-1] == ("success", "s2", "exit 0")


def test_no_after_event_stays_unknown_and_is_asked_about(project: Path) -> None:
    run("pre", claude_pre(project, "npm publish"))
    answer = run("pre", claude_pre(project, "npm publish", "s2", "toolu_2"))
    assert answer is not None
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert "may have run" in reason and "check before repeating" in reason.lower()


def test_a_failure_is_failed_and_not_guarded(project: Path) -> None:
    pre = claude_pre(project, "git push origin main")
    run("pre", pre)
    run("post", claude_post(pre, ok=False))
    assert attempts(project) == [("failed", "s1", "Exit code 1")]
    assert run("pre", claude_pre(project, "git push origin main", "s1", "toolu_2")) is None
    assert [a[0] for a in attempts(project)] == ["failed", "unknown"]


def test_not_a_side_effect_touches_nothing(project: Path) -> None:
    path = project / ".resume-kit" / "progress.yaml"
    before = path.read_bytes()
    for command in ("ls -la", "git status", "pytest -q", "echo git push"):
        assert run("pre", claude_pre(project, command)) is None
        assert run("post", claude_post(claude_pre(project, command))) is None
    assert run("pre", {**claude_pre(project, "x"), "tool_name": "Read"}) is None
    assert path.read_bytes() == before


def test_no_progress_file_no_ledger(repo: Path) -> None:
    assert run("pre", claude_pre(repo, "git push")) is None
    assert not (repo / ".resume-kit").exists()


def test_codex_gets_deny_since_it_cannot_ask(project: Path) -> None:
    pre = codex_pre(project, "git push origin main")
    assert run("pre", pre, "codex") is None
    post = {**pre, "hook_event_name": "PostToolUse", "tool_response": "Everything up-to-date\n"}
    run("post", post, "codex")
    assert attempts(project) == [("unknown", "01a2328f", "codex reports no exit status")]
    answer = run("pre", codex_pre(project, "git push origin main", "call_2"), "codex")
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "may have run" in out["permissionDecisionReason"]
    assert "Codex hooks cannot ask" in out["permissionDecisionReason"]


def test_gemini_and_cursor_shapes(project: Path) -> None:
    gemini = {
        "session_id": "g1",
        "transcript_path": "/nonexistent/g1.json",
        "cwd": str(project),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-01T10:00:00Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "docker push app:1", "description": "push"},
    }
    assert run("pre", gemini, "gemini") is None
    after = {**gemini, "hook_event_name": "AfterTool",
             "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}}  # fmt: skip
    run("post", after, "gemini")
    assert attempts(project) == [("success", "g1", "no error")]
    denied = run("pre", gemini, "gemini")
    assert denied is not None and set(denied) == {"decision", "reason"}
    assert denied["decision"] == "deny" and "already ran and succeeded" in denied["reason"]
    cursor = {
        "conversation_id": "c1",
        "generation_id": "g-1",
        "hook_event_name": "beforeShellExecution",
        "command": "docker push app:1",
        "cwd": str(project),
    }
    answer = run("pre", cursor, "cursor")
    assert answer is not None and answer["permission"] == "ask"
    assert "already ran and succeeded" in answer["agent_message"]


def test_mcp_tools_that_write(project: Path) -> None:
    call = {**claude_pre(project, ""), "tool_name": "mcp__github__create_pull_request",
            "tool_input": {"head": "feature", "base": "main", "title": "x"}}  # fmt: skip
    run("pre", call)
    run("post", claude_post(call))
    reordered = {**call, "tool_input": {"title": "x", "base": "main", "head": "feature"}}
    answer = run("pre", {**reordered, "session_id": "s2"})
    assert answer is not None and answer["hookSpecificOutput"]["permissionDecision"] == "ask"
    reading = {**call, "tool_name": "mcp__github__get_pull_request"}
    assert run("pre", reading) is None


def test_user_config_modes_and_patterns(project: Path, isolated_home: Path) -> None:
    user = isolated_home / ".config" / "resume-kit" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text(
        "side_effects:\n"
        "  patterns: [{pattern: './release.sh*', name: release, on_repeat: warn}]\n"
        "  on_repeat: {git-push: deny}\n"
    )
    pre = claude_pre(project, "git push")
    run("pre", pre)
    run("post", claude_post(pre))
    denied = run("pre", claude_pre(project, "git push", "s2", "t2"))
    assert denied is not None and denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    release = claude_pre(project, "./release.sh --prod")
    run("pre", release)
    run("post", claude_post(release))
    warned = run("pre", claude_pre(project, "./release.sh --prod", "s3", "t3"))
    assert warned is not None and "already ran" in warned["systemMessage"]
    assert attempts(project)[-1][0] == "unknown"  # a warning lets it run: recorded


def test_a_repository_config_cannot_turn_the_guard_off(project: Path) -> None:
    (project / ".resume-kit" / "config.yaml").write_text("side_effects: {on_repeat: warn}\n")
    pre = claude_pre(project, "git push")
    run("pre", pre)
    run("post", claude_post(pre))
    answer = run("pre", claude_pre(project, "git push", "s2", "t2"))
    assert answer is not None and answer["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_fail_open_on_a_broken_progress_file(project: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    (project / ".resume-kit" / "progress.yaml").write_text("schema_version: [\n")
    payload = json.dumps(claude_pre(project, "git push")).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload)))
    monkeypatch.setattr(
        "resume_kit.integrations.agent_input._read_available", lambda stream, timeout: payload
    )
    assert tool_hook.main(["pre"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("resume-kit: tool hook skipped: ")


def test_bad_arguments_fail_open(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool_hook.main(["sideways"]) == 0
    assert "tool hook skipped: expected pre|post" in capsys.readouterr().err


@pytest.mark.subprocess
def test_the_installed_command_line_runs_the_hook(project: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """The exact command `integrate claude` writes, run by a shell as Claude Code runs it."""
    from resume_kit.integrations import settings

    assert cli("integrate", "claude").code == 0
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    command = hooks["PreToolUse"][0]["hooks"][0]["command"]
    assert settings.command_args(command) == "hook-tool pre"
    for stdin in (claude_pre(project, "git push"), claude_pre(project, "git push", "s2", "t2")):
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            input=json.dumps(stdin),
            capture_output=True,
            text=True,
            cwd=project,
            env={**os.environ, "PATH": "/usr/bin:/bin"},  # no resume-kit on PATH: the fast form
            timeout=60,
        )
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    answer = json.loads(proc.stdout)  # the second: an unknown attempt is there
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask"
