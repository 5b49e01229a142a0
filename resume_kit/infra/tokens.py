"""Token counting with tiktoken's cl100k_base, offline, loaded only when a count is needed.

The encoding's ranks come from ``resume_kit/data/cl100k_base.tiktoken``, OpenAI's published
file (:data:`CL100K_URL`) shipped inside this package and checked against its published
SHA-256 (:data:`CL100K_SHA256`) on every load; the encoding is built with
``tiktoken.Encoding`` directly, with no ``tiktoken_ext`` plugin. Provenance and licence:
``resume_kit/data/NOTICE``. If the bundled file is missing or damaged, a file already in
``TIKTOKEN_CACHE_DIR`` is used when it has the same SHA-256. Nothing here ever downloads: if
neither loads, :class:`TokenizerUnavailable` says so.

Loading costs about 0.1 s, more than building most briefs, so callers ask :func:`fits` first:
a text of at most ``budget`` UTF-8 bytes cannot hold more than ``budget`` tokens (every
cl100k token is at least one byte), and then the encoding is never loaded. When a count will
be needed, :func:`preload` starts the loading in a thread while the caller waits for other
things (git). Parsing the bundled file's 100,000 base64 lines is a third of the cost: the
parsed ranks are kept in the user's cache folder in a compact checksummed form
(:data:`RANKS_CACHE_NAME`) that records the SHA-256 of the file it was parsed from, rebuilt
whenever it is missing, damaged or from another file. It holds an index of the tokens in byte
order, so the few ranks a changed brief's new pieces need are looked up in it
(:class:`PackedRanks`) without building the 100,000-entry table (~50 ms).

Counts are remembered in the user's cache folder by the text's SHA-256 (the brief is usually
the text of last time) and by piece (:data:`PIECES_CACHE_NAME`): a changed brief is mostly
pieces of earlier ones, split here with the standard library (:func:`text_pieces`), and its
count is their sum without loading the encoding. Pieces never counted before are counted
from the ranks by the byte-pair merge in Python (:func:`piece_tokens`): tiktoken's encoding is
built only for a text the split cannot classify, or when a template render needs it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable
from pathlib import Path

from resume_kit.core.digest import sha256
from resume_kit.core.typing_light import Any, Protocol
from resume_kit.infra.errors import ResumeKitError

ENCODING_NAME = "cl100k_base"
DATA_FILE_NAME = "cl100k_base.tiktoken"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# tiktoken's cache file name: the SHA-1 of CL100K_URL.
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
# The pattern, special tokens, URL and hash are cl100k_base's as tiktoken_ext/openai_public.py
# (tiktoken 0.14.0, MIT licence, Copyright (c) 2022 OpenAI, Shantanu Jain) defines them;
# tests/unit/test_tokens_data.py checks them against the installed tiktoken.
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

RANKS_CACHE_NAME = f"cl100k_base-{CL100K_SHA256[:16]}.ranks"
_RANKS_MAGIC = b"RKRANKv3"
# Bounds for reads that never hang or flood memory (the real files: 1.7 MB and 1.6 MB).
_DATA_FILE_LIMIT = 16 << 20
_RANKS_CACHE_LIMIT = 8 << 20

# Exact counts by the SHA-256 of the text (trusted: the user's own cache folder).
COUNTS_CACHE_NAME = f"cl100k_base-{CL100K_SHA256[:16]}.counts"
COUNTS_KEEP = 64
_COUNTS_LIMIT = 64 << 10
_counted: dict[str, int] = {}

# Counts by piece, for texts never counted before. cl100k_base encodes each piece its pattern
# splits a text into on its own (no token crosses a piece), so a text's count is the sum of its
# pieces' counts: a brief whose text changed is mostly pieces of earlier briefs, and is counted
# without loading the encoding (~0.25 s). The split is done here with the standard library
# (see text_pieces); a new piece's count comes from the ranks (piece_tokens), or from the
# encoding when it is loaded anyway, and pieces are learned only when the sum agrees.
PIECES_CACHE_NAME = f"cl100k_base-{CL100K_SHA256[:16]}.pieces"
PIECES_KEEP = 20_000
_PIECES_LIMIT = 4 << 20
# Non-ASCII characters text_pieces classifies by their general category (Unicode's stable
# letters, numbers, punctuation and symbols); any other (white space, marks, controls,
# unassigned, a case mapping into ASCII such as U+017F) leaves the split to the encoding.
_CLASSIFIED = frozenset(
    {"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"}
    | {"Sm", "Sc", "Sk", "So"}
)


class Ranks(Protocol):
    """What :func:`piece_tokens` reads of the ranks: a table, or :class:`PackedRanks`."""

    def __contains__(self, token: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def get(self, token: bytes, /) -> int | None: ...


_lock = threading.Lock()
_encoding: Any = None
_preloader: threading.Thread | None = None


class TokenizerUnavailable(ResumeKitError):
    """Neither the bundled nor a cached cl100k_base encoding could be loaded."""


def data_file() -> Path:
    """The bundled ``cl100k_base.tiktoken`` (found from the package, wherever this module is)."""
    import resume_kit

    return Path(resume_kit.__file__).parent / "data" / DATA_FILE_NAME


def verified_data(path: Path) -> bytes:
    """The bytes of the cl100k_base file at ``path``; ValueError unless they have the
    published SHA-256."""
    from resume_kit.infra.safefs import read_regular

    data = read_regular(path, _DATA_FILE_LIMIT, follow=True)
    digest = sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise ValueError(
            f"{path} has SHA-256 {digest}, not cl100k_base's published {CL100K_SHA256}"
        )
    return data


def parse_tiktoken_bpe(data: bytes) -> dict[bytes, int]:
    """The ranks of a ``.tiktoken`` file: one ``base64-token rank`` pair a line."""
    import binascii  # a shared library to load: only when the ranks are parsed

    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[binascii.a2b_base64(token)] = int(rank)
    return ranks


def pack_ranks(ranks: dict[bytes, int], source: str = CL100K_SHA256) -> bytes | None:
    """Ranks 0..n-1 as magic, the SHA-256 of the ``.tiktoken`` file they were parsed from
    (``source``, hex), the SHA-256 of the body, then the body: the count, one length byte per
    token, each token's offset in the tokens' bytes and the ranks in the tokens' byte order
    (4 bytes each, big-endian: the index :class:`PackedRanks` searches), then the tokens
    themselves, in rank order. None when the ranks do not have that shape."""
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    if any(rank != i or len(token) > 255 for i, (token, rank) in enumerate(ordered)):
        return None
    tokens = [token for token, _ in ordered]
    starts = [0, *itertools.accumulate(len(token) for token in tokens)][:-1]
    by_bytes = sorted(range(len(tokens)), key=tokens.__getitem__)
    body = (
        len(tokens).to_bytes(4, "big")
        + bytes(len(token) for token in tokens)
        + b"".join(start.to_bytes(4, "big") for start in starts)
        + b"".join(rank.to_bytes(4, "big") for rank in by_bytes)
        + b"".join(tokens)
    )
    return _RANKS_MAGIC + bytes.fromhex(source) + sha256(body).digest() + body


def _packed_body(data: bytes, source: str) -> tuple[bytes, int] | None:
    """The body of what :func:`pack_ranks` packed from the file whose SHA-256 is ``source``,
    and its count of tokens; None for anything damaged or packed from another file."""
    header = len(_RANKS_MAGIC)
    if not data.startswith(_RANKS_MAGIC) or len(data) < header + 68:
        return None
    if data[header : header + 32] != bytes.fromhex(source):
        return None
    digest, body = data[header + 32 : header + 64], data[header + 64 :]
    if sha256(body).digest() != digest:
        return None
    count = int.from_bytes(body[:4], "big")
    if len(body) < 4 + 9 * count or sum(body[4 : 4 + count]) != len(body) - 4 - 9 * count:
        return None
    return body, count


def unpack_ranks(data: bytes, source: str = CL100K_SHA256) -> dict[bytes, int] | None:
    """The ranks :func:`pack_ranks` packed from the file whose SHA-256 is ``source``, or None
    for anything damaged or packed from another file."""
    found = _packed_body(data, source)
    return None if found is None else _table(*found)


def _table(body: bytes, count: int) -> dict[bytes, int]:
    lengths, blob = body[4 : 4 + count], body[4 + 9 * count :]
    ends = list(itertools.accumulate(lengths))
    starts = [0, *ends[:-1]]
    tokens = [blob[a:b] for a, b in zip(starts, ends, strict=True)]
    return dict(zip(tokens, range(count), strict=True))


class PackedRanks:
    """The ranks of a packed file, looked up where they lie (a binary search of its index of
    tokens in byte order): a brief with a few pieces never counted before needs a few dozen
    ranks, where building the 100,000-entry table took ~50 ms. ``get``, ``in`` and ``len`` as
    the table's."""

    __slots__ = ("_body", "_count", "_seen")

    def __init__(self, body: bytes, count: int) -> None:
        self._body = body
        self._count = count
        self._seen: dict[bytes, int | None] = {}  # the merge asks for the same pairs again

    @classmethod
    def of(cls, data: bytes, source: str = CL100K_SHA256) -> PackedRanks | None:
        found = _packed_body(data, source)
        return None if found is None else cls(*found)

    def __len__(self) -> int:
        return self._count

    def table(self) -> dict[bytes, int]:
        """Every rank, as :func:`unpack_ranks` gives them (for many pieces at once)."""
        return _table(self._body, self._count)

    def __contains__(self, token: object) -> bool:
        return isinstance(token, bytes) and self.get(token) is not None

    def get(self, token: bytes) -> int | None:
        if token in self._seen:
            return self._seen[token]
        rank = self._search(token)
        self._seen[token] = rank
        return rank

    def _search(self, token: bytes) -> int | None:
        body, count = self._body, self._count
        order, blob = 4 + 5 * count, 4 + 9 * count
        low, high = 0, count
        while low < high:
            middle = (low + high) // 2
            at = order + 4 * middle
            rank = int.from_bytes(body[at : at + 4], "big")
            at = 4 + count + 4 * rank
            start = blob + int.from_bytes(body[at : at + 4], "big")
            found = body[start : start + body[4 + rank]]
            if found < token:
                low = middle + 1
            elif token < found:
                high = middle
            else:
                return rank
        return None


def _ranks_cache() -> Path:
    from resume_kit.infra.cachedir import user_cache_root

    return Path(user_cache_root()) / RANKS_CACHE_NAME


def _checked_sources() -> tuple[bytes, bytes | None]:
    """The bundled file's bytes (its SHA-256 checked first, on every load: a good cache never
    hides a damaged file) and the ranks cache's bytes (None: none readable)."""
    data = verified_data(data_file())
    from resume_kit.infra.safefs import read_regular

    try:
        return data, read_regular(_ranks_cache(), _RANKS_CACHE_LIMIT, follow=True)
    except Exception:  # no cache folder, unreadable, a FIFO: parse the bundled file
        return data, None


def _parsed_and_cached(data: bytes) -> dict[bytes, int]:
    """The ranks of the bundled file's ``data``, packed into the cache for the next load."""
    ranks = parse_tiktoken_bpe(data)
    packed = pack_ranks(ranks)
    if packed is not None:
        from resume_kit.infra.store import atomic_write

        with contextlib.suppress(Exception):  # a read-only home: parse again next time
            atomic_write(_ranks_cache(), packed, durable=False)
    return ranks


def _bundled_ranks() -> dict[bytes, int]:
    """The bundled file's ranks: from our cache, else parsed and cached."""
    data, packed = _checked_sources()
    cached = unpack_ranks(packed) if packed is not None else None
    return cached if cached is not None else _parsed_and_cached(data)


def _build(ranks: dict[bytes, int]) -> Any:
    import tiktoken

    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_SPECIAL_TOKENS,
    )


def _from_bundled_file() -> Any:
    return _build(_bundled_ranks())


def _from_tiktoken_cache() -> Any:
    """Build the encoding from a file already in ``TIKTOKEN_CACHE_DIR``; never downloads."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache_dir:
        raise FileNotFoundError("TIKTOKEN_CACHE_DIR is not set")
    return _build(parse_tiktoken_bpe(verified_data(Path(cache_dir) / CL100K_CACHE_KEY)))


def encoding() -> Any:
    """The cl100k_base encoding, loaded once per process."""
    global _encoding
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is None:
            problems: list[str] = []
            for loader in (_from_bundled_file, _from_tiktoken_cache):
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
                    hint=f"reinstall resume-kit (it ships {DATA_FILE_NAME} in resume_kit/data/), "
                    f"or put the cl100k_base file in TIKTOKEN_CACHE_DIR as {CL100K_CACHE_KEY}",
                )
    return _encoding


def _load_quietly() -> None:
    with contextlib.suppress(Exception):  # the caller's own encoding() call reports it
        encoding()


def preload() -> None:
    """Start loading the encoding in a thread (once); :func:`encoding` waits for it."""
    global _preloader
    with _lock:
        if _encoding is not None or _preloader is not None:
            return
        _preloader = threading.Thread(target=_load_quietly, name="resume-kit-tokenizer")
    _preloader.start()


def _counts_file() -> Path:
    from resume_kit.infra.cachedir import user_cache_root

    return Path(user_cache_root()) / COUNTS_CACHE_NAME


def _stored_counts() -> dict[str, int]:
    """The counts file as {SHA-256 of the text: count}; empty when missing or damaged."""
    from resume_kit.infra.safefs import read_regular

    counts: dict[str, int] = {}
    try:
        data = read_regular(_counts_file(), _COUNTS_LIMIT, follow=True)
    except Exception:  # no cache folder, unreadable, a FIFO, too large: count afresh
        return counts
    for line in data.decode("ascii", "replace").splitlines():
        digest, _, number = line.partition(" ")
        if len(digest) == 64 and number.isdigit() and len(number) < 10:
            counts[digest] = int(number)
    return counts


def _store_count(digest: str, count: int) -> None:
    counts = _stored_counts()
    counts.pop(digest, None)
    counts[digest] = count  # newest last: the oldest are dropped first
    kept = list(counts.items())[-COUNTS_KEEP:]
    from resume_kit.infra.store import atomic_write

    body = "".join(f"{d} {n}\n" for d, n in kept).encode("ascii")
    with contextlib.suppress(Exception):  # a read-only home: count again next time
        atomic_write(_counts_file(), body, durable=False)


def text_pieces(text: str) -> list[str] | None:
    """The pieces cl100k_base's pattern (:data:`_CL100K_PATTERN`) splits ``text`` into, with
    the standard library's ``re``; None when ``text`` holds a character it does not classify.

    The pattern is rewritten for ``re``: ``\\p{L}`` and ``\\p{N}`` become classes of the ASCII
    letters and digits plus this text's own letters and numbers (by ``unicodedata``); ``\\s``
    (``re.ASCII``) is Unicode's White_Space since no other white space is admitted; ``$`` (end
    of text in Rust's regex) is ``\\Z``; the possessive quantifiers are plain ones (Python 3.10
    has none; nothing after them can fail, so backtracking never changes a match).
    tests/unit/test_tokens_pieces.py checks the split against the original in ``regex``."""
    import re

    letters, numbers = "A-Za-z", "0-9"
    if not text.isascii():
        import unicodedata

        for char in sorted(set(re.findall(r"[^\x00-\x7f]", text))):
            kind = unicodedata.category(char)
            mapped = char.lower() + char.upper() + char.casefold()
            if kind not in _CLASSIFIED or char > "\uffff" or any(m.isascii() for m in mapped):
                return None
            if kind[0] == "L":
                letters += re.escape(char)
            elif kind[0] == "N":
                numbers += re.escape(char)
    pattern = (
        rf"""'(?i:[sdmt]|ll|ve|re)|[^\r\n{letters}{numbers}]?[{letters}]+|[{numbers}]{{1,3}}"""
        rf"""| ?[^\s{letters}{numbers}]+[\r\n]*|\s+\Z|\s*[\r\n]|\s+(?!\S)|\s"""
    )
    pieces: list[str] = re.compile(pattern, re.ASCII).findall(text)
    return pieces if "".join(pieces) == text else None


def _pieces_file() -> Path:
    from resume_kit.infra.cachedir import user_cache_root

    return Path(user_cache_root()) / PIECES_CACHE_NAME


_DIGIT_RUNS = [f"{n:0{width}d}" for width in (1, 2, 3) for n in range(10**width)]
_read_pieces: tuple[Path, dict[str, int]] | None = None  # this process's read of the file


def _stored_pieces() -> dict[str, int]:
    """The pieces file as {piece: count}; empty when missing or damaged. A count is at least
    one and at most the piece's length (every token is at least one byte). Read once per
    process (a render counts several candidate texts)."""
    global _read_pieces
    file = _pieces_file()
    if _read_pieces is not None and _read_pieces[0] == file:
        return _read_pieces[1]
    pieces = _parse_pieces(file)
    _read_pieces = (file, pieces)
    return pieces


def _parse_pieces(file: Path) -> dict[str, int]:
    import json

    from resume_kit.infra.safefs import read_regular

    try:
        data = json.loads(read_regular(file, _PIECES_LIMIT, follow=True))
    except Exception:  # no cache folder, unreadable, a FIFO, too large, not JSON: learn afresh
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        piece: count
        for piece, count in data.items()
        if isinstance(count, int) and 0 < count <= len(piece.encode("utf-8", "surrogatepass"))
    }


def piece_tokens(piece: str, ranks: Ranks) -> int:
    """How many tokens cl100k_base makes of one piece of its pattern's split: tiktoken's
    byte-pair merge (``_byte_pair_merge``: the adjacent pair with the lowest rank merges
    first, the leftmost of equal ranks), in Python. A few new pieces are counted this way in
    well under a millisecond, where building tiktoken's encoding takes ~0.1 s.
    tests/unit/test_tokens_pieces.py checks it against tiktoken."""
    data = piece.encode("utf-8", "surrogatepass")
    if data in ranks:
        return 1
    parts = [data[i : i + 1] for i in range(len(data))]
    while len(parts) > 1:
        best, best_rank = -1, len(ranks)
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < best_rank:
                best, best_rank = i, rank
        if best < 0:
            break
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    return len(parts)


_piece_ranks: Ranks | None = None


# A piece's ranks looked up in the packed cache cost ~0.1-0.3 ms, against ~50 ms to build the
# table and then microseconds (2026-12-07): past this many new pieces the table is built.
LOOKUP_PIECES_MAX = 128


def _ranks_for_pieces(pieces: int) -> Ranks | None:
    """The bundled ranks for :func:`piece_tokens` to count ``pieces`` new pieces (once per
    process): looked up in the packed cache, else the table (for many pieces, or parsed from
    the bundled file when there is no good cache); None when neither loads (then the
    encoding, with its other source and its error, decides)."""
    global _piece_ranks
    with contextlib.suppress(Exception):
        if _piece_ranks is None:
            data, packed = _checked_sources()
            lookup = PackedRanks.of(packed) if packed is not None else None
            _piece_ranks = lookup if lookup is not None else _parsed_and_cached(data)
        if isinstance(_piece_ranks, PackedRanks) and pieces > LOOKUP_PIECES_MAX:
            _piece_ranks = _piece_ranks.table()
    return _piece_ranks


def _learn_pieces(
    count: Callable[[str], int], pieces: list[str], total: int, stored: dict[str, int]
) -> None:
    """Remember the counts of ``pieces`` new to ``stored`` if, with the known ones, they add up
    to ``total`` (the count of the whole text); else learn nothing."""
    new = {p: count(p) for p in dict.fromkeys(pieces) if p not in stored}
    if not new or sum(new.get(p) or stored[p] for p in pieces) != total:
        return
    # Numbers change most between briefs (counts, ages, ids) and split into runs of at most
    # three digits: every such run is learned with the first miss.
    if "999" not in stored:
        new.update({n: count(n) for n in _DIGIT_RUNS if n not in stored})
    global _read_pieces
    merged = {**stored, **new}
    kept = dict(list(merged.items())[-PIECES_KEEP:])  # the oldest are dropped first
    import json

    from resume_kit.infra.store import atomic_write

    file = _pieces_file()
    _read_pieces = (file, kept)
    with contextlib.suppress(Exception):  # a read-only home: learn again next time
        atomic_write(file, json.dumps(kept, separators=(",", ":")), durable=False)


def count_tokens(text: str) -> int:
    """The exact cl100k_base token count (special-token text counts as ordinary text).

    Counts are remembered by the text's SHA-256 in this process and in the user's cache folder
    (:data:`COUNTS_CACHE_NAME`): the brief is usually the same text as last time, and a
    remembered count spares loading the encoding. A new text made only of pieces counted before
    (:data:`PIECES_CACHE_NAME`) is the sum of their counts, also without the encoding."""
    if not text:
        return 0
    digest = sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    known = _counted.get(digest)
    if known is None:
        known = _stored_counts().get(digest)
    if known is None:
        pieces = text_pieces(text)
        stored = _stored_pieces() if pieces is not None else {}
        if pieces is not None and all(p in stored for p in pieces):
            known = sum(stored[p] for p in pieces)
        else:
            # new pieces: counted from the ranks in Python, unless the encoding is already here
            ranks = None
            if pieces is not None and _encoding is None:
                ranks = _ranks_for_pieces(sum(1 for p in set(pieces) if p not in stored))
            if pieces is not None and ranks is not None:
                counts: dict[str, int] = {}

                def count(piece: str) -> int:
                    if piece not in counts:
                        counts[piece] = piece_tokens(piece, ranks)
                    return counts[piece]

                known = sum(stored[p] if p in stored else count(p) for p in pieces)
                _learn_pieces(count, pieces, known, stored)
            else:
                enc = encoding()
                known = len(enc.encode(text, disallowed_special=()))
                if pieces is not None:
                    _learn_pieces(lambda p: len(enc.encode_ordinary(p)), pieces, known, stored)
        _store_count(digest, known)
    _counted[digest] = known
    return known


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
