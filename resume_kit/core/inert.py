"""Inert text: untrusted values made safe to quote in Markdown that a model reads.

One-line values have their control characters and newlines escaped and sit in code spans whose
backtick run is longer than any inside; multi-line values sit in fences longer than any backtick
run inside; tag-like ``<`` is escaped so ``</context>`` in a file name cannot close a wrapper;
prose sits in a blockquote that can only hold paragraphs. Also the one clip (cut with ``…``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from resume_kit.core.escape import escape_controls

MAX_VALUE_CHARS = 240  # one-line values longer than this are cut (paths, todos, subjects)
MAX_BLOCK_LINE_CHARS = 400

# A tag start (``</context>``, ``<system>``, ``<!--``) is escaped; Python's pseudo-names in
# tracebacks (``<module>``, ``<listcomp>`` …) are not tags and stay readable.
_TAG_START = re.compile(
    r"<(?=[/!?A-Za-z])(?!(?:module|lambda|listcomp|dictcomp|setcomp|genexpr|stdin|string)>)"
)
BACKTICK_RUN = re.compile(r"`+")


def redacted(text: str) -> str:
    """``text`` with secrets replaced by ``[REDACTED:kind]`` (resume_kit.infra.redact)."""
    from resume_kit.infra.redact import redact

    return redact(text)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis (at least one character
    of ``text`` is kept)."""
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def squash(text: object, limit: int) -> str:
    """``text`` on one line (every run of whitespace one space), clipped to ``limit``."""
    return clip(" ".join(str(text).split()), limit)


def one_line(text: object, limit: int = MAX_VALUE_CHARS) -> str:
    """Redacted, control characters and newlines escaped, tag starts escaped, length capped."""
    value = redacted(str(text))
    value = escape_controls(value)
    value = _TAG_START.sub("&lt;", value)
    return clip(value, limit)


def _ticks_pair_up(value: str) -> bool:
    """Whether every backtick run on this line closes as a code span (CommonMark pairing)."""
    if "\\`" in value:
        return False  # a backslash-escaped backtick pairs differently outside code spans
    runs = [len(m.group()) for m in BACKTICK_RUN.finditer(value)]
    i = 0
    while i < len(runs):
        closing = next((k for k in range(i + 1, len(runs)) if runs[k] == runs[i]), None)
        if closing is None:
            return False
        i = closing + 1
    return True


def plain(text: object, limit: int = MAX_VALUE_CHARS) -> str:
    """A one-line value shown as prose (titles, finding messages): like :func:`one_line`, and a
    backtick that would open a code span running into later lines becomes ``'``."""
    value = one_line(text, limit)
    return value if _ticks_pair_up(value) else value.replace("`", "'")


def block_lines(text: str | Iterable[str], limit: int = MAX_BLOCK_LINE_CHARS) -> list[str]:
    """Lines of a multi-line value, each made inert like :func:`one_line` (tabs kept)."""
    joined = text if isinstance(text, str) else "\n".join(str(t) for t in text)
    # Redact the whole text first: a secret may span lines (a PEM block).
    out: list[str] = []
    for part in redacted(joined).splitlines():
        part = escape_controls(part, keep="\t")
        out.append(clip(_TAG_START.sub("&lt;", part), limit))
    return out


def code_span(value: str) -> str:
    """An inline code span that no backtick inside ``value`` can close (value already inert)."""
    if not value:
        return '""'
    longest = max((len(run) for run in BACKTICK_RUN.findall(value)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if value.startswith(("`", " ")) or value.endswith(("`", " ")) else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def code(text: object, limit: int = MAX_VALUE_CHARS) -> str:
    """One untrusted value as a safe inline code span."""
    return code_span(one_line(text, limit))


def fence(lines: Sequence[str], info: str = "text") -> str:
    """A fenced block (lines already inert) that no line inside can close or open anew."""
    longest = max((len(run) for line in lines for run in BACKTICK_RUN.findall(line)), default=0)
    ticks = "`" * max(3, longest + 1)
    return "\n".join([f"{ticks}{info}", *lines, ticks])


def quoted_title(title: str) -> str:
    """A unit title (from progress.yaml) on one line, in quotes."""
    return '"' + plain(title, 160).replace('"', '\\"') + '"'


# What makes a line start a block of its own (heading, quote, list, thematic break, setext
# underline, fence, table, link definition), after its indentation is dropped.
_BLOCK_START = re.compile(r"^(?:[#>+*=|:~_\[-]|\d{1,9}(?=[.)]))")


def _prose_line(line: str) -> str:
    """One line of quoted prose that can only be paragraph text: unpaired backticks become
    ``'``, indentation goes (it would make code or continue a list), and a character that
    would start a block is backslash-escaped (``\\#``, ``1\\.``)."""
    line = line if _ticks_pair_up(line) else line.replace("`", "'")
    line = line.lstrip(" \t")
    match = _BLOCK_START.match(line)
    if match is None:
        return line
    if match.group()[0].isdigit():
        end = match.end()
        return f"{line[:end]}\\{line[end:]}"
    return f"\\{line}"


def blockquote(text: str, limit: int = 1200) -> str:
    """Multi-line prose from progress.yaml (goal, notes) as a Markdown blockquote holding only
    paragraphs, so it cannot forge a heading, a fence or any other part of the brief."""
    lines = block_lines(clip(text.strip(), limit), limit)
    return "\n".join(f"> {_prose_line(line)}".rstrip() for line in lines) or ">"


_SHA = re.compile(r"[0-9a-fA-F]{7,64}")


@lru_cache(maxsize=512)
def short_sha(value: object) -> str | None:
    """The 7-character form of a commit id; None unless ``value`` looks like one (ids can come
    from a hostile progress file, so nothing else is shown)."""
    if isinstance(value, str) and _SHA.fullmatch(value):
        return value[:7].lower()
    return None
