"""The progress cache's JSON spliced after a save equals the whole dump, whichever units changed."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.progress_file.cache_json import digest_of, payload, spliced

TEXT = st.text(max_size=20)
# One JSON type per field, as to_data writes a validated model (the splice's contract): values
# that compare equal then dump equal (0 == False would not, nor 1 == 1.0).
UNIT_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "title": TEXT,
        "status": st.sampled_from(["todo", "in_progress", "done"]),
        "verify": st.one_of(st.none(), TEXT),
        "notes": st.one_of(st.none(), TEXT),
        "files": st.lists(TEXT, max_size=2),
        "parallel": st.booleans(),
        "repeats": st.integers(),
    },
)
DIGEST = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)


@st.composite
def datas(draw: Any) -> dict[str, Any]:
    ids = draw(st.lists(TEXT, min_size=1, max_size=5, unique=True))
    data: dict[str, Any] = {
        "schema_version": draw(st.integers(1, 2)),
        "goal": draw(TEXT),
        "units": [{"id": i, **draw(UNIT_FIELDS)} for i in ids],
    }
    if draw(st.booleans()):
        data["actions"] = [{"key": draw(TEXT), "description": draw(TEXT), "status": "done"}]
    if draw(st.booleans()):
        data["notes"] = draw(TEXT)
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datas(), DIGEST, DIGEST, st.data())
def test_the_spliced_cache_is_the_whole_dump(
    old: dict[str, Any], old_digest: str, new_digest: str, data: Any
) -> None:
    new = json.loads(json.dumps(old))
    for unit in new["units"]:
        if data.draw(st.booleans()):
            unit.update(data.draw(UNIT_FIELDS))
    if data.draw(st.booleans()):
        new["schema_version"] = 2
        new["goal"] = data.draw(TEXT)
    if data.draw(st.booleans()):
        new["units"].append({"id": "added-unit"})  # not in place: no splice
    if data.draw(st.booleans()) and len(new["units"]) > 1:
        new["units"].reverse()  # moved: ids differ in place
    old_text = payload(old_digest, old)
    assert digest_of(old_text) == old_digest
    result = spliced(old_text, old_digest, old, new_digest, new)
    if len(new["units"]) == len(old["units"]) and all(
        a["id"] == b["id"] for a, b in zip(old["units"], new["units"], strict=True)
    ):
        assert result is not None
    if result is not None:
        assert result == payload(new_digest, new)


def test_a_cache_text_not_of_the_old_data_is_not_spliced() -> None:
    old = {"schema_version": 2, "goal": "g", "units": [{"id": "a", "status": "todo"}]}
    new = {"schema_version": 2, "goal": "g", "units": [{"id": "a", "status": "done"}]}
    digest = "0" * 64
    other = payload(digest, {**old, "goal": "another"})
    assert spliced(other, digest, old, digest, new) is None
    assert spliced(payload(digest, old).replace(", ", ",", 1), digest, old, digest, new) is None
    assert spliced(payload(digest, old), digest, old, "1" * 64, new) == payload("1" * 64, new)
