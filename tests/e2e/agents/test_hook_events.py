"""Which hook events, sources and triggers the real binaries send (a recording hook beside
resume-kit's): what the integrations' matchers and event names must fit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.e2e.agents import test_claude_code as claude_e2e
from tests.e2e.agents import test_codex as codex_e2e
from tests.e2e.agents.conftest import Workspace

pytestmark = [pytest.mark.agents, pytest.mark.slow]

EVENTS = ("SessionStart", "PreCompact", "PostCompact", "Stop")


def add_recorder(settings_path: Path, log: Path) -> None:
    record = f"import sys; open({str(log)!r}, 'a').write(sys.stdin.read().strip() + chr(10))"
    hook = {"type": "command", "command": f'{sys.executable} -c "{record}"'}
    settings = json.loads(settings_path.read_text())
    for event in EVENTS:
        settings["hooks"].setdefault(event, []).append({"hooks": [hook]})
    settings_path.write_text(json.dumps(settings))


def recorded(log: Path) -> set[tuple[str, str | None]]:
    payloads = [json.loads(line) for line in log.read_text().splitlines()]
    return {(p["hook_event_name"], p.get("source") or p.get("trigger")) for p in payloads}


def test_claude_code_events(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    claude_e2e.integrate(ws)
    log = ws.root.parent / "payloads.jsonl"
    add_recorder(ws.root / ".claude" / "settings.json", log)
    session = claude_e2e.claude(ws, "hello")["session_id"]
    claude_e2e.claude(ws, "/compact", "--resume", session)
    assert recorded(log) == {
        ("SessionStart", "startup"),
        ("SessionStart", "resume"),
        ("SessionStart", "compact"),
        ("PreCompact", "manual"),
        ("PostCompact", "manual"),
        ("Stop", None),
    }


def test_codex_events(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    codex_e2e.write_config(ws)
    codex_e2e.integrate(ws)
    log = ws.root.parent / "payloads.jsonl"
    add_recorder(ws.root / ".codex" / "hooks.json", log)
    codex_e2e.approve_hooks(ws)
    thread = codex_e2e.codex(ws, "hello")
    codex_e2e.write_config(ws, extra="model_auto_compact_token_limit = 1000\n")
    codex_e2e.approve_hooks(ws)
    codex_e2e.codex(ws, "resume", thread, "again")
    assert recorded(log) == {
        ("SessionStart", "startup"),
        ("SessionStart", "resume"),
        ("SessionStart", "compact"),
        ("PreCompact", "auto"),
        ("PostCompact", "auto"),
        ("Stop", None),
    }
