"""core.digest: the progress cache's key is BLAKE2b-256, whoever computes it and on whichever
thread, and computing it never loads OpenSSL."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resume_kit.core.digest import LARGE, file_key, file_key_started


def blake2b_256(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=32).hexdigest()


@given(st.binary(max_size=4096))
def test_the_key_is_blake2b_256(data: bytes) -> None:
    assert file_key(data) == blake2b_256(data)
    assert file_key_started(data)() == blake2b_256(data)


def test_a_large_file_is_keyed_on_another_thread_with_the_same_key() -> None:
    data = bytes(range(256)) * (LARGE // 256 + 3)
    pending = file_key_started(data)
    assert pending() == pending() == blake2b_256(data)


def test_a_large_file_is_keyed_here_when_no_thread_can_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    data = b"\xff" * (2 * LARGE)
    assert file_key_started(data)() == blake2b_256(data)


def test_keying_a_large_file_does_not_import_openssl() -> None:
    code = (
        "import sys; from resume_kit.core.digest import file_key_started; "
        f"file_key_started(b'x' * {4 * LARGE})(); "
        "print(sorted({'hashlib', '_hashlib'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
