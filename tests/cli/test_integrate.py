"""`integrate claude|codex` settings merges and the Stop hook (`stop-check`)."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.integrations import settings as merge
from tests.conftest import run_cli

ORIGINAL: dict[str, Any] = {
    "model": "opus",
    "permissions": {
        "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
        "deny": ["Bash(curl:*)"],
    },
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
        ],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}


def write_json(path: Path, data: Any, indent: int = 2) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=indent) + "\n"
    path.write_text(text)
    return text


def our_commands(data: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for event, groups in data.get("hooks", {}).items():
        for group in groups:
            for hook in group["hooks"]:
                args = merge.command_args(hook["command"])
                if args is not None:  # ours, whichever executable it names (point 17)
                    found.setdefault(event, []).append(f"resume-kit {args}")
    return found


# --------------------------------------------------------------------------- claude


def test_merge_keeps_everything_else_is_idempotent_and_removes_cleanly(repo: Path) -> None:
    path = repo / ".claude" / "settings.json"
    original_text = write_json(path, ORIGINAL)
    first = run_cli("integrate", "claude", cwd=repo)
    assert first.code == 0, first.stderr
    merged_text = path.read_text()
    merged = json.loads(merged_text)
    assert our_commands(merged) == {
        "SessionStart": ["resume-kit brief --format claude-hook"],
        "PostCompact": ["resume-kit brief --format claude-hook"],
        "PreCompact": ["resume-kit snapshot --quiet --trigger pre-compact"],
        # the side-effect ledger's tool hooks (issue 15)
        "PreToolUse": ["resume-kit hook-tool pre"],
        "PostToolUse": ["resume-kit hook-tool post"],
        "PostToolUseFailure": ["resume-kit hook-tool post"],
    }
    ours = merged["hooks"]["SessionStart"][-1]
    assert ours["matcher"] == "startup|resume|clear|compact|fork"
    assert ours["hooks"][0]["type"] == "command"
    # everything that was there is still there, in the same order
    assert list(merged) == list(ORIGINAL)
    # the person's own rules stay, first; ours deny the agent `resume-kit trust` (issue 12)
    from resume_kit.integrations.claude import DENY_RULES

    assert merged["permissions"] == {
        "allow": ORIGINAL["permissions"]["allow"],
        "deny": [*ORIGINAL["permissions"]["deny"], *DENY_RULES],
    }
    pre_tool = ORIGINAL["hooks"]["PreToolUse"]
    assert merged["hooks"]["PreToolUse"][: len(pre_tool)] == pre_tool
    assert merged["hooks"]["PreToolUse"][-1]["matcher"] == "Bash|mcp__.*"
    assert merged["hooks"]["SessionStart"][0] == ORIGINAL["hooks"]["SessionStart"][0]

    second = run_cli("integrate", "claude", cwd=repo)
    assert second.code == 0 and "nothing changed" in second.stdout
    assert path.read_text() == merged_text

    removed = run_cli("integrate", "claude", "--remove", cwd=repo)
    assert removed.code == 0, removed.stderr
    assert path.read_text() == original_text
    again = run_cli("integrate", "claude", "--remove", cwd=repo)
    assert again.code == 0 and "nothing changed" in again.stdout
    assert path.read_text() == original_text


def test_a_file_we_created_goes_away_on_remove(repo: Path) -> None:
    assert run_cli("integrate", "claude", "--stop-verify", cwd=repo).code == 0
    path = repo / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    assert set(our_commands(data)) == {
        "SessionStart", "PostCompact", "PreCompact", "Stop",
        "PreToolUse", "PostToolUse", "PostToolUseFailure",
    }  # fmt: skip
    assert our_commands(data)["Stop"] == ["resume-kit stop-check"]
    assert run_cli("integrate", "claude", "--remove", cwd=repo).code == 0
    assert not path.exists()
    assert not (repo / ".claude").exists()


def test_remove_keeps_a_folder_with_other_files(repo: Path) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    assert run_cli("integrate", "claude", cwd=repo).code == 0
    assert run_cli("integrate", "claude", "--remove", cwd=repo).code == 0
    assert not (repo / ".claude" / "settings.json").exists()
    assert (repo / ".claude" / "settings.local.json").read_text() == "{}\n"


def test_indent_and_mode_are_kept(repo: Path) -> None:
    path = repo / ".claude" / "settings.json"
    original_text = write_json(path, {"permissions": {"allow": []}}, indent=4)
    path.chmod(0o600)
    assert run_cli("integrate", "claude", cwd=repo).code == 0
    assert '\n    "hooks": {\n        "SessionStart"' in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert run_cli("integrate", "claude", "--remove", cwd=repo).code == 0
    assert path.read_text() == original_text


@pytest.mark.parametrize(
    "text",
    [
        '{"hooks": {"SessionStart": [}',  # does not parse
        "[1, 2]\n",  # not an object
        '{"hooks": []}\n',  # hooks is not an object
        '{"hooks": {"PreCompact": {"matcher": "x"}}}\n',  # an event that is not a list
        '{"a": 1} // a comment\n',
    ],
)
def test_malformed_settings_are_refused_untouched(repo: Path, text: str) -> None:
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    for args in (("integrate", "claude"), ("integrate", "claude", "--remove")):
        result = run_cli(*args, cwd=repo)
        if "--remove" in args and text.startswith(('{"hooks": [', '{"hooks": {"PreCompact"')):
            assert result.code == 0  # nothing of ours in there: nothing to take out
        else:
            assert result.code == 2, (args, result.stdout, result.stderr)
            assert "resume-kit: error:" in result.stderr and "Traceback" not in result.stderr
        assert path.read_text() == text


def test_user_settings_honour_claude_config_dir(repo: Path, tmp_path: Path) -> None:
    config_dir = tmp_path / "claude-config"
    env = {"CLAUDE_CONFIG_DIR": str(config_dir)}
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    result = run_cli("integrate", "claude", "--user", cwd=elsewhere, env=env)
    assert result.code == 0, result.stderr
    data = json.loads((config_dir / "settings.json").read_text())
    assert "SessionStart" in our_commands(data)
    assert not (repo / ".claude").exists()
    assert run_cli("integrate", "claude", "--user", "--remove", cwd=elsewhere, env=env).code == 0
    assert not (config_dir / "settings.json").exists()
    assert config_dir.is_dir()  # the user's config folder itself is never removed


def test_codex_hooks_file(repo: Path) -> None:
    path = repo / ".codex" / "hooks.json"
    original = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}
    original_text = write_json(path, original)
    assert run_cli("integrate", "codex", "--stop-verify", cwd=repo).code == 0
    data = json.loads(path.read_text())
    assert our_commands(data) == {
        "Stop": ["resume-kit stop-check"],
        "SessionStart": ["resume-kit brief --format claude-hook --max-tokens 1800"],
        "PreCompact": ["resume-kit snapshot --quiet --trigger pre-compact"],
        "PreToolUse": ["resume-kit hook-tool pre --agent codex"],
        "PostToolUse": ["resume-kit hook-tool post --agent codex"],
    }
    # point 11: the limit Codex spills context above is explicit, the brief asks for less
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["additionalContextLimit"] == 2500
    assert data["hooks"]["Stop"][0] == original["hooks"]["Stop"][0]
    assert run_cli("integrate", "codex", "--remove", cwd=repo).code == 0
    assert path.read_text() == original_text


def test_a_persons_own_resume_kit_hook_is_left_alone() -> None:
    own = {"type": "command", "command": "resume-kit brief --format claude-hook --max-tokens 800"}
    data = {"hooks": {"SessionStart": [{"hooks": [own]}]}}
    added, events = merge.add_hooks(data, merge.specs_for(False))
    assert "SessionStart" in events
    removed, _ = merge.remove_hooks(added)
    assert removed == data


def test_our_hook_sharing_a_group_with_theirs() -> None:
    theirs = {"type": "command", "command": "echo hi"}
    ours = {"type": "command", "command": merge.PRE_COMPACT.command}
    data = {"hooks": {"PreCompact": [{"matcher": "auto", "hooks": [theirs, ours]}]}}
    assert merge.add_hooks(data, [merge.PRE_COMPACT])[1] == []  # already there
    removed, events = merge.remove_hooks(data)
    assert events == ["PreCompact"]
    assert removed == {"hooks": {"PreCompact": [{"matcher": "auto", "hooks": [theirs]}]}}


_HOOK = st.fixed_dictionaries(
    {"type": st.just("command"), "command": st.text(min_size=1, max_size=15)},
    optional={"timeout": st.integers(1, 600)},
)
_GROUP = st.fixed_dictionaries(
    {"hooks": st.lists(_HOOK, min_size=1, max_size=3)},
    optional={"matcher": st.sampled_from(["", "Bash", "startup", "auto"])},
)
_EVENTS = st.sampled_from(["SessionStart", "PreCompact", "Stop", "PreToolUse", "Notification"])
_SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "hooks": st.dictionaries(_EVENTS, st.lists(_GROUP, min_size=1, max_size=3), min_size=1),
        "permissions": st.fixed_dictionaries({"allow": st.lists(st.text(max_size=10))}),
        "model": st.text(max_size=10),
        "env": st.dictionaries(st.text(min_size=1, max_size=5), st.text(max_size=5)),
    },
)


@settings(max_examples=200, deadline=None)
@given(_SETTINGS, st.booleans())
def test_add_then_remove_gives_back_the_original(data: dict[str, Any], stop: bool) -> None:
    before = copy.deepcopy(data)
    added, events = merge.add_hooks(data, merge.specs_for(stop))
    assert data == before  # pure
    again, more = merge.add_hooks(added, merge.specs_for(stop))
    assert more == [] and again == added
    removed, gone = merge.remove_hooks(added)
    assert sorted(gone) == sorted(events)
    assert removed == before
    assert json.dumps(removed) == json.dumps(before)  # key order too


# --------------------------------------------------------------------------- stop-check

FAILING = """\
schema_version: 1
goal: Extract the contracts
units:
  - id: doc-007
    title: Contract seven
    status: in_progress
    verify: "echo 'KeyError: party_b'; echo password=hunter2hunter2 >&2; exit 1"
"""


def write_progress(root: Path, text: str) -> None:
    (root / ".resume-kit").mkdir(exist_ok=True)
    (root / ".resume-kit" / "progress.yaml").write_text(text)


def stop_check(root: Path, payload: dict[str, Any] | None, **env: str) -> Any:
    return run_cli(
        "stop-check",
        cwd=root,
        input=None if payload is None else json.dumps(payload),
        env=env,
    )


def test_stop_check_blocks_while_the_unit_fails(repo: Path) -> None:
    write_progress(repo, FAILING)
    result = stop_check(repo, {"session_id": "s", "cwd": str(repo)}, RESUME_KIT_TRUST="all")
    assert result.code == 0, result.stderr
    decision = json.loads(result.stdout)
    assert decision["decision"] == "block"
    reason = decision["reason"]
    assert "doc-007" in reason and "exited 1" in reason
    assert "KeyError: party_b" in reason
    assert "resume-kit verify-next" in reason
    assert "hunter2hunter2" not in reason and "REDACTED" in reason
    assert "hunter2hunter2" not in result.stderr
    # nothing was recorded: this is a check, not verify-next
    assert (repo / ".resume-kit" / "progress.yaml").read_text() == FAILING


def test_stop_check_never_loops(repo: Path) -> None:
    write_progress(repo, FAILING)
    result = stop_check(repo, {"stop_hook_active": True, "cwd": str(repo)}, RESUME_KIT_TRUST="all")
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    assert not (repo / ".resume-kit" / "runs").exists()  # the command did not even run


def test_stop_check_lets_the_agent_stop_otherwise(repo: Path, tmp_path: Path) -> None:
    # no progress file
    assert (stop_check(repo, {}).code, stop_check(repo, {}).stdout) == (0, "")
    # untrusted command: not run, one line on stderr
    write_progress(repo, FAILING)
    untrusted = stop_check(repo, {"cwd": str(repo)})
    assert untrusted.code == 0 and untrusted.stdout == ""
    assert len(untrusted.stderr.strip().splitlines()) == 1 and "trust" in untrusted.stderr
    # passing unit
    write_progress(repo, FAILING.replace("exit 1", "exit 0"))
    passing = stop_check(repo, {"cwd": str(repo)}, RESUME_KIT_TRUST="all")
    assert (passing.code, passing.stdout) == (0, "")
    # broken progress file: one line, exit 0
    write_progress(repo, "units: [\n")
    broken = stop_check(repo, None, RESUME_KIT_TRUST="all")
    assert broken.code == 0 and broken.stdout == ""
    assert len(broken.stderr.strip().splitlines()) == 1
    # not a repository at all
    outside = tmp_path / "outside"
    outside.mkdir()
    nowhere = stop_check(outside, {"cwd": str(outside)})
    assert nowhere.code == 0 and nowhere.stdout == ""
    assert len(nowhere.stderr.strip().splitlines()) == 1


def test_stop_check_finds_the_repo_from_the_hook_cwd(repo: Path, tmp_path: Path) -> None:
    write_progress(repo, FAILING)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = stop_check(outside, {"cwd": str(repo)}, RESUME_KIT_TRUST="all")
    assert json.loads(result.stdout)["decision"] == "block"


# --------------------------------------------------------------------------- end to end


@pytest.mark.skipif(
    importlib.util.find_spec("resume_kit.cli.commands.brief") is None,
    reason="the brief command is not in this tree yet",
)
def test_session_start_hook_as_claude_code_runs_it(repo: Path, tmp_path: Path) -> None:
    write_progress(repo, FAILING)
    assert run_cli("integrate", "claude", cwd=repo).code == 0
    data = json.loads((repo / ".claude" / "settings.json").read_text())
    command = data["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "resume-kit"
    shim.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m resume_kit \"$@\"\n")
    shim.chmod(0o755)
    payload = {
        "session_id": "abc",
        "transcript_path": str(tmp_path / "missing.jsonl"),
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": "compact",
    }
    proc = subprocess.run(
        ["sh", "-c", command],
        cwd=repo,
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "Extract the contracts" in context and "doc-007" in context
