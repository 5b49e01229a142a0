"""SHA-256: CPython's built-in module for small inputs, OpenSSL's (hashlib) for large ones; and
BLAKE2b for the key of a whole file read at every start (the progress cache's).

``hashlib`` loads OpenSSL first (its ``_hashlib``: about 4 ms, at every brief, verify and
commit hook), while the built-in ``_sha256``/``_sha2`` hashes about ten times slower (25 ms
against 2.6 ms for a 4 MB progress file, 2026-12-02): hashlib is imported once something of
:data:`OPENSSL_FROM` bytes or more is hashed, and used for everything after. ``importlib``
would bring ``warnings`` (another ~1 ms), so the modules are found with the plain
``__import__``.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs milliseconds (mypy reads the guard)
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import _Hash, blake2b

# where OpenSSL's speed (~6 ns a byte faster) pays for its import (~5.7 ms with hashlib's
# module in a bare process, less inside a brief; 2026-12-06: a large brief's 538 KB snapshot
# checksum took 2.8 ms built in against 3.8 ms with the import, medians of 15)
OPENSSL_FROM = 1024 * 1024
LARGE = 256 * 1024  # where a key is hashed on a thread
_BUILTIN: list[Callable[[bytes], _Hash]] = []


def sha256(data: bytes = b"", size_hint: int = 0) -> _Hash:
    """A new SHA-256 hash object holding ``data``, as ``hashlib.sha256(data)``; ``size_hint``:
    how many bytes will be fed to it in all, when more are to come."""
    if "hashlib" in sys.modules or max(len(data), size_hint) >= OPENSSL_FROM:
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


def file_key(data: bytes) -> str:
    """The hex BLAKE2b-256 digest of ``data``: as collision-resistant as SHA-256, from CPython's
    built-in ``_blake2`` (~0.3 ms to import where hashlib's OpenSSL takes ~3-5 ms, 2026-12-06),
    at about half OpenSSL's SHA-256 speed. The progress cache's key: every brief and
    verify-next hashes progress.yaml (up to a few MB), and verify-next needs no other large
    hash, so it never pays for OpenSSL."""
    return _blake2b()(data, digest_size=32).hexdigest()


def _blake2b() -> type[blake2b]:
    try:
        from _blake2 import blake2b
    except ImportError:  # a Python built without it: hashlib's, from OpenSSL
        from hashlib import blake2b
    return blake2b


def file_key_started(data: bytes) -> Callable[[], str]:
    """:func:`file_key` of ``data``, computed on another thread when ``data`` is large (the
    hash releases the interpreter's lock, so the caller's work goes on meanwhile); call the
    result for the key (it waits)."""
    started = _key_on_thread(data) if len(data) >= LARGE else None
    if started is not None:
        return started
    key = file_key(data)
    return lambda: key


def _key_on_thread(data: bytes) -> Callable[[], str] | None:
    """:func:`file_key_started` on a thread; None when no thread can start (a process limit)."""
    import contextlib
    import threading

    _blake2b()  # imported here: on the thread it would hold the interpreter's lock from us
    found: list[str] = []

    def work() -> None:
        with contextlib.suppress(BaseException):  # no traceback from the thread: joined() hashes
            found.append(file_key(data))  # again, and raises in the caller

    worker = threading.Thread(target=work, daemon=True)
    try:
        worker.start()
    except RuntimeError:
        return None

    def joined() -> str:
        worker.join()
        if not found:  # the thread failed (out of memory, say)
            found.append(file_key(data))
        return found[0]

    return joined
