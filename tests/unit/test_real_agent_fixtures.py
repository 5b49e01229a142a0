"""The readers on session files the real binaries wrote (tests/fixtures/<agent>/<version>/,
made by ``RESUME_KIT_WRITE_FIXTURES=1 pytest tests/e2e/agents/test_transcripts.py``): a
scripted turn with task creation and update, a failing shell command, then a compaction."""

from __future__ import annotations

import json
from pathlib import Path

from resume_kit.facts.transcripts import read_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "2.1.332"
CODEX = FIXTURES / "codex" / "0.171.0"
PROMPT = "Extract the contracts, one unit at a time"
MISSING = "/nonexistent-dir-e2e"


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_fixtures_record_their_agent_version() -> None:
    versions = {r["version"] for r in _records(CLAUDE / "session.jsonl") if "version" in r}
    assert versions == {"2.1.332"}
    meta = [r for r in _records(CODEX / "rollout.jsonl") if r["type"] == "session_meta"]
    assert [m["payload"]["cli_version"] for m in meta] == ["0.171.0"]  # type: ignore[index]


def test_claude_code_session(tmp_path: Path) -> None:
    transcript = read_transcript(tmp_path, transcript_path=CLAUDE / "session.jsonl")
    assert transcript is not None
    assert transcript["agent"] == "claude-code"
    assert transcript["notes"] == []
    assert transcript["last_request"] == PROMPT
    errors = transcript["tool_errors"]
    assert [e["tool"] for e in errors] == ["Bash"]
    assert MISSING in errors[0]["message"]
    assert transcript["compactions"]["count"] == 1


def test_claude_code_task_list(tmp_path: Path) -> None:
    transcript = read_transcript(tmp_path, transcript_path=CLAUDE / "session.jsonl")
    assert transcript is not None
    assert transcript["todos"] == [{"content": "Extract contract 001", "status": "in_progress"}]


def test_codex_rollout(tmp_path: Path) -> None:
    transcript = read_transcript(tmp_path, transcript_path=CODEX / "rollout.jsonl")
    assert transcript is not None
    assert transcript["agent"] == "codex"
    assert transcript["notes"] == []
    assert transcript["last_request"] == "carry on"
    errors = transcript["tool_errors"]
    assert len(errors) == 1 and MISSING in errors[0]["message"]
    assert transcript["compactions"]["count"] == 1
