"""The scheduling core of ``resume-kit run`` (resume_kit/batch.py): durations, path claims,
which units start together, limits and exit codes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.core.batch import (
    STOP_FAILURE,
    STOP_MAX_FAILURES,
    STOP_MAX_UNITS,
    STOP_TIME_BUDGET,
    Batch,
    Failure,
    Limits,
    claims_of,
    claims_overlap,
    continue_command,
    parse_duration,
)
from resume_kit.facts.fingerprint import expand_globs
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model.progress import LastFailure, Progress, Unit

# --------------------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("15m", 900),
        ("2h", 7200),
        ("1h30m", 5400),
        ("1h30m15s", 5415),
        ("0.5s", 0.5),
        ("45", 45),
        (" 2H ", 7200),
        ("1h 5m", 3900),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "0", "0s", "-1m", "m", "1x", "5 minutes", "1m1h", "h1", "1.5.2s"]
)
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ResumeKitError) as info:
        parse_duration(text)
    assert info.value.exit_code == 2 and info.value.hint


@given(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99))
def test_parse_duration_adds_up_its_parts(h: int, m: int, s: int) -> None:
    text = (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{s}s" if s else "")
    if not text:
        with pytest.raises(ResumeKitError):
            parse_duration("0s")
        return
    assert parse_duration(text) == h * 3600 + m * 60 + s


# --------------------------------------------------------------------------- claims


def unit(
    uid: str,
    *,
    files: list[str] | None = None,
    artifacts: list[str] | None = None,
    after: list[str] | None = None,
    status: str = "todo",
    verify: str | None = "true",
    repeats: int | None = None,
) -> Unit:
    failure = (
        LastFailure(at="2026-01-01T00:00:00Z", exit_code=1, signature="s", repeats=repeats)
        if repeats
        else None
    )
    return Unit(
        id=uid,
        title=uid,
        status=status,  # type: ignore[arg-type]
        verify=verify,
        files=files or [],
        artifacts=artifacts or [],
        after=after or [],
        last_failure=failure,
    )


@pytest.mark.parametrize(
    ("left", "right", "overlap"),
    [
        (["a.txt"], ["a.txt"], True),
        (["./a.txt"], ["a.txt"], True),
        (["a.txt"], ["b.txt"], False),
        (["src"], ["src/a.py"], True),  # a folder holds the file
        (["src/a.py"], ["src/*.py"], True),
        (["src/a.py"], ["src/*.txt"], False),
        (["src/a/b.py"], ["src/**/*.py"], True),
        (["src/a.py"], ["lib/*.py"], False),
        (["src/*.py"], ["src/*.txt"], True),  # same folder: conservatively together
        (["src/a/*.py"], ["src/b/*.py"], False),
        (["src/**"], ["src/a/*.py"], True),
        (["*.py"], ["docs/x.md"], False),
        (["**/*.py"], ["src/a/*.py"], True),
        ([], ["anything"], False),
    ],
)
def test_claims_overlap(left: list[str], right: list[str], overlap: bool) -> None:
    a, b = unit("a", files=left), unit("b", artifacts=right)
    assert claims_overlap(claims_of(a), claims_of(b)) is overlap
    assert claims_overlap(claims_of(b), claims_of(a)) is overlap


_UNIVERSE = [
    f"{top}/{sub}{name}"
    for top in ("src", "docs", "out")
    for sub in ("", "a/", "b/")
    for name in ("x.py", "y.txt", "z.json")
]
_SEGMENTS = st.sampled_from(
    ["src", "docs", "out", "a", "b", "*", "**", "x.py", "*.py", "y.*", "?.txt"]
)
_PATTERNS = st.lists(_SEGMENTS, min_size=1, max_size=3).map("/".join)


@pytest.fixture(scope="module")
def universe() -> Path:
    root = Path(tempfile.mkdtemp(prefix="rk-claims-"))
    for rel in _UNIVERSE:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    return root


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PATTERNS, max_size=3),
    st.lists(st.sampled_from(_UNIVERSE), max_size=2),
    st.lists(_PATTERNS, max_size=3),
    st.lists(st.sampled_from(_UNIVERSE), max_size=2),
)
def test_claims_never_miss_a_shared_file(
    universe: Path, files_a: list[str], arts_a: list[str], files_b: list[str], arts_b: list[str]
) -> None:
    """Whatever the real globbing (the fingerprint's) matches for both units, the claims see."""
    touched_a = set(expand_globs(universe, files_a)) | set(arts_a)
    touched_b = set(expand_globs(universe, files_b)) | set(arts_b)
    if touched_a & touched_b:
        a = unit("a", files=files_a, artifacts=arts_a)
        b = unit("b", files=files_b, artifacts=arts_b)
        assert claims_overlap(claims_of(a), claims_of(b))


# --------------------------------------------------------------------------- selection


def progress(*units: Unit) -> Progress:
    return Progress(goal="g", units=list(units))


def ids(units: list[Unit]) -> list[str]:
    return [u.id for u in units]


def test_select_follows_verify_next_order_one_at_a_time() -> None:
    p = progress(
        unit("a", status="done"),
        unit("b"),
        unit("c", status="in_progress"),
        unit("d", status="blocked"),
        unit("e", after=["f"]),
        unit("f"),
    )
    batch = Batch(Limits())
    assert ids(batch.select(p, 1, 0)) == ["c"]  # in progress first
    assert batch.select(p, 0, 0) == []  # no free slot: nothing
    batch.finish_passed("c")
    p.units[2].status = "done"
    assert ids(batch.select(p, 1, 0)) == ["b"]
    batch.finish_passed("b")
    p.units[1].status = "done"
    assert ids(batch.select(p, 1, 0)) == ["f"]  # e waits for f
    batch.finish_passed("f")
    p.units[5].status = "done"
    assert ids(batch.select(p, 1, 0)) == ["e"]


def test_select_in_parallel_skips_conflicts_and_dependents() -> None:
    p = progress(
        unit("a", files=["src/*.py"]),
        unit("b", artifacts=["src/b.py"]),  # shares with a
        unit("c", after=["a"]),  # depends on a
        unit("d", artifacts=["out/d.json"]),
        unit("e"),
    )
    batch = Batch(Limits())
    assert ids(batch.select(p, 4, 0)) == ["a", "d", "e"]
    batch.finish_passed("d")
    assert ids(batch.select(p, 4, 0)) == []  # b shares with a, c waits for a
    batch.finish_passed("a")
    p.units[0].status = "done"
    assert ids(batch.select(p, 4, 0)) == ["b", "c"]


def test_a_unit_still_running_is_not_done_for_its_dependents() -> None:
    p = progress(unit("a"), unit("b", after=["a"]))
    batch = Batch(Limits())
    assert ids(batch.select(p, 2, 0)) == ["a"]
    p.units[0].status = "done"  # written, but its outcome not handled yet
    assert ids(batch.select(p, 2, 0)) == []
    batch.finish_passed("a")
    assert ids(batch.select(p, 2, 0)) == ["b"]


def test_failures_stop_by_default_and_with_max_failures() -> None:
    p = progress(*(unit(x) for x in "abcdef"))
    batch = Batch(Limits())
    assert ids(batch.select(p, 2, 0)) == ["a", "b"]
    batch.failed_pending("a")  # known before its outcome is written: already stops
    assert batch.select(p, 2, 0) == []
    assert batch.stop_reason == STOP_FAILURE

    going = Batch(Limits(keep_going=True, max_failures=2))
    assert ids(going.select(p, 1, 0)) == ["a"]
    going.finish_failed(Failure("a", 1, "boom"))
    assert ids(going.select(p, 1, 0)) == ["b"]  # a failed in this run: never again
    going.finish_failed(Failure("b", 1, "boom"))
    assert going.select(p, 1, 0) == []
    assert going.stop_reason == STOP_MAX_FAILURES

    unlimited = Batch(Limits(keep_going=True))
    for expected in "abcdef":
        assert ids(unlimited.select(p, 1, 0)) == [expected]
        unlimited.finish_failed(Failure(expected, 1, "boom"))
    assert unlimited.select(p, 1, 0) == [] and unlimited.stop_reason is None


def test_budgets() -> None:
    p = progress(*(unit(x) for x in "abcdef"))
    batch = Batch(Limits(max_units=3))
    assert ids(batch.select(p, 2, 0)) == ["a", "b"]
    assert ids(batch.select(p, 2, 0)) == ["c"]
    assert batch.select(p, 2, 0) == [] and batch.stop_reason == STOP_MAX_UNITS

    timed = Batch(Limits(time_budget_s=60))
    assert ids(timed.select(p, 1, 59.9)) == ["a"]
    timed.finish_passed("a")
    assert timed.select(p, 1, 60.0) == [] and timed.stop_reason == STOP_TIME_BUDGET


def test_stuck_and_commandless_units_are_skipped_and_reported() -> None:
    p = progress(
        unit("stuck", status="in_progress", repeats=3),
        unit("twice", status="in_progress", repeats=2),
        unit("bare", verify=None),
        unit("ok"),
    )
    batch = Batch(Limits(keep_going=True))
    assert ids(batch.select(p, 4, 0)) == ["twice", "ok"]
    batch.finish_passed("twice")
    batch.finish_passed("ok")
    p.units[1].status = p.units[3].status = "done"
    remaining = batch.remaining(p)
    assert remaining.stuck == ["stuck"] and remaining.no_verify == ["bare"]
    assert batch.exit_code(remaining) == 1  # a stuck unit left behind is a failure state


@pytest.mark.parametrize(
    ("units", "outcome", "code"),
    [
        ([unit("a")], "pass", 0),
        ([unit("a")], "fail", 1),
        ([unit("a", status="done")], None, 3),
        ([unit("a", status="blocked")], None, 3),
        ([unit("a", verify=None)], None, 2),
        ([unit("a", repeats=3)], None, 1),
    ],
)
def test_exit_codes(units: list[Unit], outcome: str | None, code: int) -> None:
    p = progress(*units)
    batch = Batch(Limits())
    for chosen in batch.select(p, 1, 0):
        if outcome == "pass":
            batch.finish_passed(chosen.id)
            chosen.status = "done"
        else:
            batch.finish_failed(Failure(chosen.id, 1, "x"))
    assert batch.exit_code(batch.remaining(p)) == code


def test_interrupted_wins() -> None:
    batch = Batch(Limits())
    batch.request_stop("interrupted")
    batch.finish_failed(Failure("a", 1, "x"))
    assert batch.exit_code(batch.remaining(progress(unit("a")))) == 130


def test_continue_command_repeats_the_flags() -> None:
    assert continue_command(1, False, None, None, None, False) == "resume-kit run"
    assert (
        continue_command(4, True, 3, 50, "1h 30m", True)
        == "resume-kit run --jobs 4 --keep-going --max-failures 3 --max-units 50 "
        "--time-budget '1h 30m' --json"
    )
