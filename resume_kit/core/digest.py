"""SHA-256 from CPython's built-in module where there is one.

``hashlib`` loads OpenSSL first (its ``_hashlib``: about 4 ms, at every brief, verify and
commit hook); ``importlib`` would bring ``warnings`` (another ~1 ms), so the built-in modules are
found with the plain ``__import__``. Every hash resume-kit takes is SHA-256.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs milliseconds (mypy reads the guard)
if TYPE_CHECKING:
    from hashlib import _Hash

_SHA256: list[object] = []


def sha256(data: bytes = b"") -> _Hash:
    """A new SHA-256 hash object holding ``data``, as ``hashlib.sha256(data)``."""
    if not _SHA256:
        for name in ("_sha256", "_sha2", "hashlib"):  # 3.10/3.11, 3.12+, anywhere
            try:
                _SHA256.append(__import__(name).sha256)
                break
            except ImportError:
                continue
    return _SHA256[0](data)  # type: ignore[operator,no-any-return]


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data``."""
    return sha256(data).hexdigest()
