"""The served hook brief (``--format claude-hook|copilot-hook``) against fresh builds (issue 18).

The workspace of test_brief_fastpath.py (an earlier Claude Code session ``s1`` in the tree). A
hook brief writes state: the meter's event for a session start (the activity log), the
compaction and prompt markers. So every run here is differential from one state: the state is
saved, the brief runs with the fast path, the state it left is noted, the state is put back and
a fresh build (``RESUME_KIT_NO_FASTPATH=1``) runs with the same payload; output and the state
left must be the same (the meter event's time aside). Payload variants: a new session each
start, a resumed one, a compaction's two events, a malformed payload; and each input change of
the Markdown test misses, and the receipt that miss stored serves the next new session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.test_brief_fastpath import (
    CHANGES,
    DEBUG_PREFIX,
    SERVED,
    Workspace,
    settling,
    transcript,
    workspace,
)

__all__ = ["workspace"]  # the fixture, imported for pytest

STATE_FOLDERS = ("activity", "compactions", "prompt-briefs")


@dataclass
class Run:
    code: int
    stdout: bytes
    stderr: str  # without the debug lines
    served: bool
    debug: str


def run(ws: Workspace, payload: bytes, fmt: str = "claude-hook", *, fast: bool = True) -> Run:
    env = dict(os.environ, RESUME_KIT_NOW=str(ws.now), RESUME_KIT_DEBUG_FASTPATH="1")
    if not fast:
        env["RESUME_KIT_NO_FASTPATH"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", "brief", "--format", fmt],
        cwd=ws.root,
        env=env,
        input=payload,
        capture_output=True,
        timeout=120,
    )
    lines = proc.stderr.decode().splitlines(keepends=True)
    debug = "".join(line for line in lines if line.startswith(DEBUG_PREFIX))
    rest = "".join(line for line in lines if not line.startswith(DEBUG_PREFIX))
    served = any(line.startswith(DEBUG_PREFIX + "served") for line in debug.splitlines())
    return Run(proc.returncode, proc.stdout, rest, served, debug)


def cache_root() -> Path:
    from resume_kit.infra.cachedir import user_cache_root

    return Path(user_cache_root())


def save_state() -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for folder in STATE_FOLDERS:
        base = cache_root() / folder
        if base.is_dir():
            for path in base.iterdir():
                found[f"{folder}/{path.name}"] = path.read_bytes()
    return found


def restore_state(saved: dict[str, bytes]) -> None:
    """The files as saved, written in place (the folders stay the ones the receipt saw)."""
    for name in set(save_state()) - set(saved):
        (cache_root() / name).unlink()
    for name, data in saved.items():
        path = cache_root() / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def normal_state(state: dict[str, bytes]) -> dict[str, object]:
    """The state with the times the runs stamp (the meter event's, the compaction marker's)."""
    normal: dict[str, object] = {}
    for name, data in state.items():
        if name.startswith("activity/"):
            log = json.loads(data)
            for event in log.get("events", []):
                event.pop("at", None)
            normal[name] = log
        elif name.startswith("compactions/"):
            normal[name] = data.split()[0]
        else:
            normal[name] = data
    return normal


def differential(ws: Workspace, payload: bytes, fmt: str = "claude-hook") -> Run:
    """The fast path's run, checked against a fresh build from the same state."""
    before = save_state()
    fast = run(ws, payload, fmt)
    after_fast = save_state()
    restore_state(before)
    fresh = run(ws, payload, fmt, fast=False)
    after_fresh = save_state()
    assert (fast.code, fast.stdout, fast.stderr) == (fresh.code, fresh.stdout, fresh.stderr), (
        fast.debug
    )
    assert normal_state(after_fast) == normal_state(after_fresh), fast.debug
    return fast


def payload(session: str, source: str = "startup", event: str = "SessionStart") -> bytes:
    folder = transcript_folder()
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": str(folder / f"{session}.jsonl"),
            "cwd": os.getcwd(),
            "hook_event_name": event,
            "source": source,
        }
    ).encode()


def transcript_folder() -> Path:
    return Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects"


def served_once_stored(ws: Workspace, make: object, what: str) -> Run:
    """The first runs of a receipt may be built: an input written within 0.1 s before a build
    started stores no receipt, and a file a build left too fresh to vouch for (the fingerprint
    record leaves those out) is vouched for, and its record rewritten, by the next fresh build
    of :func:`differential`. Once the inputs settle the receipt serves."""
    assert callable(make)
    for _ in settling():
        done = differential(ws, make())
        if done.served:
            return done
    raise AssertionError(f"{what}: never served: {done.debug}")


@pytest.fixture
def hook_ws(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.chdir(workspace.root)
    return workspace


def test_a_new_session_start_is_served_and_equals_a_fresh_build(hook_ws: Workspace) -> None:
    ws = hook_ws
    from resume_kit.progress_file.config import user_config_file

    # many sessions start here: the meter's limit (what the next test checks) stays far away
    user_config_file().parent.mkdir(parents=True, exist_ok=True)
    user_config_file().write_text("no_progress: {sessions: 1000}\n")
    counter = iter(range(1000))

    def new_session() -> bytes:
        return payload(f"new-{next(counter)}")

    first = differential(ws, new_session())
    assert not first.served and first.code == 0
    assert b"Read the earlier session" in first.stdout  # s1, read for the new session
    served = served_once_stored(ws, new_session, "a new session")
    assert json.loads(served.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    for name, change in CHANGES:
        change(ws)
        after = differential(ws, new_session())
        assert not after.served, f"{name}: served a brief after the change"
        served_once_stored(ws, new_session, name)


def test_the_meter_misses_exactly_when_its_finding_would_change(hook_ws: Workspace) -> None:
    """Each new session start adds a meter event; past the meter's limit of sessions since the
    last verification the brief says NO_PROGRESS: that start is built, not served. Markdown
    briefs, which start no session, first outlast the fresh inputs (until then a build can
    still complete our records, and the flip's miss would be for that), so the flip's reason
    is the meter's own."""
    from resume_kit.progress_file.config import user_config_file

    ws = hook_ws
    user_config_file().parent.mkdir(parents=True, exist_ok=True)
    user_config_file().write_text("no_progress: {sessions: 6}\n")
    ws.outlast_fresh_inputs()
    outputs = []
    for number in range(9):
        outputs.append(differential(ws, payload(f"meter-{number}")))
    stalled = [b"NO_PROGRESS" in r.stdout or b"no new verified unit" in r.stdout for r in outputs]
    assert any(stalled) and not all(stalled)
    flip = stalled.index(True)
    assert not outputs[flip].served
    assert "the activity log judges differently" in outputs[flip].debug
    assert any(r.served for r in outputs[:flip]) or any(r.served for r in outputs[flip + 1 :])


def test_payload_variants_behave_as_the_full_path(hook_ws: Workspace) -> None:
    ws = hook_ws
    s1 = transcript(ws)
    resume = json.dumps(
        {
            "session_id": "s1",
            "transcript_path": str(s1),
            "hook_event_name": "SessionStart",
            "source": "resume",
            "cwd": str(ws.root),
        }
    ).encode()
    differential(ws, resume)
    served_once_stored(ws, lambda: resume, "a resumed session")
    compact = resume.replace(b'"resume"', b'"compact"')
    post = json.dumps(
        {
            "session_id": "s1",
            "transcript_path": str(s1),
            "hook_event_name": "PostCompact",
            "trigger": "auto",
            "cwd": str(ws.root),
        }
    ).encode()
    delivered = differential(ws, compact)
    assert delivered.stdout
    silent = differential(ws, post)  # the other event of this compaction: nothing
    assert silent.stdout == b"" and silent.served
    for garbage in (b"not json", b"[1, 2]", b'{"session_id": 5}', b"", b"{" * 5000):
        differential(ws, garbage)
    served_once_stored(ws, lambda: b"not json", "a payload that is not JSON")


def test_copilot_prompts_are_served_once_per_session(hook_ws: Workspace) -> None:
    ws = hook_ws
    ws.outlast_fresh_inputs()  # else all six prompts can fall inside our records' 2 s

    def prompt(session: str) -> bytes:
        return json.dumps({"sessionId": session, "cwd": str(ws.root), "prompt": "go"}).encode()

    first = differential(ws, prompt("c1"), "copilot-hook")
    assert json.loads(first.stdout)["additionalContext"]
    assert differential(ws, prompt("c1"), "copilot-hook").stdout == b""  # not the first prompt
    served = [differential(ws, prompt(f"c{n}"), "copilot-hook") for n in range(2, 8)]
    assert any(r.served and r.stdout for r in served), [r.debug for r in served]


def test_the_served_markdown_line_is_unchanged() -> None:
    assert SERVED == "resume-kit: fastpath: served the stored brief"
