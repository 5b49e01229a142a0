"""The side-effect ledger fed by GitHub Copilot CLI 1.0.102's preToolUse/postToolUse hooks (issue
15): its ``bash`` tool runs `git push` to a local bare remote; the after-hook records the push, and
in a new session the identical push is stopped by the before-hook's "ask" (Copilot in `-p` mode
cannot ask anyone and refuses the call itself)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import git
from tests.e2e.agents import test_copilot as copilot_e2e
from tests.e2e.agents.conftest import Workspace
from tests.e2e.agents.test_tool_hooks import (
    PUSH,
    commit,
    ledger,
    one_call,
    remote_head,
    tool_results,
    with_remote,
)

pytestmark = [pytest.mark.agents, pytest.mark.slow]


def test_copilot_push_is_recorded_and_refused_in_a_new_session(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Ship the branch")
    git(ws.root, "add", ".resume-kit")
    git(ws.root, "commit", "-q", "-m", "goal")
    remote = with_remote(ws)
    copilot_e2e.integrate(ws)
    hooks = json.loads((ws.root / ".github" / "hooks" / "resume-kit.json").read_text())
    pre = hooks["hooks"]["preToolUse"][0]["bash"]
    assert ' -I "$E" hook-tool pre --agent copilot || ' in pre

    ws.server.script = one_call(PUSH, tool="bash")
    first = copilot_e2e.copilot(ws, "push the branch")
    pushed = remote_head(remote)
    assert pushed == git(ws.root, "rev-parse", "HEAD").stdout.strip()
    (entry,) = ledger(ws)
    assert entry.key.startswith("git-push-")
    assert [(a.status, a.session, a.command, a.result) for a in entry.attempts] == [
        ("success", first, PUSH, "exit 0")
    ]

    newer = commit(ws, "more.txt")
    ws.server.clear()
    ws.server.script = one_call(PUSH, tool="bash")
    second = copilot_e2e.copilot(ws, "push the branch")
    assert second != first
    (result,) = tool_results(ws)
    text = json.dumps(result["content"])
    assert "Denied by preToolUse hook" in text
    assert "already ran and succeeded" in text and first in text
    assert remote_head(remote) == pushed != newer  # the repeat did not run
    assert len(ledger(ws)[0].attempts) == 1


def test_copilot_failed_push_is_failed_and_may_be_retried(workspace: Workspace) -> None:
    ws = workspace
    ws.write_goal("Ship the branch")
    copilot_e2e.integrate(ws)
    ws.server.script = one_call("git push nowhere main", tool="bash")  # no such remote: 128
    first = copilot_e2e.copilot(ws, "push the branch")
    (entry,) = ledger(ws)
    assert [(a.status, a.session, a.result) for a in entry.attempts] == [
        ("failed", first, "exit 128")
    ]
    ws.server.clear()
    ws.server.script = one_call("git push nowhere main", tool="bash")
    copilot_e2e.copilot(ws, "push the branch")
    (result,) = tool_results(ws)
    assert "Denied by preToolUse hook" not in json.dumps(result["content"])
    assert [a.status for a in ledger(ws)[0].attempts] == ["failed", "failed"]
