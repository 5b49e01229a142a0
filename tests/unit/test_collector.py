"""The collector's pace: a block or a decorated call runs at another pace and leaves the
caller's as it found it; a one-shot process and a long-lived one set their own."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from resume_kit.infra.collector import (
    LONG_LIVED_THRESHOLD,
    ONE_SHOT_THRESHOLD,
    fewer_collections,
    is_one_shot,
    long_lived_process,
    one_shot_process,
    paused_collections,
)


@pytest.fixture(autouse=True)
def _callers_pace() -> Iterator[None]:
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(700, 10, 10)
    gc.enable()
    yield
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_a_block_runs_at_the_one_shot_pace_and_the_callers_comes_back() -> None:
    with fewer_collections():
        assert gc.get_threshold() == ONE_SHOT_THRESHOLD
        with paused_collections():
            assert not gc.isenabled()
        assert gc.isenabled() and gc.get_threshold() == ONE_SHOT_THRESHOLD
    assert gc.get_threshold() == (700, 10, 10) and gc.isenabled()


def test_a_decorated_function_keeps_its_name_and_each_call_is_paced_even_when_it_raises() -> None:
    seen: list[tuple[int, int, int]] = []

    @fewer_collections()
    def work(fail: bool) -> str:
        """Doc."""
        seen.append(gc.get_threshold())
        if fail:
            raise ValueError("boom")
        return "done"

    assert work(False) == "done" and work.__name__ == "work" and work.__doc__ == "Doc."
    with pytest.raises(ValueError):
        work(True)
    assert seen == [ONE_SHOT_THRESHOLD, ONE_SHOT_THRESHOLD]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_pause_leaves_a_collector_that_was_off_off() -> None:
    gc.disable()
    with paused_collections():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_process_paces() -> None:
    one_shot_process()
    assert gc.get_threshold() == ONE_SHOT_THRESHOLD and is_one_shot()
    long_lived_process()  # the MCP server, `run`, `drill`: no work waits for their end
    assert gc.get_threshold() == LONG_LIVED_THRESHOLD and not is_one_shot()
