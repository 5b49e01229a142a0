"""The tokenizer's ranks cache and preloading: the same encoding, faster, never a wrong one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken

from resume_kit import tokens

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
    saved = tokens._encoding
    tokens._encoding, tokens._preloader = None, None
    yield cache
    if tokens._preloader is not None:
        tokens._preloader.join()
    tokens._encoding, tokens._preloader = saved, None


def _reference() -> tiktoken.Encoding:
    return tiktoken.get_encoding(tokens.OFFLINE_ENCODING_NAME)


def test_pattern_is_the_bundled_one() -> None:
    assert _reference()._pat_str == tokens._CL100K_PATTERN
    assert _reference()._special_tokens == tokens._SPECIAL_TOKENS


def test_cached_ranks_give_the_same_tokens(fresh: Path) -> None:
    first = tokens._from_offline_package()  # parses the bundled file, writes the cache
    assert fresh.is_file()
    second = tokens._from_offline_package()  # from the cache
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
        lambda data: b"RKRANKS2" + data[8:],
    ],
)
def test_a_damaged_cache_is_rebuilt(fresh: Path, damage: object) -> None:
    tokens._from_offline_package()
    good = fresh.read_bytes()
    fresh.write_bytes(damage(good))  # type: ignore[operator]
    assert tokens.unpack_ranks(fresh.read_bytes()) is None
    encoding = tokens._from_offline_package()
    assert encoding.encode("hello world") == _reference().encode("hello world")
    assert fresh.read_bytes() == good


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
