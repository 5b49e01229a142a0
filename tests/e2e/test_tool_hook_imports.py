"""The tool hook runs on every shell call of the agent: a call that is no side effect imports
no CLI, Rich, YAML or rendering module, and starts no git (issue 15: keep the hook fast)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.e2e.test_imports import MODULE_WRAPPER, NEVER, READING, RENDERING, heavy, modules_after

MODULE = "resume_kit.integrations.tool_hook"


@pytest.fixture
def workspace(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    return repo


def payload(repo: Path, command: str) -> str:
    return json.dumps({"session_id": "s1", "cwd": str(repo), "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_use_id": "t1"})  # fmt: skip


def test_a_plain_shell_call_stays_light(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    argv = [sys.executable, "-I", "-c", MODULE_WRAPPER, str(out), MODULE, "pre"]
    found = modules_after(argv, workspace, out, stdin=payload(workspace, "pytest -q && ls"))
    assert heavy(found, NEVER | RENDERING | READING | {"rich", "typer", "click"}) == []
    assert "subprocess" not in found  # no git for a call that is no side effect
    assert "resume_kit.infra.redact" not in found
    # nor the config module, pathlib or urllib: whether a config file exists is asked as text
    assert {"resume_kit.progress_file.config", "pathlib", "urllib.parse"}.isdisjoint(found)


def test_a_side_effect_reads_the_ledger_without_the_cli(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    argv = [sys.executable, "-I", "-c", MODULE_WRAPPER, str(out), MODULE, "pre"]
    found = modules_after(argv, workspace, out, stdin=payload(workspace, "git push"))
    assert "resume_kit.progress_file.ledger" in found  # it did record the attempt
    # writing progress.yaml keeps a person's comments: the round-trip YAML library is needed
    assert heavy(found, (NEVER - {"ruamel"}) | RENDERING | {"rich", "typer", "click"}) == []
