"""Copilot CLI: the brief with the first prompt after each start, resume or compaction, from
the session's own event log (issue 21 point 14)."""

from __future__ import annotations

import json
from pathlib import Path

from resume_kit.integrations.prompt_once import events_file, newest_epoch, scan, take


def _write(path: Path, *records: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_the_newest_start_resume_or_compaction_is_the_epoch(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    _write(
        log,
        {"type": "session.start", "id": "a"},
        {"type": "user.message", "id": "b", "data": {"content": "session.resume"}},
        {"type": "session.compaction_complete", "id": "c"},
        {"type": "assistant.message", "id": "d"},
    )
    assert newest_epoch(str(log)) == "c"
    assert newest_epoch(str(tmp_path / "missing.jsonl")) is None


def test_the_log_is_read_tail_first_and_capped(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    filler = [{"type": "assistant.message", "id": str(n), "data": "x" * 100} for n in range(50)]
    _write(log, {"type": "session.start", "id": "early"}, *filler)
    assert scan(str(log)) == ("early", True)
    assert scan(str(log), tail_bytes=1000) == (None, True)  # beyond the cap: not read


def test_session_ids_that_are_not_plain_names_are_not_paths(tmp_path: Path) -> None:
    assert events_file("../../etc", str(tmp_path)) is None
    assert events_file("a/b", str(tmp_path)) is None
    assert events_file("0f5bb2a4-7a36", str(tmp_path)) == str(
        tmp_path / "session-state" / "0f5bb2a4-7a36" / "events.jsonl"
    )


def _hook_start(stamp: int) -> dict[str, object]:
    """The record Copilot 1.0.102 writes when it starts a userPromptSubmitted hook."""
    data = {"hookType": "userPromptSubmitted", "input": {"sessionId": "s1", "timestamp": stamp}}
    return {"type": "hook.start", "id": f"h{stamp}", "data": data}


def test_the_log_counts_once_it_shows_this_very_prompt(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    _write(log, {"type": "session.start", "id": "e1"}, _hook_start(100))
    assert scan(str(log), 100) == ("e1", True)
    assert scan(str(log), 200) == ("e1", False)  # written a moment behind: not yet
    # a log that never shows it (another version): the epoch seen when the wait ends
    assert newest_epoch(str(log), 200, wait=0.0) == "e1"


def test_take_once_per_epoch(tmp_path: Path) -> None:
    cache, home = str(tmp_path / "cache"), str(tmp_path / "home")
    log = Path(home) / "session-state" / "s1" / "events.jsonl"
    _write(log, {"type": "session.start", "id": "e1"}, _hook_start(1))
    assert take(cache, "s1", 1, home)
    _write(log, {"type": "session.start", "id": "e1"}, _hook_start(1), _hook_start(2))
    assert not take(cache, "s1", 2, home)
    _write(log, {"type": "session.start", "id": "e1"}, {"type": "session.resume", "id": "e2"})
    assert take(cache, "s1", None, home)
    assert not take(cache, "s1", None, home)
    assert take(cache, "s2", None, home)  # no log: once for that session id
    assert not take(cache, "s2", None, home)
