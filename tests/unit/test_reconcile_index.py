"""The changed-path index reconcile uses for done units gives what matching every path gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from resume_kit.core.reconcile import _ChangedIndex
from resume_kit.model.globs import Ownership

_PART = st.sampled_from(["src", "a", "b.py", "lib", "x.txt", "docs", "*.py", "**", "a*", "?"])
_PATH = st.lists(_PART.filter(lambda p: not any(c in p for c in "*?")), min_size=1, max_size=4)
_PATTERN = st.lists(_PART, min_size=1, max_size=3).map("/".join)


@given(
    st.lists(
        st.tuples(_PATH, st.booleans()).map(lambda t: "/".join(t[0]) + ("/" if t[1] else "")),
        unique=True,
        max_size=12,
    ),
    st.lists(
        st.one_of(_PATTERN, _PATTERN.map(lambda p: "./" + p), _PATTERN.map(lambda p: p + "/")),
        max_size=4,
    ),
)
def test_owned_by_is_owns_over_every_path(changed: list[str], patterns: list[str]) -> None:
    owned = Ownership(patterns)
    assert _ChangedIndex(changed).owned_by(owned) == [p for p in changed if owned.owns(p)]
