"""GitHub Copilot CLI (the pinned npm release) against the loopback Messages API: after
``resume-kit integrate copilot`` the brief reaches the model with the first prompt of a new
and of a resumed session, through ``userPromptSubmitted``'s ``additionalContext``.

Copilot runs against a local model with no login: ``COPILOT_OFFLINE=true`` (no GitHub
authentication, telemetry or update) and ``COPILOT_PROVIDER_BASE_URL`` / ``_TYPE=anthropic``
(its BYOK provider). It loads ``.github/hooks/*.json`` only in a trusted folder: the tests
write ``trustedFolders`` in ``$COPILOT_HOME/config.json``, what its trust dialog writes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agents.conftest import AgentRun, Workspace

pytestmark = [pytest.mark.agents, pytest.mark.slow]

SESSION = re.compile(r"copilot --resume=([0-9a-f-]{36})")


def copilot(ws: Workspace, prompt: str, *args: str, trusted: bool = True) -> str:
    """Run one prompt; the session id Copilot prints."""
    home = ws.home / ".copilot"
    home.mkdir(exist_ok=True)
    config = {"trustedFolders": [str(ws.root)]} if trusted else {}
    (home / "config.json").write_text(json.dumps(config), encoding="utf-8")
    ws.env.update(
        {
            "COPILOT_HOME": str(home),
            "COPILOT_CACHE_HOME": str(ws.bins.copilot_cache),
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": ws.server.url,
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_API_KEY": "test-key",
            "COPILOT_MODEL": "claude-sonnet-4.5",
        }
    )
    run: AgentRun = ws.run(ws.bins.copilot, "-p", prompt, "--allow-all-tools", *args)
    assert run.code == 0, (run.stdout, run.stderr)
    found = SESSION.search(run.stderr + run.stdout)
    assert found, (run.stdout, run.stderr)
    return found[1]


def integrate(ws: Workspace) -> None:
    proc = ws.resume_kit("integrate", "copilot")
    assert proc.returncode == 0, proc.stderr


def last_request(ws: Workspace) -> str:
    bodies = ws.bodies("/v1/messages")
    assert bodies, "Copilot CLI sent the mock server no request"
    return bodies[-1]


def test_brief_reaches_the_model_on_the_first_prompt_only_after_integrate(
    workspace: Workspace,
) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c0b1 extract the contracts")
    copilot(ws, "hello")
    assert "Startup-marker-c0b1" not in last_request(ws)

    integrate(ws)
    ws.server.clear()
    copilot(ws, "hello")
    last = last_request(ws)
    assert last.count("Startup-marker-c0b1") == 1  # once, with the first prompt
    assert "Resume brief" in last


def test_an_untrusted_folder_runs_no_hook(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Startup-marker-c0b1 extract the contracts")
    integrate(ws)
    copilot(ws, "hello", trusted=False)
    assert "Startup-marker-c0b1" not in last_request(ws)


def test_brief_reaches_the_model_on_resume(workspace: Workspace) -> None:
    ws = workspace
    integrate(ws)
    ws.write_goal("Startup-marker-c0b1 extract the contracts")
    session = copilot(ws, "first prompt")
    # A different goal now: only a hook that ran on this resume can put it in the request.
    ws.write_goal("Resume-marker-7d2e extract the contracts")
    ws.server.clear()
    assert copilot(ws, "second prompt", f"--resume={session}") == session
    last = last_request(ws)
    assert last.count("Resume-marker-7d2e") == 1
    assert last.count("Startup-marker-c0b1") == 1  # the first prompt's brief, in the history


def _recording_hooks(ws: Workspace, record: Path) -> None:
    script = ws.root.parent / "record-hook.py"
    script.write_text(
        "import sys\n"
        f"with open({str(record)!r}, 'a') as f:\n"
        "    f.write(sys.argv[1] + ' ' + sys.stdin.read().strip() + '\\n')\n",
        encoding="utf-8",
    )
    events = ("sessionStart", "userPromptSubmitted", "preCompact")
    hooks = {e: [{"type": "command", "bash": f"'{sys.executable}' '{script}' {e}"}] for e in events}
    folder = ws.root / ".github" / "hooks"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "record.json").write_text(json.dumps({"version": 1, "hooks": hooks}))


def _recorded(record: Path) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for line in record.read_text(encoding="utf-8").splitlines():
        event, _, payload = line.partition(" ")
        found.append((event, json.loads(payload)))
    return found


def test_the_events_and_payloads_the_brief_hook_relies_on(workspace: Workspace) -> None:
    """sessionStart carries ``source``, preCompact ``trigger``, userPromptSubmitted neither;
    all carry ``sessionId``; a resumed session keeps its id. `/compact` runs preCompact, and
    our hook beside it takes the pre-compact snapshot."""
    ws = workspace
    integrate(ws)
    ws.write_goal("Startup-marker-c0b1 extract the contracts")
    record = ws.root.parent / "events.log"
    _recording_hooks(ws, record)
    session = copilot(ws, "first prompt")
    copilot(ws, "/compact", f"--resume={session}")
    events = _recorded(record)
    assert [e for e, _ in events] == [
        "sessionStart",
        "userPromptSubmitted",
        "preCompact",
    ], events
    (_, start), (_, prompt), (_, compact) = events
    assert start["source"] == "new" and start["sessionId"] == session
    assert prompt["prompt"] == "first prompt" and prompt["sessionId"] == session
    assert "source" not in prompt and "trigger" not in prompt
    assert compact["trigger"] == "manual" and compact["sessionId"] == session
    assert ws.snapshot_triggers().count("pre-compact") == 1


def _our_prompt_hook(ws: Workspace, session: str) -> str:
    hooks = json.loads((ws.root / ".github" / "hooks" / "resume-kit.json").read_text())
    command = hooks["hooks"]["userPromptSubmitted"][0]["bash"]
    # no timestamp: this is not a prompt Copilot logged, there is nothing to wait for
    payload = {"sessionId": session, "cwd": str(ws.root), "prompt": "next"}
    proc = subprocess.run(
        ["sh", "-c", command],
        cwd=ws.root,
        env=ws.env,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_once_per_start_resume_or_compaction_from_copilots_own_event_log(
    workspace: Workspace,
) -> None:
    """The next prompt of a session that already had the brief gets nothing; after a
    compaction (``session.compaction_complete`` in Copilot's events.jsonl) it gets it again."""
    ws = workspace
    integrate(ws)
    ws.write_goal("Startup-marker-c0b1 extract the contracts")
    session = copilot(ws, "first prompt")
    assert _our_prompt_hook(ws, session) == ""  # a second prompt of the same start
    copilot(ws, "/compact", f"--resume={session}")
    answer = json.loads(_our_prompt_hook(ws, session))
    assert "Startup-marker-c0b1" in answer["additionalContext"]
    assert _our_prompt_hook(ws, session) == ""


@pytest.mark.parametrize("style", ["english", "box"])
def test_the_biggest_brief_arrives_whole(workspace: Workspace, style: str) -> None:
    """The hook's whole answer (at the default budget, within the hook cap) reaches the model,
    byte for byte, inside ``<system_reminder>``."""
    from tests.big_progress import write_big_progress

    ws = workspace
    write_big_progress(ws.root, style, "Big-brief-marker")
    integrate(ws)
    ws.env["COPILOT_HOME"] = str(ws.home / ".copilot")
    answer = json.loads(_our_prompt_hook(ws, "another-session"))["additionalContext"]
    copilot(ws, "hello")
    request = json.loads(last_request(ws))
    (text,) = [
        part["text"]
        for message in request["messages"]
        for part in (message["content"] if isinstance(message["content"], list) else [])
        if "Big-brief-marker" in part.get("text", "")
    ]
    start = text.index("<system_reminder>\n") + len("<system_reminder>\n")
    injected = text[start : text.rindex("\n</system_reminder>")]
    assert injected == answer.rstrip("\n")
    assert "**Rule:**" in injected and len(injected.encode("utf-8")) > 4_000
