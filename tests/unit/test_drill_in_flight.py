"""Which unit a drill's kill interrupted, from the killed run's own claims (runner/drill.in_flight)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resume_kit.runner.drill import in_flight


@pytest.mark.parametrize(
    ("started", "done", "failed", "claims", "expected"),
    [
        # the command of b was running: b is the one interrupted
        (["a", "b"], {"a"}, set(), {"b"}, ("b", [])),
        # run's overlap: a passed and its pass was being written when b started
        (["a", "b"], set(), set(), {"b"}, ("b", ["a"])),
        # no command running: the kill cut off the newest unit's outcome while it was written
        (["a", "b"], {"a"}, set(), set(), ("b", [])),
        # a failure was recorded: not in flight, its retry is the resume's job
        (["a", "b"], set(), {"a"}, {"b"}, ("b", [])),
        # killed after a claim was taken, before that unit's log appeared
        (["a"], {"a"}, set(), {"b"}, ("b", [])),
        # everything that started finished: nothing interrupted
        (["a"], {"a"}, set(), set(), (None, [])),
        ([], set(), set(), set(), (None, [])),
    ],
)
def test_the_interrupted_unit_is_the_one_whose_claim_the_kill_left(
    started: list[str],
    done: set[str],
    failed: set[str],
    claims: set[str],
    expected: tuple[str | None, list[str]],
) -> None:
    assert in_flight(started, done, failed, frozenset(claims)) == expected


@given(
    st.lists(st.sampled_from("abcdef"), unique=True),
    st.sets(st.sampled_from("abcdef")),
    st.sets(st.sampled_from("abcdef")),
    st.sets(st.sampled_from("abcdef"), max_size=1),
)
def test_at_most_one_unit_is_interrupted_and_no_finished_unit_is_in_flight(
    started: list[str], done: set[str], failed: set[str], claims: set[str]
) -> None:
    interrupted, lost = in_flight(started, done, failed, frozenset(claims))
    assert interrupted not in lost
    assert not (set(lost) & (done | failed))
    assert set(lost) <= set(started)
    if claims:
        assert interrupted in claims
