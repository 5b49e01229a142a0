"""SHA-256: CPython's built-in module for small inputs, OpenSSL's (hashlib) for large ones.

``hashlib`` loads OpenSSL first (its ``_hashlib``: about 4 ms, at every brief, verify and
commit hook), while the built-in ``_sha256``/``_sha2`` hashes about ten times slower (25 ms
against 2.6 ms for a 4 MB progress file, 2026-12-02): hashlib is imported once something of
:data:`LARGE` bytes or more is hashed, and used for everything after. ``importlib`` would bring
``warnings`` (another ~1 ms), so the modules are found with the plain ``__import__``.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs milliseconds (mypy reads the guard)
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import _Hash

LARGE = 256 * 1024  # where OpenSSL's speed pays for its import (about 5 ns a byte faster)
_BUILTIN: list[Callable[[bytes], _Hash]] = []


def sha256(data: bytes = b"", size_hint: int = 0) -> _Hash:
    """A new SHA-256 hash object holding ``data``, as ``hashlib.sha256(data)``; ``size_hint``:
    how many bytes will be fed to it in all, when more are to come."""
    if "hashlib" in sys.modules or max(len(data), size_hint) >= LARGE:
        import hashlib

        return hashlib.sha256(data)
    if not _BUILTIN:
        for name in ("_sha256", "_sha2", "hashlib"):  # 3.10/3.11, 3.12+, anywhere
            try:
                _BUILTIN.append(__import__(name).sha256)
                break
            except ImportError:
                continue
    return _BUILTIN[0](data)


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data``."""
    return sha256(data).hexdigest()
