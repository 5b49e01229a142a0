"""Codex CLI (the pinned npm release) against the loopback Responses API: after
``resume-kit integrate codex`` the SessionStart hook's brief reaches the model, on startup,
resume and compact, once Codex's two gates are passed the way a person passes them.

Codex loads a project's ``.codex/`` layer only in a trusted project (``[projects."PATH"]
trust_level = "trusted"`` in ``$CODEX_HOME/config.toml``) and runs a non-managed hook only
when its current hash is approved (``[hooks.state."KEY"] trusted_hash = "sha256:..."``, which
``/hooks`` writes). :func:`approve_hooks` asks ``codex app-server`` (JSON-RPC ``hooks/list``,
what the TUI's ``/hooks`` reads) for each hook's key and hash and writes that approval: the
same state a person's approval leaves, without a terminal.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.agent_server import Part, Text
from tests.e2e.agents.conftest import AgentRun, Workspace

pytestmark = [pytest.mark.agents, pytest.mark.slow]

# The instruction Codex sends when it asks the model for a compaction summary.
COMPACTION_PROMPT = "CONTEXT CHECKPOINT COMPACTION"


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def write_config(ws: Workspace, *, trusted: bool = True, extra: str = "") -> None:
    home = ws.home / ".codex"
    home.mkdir(exist_ok=True)
    text = (
        f"{extra}"
        'model = "mock-model"\n'
        'model_provider = "mock"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "check_for_update_on_startup = false\n"
        "\n"
        "[analytics]\n"
        "enabled = false\n"
        "\n"
        "[model_providers.mock]\n"
        'name = "mock"\n'
        f"base_url = {toml_string(ws.server.url + '/v1')}\n"
        'wire_api = "responses"\n'
        'env_key = "MOCK_MODEL_KEY"\n'
    )
    if trusted:
        text += f'\n[projects.{toml_string(str(ws.root))}]\ntrust_level = "trusted"\n'
    (home / "config.toml").write_text(text, encoding="utf-8")
    ws.env["MOCK_MODEL_KEY"] = "test-key"


def list_hooks(ws: Workspace) -> list[dict[str, Any]]:
    """The hooks Codex sees for the work tree, as ``codex app-server`` reports them."""
    proc = subprocess.Popen(
        [str(ws.bins.codex), "app-server"],
        cwd=ws.root,
        env=ws.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    requests: list[dict[str, Any]] = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(ws.root)]}},
    ]
    try:
        for request in requests:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **request}) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:  # bounded: the server answers id 2 or exits
            message = json.loads(line)
            if message.get("id") == 2:
                assert "result" in message, message
                hooks: list[dict[str, Any]] = []
                for entry in message["result"]["data"]:
                    hooks.extend(entry["hooks"])
                return hooks
        raise AssertionError("codex app-server exited without answering hooks/list")
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def approve_hooks(ws: Workspace) -> list[dict[str, Any]]:
    hooks = list_hooks(ws)
    config = ws.home / ".codex" / "config.toml"
    with config.open("a", encoding="utf-8") as out:
        for hook in hooks:
            out.write(
                f"\n[hooks.state.{toml_string(hook['key'])}]\n"
                f"trusted_hash = {toml_string(hook['currentHash'])}\n"
            )
    return hooks


def codex(ws: Workspace, *args: str) -> str:
    """Run ``codex exec --json ARGS``; the thread id."""
    run: AgentRun = ws.run(ws.bins.codex, "exec", "--json", *args)
    assert run.code == 0, (run.stdout, run.stderr)
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert any(e.get("type") == "turn.completed" for e in events), run.stdout
    return str(next(e["thread_id"] for e in events if e.get("type") == "thread.started"))


def integrate(ws: Workspace) -> None:
    proc = ws.resume_kit("integrate", "codex")
    assert proc.returncode == 0, proc.stderr


def responses_bodies(ws: Workspace) -> list[str]:
    return ws.bodies("/v1/responses")


def test_brief_needs_integrate_trust_and_approval(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    write_config(ws)
    codex(ws, "hello")
    assert responses_bodies(ws), "Codex sent the mock server no request"
    assert not any("Startup-marker-c1a7" in body for body in responses_bodies(ws))

    # integrated, in a trusted project, but not approved: Codex does not run the hook
    integrate(ws)
    ws.server.clear()
    codex(ws, "hello")
    assert responses_bodies(ws)
    assert not any("Startup-marker-c1a7" in body for body in responses_bodies(ws))

    # approved but the project untrusted: the project's .codex/ layer is not loaded
    write_config(ws, trusted=False)
    hooks = approve_hooks(ws)
    assert hooks == [], "an untrusted project's hooks should not be listed"


def test_brief_reaches_the_model_on_startup(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    write_config(ws)
    integrate(ws)
    hooks = approve_hooks(ws)
    assert {h["eventName"] for h in hooks} >= {"sessionStart"}, hooks
    codex(ws, "hello")
    bodies = responses_bodies(ws)
    assert bodies
    assert all("Startup-marker-c1a7" in body for body in bodies)


def test_brief_reaches_the_model_on_resume(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    write_config(ws)
    integrate(ws)
    approve_hooks(ws)
    thread = codex(ws, "first prompt")
    ws.write_goal("Resume-marker-5e02 extract the contracts")
    ws.server.clear()
    codex(ws, "resume", thread, "second prompt")
    bodies = responses_bodies(ws)
    assert bodies
    assert "Resume-marker-5e02" in bodies[-1]


def test_brief_reaches_the_model_after_compact(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    # Every mock reply reports 1,220 tokens: above this limit Codex compacts before the next turn.
    write_config(ws, extra="model_auto_compact_token_limit = 1000\n")
    integrate(ws)
    approve_hooks(ws)

    def script(protocol: str, request: dict[str, Any]) -> list[Part]:
        if COMPACTION_PROMPT in json.dumps(request.get("input", [])):
            # The goal changes while the model summarises: only a hook that runs after
            # the compaction (SessionStart "compact") can report the new one.
            ws.write_goal("Compact-marker-93c4 extract the contracts")
            return [Text("Summary: worked on unit-001.")]
        return [Text("OK.")]

    ws.server.script = script
    thread = codex(ws, "first prompt")
    ws.write_goal("Resume-marker-5e02 extract the contracts")
    ws.server.clear()
    codex(ws, "resume", thread, "second prompt")
    bodies = responses_bodies(ws)
    summaries = [i for i, body in enumerate(bodies) if COMPACTION_PROMPT in body]
    assert summaries, "Codex did not compact"
    assert not any("Compact-marker-93c4" in body for body in bodies[: summaries[0] + 1])
    assert "Compact-marker-93c4" in bodies[-1]
    assert ws.snapshot_triggers().count("pre-compact") == 1  # the PreCompact hook ran


def test_integrate_sets_the_context_limit(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts")
    write_config(ws)
    integrate(ws)
    starts = [h for h in list_hooks(ws) if h["eventName"] == "sessionStart"]
    assert starts, "Codex lists no SessionStart hook"
    assert all(isinstance(h["additionalContextLimit"], int) for h in starts), starts


STOP_VERIFY = "test -f out/001.json"


def test_stop_hook_blocks_while_the_unit_fails(workspace: Workspace) -> None:
    """`integrate codex --stop-verify`: the Stop hook runs the (person-approved) verify
    command and, while it fails, sends the agent back to work once."""
    ws = workspace
    ws.write_goal("Startup-marker-c1a7 extract the contracts", verify=STOP_VERIFY)
    write_config(ws)
    proc = ws.resume_kit("integrate", "codex", "--stop-verify")
    assert proc.returncode == 0, proc.stderr
    assert {h["eventName"] for h in approve_hooks(ws)} >= {"stop"}
    assert ws.resume_kit("trust", "--yes").returncode == 0  # the person's approval
    codex(ws, "hello")
    bodies = responses_bodies(ws)
    reason = f"Unit unit-001 is in progress and its verify command exited 1: {STOP_VERIFY}"
    assert len(bodies) == 2, "the Stop hook did not send the agent back"
    assert reason not in bodies[0]
    assert reason in bodies[1]
