"""model_from_cache: the model of cached data is exactly what validate makes of it, or None."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from resume_kit.core.light_dataclass import asdict
from resume_kit.infra.errors import ProgressFileError
from resume_kit.progress_file.cache_json import CachedRows, payload
from resume_kit.progress_file.roundtrip import to_data
from resume_kit.progress_file.validate import (
    built_unit,
    model_from_cache,
    model_from_index,
    validate,
)

IDS = st.sampled_from(["a", "b", "c", "doc-001", "x.y_z", "d", "e", "f", "g", "Bad", "", "a b"])
TEXT = st.text(max_size=6) | st.sampled_from(["", " ", "sha256:ab", "2026-11-29T08:00:00Z"])
ANY = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | TEXT | st.lists(TEXT)


def maybe(strategy: Any, other: Any = ANY) -> Any:
    """Nearly always ``strategy``; now and then a value of another type."""
    return st.integers(0, 24).flatmap(lambda n: other if n == 0 else strategy)


evidence = st.fixed_dictionaries(
    {
        "verified_at": maybe(TEXT),
        "commit": maybe(st.none() | TEXT),
        "dirty": maybe(st.booleans()),
        "fingerprint": maybe(TEXT),
        "duration_s": maybe(st.floats(0, 9) | st.integers(0, 9)),
    },
    optional={"log": maybe(TEXT)},
)
failure = st.fixed_dictionaries(
    {
        "at": maybe(TEXT),
        "exit_code": maybe(st.integers(0, 130)),
        "signature": maybe(TEXT),
        "repeats": maybe(st.integers(1, 5)),
        "excerpt": maybe(TEXT),
    },
)
unit = st.fixed_dictionaries(
    {"id": maybe(IDS), "title": maybe(TEXT), "status": maybe(st.sampled_from(["todo", "in_progress", "done", "blocked", "nope"]))},
    optional={
        "verify": maybe(TEXT),
        "files": maybe(st.lists(TEXT, max_size=2)),
        "artifacts": maybe(st.lists(TEXT, max_size=2)),
        "after": maybe(st.lists(IDS, max_size=2)),
        "evidence": maybe(evidence),
        "last_failure": maybe(failure),
    },
)  # fmt: skip
action = st.fixed_dictionaries(
    {
        "key": maybe(TEXT),
        "description": maybe(TEXT),
        "status": maybe(st.sampled_from(["success", "unknown", "failed", "x"])),
    },
    optional={"at": maybe(TEXT)},
)
document = st.fixed_dictionaries(
    {"schema_version": maybe(st.sampled_from([1, 2, True])), "goal": maybe(TEXT),
     "units": maybe(st.lists(unit, max_size=4))},
    optional={"actions": maybe(st.lists(action, max_size=2)), "notes": maybe(st.none() | TEXT)},
)  # fmt: skip


def with_unknown_keys(data: dict[str, Any], where: int) -> dict[str, Any]:
    """``data`` with an unknown key in one of its mappings (``where`` picks which)."""
    data = copy.deepcopy(data)
    mappings: list[dict[str, Any]] = [data]
    units = data.get("units")
    for unit in units if isinstance(units, list) else []:
        if isinstance(unit, dict):
            mappings.append(unit)
            mappings += [v for v in unit.values() if isinstance(v, dict)]
    actions = data.get("actions")
    mappings += [a for a in actions if isinstance(a, dict)] if isinstance(actions, list) else []
    mappings[where % len(mappings)]["unexpected"] = 1
    return data


def validated(data: Any) -> Any:
    try:
        return validate(copy.deepcopy(data), "cache")
    except ProgressFileError:
        return None
    except TypeError:  # migrate() of schema_version 0 with a non-list units (a known bug)
        assert data.get("schema_version") == 0
        return None


def _one_unit_with_artifact(path: str, files: tuple[str, ...] = ()) -> dict[str, Any]:
    unit = {
        "id": "a",
        "title": "",
        "status": "todo",
        "verify": None,
        "files": list(files),
        "artifacts": [path],
    }
    return {"schema_version": 2, "goal": "", "units": [unit]}


@settings(max_examples=600, deadline=None)
@given(document, st.none() | st.integers(0, 20))
@example(_one_unit_with_artifact("/"), None)  # found by CI: the cache took what validate refuses
@example(_one_unit_with_artifact("a/../../b"), None)
# the paths are checked joined by NUL: a path's start, its end and a NUL inside one
@example(_one_unit_with_artifact("b", files=("a", "/etc/passwd")), None)
@example(_one_unit_with_artifact("/b", files=("a",)), None)
@example(_one_unit_with_artifact(".b", files=("a.",)), None)
@example(_one_unit_with_artifact("b", files=("a.", "./..")), None)
@example(_one_unit_with_artifact("a\x00/../../b"), None)
def test_fast_model_is_validates_model_or_none(data: dict[str, Any], unknown: int | None) -> None:
    if unknown is not None:
        data = with_unknown_keys(data, unknown)
    fast = model_from_cache(copy.deepcopy(data))
    if fast is not None:
        assert fast == validated(data)
        assert unknown is None


@settings(max_examples=200, deadline=None)
@given(document)
def test_every_valid_model_round_trips_through_the_fast_path(data: dict[str, Any]) -> None:
    model = validated(data)
    if model is None:
        return
    cached = json.loads(json.dumps(to_data(model)))  # what the cache file holds
    assert model_from_cache(cached) == model


def when_read(data: Any) -> Any:
    """The model of ``data`` through the cache's text, each unit built when read."""
    return read_from(payload("0" * 64, copy.deepcopy(data)))


def read_from(text: str) -> Any:
    """The model of a cache text, each unit built when read; None when it has none."""
    rows = CachedRows.of(text)
    if rows is None:
        return None
    return model_from_index(
        rows.rest(), rows.columns, lambda i: built_unit(rows.row(i), rows.columns.entry(i))
    )


def payable(data: Any) -> bool:
    """Whether ``data`` has the shape the cache's writer takes (a list of units with ids)."""
    units = data.get("units") if isinstance(data, dict) else None
    return isinstance(units, list) and bool(units) and all(isinstance(u, dict) for u in units)


@settings(max_examples=600, deadline=None)
@given(document, st.none() | st.integers(0, 20))
@example(_one_unit_with_artifact("/"), None)
@example(_one_unit_with_artifact("a\x00/../../b"), None)
def test_units_built_when_read_are_the_units_built_at_once(
    data: dict[str, Any], unknown: int | None
) -> None:
    """The model whose units are built when read equals the one built at once; where that one
    is None, each unit is what validate makes of it, or reading it raises validate's error."""
    if unknown is not None:
        data = with_unknown_keys(data, unknown)
    if not payable(data):
        return
    at_once = model_from_cache(copy.deepcopy(data))
    lazy = when_read(data)
    if at_once is not None:
        assert lazy == at_once
        return
    if lazy is None:
        return
    expected = validated(data)
    try:
        built = [asdict(unit) for unit in lazy.units]  # reads every field of every unit
    except ProgressFileError as exc:
        assert expected is None
        assert exc.message.startswith("the progress cache disagrees with progress.yaml (")
        return
    assert expected is not None
    assert built == [asdict(unit) for unit in expected.units]
    assert lazy == expected


def test_a_unit_built_when_read_keeps_what_was_set_before_it_was_built() -> None:
    data = {
        "schema_version": 2,
        "goal": "g",
        "units": [
            {"id": "a", "title": "A", "status": "todo", "verify": "true", "files": ["x.py"]},
            {"id": "b", "title": "B", "status": "todo", "after": ["a"]},
        ],
    }
    model = when_read(data)
    assert model is not None
    first, second = model.units
    assert "title" not in vars(first)  # nothing but id, status and after was built
    first.status = "done"
    assert (first.title, first.verify, first.files, first.status) == ("A", "true", ["x.py"], "done")
    assert second.after == ["a"] and "title" not in vars(second)


def test_a_cached_unit_that_is_not_valid_is_an_error_when_read() -> None:
    data = {
        "schema_version": 2,
        "goal": "g",
        "units": [{"id": "a", "title": "A", "status": "todo", "files": ["../../etc/passwd"]}],
    }
    model = when_read(data)
    assert model is not None  # the id, the status and the links are valid
    with pytest.raises(ProgressFileError) as info:
        _ = model.units[0].files
    assert info.value.message.startswith(
        "the progress cache disagrees with progress.yaml (unit 'a': files"
    )


@pytest.mark.parametrize(
    "change",
    [
        {"ids": ["A", "b"]},
        {"ids": ["a\nb", "b"]},
        {"ids": ["", "b"]},
        {"ids": [1, "b"]},
        {"ids": "a"},
        {"ids": ["a", "b", "c"]},  # more ids than statuses
        {"statuses": ["finished", "done"]},
        {"statuses": [["todo"], "done"]},
        {"statuses": "todo"},
        {"after": [[0, "b"]]},
        {"after": [[0, ["a"]]]},  # a cycle,
        {"after": [[0, [1]]]},
        {"after": [[2, ["b"]]]},  # no unit there
        {"after": [[-1, ["b"]]]},
        {"after": [[0, []]]},  # an empty list is never written
        {"after": [["0", ["b"]]]},
        {"after": [[0, ["b"]], [0, ["b"]]]},
        {"after": {"0": ["b"]}},
        {"after": [[0]]},
        {"index": [["a", "todo", []]], "ids": None},  # the layout before the columns
        {"rows": None},  # the layout before each line's start was kept
        {"rows": [1, 20]},
    ],
)
def test_a_header_not_as_written_gives_no_model(change: dict[str, Any]) -> None:
    data = {"schema_version": 2, "goal": "g", "units": [{"id": "a", "status": "todo"}]}
    data["units"].append({"id": "b", "status": "done"})
    header, rest = payload("0" * 64, data).split("\n", 1)
    assert read_from(f"{header}\n{rest}") is not None
    assert read_from(json.dumps({**json.loads(header), **change}) + "\n" + rest) is None


def test_a_unit_that_disagrees_with_its_index_entry_is_an_error() -> None:
    raw = {"id": "a", "title": "A", "status": "done"}
    with pytest.raises(ProgressFileError, match="its index disagrees with the unit"):
        built_unit(raw, ["a", "todo", []])
    assert built_unit(raw, ["a", "done", []]).title == "A"
