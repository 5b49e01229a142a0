"""Issue 21 points 7, 11, 12, 16, 17: the PostCompact brief, Codex's requirements and limit,
Gemini CLI, the AGENTS.md block, the executable the hooks name, `claude --local`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from resume_kit.integrations import agents_md
from resume_kit.integrations import settings as merge
from tests.conftest import run_cli

PROGRESS = """\
schema_version: 1
goal: Extract the contracts
units:
  - id: doc-007
    title: Extract the contracts of doc 7
    status: todo
"""


def hooks_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())["hooks"]
    return data


def run_hook(command: str, repo: Path, payload: dict[str, Any], path: str | None = None) -> str:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    proc = subprocess.run(
        ["sh", "-c", command],
        cwd=repo,
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def shim_dir(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "shim-bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "resume-kit"
    shim.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m resume_kit \"$@\"\n")
    shim.chmod(0o755)
    return bin_dir


# --------------------------------------------------------------------------- point 17


def _recording_programs(tmp_path: Path, name: str) -> tuple[Path, Callable[[str], str]]:
    """``venv bin/NAME`` (a space: quoted) and a ``resume-kit`` on PATH, each recording its
    arguments when run (``venv``/``path`` first); and a runner of a command line with ``sh
    -c`` that answers what it recorded."""
    marker = tmp_path / "ran"

    def recorder(path: Path, label: str) -> Path:
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"#!/bin/sh\necho {label} \"$@\" >> '{marker}'\n")
        path.chmod(0o755)
        return path

    program = recorder(tmp_path / "venv bin" / name, "venv")
    on_path = recorder(tmp_path / "path-bin" / "resume-kit", "path").parent
    env = {**os.environ, "PATH": f"{on_path}{os.pathsep}/usr/bin:/bin"}

    def ran(command: str) -> str:
        marker.unlink(missing_ok=True)
        subprocess.run(["sh", "-c", command], env=env, check=True, timeout=30)
        return marker.read_text()

    return program, ran


def test_the_command_names_the_executable_and_falls_back_to_path(tmp_path: Path) -> None:
    exe, ran = _recording_programs(tmp_path, "resume-kit")
    command = merge.command_line("stop-check", str(exe))
    assert merge.command_args(command) == "stop-check"
    assert ran(command) == "venv stop-check\n"
    exe.unlink()  # the venv is gone: the one on PATH runs
    assert ran(command) == "path stop-check\n"


def test_the_brief_command_runs_the_entry_script_isolated_and_falls_back_to_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The brief hooks' command execs ``python -I -S`` the entry script: the interpreter sees
    those flags and the script's path first; with the interpreter or the script gone, the
    resume-kit on PATH runs instead (once: ``exec``)."""
    python, ran = _recording_programs(tmp_path, "python3")
    args = "brief --format claude-hook"
    command = merge.isolated_command_line(args, str(python))
    assert merge.command_args(command) == args
    assert ran(command) == f"venv -I -S {merge.ENTRY_SCRIPT} {args}\n"
    monkeypatch.setattr(merge, "ENTRY_SCRIPT", str(tmp_path / "gone" / "isolated_entry.py"))
    assert ran(merge.isolated_command_line(args, str(python))) == f"path {args}\n"
    python.unlink()
    assert ran(command) == f"path {args}\n"


def test_integrate_writes_the_executable_it_ran_as(repo: Path, tmp_path: Path) -> None:
    bin_dir = shim_dir(tmp_path)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    assert run_cli("integrate", "claude", cwd=repo, env=env).code == 0
    hooks = hooks_of(repo / ".claude" / "settings.json")
    snapshot = hooks["PreCompact"][0]["hooks"][0]
    assert snapshot["command"] == merge.command_line(
        merge.SNAPSHOT_ARGS, str(bin_dir / "resume-kit")
    )
    # the brief hooks start the entry script with the interpreter integrate ran with
    for event in ("SessionStart", "PostCompact"):
        hook = hooks[event][0]["hooks"][0]
        assert hook["command"] == merge.isolated_command_line(merge.BRIEF_ARGS, sys.executable)


def test_an_old_bare_entry_is_upgraded_in_place(repo: Path) -> None:
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {
        "matcher": "startup|resume|clear|compact",
        "hooks": [
            {"type": "command", "command": "resume-kit brief --format claude-hook", "timeout": 45}
        ],
    }
    path.write_text(json.dumps({"hooks": {"SessionStart": [old]}}))
    assert run_cli("integrate", "claude", cwd=repo).code == 0
    (group,) = hooks_of(path)["SessionStart"]
    assert group["matcher"] == "startup|resume|clear|compact|fork"
    assert group["hooks"][0]["timeout"] == 45  # the person's own change is kept
    assert merge.command_args(group["hooks"][0]["command"]) == merge.BRIEF_ARGS


def test_tool_hooks_of_the_older_module_form_are_upgraded_in_place(repo: Path) -> None:
    """Until 2026-12-07 the tool hooks ran ``python -I -m`` the hook module: such an entry is
    recognised as ours and replaced by the entry script's form, keeping the person's keys."""
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    old = (
        f'PY={sys.executable}; [ -x "$PY" ] && "$PY" -I -m resume_kit.integrations.tool_hook '
        "pre || resume-kit hook-tool pre"
    )
    assert merge.command_args(old) == "hook-tool pre"
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": old, "timeout": 20}]}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    assert run_cli("integrate", "claude", cwd=repo).code == 0
    (group,) = hooks_of(path)["PreToolUse"]
    (hook,) = group["hooks"]
    assert hook["command"] == merge.tool_command_line("hook-tool pre", sys.executable)
    assert hook["timeout"] == 20


def test_claude_local_writes_settings_local_json(repo: Path) -> None:
    result = run_cli("integrate", "claude", "--local", cwd=repo)
    assert result.code == 0, result.stderr
    local = repo / ".claude" / "settings.local.json"
    assert set(hooks_of(local)) == {
        "SessionStart", "PostCompact", "PreCompact", "PreToolUse", "PostToolUse",
        "PostToolUseFailure",
    }  # fmt: skip
    assert not (repo / ".claude" / "settings.json").exists()
    assert run_cli("integrate", "claude", "--local", "--remove", cwd=repo).code == 0
    assert not local.exists()


# --------------------------------------------------------------------------- point 7


def test_the_brief_is_delivered_once_per_compaction(repo: Path, tmp_path: Path) -> None:
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit" / "progress.yaml").write_text(PROGRESS)
    assert run_cli("integrate", "claude", cwd=repo).code == 0
    hooks = hooks_of(repo / ".claude" / "settings.json")
    start = hooks["SessionStart"][0]["hooks"][0]["command"]
    post = hooks["PostCompact"][0]["hooks"][0]["command"]
    path = f"{shim_dir(tmp_path)}{os.pathsep}{os.environ['PATH']}"
    base = {"session_id": "sess-1", "cwd": str(repo), "transcript_path": str(tmp_path / "t")}
    first = run_hook(post, repo, {**base, "hook_event_name": "PostCompact"}, path)
    assert "Extract the contracts" in first
    assert not first.lstrip().startswith("{")  # PostCompact takes plain text, not JSON
    second = {**base, "hook_event_name": "SessionStart", "source": "compact"}
    assert run_hook(start, repo, second, path) == ""
    # the next compaction, SessionStart first this time
    again = json.loads(run_hook(start, repo, second, path))
    assert "Extract the contracts" in again["hookSpecificOutput"]["additionalContext"]
    assert run_hook(post, repo, {**base, "hook_event_name": "PostCompact"}, path) == ""
    # a fresh start is never silenced
    fresh = {**base, "hook_event_name": "SessionStart", "source": "startup"}
    assert "Extract the contracts" in run_hook(start, repo, fresh, path)


# --------------------------------------------------------------------------- point 11


def test_integrate_codex_prints_what_codex_requires(repo: Path) -> None:
    result = run_cli("integrate", "codex", cwd=repo)
    assert result.code == 0, result.stderr
    assert "trusted" in result.stdout
    assert "/hooks" in result.stdout and "hash" in result.stdout
    assert "codex_hooks = true" in result.stdout


# --------------------------------------------------------------------------- point 12


def test_gemini_settings(repo: Path) -> None:
    path = repo / ".gemini" / "settings.json"
    path.parent.mkdir()
    original = {
        "theme": "Dracula",
        "hooks": {
            "BeforeTool": [
                {
                    "matcher": "run_shell_command",
                    "hooks": [{"type": "command", "command": "./audit"}],
                }
            ]
        },
    }
    original_text = json.dumps(original, indent=2) + "\n"
    path.write_text(original_text)
    assert run_cli("integrate", "gemini", "--stop-verify", cwd=repo).code == 0
    data = json.loads(path.read_text())
    assert data["theme"] == "Dracula"
    hooks = data["hooks"]
    assert hooks["BeforeTool"][0] == original["hooks"]["BeforeTool"][0]
    # issue 15's tool hooks: before the shell and MCP tools, after every tool (the loop guard)
    for event, args, matcher in (
        ("BeforeTool", "pre", "run_shell_command|mcp_.*"),
        ("AfterTool", "post", None),
    ):
        (ours,) = [g for g in hooks[event] if g.get("matcher") == matcher]
        command = ours["hooks"][0]["command"]
        assert merge.command_args(command) == f"hook-tool {args} --agent gemini"
        assert ours["hooks"][0]["timeout"] == 15_000
    start = hooks["SessionStart"][0]
    assert start["matcher"] == "startup|resume|clear"
    assert start["hooks"][0]["timeout"] == 30_000  # milliseconds
    assert merge.command_args(hooks["PreCompress"][0]["hooks"][0]["command"]) == (
        merge.SNAPSHOT_ARGS
    )
    assert hooks["AfterAgent"][0]["hooks"][0]["timeout"] == 600_000
    again = run_cli("integrate", "gemini", "--stop-verify", cwd=repo)
    assert "nothing changed" in again.stdout
    assert run_cli("integrate", "gemini", "--remove", cwd=repo).code == 0
    assert path.read_text() == original_text


def test_a_symlinked_gemini_settings_file_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}\n")
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").symlink_to(outside)
    result = run_cli("integrate", "gemini", cwd=repo)
    assert result.code == 2
    assert "symlink" in result.stderr
    assert outside.read_text() == "{}\n"


# --------------------------------------------------------------------------- point 16


def test_agents_md_block_is_added_once_and_removed_cleanly(repo: Path) -> None:
    path = repo / "AGENTS.md"
    original = "# Project\n\nUse tabs.\n"
    path.write_text(original)
    result = run_cli("integrate", "agents-md", "AGENTS.md", "CLAUDE.md", cwd=repo)
    assert result.code == 0, result.stderr
    text = path.read_text()
    assert text.startswith(original) and text.count(agents_md.BEGIN) == 1
    for needed in ("resume-kit brief", "one unit", "resume-kit verify-next", "side effect"):
        assert needed in text
    assert "Never run `resume-kit trust`" in text
    assert (repo / "CLAUDE.md").read_text() == agents_md.BLOCK
    again = run_cli("integrate", "agents-md", "AGENTS.md", cwd=repo)
    assert "nothing changed" in again.stdout and path.read_text() == text
    assert (
        run_cli("integrate", "agents-md", "AGENTS.md", "CLAUDE.md", "--remove", cwd=repo).code == 0
    )
    assert path.read_text() == original
    assert not (repo / "CLAUDE.md").exists()


def test_agents_md_refuses_a_symlink_and_unknown_names(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("mine\n")
    (repo / "AGENTS.md").symlink_to(outside)
    result = run_cli("integrate", "agents-md", cwd=repo)
    assert result.code == 2 and "symlink" in result.stderr
    assert outside.read_text() == "mine\n"
    assert run_cli("integrate", "agents-md", "README.md", cwd=repo).code == 2


@pytest.mark.parametrize("text", ["", "no newline at the end"])
def test_agents_md_edges(text: str) -> None:
    added = agents_md.with_block(text)
    assert added.count(agents_md.BEGIN) == 1
    assert agents_md.with_block(added) == added
    removed = agents_md.without_block(added)
    assert removed is not None and removed.rstrip("\n") == text


# --------------------------------------------------------------------------- point 15


def test_aider_brief_file_is_listed_and_refreshed_after_a_commit_and_a_verify(repo: Path) -> None:
    from tests.conftest import git

    (repo / ".resume-kit").mkdir()
    progress = repo / ".resume-kit" / "progress.yaml"
    progress.write_text(PROGRESS.replace("status: todo", "status: todo\n    verify: 'true'"))
    conf = repo / ".aider.conf.yml"
    conf.write_text("model: sonnet\n")
    result = run_cli("integrate", "aider", cwd=repo)
    assert result.code == 0, result.stderr
    assert conf.read_text() == "model: sonnet\nread:\n  - .resume-kit/brief.md\n"
    brief = repo / ".resume-kit" / "brief.md"
    assert "Extract the contracts" in brief.read_text()
    assert "nothing changed" in run_cli("integrate", "aider", cwd=repo).stdout

    # after a commit (the post-commit hook's refresh, run the way the hook runs it)
    progress.write_text(progress.read_text().replace("Extract the contracts", "Commit-goal-1"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "work")
    entry = [sys.executable, "-m", "resume_kit.integrations.hook_entry"]
    subprocess.run([*entry, "post-commit", "--repo", str(repo)], check=True, timeout=120)
    assert "Commit-goal-1" in brief.read_text()

    # after a verify
    progress.write_text(progress.read_text().replace("Commit-goal-1", "Verify-goal-2"))
    assert run_cli("trust", "--yes", cwd=repo).code == 0
    run_cli("verify-next", cwd=repo)
    assert "Verify-goal-2" in brief.read_text()

    assert run_cli("integrate", "aider", "--remove", cwd=repo).code == 0
    assert conf.read_text() == "model: sonnet\n"
    progress.write_text(progress.read_text().replace("Verify-goal-2", "After-remove-3"))
    run_cli("verify-next", cwd=repo)
    assert "After-remove-3" not in brief.read_text()  # no longer refreshed


def test_aider_refresh_is_off_in_a_clone(repo: Path) -> None:
    """A repository that ships its own brief.md does not get it rewritten: the switch is in
    the user's cache."""
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit" / "progress.yaml").write_text(
        PROGRESS.replace("status: todo", "status: todo\n    verify: 'true'")
    )
    brief = repo / ".resume-kit" / "brief.md"
    brief.write_text("shipped\n")
    run_cli("verify-next", cwd=repo)
    assert brief.read_text() == "shipped\n"


# --------------------------------------------------------------------------- point 13


def test_cursor_hooks_and_rules(repo: Path) -> None:
    from resume_kit.integrations import cursor

    path = repo / ".cursor" / "hooks.json"
    path.parent.mkdir()
    theirs = {"command": "./format.sh"}
    original = {"version": 1, "hooks": {"afterFileEdit": [theirs], "preCompact": [theirs]}}
    original_text = json.dumps(original, indent=2) + "\n"
    path.write_text(original_text)
    result = run_cli("integrate", "cursor", cwd=repo)
    assert result.code == 0, result.stderr
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert data["hooks"]["afterFileEdit"] == [theirs]
    assert data["hooks"]["preCompact"][0] == theirs
    (ours,) = data["hooks"]["preCompact"][1:]
    assert set(ours) == {"command"} and merge.command_args(ours["command"]) == merge.SNAPSHOT_ARGS
    rules = (repo / cursor.RULES_REL).read_text()
    assert "alwaysApply: true" in rules and "resume-kit brief" in rules
    assert "Never run `resume-kit trust`" in rules
    assert "nothing changed" in run_cli("integrate", "cursor", cwd=repo).stdout
    assert run_cli("integrate", "cursor", "--remove", cwd=repo).code == 0
    assert path.read_text() == original_text
    assert not (repo / cursor.RULES_REL).exists()


def test_cursor_from_nothing_and_back(repo: Path) -> None:
    assert run_cli("integrate", "cursor", cwd=repo).code == 0
    data = json.loads((repo / ".cursor" / "hooks.json").read_text())
    assert list(data) == ["version", "hooks"]
    assert list(data["hooks"]) == ["preCompact", "beforeShellExecution", "afterShellExecution"]
    assert data["hooks"]["beforeShellExecution"] == [
        {"command": merge.command_line("hook-tool pre --agent cursor", merge.executable())}
    ]
    assert run_cli("integrate", "cursor", "--remove", cwd=repo).code == 0
    assert not (repo / ".cursor" / "hooks.json").exists()


def test_a_post_compact_hook_that_cannot_build_the_brief_says_so_in_plain_text(
    repo: Path, tmp_path: Path
) -> None:
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit" / "progress.yaml").write_text("schema_version: nope\n")
    assert run_cli("integrate", "claude", cwd=repo).code == 0
    post = hooks_of(repo / ".claude" / "settings.json")["PostCompact"][0]["hooks"][0]["command"]
    path = f"{shim_dir(tmp_path)}{os.pathsep}{os.environ['PATH']}"
    payload = {"session_id": "s9", "cwd": str(repo), "hook_event_name": "PostCompact"}
    text = run_hook(post, repo, payload, path)
    assert text.startswith("resume-kit could not build the resume brief")
