"""Bounded reading of JSONL files: lines from the end backwards, and the first line.

Agent session files grow to hundreds of megabytes; everything we need is near the end. Reading
backwards in blocks with a hard byte cap makes a 500 MB session cost what a small one does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from resume_kit.core.light_dataclass import dataclass, field
from resume_kit.core.typing_light import Any, BinaryIO, Protocol
from resume_kit.facts.fact_reuse import note_file

MIB = 1024 * 1024
DEFAULT_CAP = 8 * MIB  # never read more than this from the end of one file
DEFAULT_MIN = 2 * MIB  # read at least this much (if the file has it) before stopping early
BLOCK = 256 * 1024
FIRST_LINE_CAP = MIB


def open_binary(path: Path) -> BinaryIO:
    """The one place session files are opened (tests wrap it to count the bytes read).

    Only a regular file opens: a FIFO (which would block until a writer appears), a device such
    as /dev/zero (endless) or a folder raises OSError like a missing file does."""
    from resume_kit.infra.store import open_regular

    note_file(path)  # an input of the transcript fact (facts/fact_reuse.py)
    return open_regular(path, follow=True)  # the agent's own session files, in the user's home


@dataclass
class TailStats:
    size: int
    bytes_read: int = 0
    reached_start: bool = False
    broken_lines: int = 0
    notes: list[str] = field(default_factory=list)


def lines_backward(
    f: BinaryIO, stats: TailStats, *, cap: int = DEFAULT_CAP, block: int = BLOCK
) -> Iterator[bytes]:
    """Non-blank lines of ``f`` newest first, reading at most ``cap`` bytes from the end.

    The line cut at the start of the window (when the cap stops us before the file's start)
    is dropped: it is a fragment. The file's last line is yielded even without a newline; a
    caller that cannot parse it (a line still being written) simply skips it.
    """
    pos = stats.size
    carry: list[bytes] = []  # pieces of the line that continues into the blocks before
    while pos > 0 and stats.bytes_read < cap:
        n = min(block, pos, cap - stats.bytes_read)
        pos -= n
        f.seek(pos)
        chunk = f.read(n)
        stats.bytes_read += len(chunk)
        if len(chunk) < n:  # the file shrank under us: what we have is all there is
            pos = 0
        if b"\n" not in chunk:
            carry.insert(0, chunk)
            continue
        head, _, rest = chunk.partition(b"\n")
        tail = b"".join([rest, *carry]) if carry else rest
        carry = [head]
        for line in reversed(tail.split(b"\n")):
            if line.strip():
                yield line
    if pos == 0:
        stats.reached_start = True
        first = b"".join(carry)
        if first.strip():
            yield first


def records_backward(
    f: BinaryIO, stats: TailStats, *, cap: int = DEFAULT_CAP, block: int = BLOCK
) -> Iterator[dict[str, Any]]:
    """JSON objects of ``f`` newest first; broken lines and non-objects are counted and skipped."""
    for line in lines_backward(f, stats, cap=cap, block=block):
        try:
            record = json.loads(line)
        except ValueError:  # includes UnicodeDecodeError and a truncated last line
            stats.broken_lines += 1
            continue
        if isinstance(record, dict):
            yield record
        else:
            stats.broken_lines += 1


class RecordReader(Protocol):
    """What ``read_backward`` feeds: one record at a time, newest first."""

    def take(self, record: dict[str, Any]) -> None: ...

    def satisfied(self) -> bool: ...


def read_backward(path: Path, reader: RecordReader, *, cap: int, min_bytes: int) -> TailStats:
    """Feed ``reader`` the records of ``path`` newest first, up to ``cap`` bytes from the end;
    stop early once it is satisfied and at least ``min_bytes`` were read. Raises OSError."""
    if path.name.endswith(".zst"):
        from resume_kit.facts.transcripts import zst

        data, complete = zst.tail_file(path, cap)
        stats = TailStats(size=data.seek(0, 2))
        for record in records_backward(data, stats, cap=cap):
            reader.take(record)
        stats.reached_start = stats.reached_start and complete
        return stats
    with open_binary(path) as f:
        stats = TailStats(size=f.seek(0, 2))
        for record in records_backward(f, stats, cap=cap):
            reader.take(record)
            if reader.satisfied() and stats.bytes_read >= min_bytes:
                break
    return stats


def _head_bytes(path: Path, cap: int) -> bytes:
    """The first ``cap`` bytes of the file (decompressed for a .zst). Raises OSError."""
    if path.name.endswith(".zst"):
        from resume_kit.facts.transcripts import zst

        return zst.head(path, cap)
    with open_binary(path) as f:
        return f.read(cap)


def first_record(path: Path, *, cap: int = FIRST_LINE_CAP) -> dict[str, Any] | None:
    """The file's first line as a JSON object, reading at most ``cap`` bytes; None otherwise."""
    try:
        data = _head_bytes(path, cap)
    except OSError:
        return None
    line, newline, _ = data.partition(b"\n")
    if not newline and len(data) >= cap:
        return None  # longer than the cap: not worth chasing
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def head_records(path: Path, *, cap: int = 64 * 1024, limit: int = 50) -> list[dict[str, Any]]:
    """Up to ``limit`` parseable JSON objects from the first ``cap`` bytes (the last partial
    line left out)."""
    try:
        data = _head_bytes(path, cap)
    except OSError:
        return []
    lines = data.split(b"\n")
    if len(data) >= cap:
        lines = lines[:-1]
    out: list[dict[str, Any]] = []
    for line in lines:
        if len(out) >= limit:
            break
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def tail_records(path: Path, *, cap: int = 64 * 1024) -> list[dict[str, Any]]:
    """Parseable JSON objects from the last ``cap`` bytes, newest first."""
    try:
        if path.name.endswith(".zst"):
            from resume_kit.facts.transcripts import zst

            data, _ = zst.tail_file(path, cap)
            stats = TailStats(size=data.seek(0, 2))
            return list(records_backward(data, stats, cap=cap))
        with open_binary(path) as f:
            stats = TailStats(size=f.seek(0, 2))
            return list(records_backward(f, stats, cap=cap))
    except OSError:
        return []


def mib(n: int) -> str:
    return f"{n / MIB:.1f} MiB"
