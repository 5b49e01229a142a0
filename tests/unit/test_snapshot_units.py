"""_plain_units: the units' facts skip json_safe's copy only when that copy would equal them."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from resume_kit.facts.snapshot import _plain_units, json_safe

NAMES = st.text(max_size=8) | st.sampled_from(["out/a.json", "caf\udce9.txt", "\ud800", ""])
FACTS = st.fixed_dictionaries(
    {"status": st.sampled_from(["todo", "in_progress", "done", "blocked"])},
    optional={
        "missing_artifacts": st.lists(NAMES, max_size=3),
        "fingerprint": st.none() | st.just("sha256:ab") | NAMES,
        "evidence_in_history": st.none() | st.booleans(),
    },
)


@given(st.dictionaries(st.sampled_from(["a", "doc-001", "x.y_z"]), FACTS, max_size=4))
def test_plain_units_equal_json_safe_and_always_encode(units: dict[str, dict[str, object]]) -> None:
    plain = _plain_units(units)  # type: ignore[arg-type]
    assert plain == json_safe(units)
    json.dumps(plain, ensure_ascii=False).encode("utf-8")


def test_a_name_that_cannot_encode_is_escaped_not_passed_through() -> None:
    units = {"a": {"status": "done", "missing_artifacts": ["caf\udce9.txt"]}}
    plain = _plain_units(units)  # type: ignore[arg-type]
    assert plain is not units
    assert plain["a"]["missing_artifacts"] == ["caf\\xe9.txt"]
