"""One unit's block of progress.yaml rewritten without ruamel.yaml, byte for byte as the ruamel
path (:func:`resume_kit.progress_file.patch._rewrite_block`) writes it, for the plain layout
resume-kit itself writes.

:func:`rewrite` first emits the old unit, reading each scalar's quoting and each list's flow or
block style off the old block, and requires that to reproduce the old block exactly: so the
block holds no comment, anchor, tag or layout this emitter does not write, and its bounds are
right. Then it emits the new unit with the styles ruamel keeps (values that did not change keep
the node, and so its quotes) and those ruamel picks for new values. Whatever it cannot be sure
of (non-ASCII text, strings YAML 1.1 reads as something else, long lines, ...) gives None, and
the caller takes the ruamel path.
"""

from __future__ import annotations

import re

from resume_kit.core.lazy_regex import lazy
from resume_kit.core.typing_light import Any

# Plain scalars ruamel.yaml (YAML 1.2) resolves to something other than a string (so it quotes
# them): its implicit resolvers, each tried only for the first characters it is registered for.
_DIGITS = "0123456789"
_RESOLVED_12: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tTfF", lazy(r"^(?:true|True|TRUE|false|False|FALSE)$")),
    (
        "-+." + _DIGITS,
        lazy(
            r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
            |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
            |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
            |[-+]?\.(?:inf|Inf|INF)
            |\.(?:nan|NaN|NAN))$""",
            re.VERBOSE,
        ),
    ),
    (
        "-+" + _DIGITS,
        lazy(r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$"),
    ),
    ("<", lazy(r"^(?:<<)$")),
    ("~nN", lazy(r"^(?:~|null|Null|NULL)$")),
    (
        _DIGITS,
        lazy(
            r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
            |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
            (?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
            (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
            re.VERBOSE,
        ),
    ),
    ("=", lazy(r"^(?:=)$")),
    ("!&*", lazy(r"^(?:!|&|\*)$")),
)


def _resolves_12(text: str) -> bool:
    return any(text[0] in first and pattern.match(text) for first, pattern in _RESOLVED_12)


# What YAML 1.1 (PyYAML, which reads the file back) might take for a bool or a number, with a
# wide margin: ruamel writes these plain, libyaml would not read a string back.
_RESOLVED_11 = lazy(
    r"^(?:[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|[-+]?[0-9._][0-9_:.eE+-]*"
    r"|[-+]?\.[A-Za-z]+)$"
)
_MAX_SCALAR = 1000  # ruamel folds lines longer than its width (4096); stay well below
_INDICATORS = "#,[]{}&*!|>'\"%@`"


class _Unsure(Exception):
    """The emitter cannot say what ruamel would write."""


def _ascii_printable(text: str) -> bool:
    return all(" " <= ch <= "~" for ch in text)


def _plain_allowed(text: str, flow: bool) -> bool:
    """Whether ruamel writes this (printable ASCII, single-line) string plain."""
    if text[0] == " " or text[-1] == " ":
        return False
    if text.startswith(("---", "...")) or text[0] in "?:" or any(ch in "[]{}" for ch in text):
        raise _Unsure
    if text[0] in _INDICATORS:
        return False
    if text[0] == "-":
        if len(text) == 1:
            raise _Unsure
        if text[1] == " ":
            return False
    if ": " in text or " #" in text or text.endswith(":"):
        return False
    return not (flow and "," in text)


def fresh_style(text: str, flow: bool = False) -> str:
    """The style ruamel writes a new string in (``plain``, ``single``, ``double``, ``literal``); raises
    :class:`_Unsure` for the strings this emitter leaves to ruamel."""
    if "\n" in text:
        if flow or not _literal_ok(text):
            raise _Unsure
        return "literal"
    if not text:
        return "single"
    if not _ascii_printable(text) or len(text) > _MAX_SCALAR:
        raise _Unsure
    if _resolves_12(text):
        return "single"
    if _RESOLVED_11.match(text):
        raise _Unsure
    if _plain_allowed(text, flow):
        return "plain"
    return "double" if "'" in text else "single"


def _literal_ok(text: str) -> bool:
    lines = text.split("\n")
    return (
        len(text) <= _MAX_SCALAR * 4
        and all(line and _ascii_printable(line) and line == line.rstrip() for line in lines)
        and not lines[0].startswith(" ")
    )


def _scalar_text(value: Any, style: str, indent: int) -> str:
    """``value`` written in ``style`` (for a string), after ``key:`` or a dash; ``indent``: the
    column of the key (a literal block's lines go two further)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        shown = repr(value)
        if not re.fullmatch(r"-?[0-9]+\.[0-9]+", shown):
            raise _Unsure
        return shown
    if not isinstance(value, str):
        raise _Unsure
    if style == "literal":
        if not _literal_ok(value):
            raise _Unsure
        pad = " " * (indent + 2)
        return "|-\n" + "\n".join(pad + line for line in value.split("\n"))
    if "\n" in value or not _ascii_printable(value) or len(value) > _MAX_SCALAR:
        raise _Unsure
    if style == "plain":
        return value
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    if style == "double":
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise _Unsure


def _same(old: Any, new: Any) -> bool:
    """:func:`resume_kit.progress_file.roundtrip._same` on plain data: ruamel keeps the node."""
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool) and old == new
    if isinstance(new, str):
        return isinstance(old, str) and old == new
    if isinstance(new, int | float):
        return isinstance(old, int | float) and old == new
    return bool(old == new)


Path = tuple[Any, ...]
_QUOTED = ("single", "double", "literal")


class _Writer:
    """Appends text; when ``reference`` is given, every piece must equal the reference text at
    that point, and each scalar's style is read off it (and recorded in ``styles``)."""

    def __init__(self, reference: str | None, styles: dict[Path, str]) -> None:
        self.reference = reference
        self.styles = styles
        self.parts: list[str] = []
        self.pos = 0

    def put(self, piece: str) -> None:
        if self.reference is not None and not self.reference.startswith(piece, self.pos):
            raise _Unsure
        self.parts.append(piece)
        self.pos += len(piece)

    def peek_style(self, value: Any, flow: bool) -> str:
        """The old scalar's style (reference mode): its first character says it."""
        assert self.reference is not None
        if not isinstance(value, str):
            return "plain"
        first = self.reference[self.pos : self.pos + 1]
        style = {"'": "single", '"': "double", "|": "literal"}.get(first, "plain")
        if style == "plain" and fresh_style(value, flow) != "plain":
            raise _Unsure  # written plain though ruamel would quote it: not ours
        return style

    def text(self) -> str:
        return "".join(self.parts)


class _Emitter:
    """Writes a unit (or ledger entry) mapping the way ruamel's round trip dumps it (mapping
    indent 2, sequence indent ``dash + 2``, dash offset ``dash``)."""

    def __init__(self, writer: _Writer, dash: int):
        self.w = writer
        self.dash = dash

    # Each ``emit_*`` takes the old value (``has_old``: there was one at this path) so values
    # that did not change are written as they were; in reference mode old is new.

    def scalar(
        self, path: Path, old: Any, new: Any, has_old: bool, indent: int, flow: bool
    ) -> None:
        w = self.w
        if w.reference is not None:
            style = w.peek_style(new, flow)
            w.styles[path] = style
            value = new
        elif has_old and _same(old, new):
            style, value = self.w.styles.get(path, "plain"), old
        else:
            style = fresh_style(new, flow) if isinstance(new, str) else "plain"
            kept_type = w.styles.get(path) if has_old and isinstance(old, str) else None
            if isinstance(new, str) and "\n" not in new and kept_type in _QUOTED:
                # ruamel's CommentedMap gives a new string set on a key the type of the quoted
                # (or literal) string it replaces, so its style
                style = kept_type
            value = new
        if style == "literal" and flow:
            raise _Unsure
        w.put(_scalar_text(value, style, indent))

    def mapping(
        self, path: Path, old: Any, new: dict[str, Any], has_old: bool, prefix: str, indent: int
    ) -> None:
        if not new:
            raise _Unsure
        keep = has_old and isinstance(old, dict)
        if keep:
            keys = [k for k in old if k in new] + [k for k in new if k not in old]
        else:
            keys = list(new)
        for number, key in enumerate(keys):
            if not isinstance(key, str) or not re.fullmatch(r"[a-z_]+", key):
                raise _Unsure
            self.w.put((prefix if number == 0 else " " * indent) + key + ":")
            here = keep and key in old
            self.value((*path, key), old[key] if here else None, new[key], here, indent)

    def value(self, path: Path, old: Any, new: Any, has_old: bool, indent: int) -> None:
        w = self.w
        if isinstance(new, dict):
            w.put("\n")
            inner = indent + 2
            self.mapping(path, old, new, has_old, " " * inner, inner)
            return
        if isinstance(new, list):
            self.sequence(path, old, new, has_old, indent)
            return
        if new is None:
            w.put("\n")
            return
        w.put(" ")
        self.scalar(path, old, new, has_old, indent, flow=False)
        w.put("\n")

    def sequence(self, path: Path, old: Any, new: list[Any], has_old: bool, indent: int) -> None:
        w = self.w
        if new and all(isinstance(item, dict) for item in new):
            self.mapping_sequence(path, old, new, has_old, indent)
            return
        if not new or any(
            isinstance(item, dict | list)
            or item is None
            or (isinstance(item, str) and "\n" in item)
            for item in new
        ):
            raise _Unsure  # only lists of one-line scalars
        if w.reference is not None:
            flow = w.reference.startswith(" [", w.pos)
            w.styles[path] = "flow" if flow else "block"
            kept = True
        else:
            known = has_old and isinstance(old, list)
            flow = known and w.styles.get(path) == "flow"
            kept = known and len(old) == len(new) and all(map(_same, old, new))
        items = old if kept and w.reference is None else new
        if flow:
            w.put(" [")
            for number, item in enumerate(items):
                if number:
                    w.put(", ")
                self.scalar((*path, number), item, item, kept, indent, flow=True)
            w.put("]\n")
            return
        w.put("\n")
        for number, item in enumerate(items):
            w.put(" " * (indent + self.dash) + "- ")
            self.scalar((*path, number), item, item, kept, indent + self.dash + 2, flow=False)
            w.put("\n")

    def mapping_sequence(
        self, path: Path, old: Any, new: list[dict[str, Any]], has_old: bool, indent: int
    ) -> None:
        """A block list of mappings (a ledger entry's attempts). Such a list without an
        identity key, changed in any way, is written anew by ruamel (fresh styles); one whose
        items all carry ``id`` or ``key`` is matched item by item there: left to ruamel."""
        w = self.w
        if w.reference is not None:
            if w.reference.startswith(" [", w.pos):
                raise _Unsure
            kept = True
        else:
            kept = (
                has_old
                and isinstance(old, list)
                and len(old) == len(new)
                and all(map(_same, old, new))
            )
            from resume_kit.progress_file.roundtrip import identity_key

            if not kept and identity_key(new) is not None:
                raise _Unsure
        w.put("\n")
        prefix = " " * (indent + self.dash) + "- "
        for number, item in enumerate(new):
            self.mapping((*path, number), item, item, kept, prefix, indent + self.dash + 2)


def emit_unit(unit: dict[str, Any], dash: int) -> str | None:
    """A new unit's block as ruamel dumps it (every value in the style ruamel picks)."""
    try:
        writer = _Writer(None, {})
        _Emitter(writer, dash).mapping((), None, unit, False, " " * dash + "- ", dash + 2)
    except _Unsure:
        return None
    return writer.text()


def rewrite(block: str, old: dict[str, Any], new: dict[str, Any], dash: int) -> str | None:
    """The unit block ``block`` (its own lines, no trailing comments or blank lines), which
    holds ``old``, rewritten to hold ``new``; None when ``block`` is not exactly what this
    emitter writes for ``old``."""
    styles: dict[Path, str] = {}
    try:
        reading = _Writer(block, styles)
        _Emitter(reading, dash).mapping((), old, old, True, " " * dash + "- ", dash + 2)
        if reading.pos != len(block):
            return None
        writer = _Writer(None, styles)
        _Emitter(writer, dash).mapping((), old, new, True, " " * dash + "- ", dash + 2)
    except _Unsure:
        return None
    return writer.text()
