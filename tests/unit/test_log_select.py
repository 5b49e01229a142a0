"""The log's error-line selection looks only at the lines a rule can pick (found by three
searches over the whole tail): the same picks as looking at every line, on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.facts.logs import _candidate_lines, _select, error_lines

FRAGMENTS = [
    "Traceback (most recent call last):",
    '  File "src/app.py", line 12, in main',
    "    raise ValueError(x)",
    "ValueError: bad value",
    "KeyError: 'party_b'",
    "E   assert 1 == 2",
    "E ",
    "FAILED tests/test_x.py::test_a - AssertionError",
    "tests/test_x.py:12: AssertionError",
    "src/a.c:3:5: error: expected ';'",
    "error[E0308]: mismatched types",
    "  --> src/main.rs:4:5",
    "npm ERR! code 1",
    "Found 3 errors in 1 file",
    "=== 1 failed, 2 passed in 0.12s ===",
    "0 errors",
    "During handling of the above exception, another exception occurred:",
    "panicked at 'boom'",
    "FATAL: disk full",
    "ordinary output line",
    "",
    "   ",
    "İstanbul ERROR",  # lower-casing changes the length: every line is looked at
    "ΣΊΣΥΦΟΣ exit 2",
    "KELVIN \u212a error",
    "Exit code 1",
    "interrupt received",
    "ÉRROR not ascii",
]

LINES = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(alphabet=st.sampled_from("aEeRrFfx :\t-İΣ>"), max_size=12),
        st.builds(lambda a, b: a + b, st.sampled_from(FRAGMENTS), st.sampled_from(FRAGMENTS)),
    ),
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(lines=LINES)
def test_the_candidate_lines_pick_what_every_line_picks(lines: list[str]) -> None:
    lines = [line.rstrip() for line in lines]
    fast = [(p.number, p.text, p.summary) for p in _select(lines)]
    slow = [(p.number, p.text, p.summary) for p in _select(lines, every_line=True)]
    assert fast == slow


@settings(max_examples=200, deadline=None)
@given(lines=LINES, ends=st.sampled_from(["\n", "\r\n", "\r", "\x0c", "\u2028"]))
def test_error_lines_over_any_line_ends(lines: list[str], ends: str) -> None:
    text = ends.join(lines)
    assert error_lines(text) == error_lines(text)  # deterministic, never raises
    candidates = _candidate_lines([line.rstrip() for line in text.splitlines()])
    assert candidates is None or candidates == sorted(set(candidates))


def test_a_length_changing_lower_case_falls_back_to_every_line() -> None:
    assert _candidate_lines(["İ error"]) is None
    assert _candidate_lines(["fine", "an error", "E x", "Traceback (most recent call last):"]) == [
        1,
        2,
        3,
    ]
