"""Issue 21 point 14: `resume-kit integrate copilot` (GitHub Copilot CLI's `.github/hooks/`),
and `brief --format copilot-hook` on the exact payloads Copilot CLI 1.0.102 sends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from resume_kit.integrations import copilot
from resume_kit.integrations import settings as merge
from tests.conftest import run_cli

PROGRESS = """\
schema_version: 1
goal: Copilot-goal-4f1e extract the contracts
units:
  - id: doc-007
    title: Extract the contracts of doc 7
    status: todo
"""
HOOKS = Path(".github") / "hooks" / "resume-kit.json"


def hooks_of(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / HOOKS).read_text())
    return data


def test_the_hooks_file_copilot_reads(repo: Path) -> None:
    result = run_cli("integrate", "copilot", cwd=repo)
    assert result.code == 0, result.stderr
    assert "trusted folder" in result.stdout
    data = hooks_of(repo)
    assert list(data) == ["version", "hooks"] and data["version"] == 1
    assert list(data["hooks"]) == ["userPromptSubmitted", "preCompact", "preToolUse", "postToolUse"]
    for event, args, start in (
        ("userPromptSubmitted", copilot.BRIEF_ARGS, f"PY={sys.executable}; "),  # the entry script
        ("preCompact", merge.SNAPSHOT_ARGS, "RK="),  # the absolute executable first (point 17)
    ):
        (entry,) = data["hooks"][event]
        assert set(entry) == {"type", "bash", "cwd", "timeoutSec"}
        assert entry["type"] == "command" and entry["cwd"] == "." and entry["timeoutSec"] == 30
        assert merge.command_args(entry["bash"]) == args
        assert entry["bash"].startswith(start)
    for event, args in (("preToolUse", "pre"), ("postToolUse", "post")):
        (entry,) = data["hooks"][event]
        assert set(entry) == {"type", "bash", "cwd", "timeoutSec"}
        assert entry["timeoutSec"] == 15
        # the fast form, with resume-kit as the fallback (settings.tool_specs)
        assert entry["bash"].startswith(f"PY={sys.executable}; ")
        assert f' -I "$E" hook-tool {args} --agent copilot || ' in entry["bash"]
        assert merge.command_args(entry["bash"]) == f"hook-tool {args} --agent copilot"


def test_idempotent_keeps_the_persons_hooks_and_removes_only_ours(repo: Path) -> None:
    theirs = {"type": "command", "bash": "./audit.sh", "timeoutSec": 5}
    other_file = repo / ".github" / "hooks" / "security.json"
    other_file.parent.mkdir(parents=True)
    other_file.write_text('{"version": 1, "hooks": {"preToolUse": []}}\n')
    original = {"version": 1, "hooks": {"userPromptSubmitted": [theirs]}, "disableAllHooks": False}
    original_text = json.dumps(original, indent=4) + "\n"
    (repo / HOOKS).write_text(original_text)
    assert run_cli("integrate", "copilot", cwd=repo).code == 0
    data = hooks_of(repo)
    assert data["disableAllHooks"] is False
    assert data["hooks"]["userPromptSubmitted"][0] == theirs
    assert len(data["hooks"]["userPromptSubmitted"]) == 2
    assert (repo / HOOKS).read_text().startswith('{\n    "version"')  # indentation kept
    # a timeout the person changed stays; a second run changes nothing
    data["hooks"]["preCompact"][0]["timeoutSec"] = 90
    (repo / HOOKS).write_text(json.dumps(data, indent=4) + "\n")
    before = (repo / HOOKS).read_text()
    assert "nothing changed" in run_cli("integrate", "copilot", cwd=repo).stdout
    assert (repo / HOOKS).read_text() == before
    assert run_cli("integrate", "copilot", "--remove", cwd=repo).code == 0
    assert (repo / HOOKS).read_text() == original_text
    assert other_file.read_text() == '{"version": 1, "hooks": {"preToolUse": []}}\n'


def test_an_older_executable_is_brought_up_to_date_in_place() -> None:
    old = {"version": 1, "hooks": {"preCompact": [copilot.entry(merge.SNAPSHOT_ARGS, "/gone/rk")]}}
    new, changed = copilot.merged(old, "/venv/bin/resume-kit", remove=False)
    assert changed
    (entry,) = new["hooks"]["preCompact"]
    assert "/venv/bin/resume-kit" in entry["bash"]


def test_a_committed_entry_of_ours_keeps_no_env_cwd_or_powershell() -> None:
    ours = copilot.entry(merge.SNAPSHOT_ARGS, "/venv/bin/resume-kit")
    planted = {**ours, "env": {"PATH": "/tmp/evil"}, "cwd": "../x", "powershell": "evil.ps1"}
    new, changed = copilot.merged(
        {"version": 1, "hooks": {"preCompact": [{**planted, "timeoutSec": 45}]}},
        "/venv/bin/resume-kit",
        remove=False,
    )
    assert changed
    assert new["hooks"]["preCompact"] == [{**ours, "timeoutSec": 45}]


def test_from_nothing_and_back(repo: Path) -> None:
    assert run_cli("integrate", "copilot", cwd=repo).code == 0
    result = run_cli("integrate", "copilot", "--remove", cwd=repo)
    assert result.code == 0 and "was removed" in result.stdout
    assert not (repo / ".github").exists()
    assert "nothing changed" in run_cli("integrate", "copilot", "--remove", cwd=repo).stdout


def test_a_symlinked_hooks_file_or_folder_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}\n")
    (repo / ".github" / "hooks").mkdir(parents=True)
    (repo / HOOKS).symlink_to(outside)
    result = run_cli("integrate", "copilot", cwd=repo)
    assert result.code == 2 and "symlink" in result.stderr
    assert outside.read_text() == "{}\n"
    (repo / HOOKS).unlink()
    (repo / ".github" / "hooks").rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".github" / "hooks").symlink_to(elsewhere)
    result = run_cli("integrate", "copilot", cwd=repo)
    assert result.code == 2 and "symlink" in result.stderr
    assert list(elsewhere.iterdir()) == []


# --------------------------------------------------------------------------- the hook itself


def _hook(repo: Path, payload: dict[str, Any], env: dict[str, str]) -> str:
    command = hooks_of(repo)["hooks"]["userPromptSubmitted"][0]["bash"]
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


def _env(tmp_path: Path) -> dict[str, str]:
    shims = tmp_path / "shim-bin"
    shims.mkdir(exist_ok=True)
    shim = shims / "resume-kit"
    shim.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m resume_kit \"$@\"\n")
    shim.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
        "COPILOT_HOME": str(tmp_path / "copilot-home"),
    }


def _log(tmp_path: Path, session: str, *events: str) -> None:
    """Copilot's events.jsonl, in the shape 1.0.102 writes (one record per line)."""
    folder = tmp_path / "copilot-home" / "session-state" / session
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"type": kind, "data": {}, "id": f"{kind}-{n}", "parentId": None})
        for n, kind in enumerate(events)
    ]
    # the record of this very prompt's hook (the payloads below have timestamp 1): the log is
    # up to date, the hook does not wait for it
    data = {"hookType": "userPromptSubmitted", "input": {"sessionId": session, "timestamp": 1}}
    lines.append(json.dumps({"type": "hook.start", "data": data, "id": "h1"}))
    (folder / "events.jsonl").write_text("".join(f"{line}\n" for line in lines))


@pytest.mark.subprocess
def test_the_brief_goes_with_the_first_prompt_after_each_start(repo: Path, tmp_path: Path) -> None:
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit" / "progress.yaml").write_text(PROGRESS)
    assert run_cli("integrate", "copilot", cwd=repo).code == 0
    env = _env(tmp_path)
    session = "0f5bb2a4-7a36-4d1c-9a4e-2d1f0c0d9e11"
    prompt = {"sessionId": session, "timestamp": 1, "cwd": str(repo), "prompt": "go on"}
    _log(tmp_path, session, "session.start", "hook.start", "user.message")
    first = json.loads(_hook(repo, prompt, env))
    assert list(first) == ["additionalContext"]
    assert "Copilot-goal-4f1e" in first["additionalContext"]
    assert _hook(repo, prompt, env) == ""  # the next prompt of the same start
    _log(tmp_path, session, "session.start", "user.message", "session.resume", "hook.start")
    assert "Copilot-goal-4f1e" in _hook(repo, prompt, env)  # resumed: same id, new epoch
    assert _hook(repo, prompt, env) == ""
    _log(tmp_path, session, "session.resume", "session.compaction_complete")
    assert "Copilot-goal-4f1e" in _hook(repo, prompt, env)  # after a compaction
    # sessionStart (a `source`) and preCompact (a `trigger`) never deliver, even if registered
    for extra in ({"source": "new", "initialPrompt": "x"}, {"trigger": "manual"}):
        _log(tmp_path, session, "session.resume")
        assert _hook(repo, {**prompt, **extra}, env) == ""
    # no event log (and no timestamp to wait for): once per session id
    other = {"sessionId": "b2c4", "cwd": str(repo), "prompt": "go on"}
    assert "Copilot-goal-4f1e" in _hook(repo, other, env)
    assert _hook(repo, other, env) == ""


def test_a_fifo_hooks_file_is_refused_without_hanging(repo: Path) -> None:
    (repo / ".github" / "hooks").mkdir(parents=True)
    os.mkfifo(repo / HOOKS)
    result = run_cli("integrate", "copilot", cwd=repo)
    assert result.code == 2 and "not a regular file" in result.stderr
