"""The token count cache: a text counted before is not counted again, and never miscounted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from resume_kit.infra import tokens

TEXT = "doc-00001 … doc-01499 (verified 75 min ago; at `eb7300e`) Résumé 日本語 </context>"


@pytest.fixture
def no_encoding(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No count remembered in this process and no encoding loaded."""
    monkeypatch.setattr(tokens, "_counted", {})
    saved = tokens._encoding, tokens._piece_ranks
    tokens._encoding = tokens._piece_ranks = None
    yield
    tokens._encoding, tokens._piece_ranks = saved


def _counts_path() -> Path:
    return tokens._counts_file()


def test_a_counted_text_is_served_from_the_cache_without_the_encoding(
    no_encoding: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tokens.count_tokens(TEXT)
    assert first == len(tokens.encoding().encode(TEXT, disallowed_special=()))
    changed = len(tokens.encoding().encode(TEXT + " changed", disallowed_special=()))
    assert _counts_path().is_file()
    # A new process: nothing in memory, and loading the encoding would fail.
    monkeypatch.setattr(tokens, "_counted", {})
    tokens._encoding = None

    def refuse() -> object:
        raise AssertionError("the encoding was loaded for a text counted before")

    monkeypatch.setattr(tokens, "encoding", refuse)
    assert tokens.count_tokens(TEXT) == first
    # a text never counted: its new pieces from the ranks, still without the encoding
    assert tokens.count_tokens(TEXT + " changed") == changed


def test_a_damaged_counts_file_is_ignored(no_encoding: None) -> None:
    path = _counts_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff garbage\nnot a line\n" + b"a" * 64 + b" -3\n")
    assert tokens.count_tokens("hello world") == 2
    assert tokens._stored_counts()  # rewritten with the good count


def test_the_counts_file_stays_bounded(no_encoding: None) -> None:
    for i in range(tokens.COUNTS_KEEP + 10):
        tokens.count_tokens(f"text number {i}")
    assert len(tokens._stored_counts()) == tokens.COUNTS_KEEP


def test_a_fifo_counts_file_does_not_hang(no_encoding: None) -> None:
    import os

    path = _counts_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert tokens.count_tokens("hello world") == 2
