"""Tokens spent per verified unit (issue 20 point 7), read from the session files the real
binaries wrote (tests/fixtures/*/<version>/, as in test_transcripts_since.py): each pass gets
what the agents used after the pass before it; a byte cap makes the figure "at least"."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from resume_kit.core.timeutil import parse_utc
from resume_kit.facts import timeline
from resume_kit.facts.transcripts.usage import Usage, read_usage

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "2.1.332" / "session.jsonl"
CODEX = FIXTURES / "codex" / "0.171.0" / "rollout.jsonl"
# Claude Code: four responses of 1,220 tokens at 14:36:10.765, 10.842, 10.877, 11.069.
# Codex: running totals 1,220 (16.134), 2,440 (16.175, repeated 17.103), 3,660 (17.148,
# repeated 17.190), 4,880 (17.234).


def _t(text: str) -> float:
    moment = parse_utc(text)
    assert moment is not None
    return moment.timestamp()


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_claude_code_responses_are_split_at_each_pass() -> None:
    usage = read_usage(CLAUDE, "claude-code")
    assert usage is not None and usage.covered_from is None
    passes = [("u1", _t("2026-12-01T14:36:10.850Z")), ("u2", _t("2026-12-01T14:36:11.000Z"))]
    got = timeline.tokens_per_unit(passes, [usage], None)
    assert [(t.unit, t.tokens, t.complete) for t in got] == [
        ("u1", 2440, True),  # the first two responses
        ("u2", 1220, True),  # the third
        (None, 1220, True),  # the fourth came after the last pass
    ]


def test_claude_code_a_streamed_response_counts_once(tmp_path: Path) -> None:
    copies = []
    for record in _records(CLAUDE):
        copies.append(record)
        if record.get("type") == "assistant" and isinstance(record.get("message"), dict):
            later = json.loads(json.dumps(record))
            later["uuid"] = str(record.get("uuid")) + "-block2"
            copies.append(later)
    usage = read_usage(_write(tmp_path / "s.jsonl", copies), "claude-code")
    assert usage is not None and sum(n for _, n in usage.points) == 4880


def test_codex_running_total_growth_is_split_at_each_pass() -> None:
    usage = read_usage(CODEX, "codex")
    assert usage is not None and usage.covered_from is None
    passes = [("a", _t("2026-12-01T14:36:16.150Z")), ("b", _t("2026-12-01T14:36:17.200Z"))]
    got = timeline.tokens_per_unit(passes, [usage], None)
    assert [(t.unit, t.tokens) for t in got] == [("a", 1220), ("b", 2440), (None, 1220)]


def test_two_agents_sessions_add_up_and_start_bounds_the_first_unit() -> None:
    claude, codex = read_usage(CLAUDE, "claude-code"), read_usage(CODEX, "codex")
    assert claude is not None and codex is not None
    passes = [("u1", _t("2026-12-01T14:37:00Z"))]
    both = timeline.tokens_per_unit(passes, [claude, codex], None)
    assert (both[0].tokens, both[1].tokens) == (9760, 0)
    # the history began after the Claude Code session: only the Codex tokens are u1's
    later = timeline.tokens_per_unit(passes, [claude, codex], _t("2026-12-01T14:36:15Z"))
    assert later[0].tokens == 4880 and later[0].complete


def test_a_capped_claude_code_read_says_at_least(tmp_path: Path) -> None:
    records = _records(CLAUDE)
    filler = {"type": "attachment", "timestamp": "2026-12-01T14:36:10.800Z", "x": "y" * 4000}
    at = next(i for i, r in enumerate(records) if r.get("type") == "assistant")
    path = _write(tmp_path / "long.jsonl", records[: at + 1] + [filler] * 40 + records[at + 1 :])
    usage = read_usage(path, "claude-code", cap=60_000)
    assert usage is not None and usage.covered_from is not None
    passes = [("u1", _t("2026-12-01T14:36:10.850Z")), ("u2", _t("2026-12-01T14:36:12Z"))]
    first, second, _ = timeline.tokens_per_unit(passes, [usage], None)
    assert (first.tokens, first.complete) == (1220, False)  # the first response was cut off
    assert first.figure() == "at least 1,220"
    assert (second.tokens, second.complete) == (2440, True)  # after the oldest record read


def test_a_capped_codex_read_takes_the_oldest_total_as_its_baseline(tmp_path: Path) -> None:
    records = _records(CODEX)
    filler = {"timestamp": "2026-12-01T14:36:16.500Z", "type": "event_msg",
              "payload": {"type": "agent_reasoning_delta", "text": "z" * 4000}}  # fmt: skip
    at = next(i for i, r in enumerate(records) if r.get("payload", {}).get("type") == "token_count")
    path = _write(
        tmp_path / "rollout-long.jsonl", records[: at + 1] + [filler] * 40 + records[at + 1 :]
    )
    usage = read_usage(path, "codex", cap=30_000)
    assert usage is not None and usage.covered_from is not None
    got = timeline.tokens_per_unit([("u1", _t("2026-12-01T14:37:00Z"))], [usage], None)
    assert not got[0].complete and 0 < got[0].tokens <= 4880 - 1220


def test_reading_stops_once_it_reaches_back_to_the_start(tmp_path: Path) -> None:
    usage = read_usage(CLAUDE, "claude-code", back_to=parse_utc("2026-12-01T14:36:11.000Z"))
    assert usage is not None
    assert sum(n for _, n in usage.points) >= 1220  # at least the response after back_to


def test_a_session_limit_makes_every_figure_a_lower_bound() -> None:
    usage = read_usage(CLAUDE, "claude-code")
    assert usage is not None
    got = timeline.tokens_per_unit([("u1", _t("2026-12-01T14:37:00Z"))], [usage], None, False)
    assert [t.complete for t in got] == [False, False]


@given(
    st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 10_000)), max_size=30),
    st.lists(st.integers(0, 1000), min_size=1, max_size=8, unique=True),
)
def test_every_token_lands_in_exactly_one_interval(
    raw: list[tuple[int, int]], pass_times: list[int]
) -> None:
    epoch = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    points = sorted((epoch + dt.timedelta(seconds=s), n) for s, n in raw)
    passes = [(f"u{i}", (epoch + dt.timedelta(seconds=s)).timestamp())
              for i, s in enumerate(sorted(pass_times))]  # fmt: skip
    got = timeline.tokens_per_unit(passes, [Usage(points, None)], None)
    assert sum(t.tokens for t in got) == sum(n for _, n in raw)
    assert len(got) == len(passes) + 1 and all(t.complete for t in got)


def test_terminal_and_html_show_a_bar_per_verified_unit() -> None:
    line = timeline.Timeline(2)
    line.tokens = [
        timeline.UnitTokens("u1", _t("2026-12-01T14:36:10Z"), 4880, True),
        timeline.UnitTokens("u<2>", _t("2026-12-01T14:37:10Z"), 1220, False),
        timeline.UnitTokens(None, None, 300, True),
    ]
    text = "\n".join(timeline.token_lines(line))
    assert "u1" in text and "4,880" in text and "at least 1,220" in text
    assert "since u<2> passed: 300" in text
    page = timeline.html_page(line, "t")
    assert page.count('class="tokens"') == 2 and page.count('class="tokens-open"') == 1
    assert "u&lt;2&gt;" in page and "u<2>" not in page
    assert page.count('class="tokens-label"') == 3  # a name under each bar
    assert 'id="unit-tokens"' in page and "<script" not in page
