"""A three-way merge of progress files by unit (the merge driver's rule, issue 19).

On plain data (dicts and lists as YAML gives them), so it is pure and testable:

* a unit done with evidence on one side and not done on the other is done, with that evidence;
* both done with different evidence: the evidence whose commit is in the merged history wins,
  the newer one (``verified_at``) when both or neither are;
* units new on either side are kept (ours in our order, then theirs'); a unit one side removed
  stays removed unless the other side changed it;
* the ledger (``actions``) is the union of the attempts on both sides;
* any other field both sides changed differently is a :class:`Conflict`;
* ``last_failure`` is machine-written: the newer one is kept, never a conflict; to do against
  in progress is in progress (work started somewhere).
"""

from __future__ import annotations

from collections.abc import Callable

from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import Any

_STATE_KEYS = ("status", "evidence", "last_failure", "blocked_reason")
_WORKING = frozenset({"todo", "in_progress", None})


@dataclass(frozen=True)
class Conflict:
    unit: str | None  # None: a top-level field
    key: str
    ours: Any
    theirs: Any


def _units(doc: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    units = (doc or {}).get("units")
    if not isinstance(units, list):
        return {}
    return {u["id"]: u for u in units if isinstance(u, dict) and isinstance(u.get("id"), str)}


def _verified(unit: dict[str, Any] | None) -> bool:
    return bool(unit and unit.get("status") == "done" and isinstance(unit.get("evidence"), dict))


def _three_way(base: Any, ours: Any, theirs: Any) -> tuple[Any, bool]:
    """(value, conflicted): the side that changed, or ours when both made the same change."""
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    return ours, True


def _newer(a: Any, b: Any, key: str) -> Any:
    at_a = str(a.get(key, "")) if isinstance(a, dict) else ""
    at_b = str(b.get(key, "")) if isinstance(b, dict) else ""
    return b if at_b > at_a else a


def _pick_evidence(
    ours: dict[str, Any], theirs: dict[str, Any], in_history: Callable[[str], bool]
) -> dict[str, Any]:
    """Which side's done unit to keep when both are done with evidence."""
    if ours.get("evidence") == theirs.get("evidence"):
        return ours

    def known(unit: dict[str, Any]) -> bool:
        commit = unit["evidence"].get("commit")
        return isinstance(commit, str) and bool(commit) and in_history(commit)

    mine, other = known(ours), known(theirs)
    if mine != other:
        return ours if mine else theirs
    newer = _newer(ours["evidence"], theirs["evidence"], "verified_at")
    return theirs if newer is theirs["evidence"] else ours


def _merge_unit(
    base: dict[str, Any] | None,
    ours: dict[str, Any],
    theirs: dict[str, Any],
    in_history: Callable[[str], bool],
    conflicts: list[Conflict],
) -> dict[str, Any]:
    base = base or {}
    merged: dict[str, Any] = {}
    state_from: dict[str, Any] | None = None
    if _verified(ours) and _verified(theirs):
        state_from = _pick_evidence(ours, theirs, in_history)
    elif _verified(ours):
        state_from = ours
    elif _verified(theirs):
        state_from = theirs
    keys = list(ours) + [k for k in theirs if k not in ours]
    for key in keys:
        if state_from is not None and key in _STATE_KEYS:
            continue
        if key == "last_failure":
            a, b, was = ours.get(key), theirs.get(key), base.get(key)
            failure = b if a == was else a if b == was else _newer(a, b, "at")
            if failure is not None:
                merged[key] = failure
            continue
        value, conflicted = _three_way(base.get(key), ours.get(key), theirs.get(key))
        if conflicted and key == "status" and {ours.get(key), theirs.get(key)} <= _WORKING:
            value, conflicted = "in_progress", False  # work started on one side
        if conflicted:
            conflicts.append(Conflict(ours.get("id"), key, ours.get(key), theirs.get(key)))
        if value is not None:
            merged[key] = value
    if state_from is not None:
        for key in _STATE_KEYS:
            if state_from.get(key) is not None:
                merged[key] = state_from[key]
    return merged


def _union(ours: Any, theirs: Any) -> list[Any]:
    items = list(ours) if isinstance(ours, list) else []
    for item in theirs if isinstance(theirs, list) else []:
        if item not in items:
            items.append(item)
    return items


def merge_progress(
    base: dict[str, Any] | None,
    ours: dict[str, Any],
    theirs: dict[str, Any],
    in_history: Callable[[str], bool],
) -> tuple[dict[str, Any], list[Conflict]]:
    """The merged document and the conflicts left for a person (see the module docstring)."""
    conflicts: list[Conflict] = []
    base_units, our_units, their_units = _units(base), _units(ours), _units(theirs)
    units: list[dict[str, Any]] = []
    order = list(our_units) + [i for i in their_units if i not in our_units]
    for uid in order:
        mine, other, old = our_units.get(uid), their_units.get(uid), base_units.get(uid)
        if mine is not None and other is not None:
            units.append(_merge_unit(old, mine, other, in_history, conflicts))
        elif mine is not None:  # theirs removed it, or it is new in ours
            if old is None or mine != old or _verified(mine):
                units.append(mine)
        elif other is not None and (old is None or other != old or _verified(other)):
            units.append(other)
    merged: dict[str, Any] = {}
    keys = list(ours) + [k for k in theirs if k not in ours]
    for key in keys:
        if key == "units":
            merged[key] = units
        elif key == "actions":
            merged[key] = _union(ours.get(key), theirs.get(key))
        elif key == "schema_version":
            versions = [v for v in (ours.get(key), theirs.get(key)) if isinstance(v, int)]
            merged[key] = max(versions) if versions else ours.get(key)
        else:
            value, conflicted = _three_way((base or {}).get(key), ours.get(key), theirs.get(key))
            if conflicted:
                conflicts.append(Conflict(None, key, ours.get(key), theirs.get(key)))
            if value is not None:
                merged[key] = value
    return merged, conflicts
