"""Bounded log reading: the tail of each configured log and the error-relevant lines in it.

``error_lines`` is pure and shared with verify-next (its failure excerpt). What counts as an
error line (SPEC 4): a Python traceback's last frame and exception line; pytest ``FAILED`` /
``ERROR`` summary lines, ``E `` detail lines and ``path:line: Error`` locations; lines carrying
``error``, ``fatal``, ``exception``, ``panic``, ``npm ERR!`` or ``error[E…]`` markers, with the
``--> file:line`` location line a compiler prints after them. Lines are de-duplicated, kept in
order, trimmed and redacted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from stat import S_ISREG
from typing import Any

from resume_kit.core.escape import ANSI_SEQUENCE
from resume_kit.core.timeutil import from_epoch
from resume_kit.infra.redact import redact, split_lines

MAX_LINE_CHARS = 300
_TRACEBACK_START = re.compile(r"Traceback \(most recent call last\):")
_FRAME = re.compile(r'^\s*File "[^"]{1,1024}", line \d+')
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]{0,200}\.)?[A-Z]\w{0,100}(?:Error|Exception|Interrupt|Exit|Fault)(?::|$)"
)
_PYTEST = re.compile(r"^(?:FAILED|ERROR) \S|^E {1,16}\S")
_LOCATION = re.compile(  # tests/test_x.py:12: AssertionError, src/a.c:3:5: error: ...
    r"^[\w./\\~+\-]{1,400}\.\w{1,10}:\d+(?::\d+)?: "
    r"(?:\w{0,100}(?:Error|Exception|Failure)\b|(?:fatal )?error\b|fatal\b)"
)
_MARKER = re.compile(
    r"npm ERR!|\berror\[E\d{1,5}\]|\b(?:error|fatal|exception|panic(?:ked)?)\b|\bERROR\b|\bFATAL\b",
    re.IGNORECASE,
)
# A superset filter, run on the lower-cased line: every line the rules below can pick contains
# one of these (error, fatal, failed, failure, fault, exception, panic, interrupt, exit, ERR!), or
# starts with "E " (pytest). Much cheaper than the case-insensitive rules themselves.
_CANDIDATE = re.compile(r"err|fa[itu]|exce|panic|interrupt|exit")
_ARROW_LOCATION = re.compile(r"^\s{0,16}--> \S{1,400}:\d+")
_FILE_REF = re.compile(r"[\w./\\~+\-]{1,200}\.\w{1,10}:\d+(?::\d+)?")
_NOT_AN_ERROR = re.compile(
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


def _select(lines: list[str]) -> list[str]:
    """The error-relevant lines, in order, before de-duplication."""
    picked: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if _TRACEBACK_START.search(line):
            # Skip the frames; keep the last frame line and the exception line after them.
            last_frame: str | None = None
            j = i + 1
            while j < n:
                current = lines[j]
                if _FRAME.match(current):
                    last_frame = current
                elif current[:1].isspace() or not current:
                    pass  # source line, caret markers, blank line
                else:
                    break
                j += 1
            if last_frame is not None:
                picked.append(last_frame)
            if j < n and not _TRACEBACK_START.search(lines[j]):
                picked.append(lines[j])
                j += 1
            i = j
            continue
        if _CANDIDATE.search(line.lower()) is None and line[:2] != "E ":
            pass  # most lines: one cheap search and on to the next
        elif _PYTEST.match(line) or _LOCATION.match(line) or _EXCEPTION_LINE.match(line):
            if not _NOT_AN_ERROR.search(line) or _PYTEST.match(line):
                picked.append(line)
        elif _MARKER.search(line) and not _NOT_AN_ERROR.search(line):
            picked.append(line)
            if i + 1 < n and _ARROW_LOCATION.match(lines[i + 1]):
                picked.append(lines[i + 1])
                i += 1
        i += 1
    return picked


def error_lines(text: str, max_lines: int = 40) -> list[str]:
    """The error-relevant lines of ``text``: de-duplicated, in order, trimmed, redacted.

    When there are more than ``max_lines``, the first quarter and the last three quarters are
    kept: the first error is often the cause and the last ones are the summary.
    """
    if not text or max_lines <= 0:
        return []
    if "\x1b" in text:
        text = ANSI_SEQUENCE.sub("", text)
    # splitlines also splits at a lone \r, so each redraw of a progress bar is its own line
    lines = [line.rstrip() for line in split_lines(text)]
    seen: set[str] = set()
    unique: list[str] = []
    for line in _select(lines):
        key = line.strip()
        if key and key not in seen:
            seen.add(key)
            unique.append(key)
    if len(unique) > max_lines:
        head = max_lines // 4
        unique = unique[:head] + unique[len(unique) - (max_lines - head) :]
    # Redact the whole line before trimming so a secret is never cut into a visible half.
    return [_trim(redact(line)) for line in unique]


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
