"""core/light_json.py gives json's results without importing json (the served hook brief)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resume_kit.core import light_json

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and the infinities too: json writes and reads them
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


def _same(a: object, b: object) -> bool:
    """Equal, NaN included (NaN != NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@given(JSON_VALUES)
def test_dumps_writes_what_json_writes(value: object) -> None:
    assert light_json.dumps(value) == json.dumps(value, ensure_ascii=False)


# What call signatures hash (core/activity.call_signature): any tool input, sorted keys, and
# whatever JSON has no type for written as its str()
ODD_VALUES = st.recursive(
    JSON_VALUES | st.binary(max_size=5) | st.complex_numbers() | st.sets(st.integers(), max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text() | st.integers() | st.booleans() | st.none(), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(ODD_VALUES)
def test_sorted_with_a_default_writes_what_json_writes(value: object) -> None:
    try:
        expected = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except TypeError as refused:  # keys of more than one type cannot be sorted
        with pytest.raises(TypeError) as ours:
            light_json.dumps(value, sort_keys=True, default=str)
        assert str(ours.value) == str(refused)
    else:
        assert light_json.dumps(value, sort_keys=True, default=str) == expected


@given(JSON_VALUES, st.sampled_from([{}, {"indent": 1}, {"ensure_ascii": False}]))
def test_loads_reads_what_json_reads(value: object, style: dict[str, object]) -> None:
    text = json.dumps(value, **style)  # type: ignore[arg-type]
    assert _same(light_json.loads(text), json.loads(text))
    assert _same(light_json.loads(f" \n{text}\t\r"), json.loads(text))


@given(st.text(max_size=30))
def test_any_text_is_read_or_refused_as_json_does(text: str) -> None:
    try:
        expected: object = json.loads(text)
    except ValueError as refused:
        with pytest.raises(json.JSONDecodeError) as ours:
            light_json.loads(text)
        assert str(ours.value) == str(refused)
    else:
        assert _same(light_json.loads(text), expected)


@pytest.mark.parametrize(
    "text", ["", " ", "{", "[1,]", "1 2", "\ufeff{}", "nul", '"\x01"', '{"a" 1}', "[1] x"]
)
def test_malformed_text_is_refused_with_jsons_message(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as refused:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as ours:
        light_json.loads(text)
    assert str(ours.value) == str(refused.value)


@pytest.mark.parametrize("value", [object(), {1j: 2}, [{1, 2}]])
def test_what_json_cannot_write_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError) as refused:
        json.dumps(value, ensure_ascii=False)
    with pytest.raises(TypeError) as ours:
        light_json.dumps(value)
    assert str(ours.value) == str(refused.value)


def test_a_circular_value_is_refused() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        light_json.dumps(loop)


def test_reading_and_writing_import_neither_json_nor_re() -> None:
    code = (
        "import sys\n"
        "from resume_kit.core.light_json import dumps, loads\n"
        "assert loads(dumps({'a': [1, 2.5, 'é', None]})) == {'a': [1, 2.5, 'é', None]}\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    found = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=Path(__file__).resolve().parents[2],  # the package's tree, without site-packages
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert not {"json", "re", "enum"} & set(found)
