"""The one glob engine: which paths a unit's ``files`` globs and ``artifacts`` name.

:func:`glob_regex` follows glob's rules (``*`` and ``?`` stay in one folder, ``**`` spans
folders, no wildcard matches a name's leading dot): the fingerprint hashes what it names,
reconcile counts it as owned (:class:`Ownership`) and the brief lists it first.
:func:`broad_glob_regex` is the same translation made conservative for the batch scheduler
(every wildcard may cross ``/`` and dots): it never misses a path the glob names.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

WILDCARD = re.compile(r"[*?\[]")

_STRICT = {
    "**/": r"(?:(?!\.)[^/]+/)*",
    "**": r"(?:(?!\.)[^/]*(?:/(?!\.)[^/]*)*)?",
    "*": "[^/]*",
    "*start": r"(?!\.)[^/]*",
    "?": "[^/]",
    "?start": r"[^/.]",
}
_BROAD = {"**/": "(?:.*/)?", "**": ".*", "*": ".*", "*start": ".*", "?": ".", "?start": "."}


def _class_end(pattern: str, i: int, broad: bool) -> int:
    """Where the character class opened at ``pattern[i]`` closes, or -1 when it does not."""
    if not broad:
        return pattern.find("]", i + 2)
    j, n = i + 1, len(pattern)
    if j < n and pattern[j] in "!^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    return pattern.find("]", j)


def _translate(pattern: str, broad: bool) -> str:
    table = _BROAD if broad else _STRICT
    out: list[str] = []
    i, start = 0, True  # ``start``: at the start of a path component
    while i < len(pattern):
        if pattern.startswith("**", i) and (start or broad):
            slash = pattern.startswith("**/", i)
            out.append(table["**/" if slash else "**"])
            i += 3 if slash else 2
            start = slash
            continue
        char = pattern[i]
        if char in "*?":
            out.append(table[char + "start" if start else char])
        elif char == "[" and (end := _class_end(pattern, i, broad)) != -1:
            # "[" inside a class is literal in glob; unescaped, re warns of a nested set
            body = pattern[i + 1 : end].replace("\\", "\\\\").replace("[", "\\[")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else f"[{body}]")
            i = end
        else:
            out.append(re.escape(char))
        start = char == "/"
        i += 1
    return "".join(out) + r"\Z"


@functools.lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` as a regex over relative paths (forward slashes), with glob's rules.
    A pattern that is no valid glob names itself."""
    try:
        return re.compile(_translate(pattern, broad=False))
    except re.error:
        return re.compile(re.escape(pattern) + r"\Z")


@functools.lru_cache(maxsize=4096)
def broad_glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex matching every path :func:`glob_regex` matches, and possibly more (errs on the
    safe side): ``**/`` is any number of folders or none, ``*``, ``?`` and classes may cross
    ``/``, and names starting with a dot are not special. An odd class matches anything."""
    try:
        return re.compile(_translate(pattern, broad=True), re.DOTALL)
    except re.error:
        return re.compile(".*", re.DOTALL)


def glob_match(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` (relative, forward slashes) matches any of the globs."""
    return any(glob_regex(p.removeprefix("./")).match(path) for p in patterns)


class Ownership:
    """Which paths some unit owns through its ``files`` globs or its ``artifacts``."""

    def __init__(self, patterns: Iterable[str]):
        self.literals: set[str] = set()
        self.wildcards: list[str] = []
        for raw in patterns:
            pattern = raw.strip()
            while pattern.startswith("./"):
                pattern = pattern[2:]
            pattern = pattern.rstrip("/")
            if not pattern:
                continue
            if WILDCARD.search(pattern):
                self.wildcards.append(pattern)
            else:
                self.literals.add(pattern)
        self.wildcards = sorted(set(self.wildcards))
        self.regex = (
            re.compile("|".join(f"(?:{glob_regex(p).pattern})" for p in self.wildcards))
            if self.wildcards
            else None
        )

    def owns(self, path: str) -> bool:
        if path.endswith(
            "/"
        ):  # an untracked folder shown collapsed: owned if it may hold owned files
            return self._owns_folder(path)
        parts = path.split("/")
        # a literal names the file itself or a folder holding it
        if any("/".join(parts[:k]) in self.literals for k in range(1, len(parts) + 1)):
            return True
        return bool(self.regex and self.regex.match(path))

    def _owns_folder(self, folder: str) -> bool:
        depth = folder.count("/")
        if any(lit.startswith(folder) or folder.startswith(lit + "/") for lit in self.literals):
            return True
        for pattern in self.wildcards:
            prefix = pattern[: WILDCARD.search(pattern).start()]  # type: ignore[union-attr]
            if prefix.startswith(folder):
                return True
            if folder.startswith(prefix) and ("**" in pattern or pattern.count("/") >= depth):
                return True
        return False
