"""Rewrite only the units (or ledger entries) that changed in a progress file's text, keeping
everything else.

A full round-trip parse of a large progress file costs seconds (ruamel.yaml is pure Python),
yet a checkpoint changes one unit and a tool hook one ledger entry. ``patch_list`` finds each
item's block of a top-level list (``units``, ``actions``) in the text with a line scan,
re-renders only the changed blocks (so comments inside them survive), drops the blocks of
removed items (keeping the comments that lead into the next one) and appends new items.
Every rewritten block is parsed back and compared with the data it must hold; whenever the
layout is not the plain block style this expects, or a check fails, it returns None and the
caller falls back to the full round trip.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator

from resume_kit.core.timeutil import format_utc
from resume_kit.core.typing_light import Any

_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):(?:[ \t]+(?P<rest>.*))?$")
_DASH = re.compile(r"^( *)-(?: |$)")

# The top-level lists of mappings patch_list rewrites item by item, and each item's identity.
KEYED_LISTS = {"units": "id", "actions": "key"}


def _yaml_rt(indent: tuple[int, int]) -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=indent[0], offset=indent[1])
    return yaml


_STRICT_LOADER: Any = None


def _strict_loader() -> Any:
    """PyYAML's safe loader (libyaml's C version when it is there) that, like the round-trip
    parser, refuses a mapping with the same key twice instead of keeping the last one."""
    global _STRICT_LOADER
    if _STRICT_LOADER is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class StrictSafeLoader(base):  # type: ignore[misc,valid-type]
            def construct_mapping(self, node: Any, deep: bool = False) -> Any:
                seen: set[tuple[str, str]] = set()
                for key_node, _ in node.value:
                    if (
                        isinstance(key_node, yaml.ScalarNode)
                        and key_node.tag != "tag:yaml.org,2002:merge"
                    ):
                        key = (key_node.tag, key_node.value)
                        if key in seen:
                            raise yaml.constructor.ConstructorError(
                                "while constructing a mapping",
                                node.start_mark,
                                f"found duplicate key {key_node.value!r}",
                                key_node.start_mark,
                            )
                        seen.add(key)
                return super().construct_mapping(node, deep=deep)

        _STRICT_LOADER = StrictSafeLoader
    return _STRICT_LOADER


def safe_load(text: str) -> Any:
    """Plain data through PyYAML's safe loader; a duplicate key is an error."""
    import yaml

    return yaml.load(text, Loader=_strict_loader())


def normalise(value: Any) -> Any:
    """Plain data as the tool compares it: timestamps as ISO strings, ints in float slots kept."""
    import datetime as dt

    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, dt.datetime):
        return format_utc(value)
    return value


# a mapping value that is a literal or folded block scalar (``key: |``, ``key: >-``, ``key: |2``)
_BLOCK_SCALAR = re.compile(r":[ \t]+[|>][-+0-9]*[ \t]*(?:#.*)?$", re.MULTILINE)
# a line that starts so starts or ends a YAML document: never inside a list we patch
_DOCUMENT_MARKERS = ("---", "...")
_NOT_IN_A_LIST = (*_DOCUMENT_MARKERS, "\t")  # nor a tab at column 0


def _list_span(
    top_lines: Iterable[tuple[str, int, int]], name: str
) -> tuple[int, int | None] | None:
    """Where the block-style list ``name`` starts and ends (None: at the end), given the lines
    at column 0 as (line, where it starts, where the next line starts); None when the layout is
    not the plain block style :func:`patch_list` expects."""
    start = end = None
    seen: set[str] = set()
    for line, here, after in top_lines:
        if line.startswith(_NOT_IN_A_LIST):
            return None
        match = _TOP_KEY.match(line)
        if match is None:
            return None  # something at column 0 that is not a plain key: not our layout
        key = match.group(1)
        if key in seen:
            return None
        seen.add(key)
        if start is not None and end is None:
            end = here
        if key == name:
            rest = (match.group("rest") or "").strip()
            if rest and not rest.startswith("#"):
                return None  # flow style or an anchor: leave it to the full round trip
            start = after
    return None if start is None else (start, end)


def _list_region(lines: list[str], name: str) -> tuple[int, int] | None:
    """(first line after ``name:``, end line) of the block-style list ``name``, or None."""
    top = (
        (line, index, index + 1)
        for index, line in enumerate(lines)
        if line and (line[0] not in " \t#-" or line.startswith(_NOT_IN_A_LIST))
    )
    span = _list_span(top, name)
    if span is None:
        return None
    return span[0], len(lines) if span[1] is None else span[1]


def _item_starts(lines: list[str], start: int, end: int) -> tuple[list[int], int] | None:
    dash_indent: int | None = None
    starts: list[int] = []
    for index in range(start, end):
        match = _DASH.match(lines[index])
        if match is None:
            continue
        indent = len(match.group(1))
        if dash_indent is None:
            dash_indent = indent
        if indent == dash_indent:
            starts.append(index)
    if dash_indent is None:
        return None
    return starts, dash_indent


Layout = tuple[str, list[int], int, int]  # text (ending in a newline), item starts, end, dash


def list_layout(text: str, name: str) -> Layout | None:
    """Where each item's block of the top-level list ``name`` starts in ``text`` (character
    offsets), where the list ends, and the dash's indent; ``text`` comes back with a final
    newline added when it had none. None when the layout is not the plain block style
    :func:`patch_list` expects."""
    # splitlines() breaks lines there too: the line scan. One str.find per character: a regex
    # character class is 10x slower over a 4 MB file.
    if any(odd in text for odd in _ODD_BREAKS):
        return _layout_by_lines(text, name)
    if text and not text.endswith("\n"):
        text += "\n"
    top = ((text[first:last], first, last + 1) for first, last in _column_0_lines(text))
    span = _list_span(top, name)
    if span is None:
        return None
    start, end = span
    end = len(text) if end is None else end
    first = _DASH_LINE.search(text, start - 1, end)  # from the newline before start
    if first is None:
        return None
    dash_indent = len(first.group(1))
    # the items are the dashes at the first one's indent: those alone are searched for (a
    # literal prefix), not every dash of the units' lists
    items = re.compile("\n" + " " * dash_indent + "-(?= |\n)")
    starts = [dash.start() + 1 for dash in items.finditer(text, first.start(), end)]
    return text, starts, end, dash_indent


# Characters other than \n that str.splitlines() breaks a line at.
_ODD_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# The lines _list_region looks at: not blank, not indented, not a comment or a dash (but ---);
# each pattern starts at the newline before the line (a literal prefix re searches for fast).
_COLUMN_0 = re.compile(r"\n(?:[^ #\-\n]|---)[^\n]*")
_DASH_LINE = re.compile(r"\n( *)-(?= |\n)")


def _column_0_lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line :data:`_COLUMN_0` names, the first line included."""
    first = _COLUMN_0.match("\n" + text[: text.find("\n") + 1])
    if first is not None:
        yield 0, first.end() - 1
    for match in _COLUMN_0.finditer(text):
        yield match.start() + 1, match.end()


def _layout_by_lines(text: str, name: str) -> Layout | None:
    """:func:`list_layout` by a scan of ``text.splitlines()`` (any line break Python knows)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    bare = [line.rstrip("\r\n") for line in lines]
    region = _list_region(bare, name)
    if region is None:
        return None
    found = _item_starts(bare, *region)
    if found is None:
        return None
    line_starts, dash_indent = found
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return "".join(lines), [offsets[i] for i in line_starts], offsets[region[1]], dash_indent


def _render_items(items: list[Any], dash_indent: int) -> str:
    from resume_kit.progress_file.roundtrip import merge_into

    yaml = _yaml_rt((dash_indent + 2, dash_indent))
    buffer = io.StringIO()
    yaml.dump(merge_into(None, items), buffer)
    return buffer.getvalue()


def _split_trailer(block: str, dash_indent: int) -> tuple[str, str]:
    """(the item's own lines, the blank and comment lines that end the block): those lead into
    the next item or key and belong to it. When the item holds a block scalar (``notes: |``),
    a ``#`` line indented past the dash may be the scalar's last line: only comments at the
    dash's indent or less are taken off then."""
    lines = block.splitlines(keepends=True)
    scalar = _BLOCK_SCALAR.search(block) is not None
    keep = len(lines)
    while keep > 1:
        line = lines[keep - 1]
        text = line.lstrip()
        if text.strip() and not text.startswith("#"):
            break
        if text.strip() and scalar and len(line) - len(text) > dash_indent:
            break
        keep -= 1
    return "".join(lines[:keep]), "".join(lines[keep:])


def _rewrite_block(
    block: str, item: dict[str, Any], dash_indent: int, old_id: str, id_field: str
) -> str | None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from resume_kit.progress_file.roundtrip import load_quietly, merge_into

    # Trailing comment and blank lines go around ruamel (it drops a comment that ends a
    # document after a nested list) and are put back verbatim.
    block, trailer = _split_trailer(block, dash_indent)
    yaml = _yaml_rt((dash_indent + 2, dash_indent))
    try:
        node = load_quietly(yaml, block)
    except Exception:
        return None
    if not (
        isinstance(node, CommentedSeq) and len(node) == 1 and isinstance(node[0], CommentedMap)
    ):
        return None
    if node[0].get(id_field) != old_id:
        return None
    merge_into(node[0], item)
    buffer = io.StringIO()
    yaml.dump(node, buffer)
    return buffer.getvalue() + trailer


def _rewrite_fast(
    block: str, old: dict[str, Any], new: dict[str, Any], dash_indent: int
) -> str | None:
    """The block rewritten by our own emitter (no ruamel import), when it can be sure."""
    from resume_kit.progress_file.unit_block import rewrite

    own, trailer = _split_trailer(block, dash_indent)
    rewritten = rewrite(own, old, new, dash_indent)
    return None if rewritten is None else rewritten + trailer


def _holds(text: str, expected: list[Any]) -> bool:
    """Whether ``text``, ruamel's items to put in the file, reads back as ``expected`` and
    holds no document marker: ruamel ends a document whose last value is a block scalar that
    keeps its trailing blank lines (``|+``, ``|2+``) with "...", which would end the whole
    file there."""
    if any(line.startswith(_DOCUMENT_MARKERS) for line in text.splitlines()):
        return False
    try:
        return bool(normalise(safe_load(text)) == expected)
    except Exception:
        return False


def _pairing(
    old_items: list[dict[str, Any]], new_items: list[dict[str, Any]], id_field: str
) -> list[dict[str, Any] | None] | None:
    """For each old item, the new item its block becomes (None: the item was removed), or None
    when the change is not items changed, renamed, removed or appended in place."""
    old_ids = [u[id_field] for u in old_items]
    new_ids = [u[id_field] for u in new_items]
    if new_ids[: len(old_ids)] == old_ids:  # the common case, one C comparison: no rename
        return list(new_items[: len(old_items)])
    if len(new_ids) >= len(old_ids):
        kept = set(new_ids)
        gone = set(old_ids)
        for old_id, new_id in zip(old_ids, new_ids, strict=False):
            # a rename: the old id is gone and the new one is new (never a move)
            if old_id != new_id and (old_id in kept or new_id in gone):
                return None
        return list(new_items[: len(old_items)])
    by_id = {u[id_field]: u for u in new_items}
    if [i for i in old_ids if i in by_id] != new_ids:
        return None  # removals only, the rest in the same order
    return [by_id.get(old_id) for old_id in old_ids]


def patch_item(
    text: str,
    name: str,
    position: int,
    count: int,
    old: dict[str, Any],
    new: dict[str, Any],
    known: list[Any] | None = None,
) -> tuple[str, list[Any]] | None:
    """What :func:`patch_list` makes of ``text`` when only the item at ``position`` of the
    ``count`` items changed, from ``old`` to ``new``, and where the items' blocks are then
    ([starts, end, dash indent]); ``known``: where they are in ``text`` (the progress cache
    says; a block found not to be ``old``'s sends the search to the text itself)."""
    found: Layout | None = None
    if known is not None and _blocks_fit(known, count, len(text)):
        found = (text, known[0], known[1], known[2])
    else:
        found = list_layout(text, name)
    if found is None or len(found[1]) != count:
        return None
    text, starts, end, dash_indent = found
    bounds = [*starts, end]
    block = text[bounds[position] : bounds[position + 1]]
    rewritten = _rewrite_fast(block, old, new, dash_indent)
    if rewritten is None and known is not None:
        return patch_item(text, name, position, count, old, new)
    if rewritten is None:
        id_field = KEYED_LISTS[name]
        rewritten = _rewrite_block(block, new, dash_indent, old[id_field], id_field)
        if rewritten is None or not _holds(rewritten, [new]):
            return None
    patched = text[: bounds[position]] + rewritten + text[bounds[position + 1] :]
    return patched, _blocks_after(starts, end, dash_indent, position, len(rewritten) - len(block))


def patch_item_ascii(
    data: bytes,
    position: int,
    count: int,
    old: dict[str, Any],
    new: dict[str, Any],
    known: list[Any],
) -> tuple[bytes, list[Any]] | None:
    """:func:`patch_item` of a unit on the bytes of an ASCII text, where ``known``'s character
    offsets are byte offsets: the block is spliced in without a str of the whole text (in a
    fresh process a 4 MB str sliced, joined and encoded took ~7-9 ms, the bytes joined ~2.3
    ms). None when our emitter cannot rewrite the block as it stands there (then
    :func:`patch_item` on the text decides)."""
    if not _blocks_fit(known, count, len(data)):
        return None
    starts, end, dash_indent = known
    bounds = [*starts, end]
    block = data[bounds[position] : bounds[position + 1]].decode("ascii")
    rewritten = _rewrite_fast(block, old, new, dash_indent)
    if rewritten is None:
        return None
    view = memoryview(data)
    patched = b"".join(
        (view[: bounds[position]], rewritten.encode("utf-8"), view[bounds[position + 1] :])
    )
    return patched, _blocks_after(starts, end, dash_indent, position, len(rewritten) - len(block))


def _blocks_fit(known: list[Any], count: int, size: int) -> bool:
    """Whether ``known`` ([starts, end, dash indent]) can be the ``count`` blocks of a text of
    ``size`` characters (the cache may describe another version of the file)."""
    return len(known[0]) == count and known[1] <= size


def _blocks_after(
    starts: list[int], end: int, dash_indent: int, position: int, shift: int
) -> list[Any]:
    """The blocks ([starts, end, dash indent]) once the block at ``position`` grew by ``shift``
    characters."""
    moved = [*starts[: position + 1], *(start + shift for start in starts[position + 1 :])]
    return [moved, end + shift, dash_indent]


def blocks_of(text: str, name: str) -> list[Any] | None:
    """Where the blocks of the top-level list ``name`` are in ``text`` ([starts, end, dash
    indent], as :func:`patch_item` takes them); None when :func:`list_layout` finds none."""
    found = list_layout(text, name)
    if found is None or found[0] != text:
        return None
    return [found[1], found[2], found[3]]


def patch_list(
    text: str, name: str, old_items: list[dict[str, Any]], new_items: list[dict[str, Any]]
) -> str | None:
    """``text`` with the top-level list ``name`` (one of :data:`KEYED_LISTS`) changed from
    ``old_items`` to ``new_items``, or None."""
    if not old_items or not new_items:
        return None
    id_field = KEYED_LISTS[name]
    pairing = _pairing(old_items, new_items, id_field)
    if pairing is None:
        return None
    found = list_layout(text, name)
    if found is None:
        return None
    text, starts, region_end, dash_indent = found
    if len(starts) != len(old_items):
        return None
    bounds = [*starts, region_end]
    pieces: list[str] = []
    copied = 0  # the text before this offset is in pieces; the unchanged runs go in whole
    for index, old in enumerate(old_items):
        new = pairing[index]
        if new is old or (new is not None and new == old):  # `is`: the caller's unchanged data
            continue
        pieces.append(text[copied : bounds[index]])
        block = text[bounds[index] : bounds[index + 1]]
        copied = bounds[index + 1]
        if new is None:
            # removed: its own lines go, the comments leading into what follows stay
            pieces.append(_split_trailer(block, dash_indent)[1])
            continue
        # Our emitter's blocks are not read back here: it refuses whatever it cannot be sure
        # of, and the property tests (tests/unit/test_unit_block.py) read every block it
        # writes back through PyYAML. Reading it here cost a PyYAML import (~25 ms) on every
        # verify-next.
        rewritten = _rewrite_fast(block, old, new, dash_indent)
        if rewritten is None:
            rewritten = _rewrite_block(block, new, dash_indent, old[id_field], id_field)
            if rewritten is None or not _holds(rewritten, [new]):
                return None
        pieces.append(rewritten)
    if len(new_items) > len(old_items):
        added = new_items[len(old_items) :]
        rendered = _render_items(added, dash_indent)
        if not _holds(rendered, added):
            return None
        # New items go after the last item, before blank lines or comments that lead into
        # the next top-level key.
        if copied < region_end:  # the last item is unchanged: its block is still in text
            pieces.append(text[copied : bounds[-2]])
            pieces.append(text[bounds[-2] : region_end])
            copied = region_end
        last = pieces.pop()
        last_lines = last.splitlines(keepends=True)
        keep = len(last_lines)
        while keep > 1 and (
            not last_lines[keep - 1].strip() or last_lines[keep - 1].startswith("#")
        ):
            keep -= 1
        pieces.append("".join(last_lines[:keep]) + rendered + "".join(last_lines[keep:]))
    pieces.append(text[copied:])
    return "".join(pieces)
