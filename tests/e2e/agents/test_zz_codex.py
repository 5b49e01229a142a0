from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.agent_server import Part, Text, ToolCall
from tests.e2e.agents import test_codex as cx
from tests.e2e.agents.conftest import Workspace


def test_record(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("g")
    cx.write_config(ws)
    cx.integrate(ws)
    log = Path("/tmp/h15/codex_payloads.jsonl")
    log.unlink(missing_ok=True)
    rec = f"import sys; open({str(log)!r}, 'a').write(sys.stdin.read().strip() + chr(10))"
    hook = {"type": "command", "command": f'{sys.executable} -c "{rec}"'}
    p = ws.root / ".codex" / "hooks.json"
    settings = json.loads(p.read_text())
    for ev in ("PreToolUse", "PostToolUse"):
        settings["hooks"][ev] = [{"hooks": [hook]}]
    p.write_text(json.dumps(settings))
    cx.approve_hooks(ws)
    seen: list[Any] = []

    def script(protocol: str, request: dict[str, Any]) -> list[Part]:
        seen.append(request)
        n = len(seen)
        if n == 1:
            Path("/tmp/h15/codex_tools.json").write_text(json.dumps(request.get("tools"))[:20000])
        names = [t.get("name") for t in request.get("tools", [])]
        tool = "exec_command" if "exec_command" in names else "shell"
        if n == 1:
            return [
                ToolCall(
                    tool,
                    {"cmd": "echo hi"}
                    if tool == "exec_command"
                    else {"command": ["bash", "-lc", "echo hi"]},
                )
            ]
        if n == 2:
            return [
                ToolCall(
                    tool,
                    {"cmd": "false"}
                    if tool == "exec_command"
                    else {"command": ["bash", "-lc", "false"]},
                )
            ]
        return [Text("Done.")]

    ws.server.script = script
    cx.codex(ws, "go")
    Path("/tmp/h15/codex_last.json").write_text(json.dumps(seen[-1].get("input"))[:50000])
