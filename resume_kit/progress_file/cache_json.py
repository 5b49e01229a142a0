"""The progress cache's text: a header line, then the model's data as one JSON document with
each unit on a line of its own.

The header names the format, the key (BLAKE2b-256) of the progress text the data is the model
of, each unit's id, status and ``after`` (all that verify-next reads of the units it does not
run), and where the units' blocks start in that text when known. A command that reads every
unit parses the data whole (:func:`data_of`); verify-next parses the header and the one unit
it runs (:class:`CachedRows`), and after a checkpoint of that unit writes the previous text
with its line and its index entry replaced: parsing and dumping 10,000 units cost more than
the rest of a checkpoint's write. ``json.dumps`` writes a newline inside a string as ``\\n``,
so the lines are the units'.
"""

from __future__ import annotations

import json

from resume_kit.core.typing_light import Any, cast

FORMAT = 3  # 3: keyed by BLAKE2b-256, no longer SHA-256 (2026-12-06)
_HEAD = f'{{"format": {FORMAT}, "digest": "'
_OPEN_UNITS = '"units": ['

# Where the units' blocks start in the progress text, where the list ends, and the dash's
# indent (progress_file/patch.list_layout): [[start, ...], end, indent].
Blocks = list[Any]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _entry(unit: Any) -> list[Any]:
    return [unit.get("id"), unit.get("status"), unit.get("after", [])]


def _text(header: dict[str, Any], opening: str, rows: list[str]) -> str:
    if not rows:
        return f"{_dumps(header)}\n{opening}]}}\n"
    return "\n".join([_dumps(header), opening, *rows, "]}", ""])  # one copy of 4 MB, not three


def _header(digest: str, index: list[Any], blocks: Blocks | None) -> dict[str, Any]:
    return {"format": FORMAT, "digest": digest, "index": index, "blocks": blocks}


def _row(unit: Any, last: bool) -> str:
    return _dumps(unit) if last else _dumps(unit) + ","


def payload(
    digest: str,
    data: dict[str, Any],
    blocks: Blocks | None = None,
    rows: list[str] | None = None,
) -> str:
    """The cache file's text for ``data`` (``to_data`` of the model of the progress text with
    ``digest``, a list of units included); ``blocks``: where its units' blocks are, if known;
    ``rows``: the units' lines, when :meth:`CachedRows.rows_for` has them."""
    units = cast(list[dict[str, Any]], data["units"])
    rest = {key: value for key, value in data.items() if key != "units"}
    opening = _dumps(rest)[:-1] + (", " if rest else "") + _OPEN_UNITS
    if rows is None:
        rows = [_row(unit, i == len(units) - 1) for i, unit in enumerate(units)]
    return _text(_header(digest, [_entry(u) for u in units], blocks), opening, rows)


def digest_of(text: str) -> str | None:
    """The digest a cache text written by :func:`payload` names."""
    value = text[len(_HEAD) : len(_HEAD) + 64]
    return value if text.startswith(_HEAD) and len(value) == 64 else None


def data_of(text: str) -> Any:
    """The data a cache text holds, parsed whole (ValueError when it is not JSON)."""
    return json.loads(text[text.find("\n") + 1 :])


class CachedRows:
    """A cache text's units, each parsed when asked for."""

    def __init__(self, header: dict[str, Any], opening: str, rows: list[str]) -> None:
        self.index: list[Any] = header["index"]
        self.blocks: Blocks | None = header["blocks"]
        self._opening = opening
        self._rows = rows  # each unit's JSON and the comma after it (the last has none)

    @classmethod
    def of(cls, text: str) -> CachedRows | None:
        """The rows of ``text``, or None when it is not in the shape :func:`payload` writes."""
        try:
            header = json.loads(text[: text.find("\n")])
        except ValueError:
            return None
        if type(header) is not dict or type(header.get("index")) is not list:
            return None
        lines = text.split("\n")
        count = len(header["index"])
        if count == 0 or len(lines) != count + 4 or lines[-2:] != ["]}", ""]:
            return None
        if not lines[1].endswith(_OPEN_UNITS):
            return None
        if not _plain_blocks(header.get("blocks"), count):
            header["blocks"] = None
        return cls(header, lines[1], lines[2:-2])

    def rest(self) -> Any:
        """The data without its units (ValueError when it is not JSON)."""
        rest = json.loads(self._opening + "]}")
        if type(rest) is not dict:
            raise ValueError("the data is not a mapping")
        del rest["units"]
        return rest

    def row(self, position: int) -> Any:
        """The data of the unit at ``position`` (ValueError when it is not JSON)."""
        text = self._rows[position]
        if position < len(self._rows) - 1:
            if text[-1:] != ",":
                raise ValueError("a unit's line without its comma")
            text = text[:-1]
        return json.loads(text)

    def rows_for(self, units: list[Any], loaded: Any) -> list[str] | None:
        """The lines of ``units``, this text's line for each unit equal to the one at its
        position in ``loaded`` (the data this text holds); None when they are not as many."""
        if type(loaded) is not list or not len(units) == len(loaded) == len(self._rows):
            return None
        last = len(units) - 1
        return [
            row if new is old or new == old else _row(new, i == last)  # `is`: 2 ms on 10,000
            for i, (row, new, old) in enumerate(zip(self._rows, units, loaded, strict=True))
        ]

    def replaced(
        self, position: int, unit: dict[str, Any], digest: str, blocks: Blocks | None
    ) -> tuple[str, CachedRows]:
        """The cache text, and its rows, for ``unit`` in place of the one at ``position``, of
        the progress text with ``digest`` whose blocks are ``blocks``."""
        index, rows = list(self.index), list(self._rows)
        index[position] = _entry(unit)
        rows[position] = _row(unit, position == len(rows) - 1)
        header = _header(digest, index, blocks)
        return _text(header, self._opening, rows), CachedRows(header, self._opening, rows)


def _plain_blocks(blocks: Any, count: int) -> bool:
    """Whether ``blocks`` is [[count ascending offsets], end, indent] (checked against the
    text where used)."""
    if type(blocks) is not list or len(blocks) != 3:
        return False
    starts, end, indent = blocks
    if type(starts) is not list or len(starts) != count or type(end) is not int:
        return False
    if type(indent) is not int or not 0 <= indent <= 64:
        return False
    previous = -1
    for start in starts:
        if type(start) is not int or start <= previous:
            return False
        previous = start
    return end > previous
