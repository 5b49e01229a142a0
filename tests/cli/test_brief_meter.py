"""The resource meter through the real CLI (issue 14 point 9): a unit verified by
`verify-next`, then a Claude Code session whose responses and compaction straddle that pass;
the brief counts only what came after it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import yaml

from resume_kit.core.timeutil import format_utc, parse_utc
from tests.conftest import Result


def _response(n: int, at: dt.datetime, tokens: int) -> dict[str, Any]:
    return {"type": "assistant", "uuid": f"a{n}", "sessionId": "s1", "timestamp": format_utc(at),
            "message": {"id": f"msg_{n}", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
                        "usage": {"input_tokens": tokens - 100, "output_tokens": 100}}}  # fmt: skip


def _session(path: Path, passed: dt.datetime) -> Path:
    minute = dt.timedelta(minutes=1)
    records = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": format_utc(passed - 9 * minute),
         "message": {"role": "user", "content": "go on"}},
        _response(1, passed - 5 * minute, 7_000),
        _response(2, passed - 2 * minute, 8_000),
        _response(3, passed + 2 * minute, 3_000),
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s1",
         "timestamp": format_utc(passed + 3 * minute), "compactMetadata": {"postTokens": 900}},
        _response(4, passed + 4 * minute, 1_500),
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _brief(cli: Any, hook: dict[str, str], *args: str) -> Result:
    result: Result = cli("brief", *args, input=json.dumps(hook))
    assert result.code == 0, result.stderr
    return result


def test_tokens_and_compactions_since_the_last_verified_unit(cli: Any, repo: Path) -> None:
    assert cli("init", "--goal", "Ship it").code == 0
    assert cli("add", "First", "--id", "u1", "--verify", "true").code == 0
    assert cli("add", "Second", "--id", "u2", "--verify", "false").code == 0
    assert cli("verify-next").code == 0
    data = yaml.safe_load((repo / ".resume-kit" / "progress.yaml").read_text())
    verified = next(u for u in data["units"] if u["id"] == "u1")["evidence"]["verified_at"]
    passed = parse_utc(verified)
    assert passed is not None
    hook = {"cwd": str(repo), "transcript_path": str(_session(repo.parent / "s.jsonl", passed))}

    markdown = _brief(cli, hook, "--format", "claude-hook").stdout
    context = json.loads(markdown)["hookSpecificOutput"]["additionalContext"]
    line = next(x for x in context.splitlines() if "Resources:" in x)
    assert "4,500 tokens and 1 compaction since `u1` passed (session 19,500" in line, line
    # the JSON format reads the newest session of the tree: put this one where Claude Code would
    meter = json.loads(_json_with_session(cli, repo, hook))["meter"]
    assert meter["since"] == "last_pass" and meter["last_pass_unit"] == "u1"
    assert (meter["tokens_since"], meter["compactions_since"]) == (4_500, 1)
    assert meter["transcript_tokens"] == 19_500 and meter["since_complete"] is True


def _json_with_session(cli: Any, repo: Path, hook: dict[str, str]) -> str:
    from resume_kit.facts.transcripts.claude_code import config_dir, escaped_names

    folder = config_dir() / "projects" / sorted(escaped_names(repo))[0]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "s1.jsonl").write_text(Path(hook["transcript_path"]).read_text())
    records = [json.loads(x) for x in (folder / "s1.jsonl").read_text().splitlines()]
    for record in records:
        record["cwd"] = str(repo)
    (folder / "s1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result: Result = cli("brief", "--format", "json")
    assert result.code == 0, result.stderr
    return result.stdout


def test_since_the_session_started_when_no_unit_is_verified(cli: Any, repo: Path) -> None:
    assert cli("init", "--goal", "Ship it").code == 0
    assert cli("add", "First", "--id", "u1", "--verify", "true").code == 0
    now = dt.datetime.now(dt.timezone.utc)
    hook = {"cwd": str(repo), "transcript_path": str(_session(repo.parent / "s.jsonl", now))}
    context = json.loads(_brief(cli, hook, "--format", "claude-hook").stdout)
    line = next(
        x for x in context["hookSpecificOutput"]["additionalContext"].splitlines()
        if "Resources:" in x
    )  # fmt: skip
    assert "19,500 tokens and 1 compaction since the session started" in line, line
