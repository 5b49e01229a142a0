"""Say it once, say it plainly (issue 14 point 10): the cause line of a failing test run
rather than a list of ids, and a preamble that is true with and without claimed units."""

from __future__ import annotations

import copy
from typing import Any

from resume_kit.brief.build import build_brief
from resume_kit.brief.cause import cause_line, failed_ids, fold_failed
from resume_kit.brief.render import render
from resume_kit.infra import tokens
from resume_kit.model.progress import LastFailure
from tests.brief_cases import all_done, interrupted, trouble

# The excerpt resume-kit stored for `python -m pytest -q tests` (pytest 8: five parametrised
# asserts and a KeyError failing, one test passing).
PYTEST_EXCERPT = """\
5 × E       AssertionError: expected a list (output lines 10-58)
5 × E       assert '1,2' == ['1', '2'] (output lines 11-59)
5 × E        +  where '1,2' = parse('1,2') (output lines 12-60)
5 × AssertionError (tests/test_a.py lines 5-5)
E       KeyError: 'party_b'
tests/test_a.py:8: KeyError
FAILED tests/test_a.py::test_split[0] - AssertionError: expected a list
FAILED tests/test_a.py::test_split[1] - AssertionError: expected a list
FAILED tests/test_a.py::test_split[2] - AssertionError: expected a list
FAILED tests/test_a.py::test_split[3] - AssertionError: expected a list
FAILED tests/test_a.py::test_split[4] - AssertionError: expected a list
FAILED tests/test_a.py::test_key - KeyError: 'party_b'
6 failed, 1 passed in 2.17s"""
IDS = [f"tests/test_a.py::test_split[{n}]" for n in range(5)] + ["tests/test_a.py::test_key"]


def test_the_cause_line_is_the_first_failed_reason_else_the_newest_exception() -> None:
    lines = PYTEST_EXCERPT.splitlines()
    assert (
        cause_line(lines)
        == "FAILED tests/test_a.py::test_split[0] - AssertionError: expected a list"
    )
    assert failed_ids(lines) == IDS
    traceback = ['File "src/extract.py", line 88, in parse', "KeyError: 'party_b'", "ERROR x"]
    assert cause_line(traceback) == "KeyError: 'party_b'"
    assert cause_line(["5 × E   assert 1 == 2 (output lines 3-9)", "2 failed"]) == (
        "5 × E   assert 1 == 2 (output lines 3-9)"
    )
    assert cause_line(["no marker here"]) is None


def test_failed_lines_fold_to_the_first_and_a_count() -> None:
    folded = fold_failed(PYTEST_EXCERPT.splitlines(), "run `pytest -q`")
    assert failed_ids(folded) == IDS[:1]
    assert "[5 more failing: run `pytest -q`]" in folded
    assert folded[-1] == "6 failed, 1 passed in 2.17s"  # the tool's summary stays
    assert fold_failed(["FAILED a - b", "1 failed"], "x") == ["FAILED a - b", "1 failed"]


def _pytest_case() -> tuple[Any, dict[str, Any], list[Any]]:
    progress, snap, findings = interrupted()
    nxt = progress.units[136]
    nxt.verify = "python -m pytest -q tests"
    nxt.last_failure = LastFailure("2026-11-29T07:58:00Z", 1, "ab" * 32, 1, PYTEST_EXCERPT)
    snap = copy.deepcopy(snap)
    snap["tests"] = {"pytest_last_failed": IDS, "source": ".pytest_cache/v/cache/lastfailed"}
    from resume_kit.model.findings import finding

    findings = [*findings, finding("TESTS_FAILING", "6 failing tests in the pytest cache")]
    return progress, snap, findings


def test_a_failing_test_run_shows_one_id_its_cause_and_how_to_see_the_rest() -> None:
    brief = build_brief(*_pytest_case())
    text = render(brief, "markdown", 1500).text
    warning = next(x for x in text.splitlines() if "`TESTS_FAILING`" in x)
    assert warning.endswith(
        "6 failing tests (`.pytest_cache/v/cache/lastfailed`): `tests/test_a.py::test_split[0]`;"
        " 5 more failing: run `python -m pytest -q tests`"
    )
    for test_id in IDS[1:]:
        assert test_id not in text  # no list of ids, in the warning or in the output
    assert text.count("FAILED tests/test_a.py::test_split[0] - AssertionError") == 1
    assert "[5 more failing: run `python -m pytest -q tests`]" in text
    # The smallest brief keeps that cause line, not the tally after it.
    floor = render(brief, "markdown", 300, exact_tokens=True)
    assert floor.fits and tokens.count_tokens(floor.text) <= 300
    assert "`FAILED tests/test_a.py::test_split[0] - AssertionError: expected a list`" in floor.text
    middle = render(brief, "markdown", 480).text  # the excerpt cut to a line or three
    if "failure excerpt" in middle:
        assert "FAILED tests/test_a.py::test_split[0]" in middle


def test_the_reason_of_the_one_id_comes_from_the_log_when_the_output_has_none() -> None:
    progress, snap, findings = _pytest_case()
    assert progress.units[136].last_failure is not None
    progress.units[136].last_failure.excerpt = "6 failed, 1 passed in 2.17s"
    snap["logs"][0]["error_lines"] = PYTEST_EXCERPT.splitlines()
    text = render(build_brief(progress, snap, findings), "markdown", 1500).text
    warning = next(x for x in text.splitlines() if "`TESTS_FAILING`" in x)
    assert "`tests/test_a.py::test_split[0]` (`AssertionError: expected a list`)" in warning


def test_the_preamble_says_what_is_true_with_and_without_claimed_units() -> None:
    claimed = render(build_brief(*trouble()), "markdown", 1500).text  # 40 claimed, 96 verified
    assert "work marked done was verified" not in claimed
    assert "the units listed as verified passed their verify command" in claimed
    assert "the units only claimed done were never verified" in claimed
    verified = render(build_brief(*all_done()), "markdown", 1500).text
    assert "work marked done was verified, so **do not redo it**" in verified


def test_said_once_the_unit_the_reason_the_advice() -> None:
    from resume_kit.model.findings import finding

    progress, snap, findings = interrupted()
    text = render(build_brief(progress, snap, findings), "markdown", 1500).text
    # the failure has its own line: the reason the unit is next does not repeat it
    assert "- Why this one: it is in progress.\n" in text
    findings = [finding("DONE_BUT_CHANGED", "doc-005: its files changed", "doc-005")]
    text = render(build_brief(progress, snap, findings), "markdown", 1500).text
    assert "(`doc-005`): its files changed" in text
    snap["repo"]["operation"] = "merge"
    findings = [finding("OPERATION_IN_PROGRESS", "a merge is in progress; `git merge --abort`")]
    text = render(build_brief(progress, snap, findings), "markdown", 1500).text
    assert "**A merge is in progress**." in text and "finish or abort it" not in text
    floor = render(build_brief(progress, snap, findings), "markdown", 300).text
    assert "finish or abort it before anything else" in floor  # no warning text says it there
