"""The tokenizer's ranks cache and preloading: the same encoding, faster, never a wrong one."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken

from resume_kit.infra import tokens

SAMPLES = [
    "",
    "hello world",
    "def f(x):\n    return x ** 2  # Résumé, naïve, 日本語 </context>",
    "doc-00001 … doc-01499 (verified 75 min ago; at `eb7300e`)\n\n\n   \t",
    "<|endoftext|> and <|fim_prefix|> as text",
    "🙂🙂 zero\u200bwidth \x00 nul",
]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No loaded encoding, and the ranks cache in a folder of this test's own."""
    cache = tmp_path / "cache" / tokens.RANKS_CACHE_NAME
    monkeypatch.setattr(tokens, "_ranks_cache", lambda: cache)
    saved = tokens._encoding, tokens._piece_ranks
    tokens._encoding, tokens._piece_ranks, tokens._preloader = None, None, None
    yield cache
    if tokens._preloader is not None:
        tokens._preloader.join()
    (tokens._encoding, tokens._piece_ranks), tokens._preloader = saved, None


def _reference() -> tiktoken.Encoding:
    """Built straight from the bundled file, no cache (tests/unit/test_tokens_data.py checks it
    against known counts and against tiktoken's own definition)."""
    ranks = tokens.parse_tiktoken_bpe(tokens.verified_data(tokens.data_file()))
    encoding: tiktoken.Encoding = tokens._build(ranks)
    return encoding


def test_cached_ranks_give_the_same_tokens(fresh: Path) -> None:
    first = tokens._from_bundled_file()  # parses the bundled file, writes the cache
    assert fresh.is_file()
    second = tokens._from_bundled_file()  # from the cache
    reference = _reference()
    for text in SAMPLES:
        expected = reference.encode(text, disallowed_special=())
        assert first.encode(text, disallowed_special=()) == expected
        assert second.encode(text, disallowed_special=()) == expected
    assert tokens.unpack_ranks(fresh.read_bytes()) == reference._mergeable_ranks


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-1],
        lambda data: data[:100],
        lambda data: b"",
        lambda data: data[:-5] + b"xxxxx",
        lambda data: b"RKRANKS1" + data[8:],
        lambda data: data[:8] + bytes(32) + data[40:],  # packed from another file
    ],
)
def test_a_damaged_cache_is_rebuilt(fresh: Path, damage: object) -> None:
    tokens._from_bundled_file()
    good = fresh.read_bytes()
    fresh.write_bytes(damage(good))  # type: ignore[operator]
    assert tokens.unpack_ranks(fresh.read_bytes()) is None
    assert tokens.PackedRanks.of(fresh.read_bytes()) is None
    encoding = tokens._from_bundled_file()
    assert encoding.encode("hello world") == _reference().encode("hello world")
    assert fresh.read_bytes() == good


def test_a_cache_packed_from_another_file_is_never_used(fresh: Path) -> None:
    other = "00" * 32  # as if the bundled file had changed since the cache was written
    forged = tokens.pack_ranks({b"hello": 0, b" world": 1}, source=other)
    assert forged is not None
    assert tokens.unpack_ranks(forged, source=other) == {b"hello": 0, b" world": 1}
    assert tokens.unpack_ranks(forged) is None
    fresh.parent.mkdir()
    fresh.write_bytes(forged)
    encoding = tokens._from_bundled_file()
    assert encoding.encode("hello world") == [15339, 1917]
    assert tokens.unpack_ranks(fresh.read_bytes()) == _reference()._mergeable_ranks


def test_the_cache_is_checked_against_the_bundled_file_on_every_load(
    fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens._from_bundled_file()  # a good cache now exists
    damaged = tmp_path / "cl100k_base.tiktoken"
    data = tokens.data_file().read_bytes()
    damaged.write_bytes(data.replace(b"IENvbnZleW9y 100255", b"IENvbnZleW9y 100254"))
    monkeypatch.setattr(tokens, "data_file", lambda: damaged)
    with pytest.raises(ValueError, match="SHA-256"):
        tokens._from_bundled_file()


def test_a_fifo_in_the_cache_folder_does_not_hang(fresh: Path) -> None:
    fresh.parent.mkdir()
    os.mkfifo(fresh)
    assert tokens._from_bundled_file().encode("hello world") == [15339, 1917]
    assert stat.S_ISFIFO(os.lstat(fresh).st_mode)  # left alone: no write replaces a FIFO


def test_pack_refuses_ranks_it_cannot_represent() -> None:
    assert tokens.pack_ranks({b"a": 0, b"b": 2}) is None
    assert tokens.pack_ranks({b"x" * 256: 0}) is None
    assert tokens.unpack_ranks(tokens.pack_ranks({b"a": 0, b"bc": 1}) or b"") == {b"a": 0, b"bc": 1}


def test_unwritable_cache_still_counts(fresh: Path) -> None:
    fresh.parent.mkdir()
    fresh.parent.chmod(0o500)
    try:
        assert tokens.count_tokens("hello world") == 2
    finally:
        fresh.parent.chmod(0o700)


def test_preload_loads_once_and_count_waits_for_it(fresh: Path) -> None:
    tokens.preload()
    tokens.preload()  # a second call starts nothing more
    preloader = tokens._preloader
    assert preloader is not None
    assert tokens.count_tokens("hello world") == 2
    preloader.join()
    assert tokens._encoding is not None
