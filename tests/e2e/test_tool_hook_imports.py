"""The tool hook runs on every shell call of the agent: a call that is no side effect imports
no CLI, Rich, YAML or rendering module, and starts no git (issue 15: keep the hook fast)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_imports import NEVER, READING, RENDERING, heavy


@pytest.fixture
def workspace(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    return repo


def payload(repo: Path, command: str) -> str:
    return json.dumps({"session_id": "s1", "cwd": str(repo), "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_use_id": "t1"})  # fmt: skip


def hook_modules(workspace: Path, stdin: str, args: str = "hook-tool pre") -> set[str]:
    """The modules a tool hook imports, started as `integrate` writes it (``python -I`` the
    entry script, ``-X importtime`` added to list them)."""
    from resume_kit.integrations.settings import ENTRY_SCRIPT

    argv = [sys.executable, "-I", "-X", "importtime", ENTRY_SCRIPT, *args.split()]
    proc = subprocess.run(
        argv, cwd=workspace, input=stdin, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "tool hook skipped" not in proc.stderr, proc.stderr
    lines = [line.split("|")[-1].strip() for line in proc.stderr.splitlines()]
    return {name for name in lines if name and " " not in name}


def test_a_plain_shell_call_stays_light(workspace: Path) -> None:
    found = hook_modules(workspace, payload(workspace, "pytest -q && ls"))
    assert "resume_kit.integrations.tool_hook" in found
    assert heavy(found, NEVER | RENDERING | READING | {"rich", "typer", "click"}) == []
    assert "subprocess" not in found  # no git for a call that is no side effect
    assert {"resume_kit.infra.redact", "runpy"}.isdisjoint(found)  # started by path, not -m
    assert "json" not in found  # the payload, the call's signature: core/light_json
    # nor the config module, pathlib or urllib: whether a config file exists is asked as text
    assert {"resume_kit.progress_file.config", "pathlib", "urllib.parse"}.isdisjoint(found)


def test_a_side_effect_reads_the_ledger_without_the_cli(workspace: Path) -> None:
    found = hook_modules(workspace, payload(workspace, "git push"))
    assert "resume_kit.progress_file.ledger" in found  # it did record the attempt
    # writing progress.yaml keeps a person's comments: the round-trip YAML library is needed
    assert heavy(found, (NEVER - {"ruamel"}) | RENDERING | {"rich", "typer", "click"}) == []


def test_the_after_hook_of_a_plain_shell_call_records_it_lightly(workspace: Path) -> None:
    """The PostToolUse hook adds the call to the activity log (the loop guard's record) and
    nothing else: no json, no progress model (datetime), no config module."""
    from resume_kit.facts import activity_log

    after = json.loads(payload(workspace, "pytest -q && ls"))
    after.update(hook_event_name="PostToolUse", tool_response={"stdout": "ok", "stderr": ""})
    found = hook_modules(workspace, json.dumps(after), "hook-tool post")
    assert [c.shown for c in activity_log.calls(str(workspace))] == ["pytest -q && ls"]
    assert heavy(found, NEVER | RENDERING | READING | {"rich", "typer", "click"}) == []
    assert {"json", "datetime", "resume_kit.model.progress", "pathlib"}.isdisjoint(found)
