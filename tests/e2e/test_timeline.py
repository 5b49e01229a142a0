"""`resume-kit timeline`: real runs into the state library, the HTML report opened in a real
headless Chromium (a screenshot, and the chart's elements in the rendered DOM)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli_subprocess

pytestmark = pytest.mark.subprocess
TRUST = {"RESUME_KIT_TRUST": "all"}


def _history(repo: Path) -> None:
    assert run_cli_subprocess("init", "--goal", "g", cwd=repo).code == 0
    check = "test -f ok.txt || { echo nope >&2; exit 1; }"
    assert run_cli_subprocess("add", "First", "--verify", check, cwd=repo).code == 0
    assert run_cli_subprocess("add", "Second", "--verify", "true", cwd=repo).code == 0
    run_cli_subprocess("brief", cwd=repo)
    assert run_cli_subprocess("verify-next", cwd=repo, env=TRUST).code == 1
    run_cli_subprocess("snapshot", "--trigger", "pre-compact", "--quiet", cwd=repo)
    (repo / "ok.txt").write_text("")
    assert run_cli_subprocess("verify-next", cwd=repo, env=TRUST).code == 0
    assert run_cli_subprocess("verify-next", cwd=repo, env=TRUST).code == 0


def _iso(at: float) -> str:
    moment = dt.datetime.fromtimestamp(at, dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _response(n: int, at: float, tokens: int, cwd: Path) -> dict[str, Any]:
    """An assistant record as Claude Code 2.1.332 writes it (tests/fixtures/claude-code)."""
    return {"type": "assistant", "uuid": f"a{n}", "sessionId": "s1", "cwd": str(cwd),
            "timestamp": _iso(at), "message": {"id": f"msg_{n}", "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": tokens - 100, "cache_read_input_tokens": 0,
                      "output_tokens": 100}}}  # fmt: skip


def _token_count(at: float, total: int, cwd: Path) -> dict[str, Any]:
    """A Codex 0.171.0 ``token_count`` event (tests/fixtures/codex): the running total."""
    usage = {"input_tokens": total - 20, "output_tokens": 20, "total_tokens": total}
    return {"timestamp": _iso(at), "type": "event_msg", "payload": {"type": "token_count",
            "info": {"total_token_usage": usage, "last_token_usage": usage}}}  # fmt: skip


def _sessions(repo: Path, data: dict[str, Any]) -> tuple[float, float, float]:
    """A Claude Code session and a Codex rollout of this tree whose tokens straddle the two
    passes; (history start, first pass, second pass)."""
    from resume_kit.facts.transcripts.claude_code import config_dir, escaped_names
    from resume_kit.facts.transcripts.codex import codex_home

    start = data["burn"][0][0]
    first, second = (e["at"] for e in data["events"] if e["kind"] == "verified")
    claude = config_dir() / "projects" / sorted(escaped_names(repo))[0] / "s1.jsonl"
    claude.parent.mkdir(parents=True)
    records = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": str(repo),
         "timestamp": _iso(start - 3600), "message": {"role": "user", "content": "go"}},
        _response(0, start - 3600, 99_000, repo),  # before the history began: no unit's
        _response(1, (start + first) / 2, 7_000, repo),
        _response(2, (first + second) / 2, 3_000, repo),
        _response(3, second + 60, 500, repo),
    ]  # fmt: skip
    claude.write_text("".join(json.dumps(r) + "\n" for r in records))
    rollout = codex_home() / "sessions" / "2026" / "12" / "01" / "rollout-2026-12-01-x.jsonl"
    rollout.parent.mkdir(parents=True)
    meta = {"timestamp": _iso(start - 10), "type": "session_meta",
            "payload": {"id": "c1", "cwd": str(repo), "timestamp": _iso(start - 10)}}  # fmt: skip
    rows = [meta, _token_count((start + first) / 2, 1_000, repo),
            _token_count((first + second) / 2, 1_000, repo),  # repeated: adds nothing
            _token_count((first + second) / 2, 1_400, repo)]  # fmt: skip
    rollout.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return start, first, second


def test_tokens_per_verified_unit_from_the_agents_sessions(repo: Path) -> None:
    _history(repo)
    _sessions(repo, json.loads(run_cli_subprocess("timeline", "--json", cwd=repo).stdout))
    data = json.loads(run_cli_subprocess("timeline", "--json", cwd=repo).stdout)
    tokens = [(t["unit"], t["tokens"], t["complete"]) for t in data["tokens"]]
    units = [u for u, _, _ in tokens[:2]]
    assert tokens == [(units[0], 8_000, True), (units[1], 3_400, True), (None, 500, True)]
    text = run_cli_subprocess("timeline", cwd=repo).stdout
    assert "tokens per verified unit:" in text and "8,000" in text and "3,400" in text
    assert f"since {units[1]} passed: 500" in text


def test_timeline_counts_and_burn_down(repo: Path, tmp_path: Path) -> None:
    _history(repo)
    data = json.loads(run_cli_subprocess("timeline", "--json", cwd=repo).stdout)
    assert data["counts"] == {"sessions": 1, "compactions": 1, "verified": 2, "failures": 1}
    assert [left for _, left in data["burn"]] == [2, 1, 0]
    text = run_cli_subprocess("timeline", cwd=repo).stdout
    assert "2 verified, 1 failure; 2 units" in text and "left: " in text
    # no agent session of this tree: the tokens are unknown, not zero
    assert data["tokens"] == [] and "no Claude Code or Codex session" in text


def test_the_html_report_renders_in_headless_chromium(repo: Path, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")
    _history(repo)
    _sessions(repo, json.loads(run_cli_subprocess("timeline", "--json", cwd=repo).stdout))
    page = tmp_path / "timeline.html"
    assert run_cli_subprocess("timeline", "--html", str(page), cwd=repo).code == 0
    text = page.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "<script" not in text
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    flags += [f"--user-data-dir={tmp_path / 'profile'}", "--window-size=900,700"]
    shot = tmp_path / "shot.png"
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 2000
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    for element in (
        'id="burndown"',
        'class="burn"',
        'class="verified"',
        'class="failure"',
        'class="session"',
        'class="compaction"',
        'id="tokens"',
        'class="tokens"',
        'class="tokens-open"',
        'id="unit-tokens"',
    ):
        assert element in dom, element
