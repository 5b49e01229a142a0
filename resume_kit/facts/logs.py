"""Bounded log reading: the tail of each configured log and the error-relevant lines in it.

``error_lines`` is pure and shared with verify-next (its failure excerpt). What counts as an
error line (SPEC 4): a Python traceback's last frame and exception line; pytest ``FAILED`` /
``ERROR`` summary lines, ``E `` detail lines and ``path:line: Error`` locations; lines carrying
``error``, ``fatal``, ``exception``, ``panic``, ``npm ERR!`` or ``error[E…]`` markers, with the
``--> file:line`` location line a compiler prints after them; a tool's summary line (mypy's
``Found N errors``, pytest's ``N failed, M passed``). Repeated lines, and lines that differ only
in their ``path:line:`` location, are grouped (``20 × message (path lines 184-1124)``) where
their last copy is; ANSI escapes are stripped; lines are trimmed and redacted.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path
from stat import S_ISREG

from resume_kit.core.escape import ANSI_SEQUENCE
from resume_kit.core.lazy_regex import lazy
from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.timeutil import from_epoch
from resume_kit.core.typing_light import Any
from resume_kit.infra.redact import redact, split_lines

MAX_LINE_CHARS = 300
_TRACEBACK_START = lazy(r"Traceback \(most recent call last\):")
_FRAME = lazy(r'^\s*File "[^"]{1,1024}", line \d+')
_EXCEPTION_LINE = lazy(
    r"^(?:[A-Za-z_][\w.]{0,200}\.)?[A-Z]\w{0,100}(?:Error|Exception|Interrupt|Exit|Fault)(?::|$)"
)
_PYTEST = lazy(r"^(?:FAILED|ERROR) \S|^E {1,16}\S")
_LOCATION = lazy(  # tests/test_x.py:12: AssertionError, src/a.c:3:5: error: ...
    r"^[\w./\\~+\-]{1,400}\.\w{1,10}:\d+(?::\d+)?: "
    r"(?:\w{0,100}(?:Error|Exception|Failure)\b|(?:fatal )?error\b|fatal\b)"
)
_MARKER = lazy(
    r"npm ERR!|\berror\[E\d{1,5}\]|\b(?:error|fatal|exception|panic(?:ked)?)\b|\bERROR\b|\bFATAL\b",
    re.IGNORECASE,
)
# A superset filter, run on the lower-cased line: every line the rules below can pick contains
# one of these (error, fatal, failed, failure, fault, exception, panic, interrupt, exit, ERR!), or
# starts with "E " (pytest). Much cheaper than the case-insensitive rules themselves.
_CANDIDATE = lazy(r"err|fa[itu]|exce|panic|interrupt|exit")
_ARROW_LOCATION = lazy(r"^\s{0,16}--> \S{1,400}:\d+")
_FILE_REF = lazy(r"[\w./\\~+\-]{1,200}\.\w{1,10}:\d+(?::\d+)?")
_NOT_AN_ERROR = lazy(
    r"^\s*(?:=+ .{0,200} =+|-+ .{0,200} -+)\s*$"  # pytest section rules
    r"|\b0 errors?\b|\bno errors?\b|\berrors?: 0\b"
    r"|^During handling of the above exception|^The above exception was the direct cause",
    re.IGNORECASE,
)


def _trim(line: str) -> str:
    """At most ~300 characters; file:line references cut off at the end are appended."""
    line = line.strip()
    if len(line) <= MAX_LINE_CHARS:
        return line
    head = line[:MAX_LINE_CHARS]
    refs = [r for r in _FILE_REF.findall(line[MAX_LINE_CHARS:]) if r not in head][:2]
    suffix = (" (" + ", ".join(refs) + ")") if refs else ""
    return head.rstrip() + "…" + suffix


_SUMMARY = lazy(  # a tool's own tally: always kept, whatever else is cut
    r"^Found \d+ errors? in \d+ files?\b"  # mypy
    r"|^Found \d+ errors?\b"  # ruff
    r"|^=*\s*\d+ (?:failed|errors?)\b.*?(?:\bin [\d.]+s\b.*)?$"  # pytest, failures first
    r"|^=*\s*\d+ passed\b.*\b\d+ (?:failed|errors?)\b"  # pytest, passes first
    r"|^Ran \d+ tests? in .*|^FAILED \((?:failures|errors)=\d+"  # unittest
)
_LOCATION_PREFIX = lazy(r"^([\w./\\~+\-]{1,400}\.\w{1,10}):(\d+)(?::\d+)?: ")


@dataclass
class _Picked:
    number: int  # 1-based line number in the text read
    text: str
    summary: bool = False


# _CANDIDATE's alternatives as plain strings, and the other two starts of a pick: str.find
# runs through a 256 KiB tail in microseconds where the regex alternation takes milliseconds.
_CANDIDATE_FRAGMENTS = ("err", "fai", "fat", "fau", "exce", "panic", "interrupt", "exit")
_TRACEBACK_TEXT = "Traceback (most recent call last):"


def _candidate_lines(lines: list[str]) -> list[int] | None:
    """The indices, in order, of the lines :func:`_select` can pick or start a traceback at: a
    ``Traceback`` line, a line starting ``E ``, a line whose lower-cased text holds a
    :data:`_CANDIDATE` fragment. Found with ``str.find`` over the joined text instead of
    three searches per line; None when lower-casing changes the text's length (then every
    line is looked at)."""
    joined = "\n".join(lines)
    lowered = joined.lower()
    if len(lowered) != len(joined):
        return None
    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    n = len(lines)
    found: set[int] = set()
    searches = [(lowered, fragment) for fragment in _CANDIDATE_FRAGMENTS]
    searches += [(joined, _TRACEBACK_TEXT), (joined, "\nE ")]
    if joined.startswith("E "):
        found.add(0)
    for text, fragment in searches:
        lead = 1 if fragment[0] == "\n" else 0  # "\nE " is found at the line break before
        at = text.find(fragment)
        while at >= 0:
            index = bisect_right(starts, at + lead) - 1
            found.add(index)
            if index + 1 >= n:
                break
            at = text.find(fragment, starts[index + 1] - lead)  # one is enough: next line
    return sorted(found)


def _select(lines: list[str], *, every_line: bool = False) -> list[_Picked]:
    """The error-relevant lines, in order, before grouping (``every_line``: look at each line,
    not only at :func:`_candidate_lines`; the same result, for the tests)."""
    picked: list[_Picked] = []
    last_exception: _Picked | None = None
    # The two searches every line gets, bound once: a lazy pattern's method lookup is a Python
    # call, and a 256 KiB tail has thousands of lines.
    traceback_start = _TRACEBACK_START.search
    candidate = _CANDIDATE.search
    n = len(lines)
    order = None if every_line else _candidate_lines(lines)
    next_free = 0  # lines before this one were taken by a traceback or an arrow location
    for i in range(n) if order is None else order:
        if i < next_free:
            continue
        line = lines[i]
        next_free = i + 1
        if traceback_start(line):
            # Skip the frames; keep the last frame line and the exception line after them.
            last_frame: int | None = None
            j = i + 1
            while j < n:
                current = lines[j]
                if _FRAME.match(current):
                    last_frame = j
                elif current[:1].isspace() or not current:
                    pass  # source line, caret markers, blank line
                else:
                    break
                j += 1
            if last_frame is not None:
                picked.append(_Picked(last_frame + 1, lines[last_frame]))
            if j < n and not _TRACEBACK_START.search(lines[j]):
                last_exception = _Picked(j + 1, lines[j])
                picked.append(last_exception)
                j += 1
            next_free = j
            continue
        if candidate(line.lower()) is None and line[:2] != "E ":
            pass  # most lines: one cheap search and on to the next
        elif _SUMMARY.match(line.strip()):
            picked.append(_Picked(i + 1, line.strip().strip("=").strip(), summary=True))
        elif _PYTEST.match(line) or _LOCATION.match(line) or _EXCEPTION_LINE.match(line):
            if not _NOT_AN_ERROR.search(line) or _PYTEST.match(line):
                picked.append(_Picked(i + 1, line))
        elif _MARKER.search(line) and not _NOT_AN_ERROR.search(line):
            picked.append(_Picked(i + 1, line))
            if i + 1 < n and _ARROW_LOCATION.match(lines[i + 1]):
                picked.append(_Picked(i + 2, lines[i + 1]))
                next_free = i + 2
    if last_exception is not None:  # the newest traceback's exception: the crash itself
        last_exception.summary = True
    return picked


@dataclass
class _Group:
    copies: list[_Picked]
    summary: bool = False

    def render(self) -> str:
        last = self.copies[-1].text.strip()
        if len(self.copies) == 1:
            return last
        located = [_LOCATION_PREFIX.match(c.text.strip()) for c in self.copies]
        if all(located):
            files = {m[1] for m in located if m}
            numbers = sorted(int(m[2]) for m in located if m)
            message = last[located[-1].end() :] if located[-1] else last
            where = (
                f"{files.pop()} lines {numbers[0]}-{numbers[-1]}"
                if len(files) == 1
                else f"{len(files)} files"
            )
        else:
            message = last
            where = f"output lines {self.copies[0].number}-{self.copies[-1].number}"
        return f"{len(self.copies)} × {message} ({where})"


def _group(picked: list[_Picked]) -> list[_Group]:
    """Identical lines, and lines that differ only in their ``path:line:`` location, as one
    group placed where its last copy is (so the newest traceback keeps its lines in order)."""
    groups: dict[str, _Group] = {}
    for item in picked:
        key = item.text.strip()
        if not key:
            continue
        located = _LOCATION_PREFIX.match(key)
        if located:
            key = "\0" + key[located.end() :]
        group = groups.pop(key, None) or _Group([])
        group.copies.append(item)
        group.summary = group.summary or item.summary
        groups[key] = group  # re-inserted: dicts keep insertion order
    return list(groups.values())


def error_lines(text: str, max_lines: int = 40) -> list[str]:
    """The error-relevant lines of ``text``: grouped, in order, trimmed, redacted.

    Repeated lines (and lines differing only in their ``path:line:`` location) become one
    ``N × line (path lines a-b)`` entry. A tool's summary line (``Found 80 errors in 1 file``,
    ``1 failed, 2 passed``) and the newest traceback's exception line are always kept; of the
    rest, when there are more than ``max_lines``, the first quarter and the last three quarters
    are kept: the first error is often the cause and the last ones are the summary.
    """
    if not text or max_lines <= 0:
        return []
    if "\x1b" in text:
        text = ANSI_SEQUENCE.sub("", text)
    # splitlines also splits at a lone \r, so each redraw of a progress bar is its own line
    lines = [line.rstrip() for line in split_lines(text)]
    groups = _group(_select(lines))
    if len(groups) > max_lines:
        kept = [g for g in groups if g.summary][-max_lines:]
        room = max_lines - len(kept)
        others = [g for g in groups if not g.summary]
        head = room // 4
        chosen = {id(g) for g in [*others[:head], *others[len(others) - (room - head) :]]}
        chosen.update(id(g) for g in kept)
        groups = [g for g in groups if id(g) in chosen] if room > 0 else kept
    # Redact the whole line before trimming so a secret is never cut into a visible half.
    return [_trim(redact(group.render())) for group in groups]


# ---- reading files ------------------------------------------------------------------------------

_SKIPPED_TOP = (".git", ".resume-kit")


def read_tail(path: Path, tail_bytes: int) -> bytes | None:
    """The last ``tail_bytes`` of a regular file, starting at a line boundary; None for a
    binary file. Opened with :func:`~resume_kit.infra.safefs.open_regular`: a final symlink, a FIFO
    or a device raises ``NotARegularFile`` instead of being followed or blocking."""
    from resume_kit.infra.safefs import open_regular

    with open_regular(path) as handle:
        size = handle.seek(0, os.SEEK_END)
        start = max(0, size - tail_bytes)
        handle.seek(start)
        data = handle.read(tail_bytes)
    if b"\x00" in data:
        return None
    if start > 0:
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else b""
    return data


def _iso(timestamp: float) -> str:
    return from_epoch(timestamp)


def read_logs(
    root: Path,
    globs: Sequence[str],
    tail_bytes: int = 256 * 1024,
    max_files: int = 20,
    notes: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The newest ``max_files`` logs matching ``globs`` under ``root``, each with its error lines.

    Only the tail of each file is read (seek, never the whole file); binary files (a NUL byte in
    the tail) and anything under ``.git/`` or ``.resume-kit/`` are skipped; an unreadable file is
    skipped too. Symlinks and special files are never opened: a note in ``notes`` names them.
    Newest first: ``{"path", "size", "mtime", "error_lines"}``.
    """
    from resume_kit.facts.fingerprint import expand_globs
    from resume_kit.infra.safefs import UnsafePath, contained, file_kind

    candidates: list[tuple[float, str, int, Path]] = []
    refused: list[str] = []
    for rel in expand_globs(root, globs):
        if rel.split("/", 1)[0] in _SKIPPED_TOP:
            continue
        try:  # below the root with no symlink on the way, the log itself included
            full = contained(root, rel, missing_ok=False)
            info = os.lstat(full)
        except UnsafePath:
            refused.append(rel)
            continue
        except OSError:
            continue
        if not S_ISREG(info.st_mode):
            refused.append(f"{rel} ({file_kind(info.st_mode)})")
            continue
        candidates.append((info.st_mtime, rel, info.st_size, full))
    if refused and notes is not None:
        shown = ", ".join(redact(r) for r in refused[:3])
        more = f" and {len(refused) - 3} more" if len(refused) > 3 else ""
        notes.append(
            f"logs not read (a symlink, a special file or outside the work tree): {shown}{more}"
        )
    candidates.sort(key=lambda c: (-c[0], c[1]))

    found: list[dict[str, Any]] = []
    for mtime, rel, size, full in candidates:
        if len(found) >= max_files:
            break
        try:
            data = read_tail(full, tail_bytes)
        except OSError:
            continue
        if data is None:
            continue
        found.append(
            {
                "path": redact(rel),
                "size": size,
                "mtime": _iso(mtime),
                "error_lines": error_lines(data.decode("utf-8", "replace")),
            }
        )
    return found
