"""Tokens and compactions since the last verified unit (issue 14 point 9), read from the
session files the real binaries wrote (tests/fixtures/*/<version>/): Claude Code's
per-response ``message.usage`` with the record's ``timestamp``, Codex's ``token_count``
running totals."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from resume_kit.core.timeutil import format_utc, parse_utc
from resume_kit.facts.transcripts import claude_code, codex

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "2.1.332" / "session.jsonl"
CODEX = FIXTURES / "codex" / "0.171.0" / "rollout.jsonl"
# Claude Code 2.1.332 wrote four responses of 1,220 tokens (14:36:10.765, 10.842, 10.877,
# 11.069) and then a compaction (14:36:14); Codex 0.171.0 ran its total up to 4,880 in
# token_count events (one repeated at 17.103) around a compaction at 14:36:17.159.


def _at(text: str) -> dt.datetime:
    moment = parse_utc(text)
    assert moment is not None
    return moment


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _since(result: dict[str, Any]) -> dict[str, Any]:
    since = result["tokens"]["since"]
    assert isinstance(since, dict)
    return since


@pytest.mark.parametrize(
    ("since", "tokens", "compactions"),
    [
        (None, 4880, 1),  # no unit verified yet: the whole session
        ("2026-12-01T14:36:00Z", 4880, 1),  # verified before the session began
        ("2026-12-01T14:36:10.850Z", 2440, 1),  # between the second and third response
        ("2026-12-01T14:36:12Z", 0, 1),  # after the last response, before the compaction
        ("2026-12-01T14:40:00Z", 0, 0),  # after everything
    ],
)
def test_claude_code_counts_what_came_after_the_pass(
    since: str | None, tokens: int, compactions: int
) -> None:
    result = claude_code.read_session(CLAUDE, since=_at(since) if since else None)
    assert result["tokens"]["total"] == 4880  # the session totals are unchanged
    assert _since(result) == {
        "at": None if since is None else format_utc(_at(since)),
        "tokens": tokens,
        "compactions": compactions,
        "complete": True,
    }


def test_claude_code_streamed_duplicates_count_once(tmp_path: Path) -> None:
    """One response is written as several records (one per content block) repeating the same
    message id and usage: its tokens count once, on either side of the pass."""
    records = _records(CLAUDE)
    copies = []
    for record in records:
        copies.append(record)
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict):
            later = json.loads(json.dumps(record))
            later["uuid"] = str(record.get("uuid")) + "-block2"
            later["timestamp"] = record["timestamp"][:-1] + "9Z"  # a few ms later
            copies.append(later)
    path = _write(tmp_path / "streamed.jsonl", copies)
    result = claude_code.read_session(path, since=_at("2026-12-01T14:36:10.850Z"))
    assert result["tokens"]["total"] == 4880
    assert _since(result)["tokens"] == 2440


def test_claude_code_a_capped_read_is_a_lower_bound(tmp_path: Path) -> None:
    """The byte cap stops the tail-first read before the pass: the count is marked incomplete."""
    records = _records(CLAUDE)
    filler = {"type": "attachment", "timestamp": "2026-12-01T14:36:10.800Z", "x": "y" * 4000}
    at = next(i for i, r in enumerate(records) if r.get("type") == "assistant")
    path = _write(tmp_path / "long.jsonl", records[: at + 1] + [filler] * 40 + records[at + 1 :])
    result = claude_code.read_session(
        path, cap=60_000, min_bytes=0, since=_at("2026-12-01T14:36:10.700Z")
    )
    since = _since(result)
    assert since["complete"] is False
    assert since["tokens"] == 3 * 1220  # the three responses the read reached


@pytest.mark.parametrize(
    ("since", "tokens", "compactions"),
    [
        (None, 4880, 1),
        ("2026-12-01T14:36:00Z", 4880, 1),  # before session_meta: all of it
        ("2026-12-01T14:36:16.150Z", 4880 - 1220, 1),  # after the first token_count
        ("2026-12-01T14:36:17.120Z", 4880 - 2440, 1),  # after the repeated 2,440
        ("2026-12-01T14:36:17.170Z", 4880 - 3660, 0),  # after the compaction
        ("2026-12-01T14:40:00Z", 0, 0),
    ],
)
def test_codex_counts_the_running_total_after_the_pass(
    since: str | None, tokens: int, compactions: int
) -> None:
    result = codex.read_rollout(CODEX, since=_at(since) if since else None)
    assert result["tokens"]["total"] == 4880
    got = _since(result)
    assert (got["tokens"], got["compactions"], got["complete"]) == (tokens, compactions, True)


def test_codex_a_capped_read_is_a_lower_bound_unless_the_session_began_later(
    tmp_path: Path,
) -> None:
    records = _records(CODEX)
    filler = {"timestamp": "2026-12-01T14:36:16.500Z", "type": "event_msg",
              "payload": {"type": "agent_reasoning_delta", "text": "z" * 4000}}  # fmt: skip
    at = next(i for i, r in enumerate(records) if r.get("payload", {}).get("type") == "token_count")
    path = _write(
        tmp_path / "rollout-long.jsonl", records[: at + 1] + [filler] * 40 + records[at + 1 :]
    )
    capped = codex.read_rollout(
        path, cap=30_000, min_bytes=0, since=_at("2026-12-01T14:36:16.150Z")
    )
    assert capped["tokens"]["total"] == 4880
    assert _since(capped)["complete"] is False
    assert 0 < _since(capped)["tokens"] <= 4880 - 1220
    # Passed before session_meta was written: every token of the session came after it.
    early = codex.read_rollout(path, cap=30_000, min_bytes=0, since=_at("2026-12-01T14:00:00Z"))
    assert (_since(early)["tokens"], _since(early)["complete"]) == (4880, True)
