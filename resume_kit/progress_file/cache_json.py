"""The progress cache's text: a header line, then the model's data as one JSON document with
each unit on a line of its own, then up to :data:`MAX_TAILS` tail lines.

The header names the format, the key (BLAKE2b-256) of the progress text the data is the model
of, the units' ids, statuses and non-empty ``after`` lists (all that verify-next reads of the
units it does not run), each a column: JSON reads 10,000 strings in a list about three times
faster than 10,000 ``[id, status, after]`` lists; where each unit's line starts, from the
first's (a unit is cut out of the text when read: splitting 4.4 MB into 10,000 strings cost
~7 ms of a fresh process); and where the units' blocks start in the progress text when
known. A command that reads every unit parses the data whole (:func:`data_of`); verify-next
parses the header and the one unit it runs (:class:`CachedRows`). ``json.dumps`` writes a
newline inside a string as ``\\n``, so the lines are the units'.

A checkpoint changes one unit. Its cache is the previous text with a tail line appended
(:meth:`CachedRows.tail`): the new key, the unit's position, its data, and how far the blocks
after it moved. Parsing and dumping 10,000 units, or even joining and writing their 4 MB
again, cost more than the rest of a checkpoint's write. A text's key is its last tail's (the
header's when it has none); a torn append leaves a last line without its newline, and such a
text is no cache at all. After :data:`MAX_TAILS` tails the next checkpoint writes the text
whole again.
"""

from __future__ import annotations

import json
from itertools import accumulate

from resume_kit.core.typing_light import Any, cast

# 3: keyed by BLAKE2b-256, no longer SHA-256; 4: tail lines; 5: columns; 6: where each line
# starts (4 to 6: 2026-12-06)
FORMAT = 6
_HEAD = f'{{"format": {FORMAT}, "digest": "'
_TAIL_HEAD = '{"digest": "'
_OPEN_UNITS = '"units": ['
_END = "]}\n"
_UNITS_END = "\n" + _END  # after the last unit's line
MAX_TAILS = 16  # then a checkpoint writes the whole text: loads apply at most this many

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


def _starts(rows: list[str]) -> list[int]:
    """Where each of ``rows`` starts when they are written one a line, from the first's start."""
    return list(accumulate((len(row) + 1 for row in rows[:-1]), initial=0))


class _Lines:
    """The units' lines of a cache text, each cut out of the text when asked for, with those
    given since (tails, a replaced unit) in place of theirs."""

    __slots__ = ("_end", "_first", "_given", "_starts", "_text")

    def __init__(self, text: str, first: int, starts: list[Any], end: int) -> None:
        self._text = text
        self._first = first  # where the first unit's line starts
        self._starts = starts  # each line's start from there, as the header says
        self._end = end  # where the last line ends
        self._given: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._starts)

    def line(self, position: int) -> str:
        """The line at ``position`` (ValueError when the header's start for it, or for the
        next one, is not where a line starts)."""
        given = self._given.get(position)
        if given is not None:
            return given
        starts, first = self._starts, self._first
        start = starts[position]
        stop = starts[position + 1] if position + 1 < len(starts) else self._end - first + 1
        if type(start) is not int or type(stop) is not int or not 0 <= start < stop - 1:
            raise ValueError("a unit's line is not where the header says")
        start, stop = first + start, first + stop - 1
        text = self._text
        if (
            stop > self._end
            or text[start - 1] != "\n"
            or text[stop] != "\n"
            or text.find("\n", start, stop) >= 0
        ):
            raise ValueError("a unit's line is not where the header says")
        return text[start:stop]

    def all(self) -> list[str]:
        """Every line (ValueError when there are not as many as the header says)."""
        lines = self._text[self._first : self._end].split("\n")
        if len(lines) != len(self._starts):
            raise ValueError("not as many lines as units")
        for position, line in self._given.items():
            lines[position] = line
        return lines

    def give(self, position: int, line: str) -> None:
        self._given[position] = line

    def given(self, position: int, line: str) -> _Lines:
        """These lines with ``line`` at ``position`` (a copy: these stay)."""
        copy = _Lines(self._text, self._first, self._starts, self._end)
        copy._given = {**self._given, position: line}
        return copy


def _written(header: dict[str, Any], opening: str, rows: list[str]) -> tuple[str, _Lines]:
    """The text of ``header`` (its ``rows`` set here), ``opening`` and ``rows``, and its lines."""
    header["rows"] = _starts(rows)
    text = _text(header, opening, rows)
    first = text.find("\n") + 1 + len(opening) + 1
    return text, _Lines(text, first, header["rows"], len(text) - len(_UNITS_END))


class Columns:
    """Each unit's id, status and ``after`` (held when not empty), by position."""

    __slots__ = ("after", "ids", "statuses")

    def __init__(self, ids: list[Any], statuses: list[Any], after: dict[int, Any]) -> None:
        self.ids = ids
        self.statuses = statuses
        self.after = after

    @classmethod
    def of_units(cls, units: list[Any]) -> Columns:
        return cls(
            [unit.get("id") for unit in units],
            [unit.get("status") for unit in units],
            {i: unit["after"] for i, unit in enumerate(units) if unit.get("after")},
        )

    def entry(self, position: int) -> list[Any]:
        """[id, status, after] of the unit at ``position``."""
        return [self.ids[position], self.statuses[position], self.after.get(position, [])]

    def set(self, position: int, entry: list[Any]) -> None:
        self.ids[position], self.statuses[position] = entry[0], entry[1]
        if entry[2]:
            self.after[position] = entry[2]
        else:
            self.after.pop(position, None)

    def copy(self) -> Columns:
        return Columns(list(self.ids), list(self.statuses), dict(self.after))


def _header(digest: str, columns: Columns, blocks: Blocks | None) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "digest": digest,
        "ids": columns.ids,
        "statuses": columns.statuses,
        "after": [[position, columns.after[position]] for position in sorted(columns.after)],
        "blocks": blocks,
    }


def _columns(header: Any) -> Columns | None:
    """The columns of a parsed header, or None when they are not in the shape written."""
    if type(header) is not dict:
        return None
    ids, statuses, pairs = header.get("ids"), header.get("statuses"), header.get("after")
    if type(ids) is not list or type(statuses) is not list or type(pairs) is not list:
        return None
    if len(statuses) != len(ids):
        return None
    after: dict[int, Any] = {}
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not int:
            return None
        if not 0 <= pair[0] < len(ids) or pair[0] in after or not pair[1]:
            return None
        after[pair[0]] = pair[1]
    return Columns(ids, statuses, after)


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
    return _written(_header(digest, Columns.of_units(units), blocks), opening, rows)[0]


def digest_of(text: str) -> str | None:
    """The digest a cache text written by :func:`payload` and :meth:`CachedRows.tail` names."""
    return digest_in(text, text)


HEAD_SIZE = len(_HEAD) + 64  # what digest_in needs of a text's start


def digest_in(start: str, end: str) -> str | None:
    """:func:`digest_of` the text that starts with ``start`` and ends with ``end`` (parts of
    it: its first :data:`HEAD_SIZE` characters, and a last part holding its last line and the
    newline before it)."""
    if not start.startswith(_HEAD):
        return None
    if end.endswith(_END):
        value = start[len(_HEAD) : HEAD_SIZE]
    elif end.endswith("\n"):
        last = end.rfind("\n", 0, len(end) - 1) + 1
        if last == 0 or not end.startswith(_TAIL_HEAD, last):
            return None  # the header alone, or not a tail
        value = end[last + len(_TAIL_HEAD) : last + len(_TAIL_HEAD) + 64]
    else:
        return None  # a torn append
    return value if len(value) == 64 else None


def _split(text: str) -> tuple[str, list[Any]]:
    """The text :func:`payload` wrote, and the tails after it, parsed (ValueError when they
    are not in the shape :meth:`CachedRows.tail` writes)."""
    if text.endswith(_END):
        return text, []
    found = text.rfind(_UNITS_END)
    if found < 0 or not text.endswith("\n"):
        raise ValueError("no end of the data")
    end = found + len(_UNITS_END)
    tails = [json.loads(line) for line in text[end:-1].split("\n")]
    for tail in tails:
        if type(tail) is not dict or list(tail) != ["digest", "position", "shift", "entry", "row"]:
            raise ValueError("not a tail")
        if type(tail["position"]) is not int or type(tail["shift"]) not in (int, type(None)):
            raise ValueError("not a tail")
    return text[:end], tails


def data_of(text: str) -> Any:
    """The data a cache text holds, parsed whole (ValueError when it is not JSON)."""
    base, tails = _split(text)
    data = json.loads(base[base.find("\n") + 1 :])
    for tail in tails:
        units = data.get("units") if type(data) is dict else None
        if type(units) is not list or not 0 <= tail["position"] < len(units):
            raise ValueError("a tail for no unit")
        units[tail["position"]] = tail["row"]
    return data


class CachedRows:
    """A cache text's units, each parsed when asked for."""

    def __init__(
        self,
        columns: Columns,
        blocks: Blocks | None,
        opening: str,
        rows: _Lines,
        tails: int = 0,
    ) -> None:
        self.columns = columns
        self.blocks = blocks
        self.tails = tails  # how many tail lines the text has
        self._opening = opening
        self._rows = rows  # each unit's JSON and the comma after it (the last has none)

    @classmethod
    def of(cls, text: str) -> CachedRows | None:
        """The rows of ``text``, or None when it is not in the shape :func:`payload` and
        :meth:`tail` write."""
        header_end = text.find("\n")
        try:
            header = json.loads(text[:header_end])
            base, tails = _split(text)
        except ValueError:
            return None
        columns = _columns(header)
        if columns is None:
            return None
        count, starts = len(columns.ids), header.get("rows")
        if count == 0 or type(starts) is not list or len(starts) != count or starts[0] != 0:
            return None
        opening_end = base.find("\n", header_end + 1)
        opening = base[header_end + 1 : opening_end]
        if opening_end < 0 or not opening.endswith(_OPEN_UNITS) or not base.endswith(_UNITS_END):
            return None
        units_end = len(base) - len(_UNITS_END)
        if opening_end + 1 >= units_end:
            return None  # no line for the units
        rows, moves = _Lines(text, opening_end + 1, starts, units_end), []
        for tail in tails:
            position, entry = tail["position"], tail["entry"]
            if not 0 <= position < count or type(entry) is not list or len(entry) != 3:
                return None
            columns.set(position, entry)
            rows.give(position, _row(tail["row"], position == count - 1))
            moves.append((position, tail["shift"]))
        blocks = header.get("blocks")
        blocks = _moved(blocks, moves) if _plain_blocks(blocks, count) else None
        if moves and not _plain_blocks(blocks, count):
            blocks = None
        return cls(columns, blocks, opening, rows, len(tails))

    def rest(self) -> Any:
        """The data without its units (ValueError when it is not JSON)."""
        rest = json.loads(self._opening + "]}")
        if type(rest) is not dict:
            raise ValueError("the data is not a mapping")
        del rest["units"]
        return rest

    def row(self, position: int) -> Any:
        """The data of the unit at ``position`` (ValueError when it is not JSON)."""
        text = self._rows.line(position)
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
        try:
            rows = self._rows.all()
        except ValueError:
            return None
        last = len(units) - 1
        return [
            row if new is old or new == old else _row(new, i == last)  # `is`: 2 ms on 10,000
            for i, (row, new, old) in enumerate(zip(rows, units, loaded, strict=True))
        ]

    def replaced(
        self, position: int, unit: dict[str, Any], digest: str, blocks: Blocks | None
    ) -> tuple[str, CachedRows]:
        """The cache text, and its rows, for ``unit`` in place of the one at ``position``, of
        the progress text with ``digest`` whose blocks are ``blocks`` (ValueError when this
        text's lines are not as many as its units)."""
        columns, rows = self._with(position, unit)
        text, lines = _written(_header(digest, columns, blocks), self._opening, rows.all())
        return text, CachedRows(columns, blocks, self._opening, lines)

    def tail(
        self, position: int, unit: dict[str, Any], digest: str, blocks: Blocks | None
    ) -> tuple[str, CachedRows] | None:
        """The tail line that makes this text the one :meth:`replaced` would write, and the
        rows it then holds; None when the text should be written whole: it has
        :data:`MAX_TAILS` tails already, or ``blocks`` is not its blocks with those after
        ``position`` moved (one offset apart)."""
        if self.tails >= MAX_TAILS:
            return None
        shift = _shift(self.blocks, blocks, position)
        if shift is None and blocks is not None:
            return None
        columns, rows = self._with(position, unit)
        line = _dumps(
            {"digest": digest, "position": position, "shift": shift,
             "entry": columns.entry(position), "row": unit}
        )  # fmt: skip
        return line + "\n", CachedRows(columns, blocks, self._opening, rows, self.tails + 1)

    def _with(self, position: int, unit: dict[str, Any]) -> tuple[Columns, _Lines]:
        """The columns and the rows with ``unit`` at ``position`` (copies: this text's stay)."""
        columns = self.columns.copy()
        columns.set(position, _entry(unit))
        return columns, self._rows.given(position, _row(unit, position == len(self._rows) - 1))


def _shift(old: Blocks | None, new: Blocks | None, position: int) -> int | None:
    """How far ``new``'s blocks after ``position`` are from ``old``'s, when that is all that
    differs (checked where it shows: the block at ``position``, the next one and the end)."""
    if old is None or new is None or len(old[0]) != len(new[0]) or old[2] != new[2]:
        return None
    shift: int = new[1] - old[1]
    if new[0][position] != old[0][position]:
        return None
    following = position + 1
    if following < len(new[0]) and new[0][following] != old[0][following] + shift:
        return None
    return shift


def _moved(blocks: Any, moves: list[tuple[int, int | None]]) -> Any:
    """``blocks`` with the starts after each move's position, and the end, moved by its
    shift (one pass for all the moves); None when a move's shift is unknown."""
    if not moves:
        return blocks
    starts, end, indent = blocks
    deltas = [0] * (len(starts) + 1)
    for position, shift in moves:
        if shift is None:
            return None
        deltas[position + 1] += shift
    total, moved = 0, []
    for start, delta in zip(starts, deltas, strict=False):
        total += delta
        moved.append(start + total)
    return [moved, end + sum(deltas), indent]


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
