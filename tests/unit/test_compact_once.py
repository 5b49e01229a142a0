"""One brief per compaction between SessionStart(compact) and PostCompact (issue 21 point 7)."""

from __future__ import annotations

from pathlib import Path

from resume_kit.integrations.compact_once import PAIR_SECONDS, compaction_event, should_deliver


def test_which_events_are_compactions() -> None:
    assert compaction_event({"hook_event_name": "PostCompact"}) == "PostCompact"
    assert compaction_event({"hook_event_name": "SessionStart", "source": "compact"}) == (
        "SessionStart"
    )
    assert compaction_event({"source": "compact"}) == "SessionStart"
    for source in ("startup", "resume", "clear", "fork"):
        assert compaction_event({"hook_event_name": "SessionStart", "source": source}) is None


def test_either_order_delivers_once_per_compaction(tmp_path: Path) -> None:
    cache = str(tmp_path)
    # compaction 1: SessionStart first, PostCompact stays silent
    assert should_deliver(cache, "s1", "SessionStart", now=1000.0)
    assert not should_deliver(cache, "s1", "PostCompact", now=1001.0)
    # compaction 2: PostCompact first this time
    assert should_deliver(cache, "s1", "PostCompact", now=1500.0)
    assert not should_deliver(cache, "s1", "SessionStart", now=1500.5)


def test_a_missing_event_never_silences_the_next_compaction(tmp_path: Path) -> None:
    cache = str(tmp_path)
    # SessionStart(compact) not delivered at all (the bug class): PostCompact every time
    assert should_deliver(cache, "s1", "PostCompact", now=1000.0)
    assert should_deliver(cache, "s1", "PostCompact", now=1010.0)
    # an old marker of the other event is an earlier compaction's
    assert should_deliver(cache, "s1", "SessionStart", now=1010.0 + PAIR_SECONDS + 1)


def test_sessions_do_not_share_markers(tmp_path: Path) -> None:
    cache = str(tmp_path)
    assert should_deliver(cache, "s1", "SessionStart", now=1000.0)
    assert should_deliver(cache, "s2", "PostCompact", now=1000.5)


def test_a_garbled_marker_delivers(tmp_path: Path) -> None:
    cache = str(tmp_path)
    assert should_deliver(cache, "s1", "SessionStart", now=1000.0)
    (marker,) = (tmp_path / "compactions").iterdir()
    marker.write_text("garbage")
    assert should_deliver(cache, "s1", "PostCompact", now=1000.5)
