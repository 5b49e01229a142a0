"""ISO times and ages: one reader (parse_utc) and one form of an age, for the brief, the
findings and ``status`` alike."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resume_kit.core import timeutil
from resume_kit.core.timeutil import age, age_span, parse_utc

NOW = "2026-11-29T10:00:00Z"


@pytest.mark.parametrize(
    ("then", "now", "text"),
    [
        ("2026-11-29T07:00:00Z", NOW, "3 h ago"),
        ("2026-11-29T09:59:30Z", NOW, "just now"),
        ("2026-11-29T09:45:00Z", NOW, "15 min ago"),
        ("2026-11-29T08:45:00Z", NOW, "75 min ago"),
        ("2026-11-20T10:00:00Z", NOW, "9 d ago"),
        ("2026-11-29T11:00:00Z", NOW, "just now"),  # a clock a little ahead
        ("garbage", NOW, None),
        ("2026-11-29T07:00:00Z", None, None),
    ],
)
def test_age(then: str, now: str | None, text: str | None) -> None:
    assert age(then, now) == text
    if now is not None:  # a datetime for ``now`` reads the same
        assert age(then, parse_utc(now)) == text


def test_parse_utc_reads_the_forms_agents_write() -> None:
    want = dt.datetime(2026, 11, 29, 10, 0, tzinfo=dt.timezone.utc)
    for text in ("2026-11-29T10:00:00Z", "2026-11-29T10:00:00z", "2026-11-29T10:00:00",
                 "2026-11-29T11:00:00+01:00", " 2026-11-29T10:00:00Z "):  # fmt: skip
        assert parse_utc(text) == want, text
        assert parse_utc(text).tzinfo is dt.timezone.utc  # type: ignore[union-attr]
    for bad in ("", "yesterday", None, 17):
        assert parse_utc(bad) is None


def test_parse_utc_reads_any_number_of_fractional_digits_on_every_python() -> None:
    # Python 3.10's fromisoformat takes only 3 or 6 digits; Codex writes 9, tests write 4.
    base = dt.datetime(2026, 11, 29, 10, 0, 0, tzinfo=dt.timezone.utc)
    for text, micro in (("2026-11-29T10:00:00.8Z", 800000), ("2026-11-29T10:00:00.8509Z", 850900),
                        ("2026-11-29T10:00:00.123456789Z", 123456),
                        ("2026-11-29T11:00:00.12345+01:00", 123450)):  # fmt: skip
        assert parse_utc(text) == base.replace(microsecond=micro), text


def test_age_span() -> None:
    assert age_span([5 * 3600.0, 2 * 86400.0]) == "5 h–2 d ago"
    assert age_span([5 * 3600.0, 5 * 3600.0 + 60]) == "5 h ago"


_ISO_LIKE = st.builds(
    lambda moment, sep, digits, zone: (
        moment.strftime(f"%Y-%m-%d{sep}%H:%M:%S") + ("." + digits if digits else "") + zone
    ),
    st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(2999, 12, 31)),
    st.sampled_from(["T", " ", "t"]),
    st.text("0123456789", max_size=10),
    st.sampled_from(["", "Z", "z", "+00:00", "+05:30", "-08:00", " ", "Zx"]),
)


@given(st.lists(st.one_of(_ISO_LIKE, st.text(max_size=40)), max_size=20))
def test_parse_utc_remembered_equals_a_fresh_parse(values: list[str]) -> None:
    """parse_utc remembers strings it read: the same answers, in any order, as parsing each
    afresh (the remembered datetime is immutable, so sharing it is safe)."""
    fresh = timeutil._parse_text.__wrapped__
    for value in values + values[::-1]:
        want = fresh(value) if value else None
        got = parse_utc(value)
        assert got == want, value
        assert got is None or got.tzinfo is dt.timezone.utc
