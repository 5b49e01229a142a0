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
import sys
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
    # the brief hook this agent runs starts the entry script isolated (settings.ENTRY_SCRIPT)
    hooks = json.loads((ws.root / ".codex" / "hooks.json").read_text())["hooks"]
    assert ' -I -S "$E" brief ' in hooks["SessionStart"][0]["hooks"][0]["command"]


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


@pytest.mark.parametrize(
    ("body", "whole"),
    [
        ("x" * 10_000, True),
        ("x" * 10_001, False),
        ("─" * 3_333 + "x", True),  # 3,334 characters, 10,000 bytes
        ("─" * 3_334, False),  # 3,334 characters, 10,002 bytes
    ],
    ids=["10000-ascii", "10001-ascii", "10000-bytes", "10002-bytes"],
)
def test_the_context_limit_counts_utf8_bytes(workspace: Workspace, body: str, whole: bool) -> None:
    """Codex 0.171.0 counts a hook's additionalContext as ceil(UTF-8 bytes / 4) tokens: at
    the limit `integrate codex` writes (2,500), 10,000 bytes reach the model whole, 10,001 are
    cut to a preview (``Warning: truncated output (original token count: N)``) and saved to
    a file, whatever the number of characters."""
    ws = workspace
    ws.write_goal("g")
    write_config(ws)
    context = body
    hook = ws.root.parent / "hook.py"
    answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    hook.write_text(f"import json\nprint(json.dumps({answer!r}))\n", encoding="utf-8")
    entry = {"type": "command", "command": f"{sys.executable} {hook}", "timeout": 30}
    entry["additionalContextLimit"] = 2500
    hooks = {"hooks": {"SessionStart": [{"matcher": "startup|resume", "hooks": [entry]}]}}
    (ws.root / ".codex").mkdir()
    (ws.root / ".codex" / "hooks.json").write_text(json.dumps(hooks))
    approve_hooks(ws)
    codex(ws, "hello")
    request = responses_bodies(ws)[-1]
    assert (json.dumps(context, ensure_ascii=False)[1:-1] in request) is whole
    tokens = -(-len(context.encode("utf-8")) // 4)
    assert (f"original token count: {tokens})" in request) is not whole


def _injected(body: str, marker: str) -> str:
    """The text of the request's input item that carries ``marker`` (the hook's context)."""
    request = json.loads(body)
    for item in request.get("input", []):
        for part in item.get("content") or []:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and marker in text:
                return text
    raise AssertionError(f"{marker} is in no input item")


def _without_meter(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not line.startswith("- Resources:"))


@pytest.mark.parametrize("style", ["english", "box"])
def test_the_biggest_brief_arrives_whole(workspace: Workspace, style: str) -> None:
    """The brief `integrate codex` asks for (`--max-tokens 1800`) at its biggest reaches the
    model whole. Codex 0.171.0 counts a hook's context as ceil(UTF-8 bytes / 4) tokens (10,000
    bytes pass its limit of 2,500, 10,001 become a preview and a file): runs of box-drawing
    characters are few cl100k tokens but many bytes, which the hook cap (in bytes) absorbs."""
    from resume_kit.brief.render import HOOK_MAX_CHARS
    from resume_kit.infra import tokens
    from tests.big_progress import write_big_progress

    ws = workspace
    write_big_progress(ws.root, style, "Big-brief-marker")
    write_config(ws)
    integrate(ws)
    approve_hooks(ws)
    # what the hook answers, from its command with a startup payload: nothing else changes
    # before Codex runs it (its new session has no conversation yet)
    hooks = json.loads((ws.root / ".codex" / "hooks.json").read_text())["hooks"]
    command = hooks["SessionStart"][0]["hooks"][0]["command"]
    payload = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(ws.root)}
    proc = subprocess.run(
        ["sh", "-c", command],
        cwd=ws.root,
        env=ws.env,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
    )
    brief = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    size = len(brief.encode("utf-8"))
    assert size <= HOOK_MAX_CHARS, size  # what Codex lets through (see the test above)
    codex(ws, "hello")
    body = responses_bodies(ws)[-1]
    assert "truncated output" not in body and "Full hook output saved" not in body
    # whole: the same text, but for the meter line, which says whether a transcript was seen
    assert _without_meter(_injected(body, "Big-brief-marker")) == _without_meter(brief)
    assert "**Rule:**" in brief and "brief cut at the hook's size limit" not in brief
    # the biggest it gets: near the token budget, or near the byte cap
    assert tokens.count_tokens(brief) > 1_500 or size > 9_000, (tokens.count_tokens(brief), size)
