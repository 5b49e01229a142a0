"""plan's placeholders: ``{path}`` ``{stem}`` ``{name}`` ``{n}`` filled into a title or an
artifact as they are, and into a verify command as one shell word each."""

from __future__ import annotations

import re
import shlex

from resume_kit.infra.errors import ResumeKitError

PLACEHOLDERS = {
    "path": "the file's path from the repository root",
    "stem": "its name without the extension",
    "name": "its name",
    "n": "its number in the sorted matches, from 1",
}
_PLACEHOLDER = re.compile(r"\{(path|stem|name|n)\}")
_WORD_BREAK = frozenset(" \t\n;&|()<>")


def expand(template: str, values: dict[str, str]) -> str:
    """Title and artifact: each placeholder replaced once (a value holding ``{name}`` stays)."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def expand_command(template: str, values: dict[str, str]) -> str:
    """The verify command: in one pass, each placeholder becomes exactly one shell word
    (``shlex.quote``); a value that would start a word with ``-`` gets ``./`` so it is never
    an option. A placeholder inside quotes cannot be made safe, so it is refused."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(template):
        char = template[i]
        found = _PLACEHOLDER.match(template, i) if char == "{" else None
        if found is not None:
            if quote is not None:
                raise ResumeKitError(
                    f"--verify has {found.group()} inside quotes",
                    hint=f"leave {found.group()} unquoted: resume-kit quotes each file name itself",
                )
            value = values[found.group(1)]
            if value.startswith("-") and (i == 0 or template[i - 1] in _WORD_BREAK):
                value = "./" + value
            out.append(shlex.quote(value))
            i = found.end()
            continue
        if char == "\\" and quote != "'":
            out.append(template[i : i + 2])
            i += 2
            continue
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        out.append(char)
        i += 1
    return "".join(out)
