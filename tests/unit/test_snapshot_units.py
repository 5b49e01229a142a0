"""_plain: the units' and artifacts' facts skip json_safe's copy only when that copy would equal
them; the canonical text it made is the one the store would make, and used only for that object."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from resume_kit.facts.snapshot import _plain, json_safe
from resume_kit.facts.snapshot_store import Encoded, _value_texts, canonical_text

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
    encoded = Encoded()
    plain = _plain(units, "units", encoded)
    assert plain == json_safe(units)
    json.dumps(plain, ensure_ascii=False).encode("utf-8")
    kept = encoded.text("units", plain)
    if kept is not None:  # only a section that needed no copy has its text kept
        assert plain is units
        assert kept == canonical_text(json_safe(units))


def test_a_name_that_cannot_encode_is_escaped_not_passed_through() -> None:
    units = {"a": {"status": "done", "missing_artifacts": ["caf\udce9.txt"]}}
    encoded = Encoded()
    plain = _plain(units, "units", encoded)
    assert plain is not units
    assert encoded.text("units", plain) is None and encoded.text("units", units) is None
    assert plain["a"]["missing_artifacts"] == ["caf\\xe9.txt"]


def test_a_kept_text_is_used_only_for_the_object_it_encodes() -> None:
    artifacts = [{"path": "out/a.json", "exists": True, "size": 2, "sha256": "ab"}]
    encoded = Encoded()
    assert _plain(artifacts, "artifacts", encoded) is artifacts
    texts = _value_texts({"artifacts": artifacts}, encoded)
    assert texts == _value_texts({"artifacts": artifacts})
    replaced = [{"path": "out/b.json", "exists": False, "size": None, "sha256": None}]
    assert _value_texts({"artifacts": replaced}, encoded) == _value_texts({"artifacts": replaced})
