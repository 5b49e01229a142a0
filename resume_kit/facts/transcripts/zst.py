"""Zstandard-compressed session files (Codex compresses rollouts idle for 7 days to
``rollout-*.jsonl.zst``): their head and their tail, bounded.

A .zst cannot be read from the end, so the tail is the last ``keep`` bytes of a streamed
decompression that stops after ``limit`` bytes (a small file can expand to gigabytes).
``zstandard`` is imported only here, only when such a file is met.
"""

from __future__ import annotations

import io
from pathlib import Path

from resume_kit.core.typing_light import BinaryIO
from resume_kit.facts.transcripts import tail

SUFFIX = ".zst"
LIMIT = 256 * tail.MIB  # decompressed bytes looked at in one file, at most
CHUNK = 256 * 1024


def is_zst(path: Path) -> bool:
    return path.name.endswith(SUFFIX)


def _reader(f: BinaryIO) -> BinaryIO:
    try:
        import zstandard
    except ImportError as exc:  # a broken install: a note, never a failure
        raise OSError(f"zstandard is not installed: {exc}") from exc
    reader: BinaryIO = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)
    return reader


def head(path: Path, cap: int) -> bytes:
    """The first ``cap`` decompressed bytes. Raises OSError."""
    with tail.open_binary(path) as f:
        try:
            return _reader(f).read(cap)
        except OSError:
            raise
        except Exception as exc:  # zstandard.ZstdError and the like: a corrupt file
            raise OSError(f"not a readable zstd file: {exc}") from exc


def tail_file(path: Path, keep: int, limit: int = LIMIT) -> tuple[io.BytesIO, bool]:
    """(the last ``keep`` decompressed bytes starting at a line, whether they reach the
    start). Raises OSError."""
    window = bytearray()
    seen = 0
    with tail.open_binary(path) as f:
        try:
            reader = _reader(f)
            while seen < limit:
                chunk = reader.read(min(CHUNK, limit - seen))
                if not chunk:
                    break
                seen += len(chunk)
                window += chunk
                if len(window) > 2 * keep:
                    del window[: len(window) - keep]
        except OSError:
            raise
        except Exception as exc:
            raise OSError(f"not a readable zstd file: {exc}") from exc
    complete = seen == len(window) and seen < limit
    if len(window) > keep:
        del window[: len(window) - keep]
        complete = False
    if not complete:
        cut = window.find(b"\n")  # the line cut at the window's start is a fragment
        window = window[cut + 1 :] if cut >= 0 else bytearray()
    return io.BytesIO(bytes(window)), complete
