"""The merge driver's rule by unit (issue 19): never lose a verified unit, never invent one."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.core.progress_merge import merge_progress
from resume_kit.progress_file.merge_driver import merge_texts
from resume_kit.progress_file.roundtrip import dump, merge_into

IDS = ["a", "b", "c", "d", "e"]


def _evidence(n: int) -> dict[str, Any]:
    return {
        "verified_at": f"2026-12-0{n % 9 + 1}T10:00:00Z",
        "commit": None,
        "dirty": False,
        "fingerprint": f"f{n}",
        "duration_s": 0.1,
    }


def _unit(uid: str, state: int, title: str) -> dict[str, Any]:
    unit: dict[str, Any] = {"id": uid, "title": title, "verify": "true"}
    if state == 0:
        unit["status"] = "todo"
    elif state == 1:
        unit["status"] = "in_progress"
    else:
        unit["status"] = "done"
        unit["evidence"] = _evidence(state)
    return unit


def _side(base: dict[str, Any], changes: dict[str, int], new: list[str]) -> dict[str, Any]:
    units = [dict(u) for u in base["units"]]
    for unit in units:
        if unit["id"] in changes:
            unit.update(_unit(unit["id"], changes[unit["id"]], unit["title"]))
            if changes[unit["id"]] < 2:
                unit.pop("evidence", None)
    units += [_unit(uid, 0, uid) for uid in new if all(u["id"] != uid for u in units)]
    return {"schema_version": 2, "goal": "g", "units": units}


states = st.integers(min_value=0, max_value=4)
base_ids = st.lists(st.sampled_from(IDS[:3]), unique=True)


@settings(max_examples=200, deadline=None)
@given(
    base_ids,
    st.data(),
)
def test_merges_never_lose_a_verified_unit_nor_invent_one(ids: list[str], data: Any) -> None:
    base = {
        "schema_version": 2,
        "goal": "g",
        "units": [_unit(uid, data.draw(states), uid.upper()) for uid in ids],
    }
    ours = _side(
        base,
        data.draw(st.dictionaries(st.sampled_from(ids or ["a"]), states)),
        data.draw(st.lists(st.sampled_from(IDS[3:]))),
    )
    theirs = _side(
        base,
        data.draw(st.dictionaries(st.sampled_from(ids or ["a"]), states)),
        data.draw(st.lists(st.sampled_from(IDS[3:]))),
    )
    merged, conflicts = merge_progress(base, ours, theirs, lambda _c: False)
    assert not conflicts  # only machine-written state differs: nothing for a person
    result = {u["id"]: u for u in merged["units"]}
    sides = [{u["id"]: u for u in side["units"]} for side in (ours, theirs)]
    for side in sides:
        for uid, unit in side.items():
            assert uid in result  # no unit is lost
            if unit["status"] == "done":
                assert result[uid]["status"] == "done"
                assert result[uid]["evidence"] in (
                    sides[0].get(uid, {}).get("evidence"),
                    sides[1].get(uid, {}).get("evidence"),
                )
    for uid, unit in result.items():
        assert any(uid in side for side in sides)  # none invented
        if unit["status"] == "done":  # verified only where a side verified it
            assert any(side.get(uid, {}).get("status") == "done" for side in sides)
    # the text path agrees with the data path
    text = [dump(merge_into(None, doc)) for doc in (base, ours, theirs)]
    out, count = merge_texts(*text, in_history=lambda _c: False)
    assert count == 0 and "<<<<<<<" not in out


def test_evidence_whose_commit_is_in_the_history_wins_else_the_newer() -> None:
    base = {"goal": "g", "units": [_unit("a", 0, "A")]}
    ours = {"goal": "g", "units": [_unit("a", 2, "A") | {"evidence": _evidence(5)}]}
    theirs = {"goal": "g", "units": [_unit("a", 2, "A") | {"evidence": _evidence(2)}]}
    theirs["units"][0]["evidence"]["commit"] = "abc1234"
    merged, _ = merge_progress(base, ours, theirs, lambda c: c == "abc1234")
    assert merged["units"][0]["evidence"]["commit"] == "abc1234"
    merged, _ = merge_progress(base, ours, theirs, lambda c: False)
    assert merged["units"][0]["evidence"]["fingerprint"] == "f5"  # the newer


def test_conflicting_edits_are_left_between_markers_and_comments_survive() -> None:
    base = "goal: g\nunits:\n  - id: a\n    title: A\n    verify: 'true'\n"
    ours = (
        "# the team's plan\ngoal: g\nunits:\n  # first\n  - id: a\n    title: A ours\n"
        "    verify: 'true'  # cheap\n"
    )
    theirs = "goal: g\nunits:\n  - id: a\n    title: A theirs\n    verify: 'true'\n"
    out, count = merge_texts(base, ours, theirs, lambda _c: False)
    assert count == 1
    assert "<<<<<<< ours\n    title: A ours\n=======\n    title: A theirs\n>>>>>>> theirs\n" in out
    assert "# the team's plan" in out and "# first" in out and "# cheap" in out


def test_the_ledger_is_the_union_of_attempts() -> None:
    one = {"key": "deploy", "description": "x", "status": "failed", "at": "2026-12-01T10:00:00Z"}
    two = {"key": "deploy", "description": "x", "status": "success", "at": "2026-12-01T11:00:00Z"}
    three = {"key": "mail", "description": "y", "status": "success", "at": "2026-12-01T12:00:00Z"}
    base = {"goal": "g", "units": [], "actions": [one]}
    merged, conflicts = merge_progress(
        base,
        {"goal": "g", "units": [], "actions": [one, two]},
        {"goal": "g", "units": [], "actions": [one, three]},
        lambda _c: False,
    )
    assert merged["actions"] == [one, two, three] and not conflicts
