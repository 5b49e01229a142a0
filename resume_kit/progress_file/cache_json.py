"""The progress cache's JSON text: written whole, or, when a save changed a few units of a large
file, the previous text with those units' JSON replaced (json.dumps of a 10,000-unit model costs
more than the rest of a checkpoint's write). The splice gives exactly what the whole dump gives."""

from __future__ import annotations

import json

from resume_kit.core.typing_light import Any

FORMAT = 1


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def payload(digest: str, data: dict[str, Any]) -> str:
    """The cache file's text for ``data`` (the model of the progress text with ``digest``)."""
    return _dumps({"format": FORMAT, "digest": digest, "data": data})


def digest_of(text: str) -> str | None:
    """The digest a cache text written by :func:`payload` names (checked again by the splice)."""
    head = f'{{"format": {FORMAT}, "digest": "'
    value = text[len(head) : len(head) + 64]
    return value if text.startswith(head) and len(value) == 64 else None


def _skeleton(digest: str, data: dict[str, Any]) -> tuple[str, str] | None:
    """``payload(digest, data)`` before and after its units' JSON; None without a units list."""
    skeleton = payload(digest, {**data, "units": []})
    marker = skeleton.find('"units": []')
    if marker < 0:
        return None
    cut = marker + len('"units": [')
    return skeleton[:cut], skeleton[cut:]


def _split(text: str, digest: str, data: dict[str, Any]) -> tuple[str, str, str] | None:
    """(before the units, the units' JSON, after them) of ``text``, which must be
    ``payload(digest, data)`` around its units; None when it is not that."""
    found = _skeleton(digest, data)
    if found is None:
        return None
    head, tail = found
    if len(text) < len(head) + len(tail) or not text.startswith(head) or not text.endswith(tail):
        return None
    return head, text[len(head) : len(text) - len(tail)], tail


def spliced(
    old_text: str,
    old_digest: str,
    old_data: dict[str, Any],
    new_digest: str,
    new_data: dict[str, Any],
) -> str | None:
    """``payload(new_digest, new_data)`` made from ``old_text`` (``payload(old_digest,
    old_data)``) when the same units, in the same order, changed only in place; else None.
    Both are data as ``to_data`` writes it, one JSON type per field: a unit equal to its old
    self (``==``) is taken as unchanged, which ``0 == False`` or ``1 == 1.0`` would defeat."""
    old_units, new_units = old_data.get("units"), new_data.get("units")
    if not isinstance(old_units, list) or not isinstance(new_units, list) or not old_units:
        return None
    if len(old_units) != len(new_units):
        return None
    old_parts = _split(old_text, old_digest, old_data)
    new_skeleton = _skeleton(new_digest, new_data)
    if old_parts is None or new_skeleton is None or old_parts[1] == "":
        return None
    units = old_parts[1]
    for old, new in zip(old_units, new_units, strict=True):
        if old is new or old == new:  # `is`: a dict's == compares every key (~2 ms on 10,000)
            continue
        if not isinstance(old, dict) or not isinstance(new, dict) or old.get("id") != new.get("id"):
            return None
        before = _dumps(old)
        # A unit's object (its quotes unescaped) cannot sit inside a string, and ids are
        # unique: one match is that unit.
        at = units.find(before)
        if at < 0 or units.find(before, at + 1) >= 0:
            return None
        units = units[:at] + _dumps(new) + units[at + len(before) :]
    return new_skeleton[0] + units + new_skeleton[1]
