"""One trace id everywhere (issue 20 point 8): real `brief`, `snapshot`, `verify-next` and
`action record` processes under one ``RESUME_KIT_TRACE``; `history show TRACE` follows them
across history records, run logs, snapshot files and drill receipts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resume_kit.facts import history_db
from resume_kit.facts.snapshot_store import load_latest
from resume_kit.infra.paths import find_layout
from tests.conftest import git, run_cli_subprocess

pytestmark = pytest.mark.subprocess
CHECK = "test -f ok.txt || { echo nope >&2; exit 1; }"


def _snapshots(repo: Path) -> list[dict[str, object]]:
    folder = repo / ".resume-kit" / "snapshots"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def test_history_show_follows_one_trace_across_every_kind(repo: Path) -> None:
    assert run_cli_subprocess("init", "--goal", "g", cwd=repo).code == 0
    assert run_cli_subprocess("add", "Widget", "--verify", CHECK, cwd=repo).code == 0
    env = {"RESUME_KIT_TRUST": "all", history_db.TRACE_ENV: "t-e2e-1"}
    other = {"RESUME_KIT_TRUST": "all", history_db.TRACE_ENV: "t-other"}
    assert run_cli_subprocess("brief", cwd=repo, env=env).code == 0
    assert run_cli_subprocess("snapshot", "--quiet", cwd=repo, env=env).code == 0
    assert run_cli_subprocess("verify-next", cwd=repo, env=env).code == 1
    assert run_cli_subprocess("verify-next", cwd=repo, env=other).code == 1  # another session
    (repo / "ok.txt").write_text("")
    assert run_cli_subprocess("verify-next", cwd=repo, env=env).code == 0
    action = ("action", "record", "deploy-1", "--description", "deployed")
    assert run_cli_subprocess(*action, cwd=repo, env=env).code == 0

    shown = json.loads(run_cli_subprocess("history", "show", "t-e2e-1", "--json", cwd=repo).stdout)
    kinds = [r["kind"] for r in shown["records"]]
    assert {"brief", "snapshot", "verify", "ledger"} <= set(kinds)
    assert kinds.count("verify") == 2 and {r["trace"] for r in shown["records"]} == {"t-e2e-1"}
    logs = shown["run_logs"]
    assert [x["unit"] for x in logs] == ["widget", "widget"]  # not the other session's
    for entry in logs:
        header = (repo / entry["log"]).read_text().splitlines()[0]
        assert header.startswith("# resume-kit run: unit widget, trace t-e2e-1, started ")
    # the snapshot files carry it too (the brief's and the snapshot command's), inside the
    # checksum, and load as intact snapshots
    assert [s["trace"] for s in _snapshots(repo)] == ["t-e2e-1", "t-e2e-1"]
    latest, warnings = load_latest(find_layout(repo))
    assert latest is not None and latest["trace"] == "t-e2e-1" and warnings == []
    text = run_cli_subprocess("history", "show", "t-e2e-1", cwd=repo).stdout
    assert "trace t-e2e-1" in text and f"run log {logs[0]['log']}" in text


def test_a_hook_without_a_trace_uses_the_agent_session_id(repo: Path) -> None:
    assert run_cli_subprocess("init", "--goal", "g", cwd=repo).code == 0
    hook = json.dumps({"session_id": "sess-42", "cwd": str(repo), "hook_event_name": "PreCompact"})
    run = run_cli_subprocess(
        "snapshot", "--trigger", "pre-compact", "--quiet", cwd=repo, input=hook
    )
    assert run.code == 0, run.stderr
    assert _snapshots(repo)[-1]["trace"] == "sess-42"
    shown = json.loads(run_cli_subprocess("history", "show", "sess-42", "--json", cwd=repo).stdout)
    assert [r["kind"] for r in shown["records"]] == ["snapshot"]
    # a process given a trace keeps it even under a hook that names a session
    env = {history_db.TRACE_ENV: "t-given"}
    run_cli_subprocess(
        "snapshot", "--trigger", "pre-compact", "--quiet", cwd=repo, input=hook, env=env
    )
    assert _snapshots(repo)[-1]["trace"] == "t-given"


def test_history_show_names_the_drill_receipt_of_a_trace(repo: Path) -> None:
    from resume_kit.cli.commands.drill import receipt_dir

    assert run_cli_subprocess("init", "--goal", "g", cwd=repo).code == 0
    receipt = receipt_dir(find_layout(repo), False) / "0123abcd4567.json"
    receipt.write_text(json.dumps({"trace": "0123abcd4567"}))
    shown = json.loads(
        run_cli_subprocess("history", "show", "0123abcd4567", "--json", cwd=repo).stdout
    )
    assert shown["drill_receipt"] == str(receipt) and shown["records"] == []
    gone = run_cli_subprocess("history", "show", "nothing-here", "--json", cwd=repo)
    assert gone.code == 3 and json.loads(gone.stdout)["drill_receipt"] is None


def test_a_cloned_run_log_with_a_forged_header_is_never_printed(repo: Path, tmp_path: Path) -> None:
    # A stranger's repository commits a run log (past .resume-kit/.gitignore) whose header
    # carries a terminal escape in its unit and time, and names the unit as its trace.
    assert run_cli_subprocess("init", "--goal", "g", cwd=repo).code == 0
    runs = repo / ".resume-kit" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    forged = "# resume-kit run: unit a\x1b]0;pwned\x07, trace widget, started \x1b[2J\n"
    (runs / "a-20261201T000000000Z.log").write_text(forged + "output\n")
    git(repo, "add", "-f", ".resume-kit")
    git(repo, "commit", "-q", "-m", "logs")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    shown = run_cli_subprocess("history", "show", "widget", cwd=clone)
    assert "\x1b" not in shown.stdout + shown.stderr
    assert "run log" not in shown.stdout
