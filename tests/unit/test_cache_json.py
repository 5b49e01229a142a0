"""The progress cache's text: the data whole, the units one at a time, and a unit or the
changed units replaced, or a unit's tail line appended, give exactly what a whole dump
gives."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.progress_file.cache_json import (
    FORMAT,
    HEAD_SIZE,
    MAX_TAILS,
    CachedRows,
    data_of,
    digest_in,
    digest_of,
    payload,
)

TEXT = st.text(max_size=20) | st.sampled_from(["\n", '"units": [', "]}", ",\n", "\u2028"])
# One JSON type per field, as to_data writes a validated model (the reuse's contract): values
# that compare equal then dump equal (0 == False would not, nor 1 == 1.0).
UNIT_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "title": TEXT,
        "status": st.sampled_from(["todo", "in_progress", "done"]),
        "verify": st.one_of(st.none(), TEXT),
        "notes": st.one_of(st.none(), TEXT),
        "files": st.lists(TEXT, max_size=2),
        "after": st.lists(TEXT, max_size=2),
        "parallel": st.booleans(),
        "repeats": st.integers(),
    },
)
DIGEST = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
BLOCKS = st.none() | st.just([[0, 10], 20, 2])


@st.composite
def datas(draw: Any, min_units: int = 0) -> dict[str, Any]:
    ids = draw(st.lists(TEXT, min_size=min_units, max_size=5, unique=True))
    data: dict[str, Any] = {
        "schema_version": draw(st.integers(1, 2)),
        "goal": draw(TEXT),
        "units": [{"id": i, "status": "todo", **draw(UNIT_FIELDS)} for i in ids],
    }
    if draw(st.booleans()):
        data["actions"] = [{"key": draw(TEXT), "description": draw(TEXT), "status": "done"}]
    if draw(st.booleans()):
        data["notes"] = draw(TEXT)
    return data


def index_of(data: dict[str, Any]) -> list[Any]:
    return [[u["id"], u["status"], u.get("after", [])] for u in data["units"]]


def index_in(rows: CachedRows) -> list[Any]:
    """Each unit's [id, status, after] as the rows' columns hold them."""
    return [rows.columns.entry(i) for i in range(len(rows.columns.ids))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datas(), DIGEST, BLOCKS)
def test_the_cache_holds_the_data_whole_and_unit_by_unit(
    data: dict[str, Any], digest: str, blocks: Any
) -> None:
    text = payload(digest, data, blocks)
    assert digest_of(text) == digest
    assert data_of(text) == data
    rows = CachedRows.of(text)
    if not data["units"]:
        assert rows is None  # nothing to read one at a time
        return
    assert rows is not None
    assert index_in(rows) == index_of(data)
    assert rows.rest() == {k: v for k, v in data.items() if k != "units"}
    assert [rows.row(i) for i in range(len(data["units"]))] == data["units"]
    assert rows.blocks == (blocks if blocks is not None and len(data["units"]) == 2 else None)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datas(min_units=1), DIGEST, DIGEST, BLOCKS, st.data())
def test_a_unit_replaced_is_the_whole_dump(
    old: dict[str, Any], old_digest: str, new_digest: str, blocks: Any, data: Any
) -> None:
    rows = CachedRows.of(payload(old_digest, old))
    assert rows is not None
    position = data.draw(st.integers(0, len(old["units"]) - 1))
    unit = {**old["units"][position], **data.draw(UNIT_FIELDS)}
    new = {**old, "units": [*old["units"][:position], unit, *old["units"][position + 1 :]]}
    text, replaced = rows.replaced(position, unit, new_digest, blocks)
    assert text == payload(new_digest, new, blocks)
    again = CachedRows.of(text)
    assert again is not None and index_in(again) == index_in(replaced) == index_of(new)
    assert replaced.row(position) == unit


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datas(), DIGEST, DIGEST, st.data())
def test_the_lines_of_unchanged_units_reused_give_the_whole_dump(
    old: dict[str, Any], old_digest: str, new_digest: str, data: Any
) -> None:
    new = json.loads(json.dumps(old))
    for unit in new["units"]:
        if data.draw(st.booleans()):
            unit.update(data.draw(UNIT_FIELDS))
    if data.draw(st.booleans()):
        new["goal"] = data.draw(TEXT)
    if data.draw(st.booleans()):
        new["units"].append({"id": "added-unit", "status": "todo"})  # not as many: no reuse
    rows = CachedRows.of(payload(old_digest, old))
    if rows is None:
        assert not old["units"]
        return
    reused = rows.rows_for(new["units"], old["units"])
    assert (reused is None) == (len(new["units"]) != len(old["units"]))
    assert payload(new_digest, new, None, reused) == payload(new_digest, new)


def test_a_text_not_in_the_shape_written_has_no_rows() -> None:
    data = {"schema_version": 2, "goal": "g", "units": [{"id": "a", "status": "todo"}]}
    text = payload("0" * 64, data)
    assert CachedRows.of(text) is not None
    assert CachedRows.of(text.replace("\n]}\n", "]}\n")) is None
    assert CachedRows.of("{}\n" + text.split("\n", 1)[1]) is None
    assert CachedRows.of("not json\n" + text.split("\n", 1)[1]) is None
    header, rest = text.split("\n", 1)
    for starts in (None, [], [1], "0", [0, 5]):  # each unit's start, from the first's: [0]
        forged = json.dumps({**json.loads(header), "rows": starts}) + "\n" + rest
        assert CachedRows.of(forged) is None
    assert digest_of(text.replace(f'"format": {FORMAT}', '"format": 2')) is None  # SHA-256 keys


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datas(min_units=1), st.data())
def test_a_forged_line_start_gives_a_units_line_or_an_error(
    data: dict[str, Any], draw: Any
) -> None:
    """A unit's line is cut out where the header says it starts: a header changed by hand
    (its key still matching) gives a whole line of the text, some unit's, or ValueError; and
    a text whose lines are not as many as its units is never written again from them."""
    text = payload("0" * 64, data)
    header_line, rest = text.split("\n", 1)
    header = json.loads(header_line)
    count = len(data["units"])
    near = st.integers(-3, 3) | st.integers(-5, len(text) + 5)
    header["rows"] = [0] + [
        start + draw.draw(near) if draw.draw(st.booleans()) else start
        for start in header["rows"][1:]
    ]
    rows = CachedRows.of(json.dumps(header, ensure_ascii=False) + "\n" + rest)
    assert rows is not None
    for position in range(count):
        try:
            found = rows.row(position)
        except ValueError:
            continue
        assert found in data["units"]
    if count > 1:
        fewer = {**data, "units": data["units"][:-1]}
        short = payload("0" * 64, fewer)
        header = json.loads(short.split("\n", 1)[0])
        header.update(ids=[*header["ids"], "x"], statuses=[*header["statuses"], "todo"])
        header["rows"].append(header["rows"][-1] + 1)
        lying = CachedRows.of(json.dumps(header) + "\n" + short.split("\n", 1)[1])
        assert lying is not None
        with pytest.raises(ValueError):
            lying.replaced(0, data["units"][0], "1" * 64, None)
        assert lying.rows_for(data["units"], data["units"]) is None


@st.composite
def plain_blocks(draw: Any, count: int) -> list[Any]:
    starts = sorted(draw(st.sets(st.integers(0, 10_000), min_size=count, max_size=count)))
    return [starts, starts[-1] + draw(st.integers(1, 500)), draw(st.integers(0, 8))]


def moved(blocks: list[Any], position: int, shift: int) -> list[Any]:
    starts, end, indent = blocks
    after = [start + shift for start in starts[position + 1 :]]
    return [[*starts[: position + 1], *after], end + shift, indent]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datas(min_units=1), DIGEST, st.booleans(), st.data())
def test_tails_give_what_writing_the_whole_text_gives(
    start: dict[str, Any], digest: str, with_blocks: bool, data: Any
) -> None:
    """Each checkpoint's tail line: the text then names the new key and holds, whole or unit by
    unit, exactly the data and blocks a whole dump would; after MAX_TAILS the text must be
    written whole; an append cut short leaves no cache at all."""
    count = len(start["units"])
    blocks = data.draw(plain_blocks(count)) if with_blocks else None
    text = payload(digest, start, blocks)
    rows = CachedRows.of(text)
    current = json.loads(json.dumps(start))
    assert rows is not None
    for step in range(MAX_TAILS + 1):
        position = data.draw(st.integers(0, count - 1))
        unit = {**current["units"][position], **data.draw(UNIT_FIELDS)}
        new_digest = data.draw(DIGEST)
        if blocks is not None and data.draw(st.booleans()):
            bounds = [*blocks[0], blocks[1]]
            gap = bounds[position + 1] - bounds[position]
            blocks = moved(blocks, position, data.draw(st.integers(1 - gap, 300)))
        else:
            blocks = None  # the block moved by a length not known: none from then on
        appended = rows.tail(position, unit, new_digest, blocks)
        if step == MAX_TAILS:
            assert appended is None  # the next checkpoint writes the whole text
            break
        assert appended is not None
        line, rows = appended
        current["units"][position] = unit
        text += line
        assert digest_of(text) == new_digest
        assert digest_in(text[:HEAD_SIZE], text[-len(line) - 1 :]) == new_digest
        assert data_of(text) == current
        again = CachedRows.of(text)
        assert again is not None and again.tails == rows.tails == step + 1
        assert index_in(again) == index_in(rows) == index_of(current)
        assert [again.row(i) for i in range(count)] == current["units"]
        assert again.blocks == rows.blocks == blocks
        assert again.rest() == {k: v for k, v in current.items() if k != "units"}
        assert again.replaced(position, unit, new_digest, blocks)[0] == payload(
            new_digest, current, blocks
        )
        cut = data.draw(st.integers(len(text) - len(line) + 1, len(text) - 1))
        assert digest_of(text[:cut]) is None  # torn: no key, so no cache
        assert CachedRows.of(text[:cut]) is None


def test_blocks_that_are_not_the_old_ones_moved_have_the_text_written_whole() -> None:
    data = {"schema_version": 2, "goal": "g", "units": [{"id": i, "status": "todo"} for i in "abc"]}
    rows = CachedRows.of(payload("0" * 64, data, [[0, 10, 20], 30, 2]))
    assert rows is not None
    unit = {"id": "b", "status": "done"}
    assert rows.tail(1, unit, "1" * 64, [[0, 10, 25], 35, 2]) is not None  # moved by 5
    assert rows.tail(1, unit, "1" * 64, [[0, 12, 25], 35, 2]) is None  # b's own start moved
    assert rows.tail(1, unit, "1" * 64, [[0, 10, 25], 30, 2]) is None  # the end did not move
    assert rows.tail(1, unit, "1" * 64, [[0, 10, 20], 30, 4]) is None  # another indent
    assert rows.tail(1, unit, "1" * 64, None) is not None  # not known: none from then on
