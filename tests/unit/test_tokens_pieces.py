"""Counting by pieces: the standard-library split equals cl100k_base's own pattern, and a count
served from remembered pieces equals the encoding's count of the whole text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.infra import tokens

# Characters the brief writes, text repositories bring, and ones the split must refuse.
_EXTRA = "…·×–—→’“”é日本語Ωß²٣Ⅻ€©\u00a0\u2009\u0301ſKİı\u0085\x1c\x1f\t\r\v\f"
_ALPHABET = st.one_of(
    st.characters(max_codepoint=127),
    st.sampled_from(_EXTRA),
    st.characters(),
)
_WORDS = st.sampled_from(
    [
        "doc",
        "-",
        "000",
        "01",
        " done",
        " (",
        "verified",
        " 3 d ago",
        "`",
        "…",
        " ",
        "\n",
        "'s",
        "Don't",
        "×",
        " src/pkg0010/mod008.py",
        "日本",
        " ·",
        "\n\n",
        "  ",
        "12345",
        "é",
    ]
)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No count remembered in this process (the encoding may stay loaded: it is only slow)."""
    monkeypatch.setattr(tokens, "_counted", {})
    monkeypatch.setattr(tokens, "_read_pieces", None)
    yield


@given(st.text(_ALPHABET, max_size=80))
@settings(max_examples=400, deadline=None)
def test_the_split_is_cl100k_patterns_own(text: str) -> None:
    pieces = tokens.text_pieces(text)
    if pieces is None:  # refused: the encoding splits it
        return
    assert pieces == regex.findall(tokens._CL100K_PATTERN, text)


def test_the_brief_characters_are_split_here() -> None:
    text = "Done: `doc-00000` … `doc-01499` · 3 ×\n  - `src/été.py` (日本語 ²)\n"
    assert tokens.text_pieces(text) == regex.findall(tokens._CL100K_PATTERN, text)
    for refused in ("a\u00a0b", "x\u0301", "ſ", "\u0085", "\U0001f600"):
        assert tokens.text_pieces(refused) is None, repr(refused)


@given(st.lists(st.lists(_WORDS, max_size=12).map("".join), min_size=1, max_size=8))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_counts_from_pieces_equal_the_encodings(fresh: None, texts: list[str]) -> None:
    """Whatever was learned before, every count equals the encoding's count of the text."""
    encoding = tokens.encoding()
    for text in texts:
        tokens._counted.clear()
        assert tokens.count_tokens(text) == len(encoding.encode(text, disallowed_special=()))


def test_a_new_text_of_known_pieces_is_counted_without_the_encoding(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = "Done (verified, do not redo): `doc-00000` … `doc-01499` (verified 3 d ago)"
    tokens.count_tokens(first)
    assert tokens._pieces_file().is_file()
    monkeypatch.setattr(tokens, "_counted", {})
    monkeypatch.setattr(tokens, "_read_pieces", None)  # a new process reads the file

    def refuse() -> object:
        raise AssertionError("the encoding was loaded for a text of known pieces")

    monkeypatch.setattr(tokens, "encoding", refuse)
    changed = "Done (verified, do not redo): `doc-01499` … `doc-00000` (verified 3 d ago)"
    want = len(tokens._encoding.encode(changed, disallowed_special=()))
    assert tokens.count_tokens(changed) == want
    numbers = changed.replace("01499", "07321").replace("3 d", "12 d")  # numbers: all learned
    assert tokens.count_tokens(numbers) == len(
        tokens._encoding.encode(numbers, disallowed_special=())
    )
    with pytest.raises(AssertionError):  # once loaded, the encoding counts a new piece
        tokens.count_tokens(changed + " zebra")


def test_new_pieces_are_counted_from_the_ranks_without_building_the_encoding(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a process that has not built the encoding (a brief after the agent worked: a few
    pieces never seen), the new pieces are counted from the ranks by the byte-pair merge."""
    encoding = tokens.encoding()
    text = "Done (verified): `doc-00000` quagga zebra-xylophone ÅngströmΩ 日本語"
    want = len(encoding.encode(text, disallowed_special=()))

    def refuse() -> object:
        raise AssertionError("the encoding was built for new pieces")

    monkeypatch.setattr(tokens, "_encoding", None)  # a new process
    monkeypatch.setattr(tokens, "_piece_ranks", None)
    monkeypatch.setattr(tokens, "encoding", refuse)
    assert tokens.count_tokens(text) == want
    assert tokens._stored_pieces()[" quagga"] == len(encoding.encode_ordinary(" quagga"))


@given(st.text(_ALPHABET, max_size=80))
@settings(max_examples=400, deadline=None)
def test_the_byte_pair_merge_counts_each_piece_as_tiktoken_does(text: str) -> None:
    encoding = tokens.encoding()
    table = tokens._bundled_ranks()
    packed = tokens.PackedRanks.of(tokens.pack_ranks(table) or b"")
    assert packed is not None
    for piece in tokens.text_pieces(text) or []:  # None: the encoding counts the whole text
        want = len(encoding.encode_ordinary(piece))
        assert tokens.piece_tokens(piece, table) == tokens.piece_tokens(piece, packed) == want


_TOKENS = st.binary(min_size=1, max_size=6)


@given(st.lists(_TOKENS, unique=True, max_size=60), st.lists(_TOKENS, max_size=30))
@settings(max_examples=300, deadline=None)
def test_the_packed_ranks_look_up_what_the_table_holds(
    vocabulary: list[bytes], others: list[bytes]
) -> None:
    table = {token: rank for rank, token in enumerate(vocabulary)}
    packed = tokens.PackedRanks.of(tokens.pack_ranks(table) or b"")
    assert packed is not None and len(packed) == len(table)
    for token in [*vocabulary, *others, b""]:
        assert packed.get(token) == table.get(token)
        assert (token in packed) == (token in table)
    assert "text" not in packed  # not bytes: never a token


def test_new_pieces_never_build_the_whole_table_from_a_good_cache(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The brief after a commit holds a few pieces never counted before: with the ranks cache
    in place they are looked up in it, not unpacked into 100,000 entries (~50 ms)."""
    cache = tmp_path / tokens.RANKS_CACHE_NAME
    monkeypatch.setattr(tokens, "_ranks_cache", lambda: cache)
    monkeypatch.setattr(tokens, "_piece_ranks", None)
    tokens._ranks_for_pieces(1)  # no cache yet: the bundled file is parsed and packed
    assert tokens.PackedRanks.of(cache.read_bytes()) is not None
    text = "fix the quagga parser for contract amounts"
    want = len(tokens.encoding().encode(text, disallowed_special=()))

    def refuse(*_: object) -> object:
        raise AssertionError("the whole table was built")

    monkeypatch.setattr(tokens, "_piece_ranks", None)  # a new process
    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.setattr(tokens, "encoding", refuse)
    monkeypatch.setattr(tokens, "unpack_ranks", refuse)
    monkeypatch.setattr(tokens, "parse_tiktoken_bpe", refuse)
    assert tokens.count_tokens(text) == want
    assert isinstance(tokens._piece_ranks, tokens.PackedRanks)


def test_a_damaged_or_hostile_pieces_file_is_ignored(fresh: None) -> None:
    import os

    path = tokens._pieces_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"hello": 0, " world": 99, "x": "1"}')
    tokens._read_pieces = None
    assert tokens._stored_pieces() == {}
    assert tokens.count_tokens("hello world") == 2
    learned = tokens._stored_pieces()
    assert learned["hello"] == learned[" world"] == 1 and "x" not in learned
    assert all(learned[n] == 1 for n in ("0", "07", "999"))  # numbers come with the first miss
    path.unlink()
    os.mkfifo(path)  # never hangs
    tokens._read_pieces = None
    assert tokens._stored_pieces() == {}
    tokens._counted.clear()
    assert tokens.count_tokens("hello there") == 2


def test_the_pieces_file_stays_bounded(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "PIECES_KEEP", 10)
    for i in range(30):
        tokens.count_tokens(f"word{i:03d} other{i}")
    assert len(tokens._stored_pieces()) == 10


def test_many_new_pieces_are_counted_from_the_whole_table(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Past LOOKUP_PIECES_MAX new pieces (a first brief), building the table once is cheaper
    than looking each piece's ranks up in the packed cache: the count is the same."""
    cache = tmp_path / tokens.RANKS_CACHE_NAME
    monkeypatch.setattr(tokens, "_ranks_cache", lambda: cache)
    monkeypatch.setattr(tokens, "LOOKUP_PIECES_MAX", 3)
    monkeypatch.setattr(tokens, "_piece_ranks", None)
    tokens._ranks_for_pieces(1)  # packs the cache
    monkeypatch.setattr(tokens, "_piece_ranks", None)
    few, many = "a quagga", "quagga zebra xylophone ocelot narwhal"
    want = [len(tokens.encoding().encode(t, disallowed_special=())) for t in (few, many)]
    monkeypatch.setattr(tokens, "_encoding", None)
    assert tokens.count_tokens(few) == want[0]
    assert isinstance(tokens._piece_ranks, tokens.PackedRanks)
    assert tokens.count_tokens(many) == want[1]
    assert isinstance(tokens._piece_ranks, dict)
