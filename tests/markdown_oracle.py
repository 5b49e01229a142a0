"""What a CommonMark reader sees in a brief: markdown-it-py's tokens, independent of the
renderer (the oracle of tests/cli/test_brief.py and tests/adversarial/test_injection.py).

``read(markdown)`` gives the headings (at any depth), the prose (inline text outside code
spans, escapes and entities as written, one entry per source line, a quoted one after its
``> `` marker), the code (fenced and indented blocks, code spans), every html block or inline
tag, and the block types inside block quotes. A lone carriage return is a line ending to
CommonMark (it never reaches a token), so ``carriage_returns_in_prose`` reads a second time
with it replaced by a private character to find those outside code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

CR_MARK = "\ue000"  # stands for "\r" in the second reading


@cache
def parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # text_join would fold escapes ("\\`") and entities ("&lt;") into plain text; kept apart,
    # their markup is the text as written, which is what an agent reading the brief sees.
    return MarkdownIt("commonmark").disable("text_join")


@dataclass
class Reading:
    tokens: list[Token]
    headings: list[str] = field(default_factory=list)  # "## title", in order, any depth
    heading_lines: list[int] = field(default_factory=list)  # the source line of each heading
    prose: list[str] = field(default_factory=list)
    prose_at: list[int] = field(default_factory=list)  # the source line of each prose entry
    code: list[str] = field(default_factory=list)
    html: list[str] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)  # block types inside quotes, but paragraphs


def _inline_lines(inline: Token) -> list[str]:
    """The inline's text outside code spans, split at its line breaks, as written."""
    lines, current = [], []
    href = ""
    for child in inline.children or []:
        kind = child.type
        if kind in ("softbreak", "hardbreak"):
            lines.append("".join(current))
            current = []
        elif kind == "text":
            current.append(child.content)
        elif kind == "text_special":
            current.append(child.markup)  # "\\`", "&lt;": the escape as written
        elif kind in ("em_open", "em_close", "strong_open", "strong_close"):
            current.append(child.markup)
        elif kind == "link_open":
            href = str(child.attrGet("href") or "")
            current.append("<" if child.markup == "autolink" else "[")
        elif kind == "link_close":
            current.append(">" if child.markup == "autolink" else f"]({href})")
        elif kind == "image":
            current.append(f"![{child.content}]({child.attrGet('src') or ''})")
        elif kind == "html_inline":
            current.append(child.content)
        # code_inline: code, not prose
    lines.append("".join(current))
    return lines


def read(markdown: str) -> Reading:
    tokens = parser().parse(markdown)
    reading = Reading(tokens)
    depth = 0
    for i, token in enumerate(tokens):
        kind = token.type
        if depth and kind not in (
            "blockquote_close",
            "paragraph_open",
            "paragraph_close",
            "inline",
        ):
            reading.quoted.append(kind)  # a nested quote shows as its blockquote_open
        if kind in ("fence", "code_block"):
            reading.code.append(token.content)
        elif kind == "html_block":
            reading.html.append(token.content)
        elif kind == "blockquote_open":
            depth += 1
        elif kind == "blockquote_close":
            depth -= 1
        elif kind == "heading_open":
            reading.headings.append(
                f"{token.markup or '#' * int(token.tag[1:])} {tokens[i + 1].content}"
            )
            reading.heading_lines.append(token.map[0] if token.map else -1)
        if kind != "inline":
            continue
        first_line = token.map[0] if token.map else -1
        prefix = "> " * depth  # a quoted line starts with its quote marker, as written
        if i and tokens[i - 1].type == "heading_open":
            prefix = (tokens[i - 1].markup or "#" * int(tokens[i - 1].tag[1:])) + " "
        for n, line in enumerate(_inline_lines(token)):
            reading.prose.append(prefix + line if n == 0 or depth else line)
            reading.prose_at.append(first_line + n)
        for child in token.children or []:
            if child.type == "code_inline":
                reading.code.append(child.content)
            elif child.type == "html_inline":
                reading.html.append(child.content)
    return reading


def carriage_returns_in_prose(markdown: str) -> list[str]:
    """The prose entries that hold a carriage return (each outside code, where CommonMark
    would have ended the line there)."""
    if "\r" not in markdown:
        return []
    return [line for line in read(markdown.replace("\r", CR_MARK)).prose if CR_MARK in line]


def only_inline(markdown: str) -> list[Token]:
    """The inline children of ``markdown``, which must read as exactly one paragraph."""
    tokens = parser().parse(markdown)
    kinds = [t.type for t in tokens]
    assert kinds == ["paragraph_open", "inline", "paragraph_close"], (markdown, kinds)
    return list(tokens[1].children or [])
