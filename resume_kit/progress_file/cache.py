"""The progress cache on disk: reading a large progress file through a YAML parser costs far
more than the brief's budget, so the validated model's data is kept in the work tree's folder
of the user's cache (Layout.user_cache, never the repository: a clone could ship a forged
one), keyed by the BLAKE2b-256 of the exact text (any edit, by anyone, misses the cache). Its
text is :mod:`resume_kit.progress_file.cache_json`'s; the git hook's record of the unit in
progress is written beside it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ProgressFileError
from resume_kit.infra.paths import Layout
from resume_kit.infra.store import atomic_write
from resume_kit.model.progress import Progress, Unit
from resume_kit.progress_file.cache_json import (
    HEAD_SIZE,
    Blocks,
    CachedRows,
    data_of,
    digest_in,
    digest_of,
    payload,
)
from resume_kit.progress_file.validate import built_unit, model_from_index

MAX_CACHE_BYTES = 128 * 1024 * 1024  # the JSON of a 16 MiB progress file's model is well below


def cache_file(layout: Layout) -> Path:
    """The validated model of progress.yaml, keyed by its BLAKE2b, in the user's cache."""
    return layout.user_cache / "progress.json"


def read(layout: Layout, key: Callable[[], str]) -> str | None:
    """The cache file's text when it holds the model of the progress text whose key ``key``
    gives (asked once the file is read: it may be being computed on another thread)."""
    from resume_kit.infra.safefs import read_regular

    try:
        text = read_regular(cache_file(layout), MAX_CACHE_BYTES).decode("utf-8")
    except (OSError, ValueError):
        text = None
    wanted = key()  # even on a miss: the caller may write the cache with it
    return text if text is not None and digest_of(text) == wanted else None


def data(cache_text: str) -> dict[str, Any] | None:
    """The data a cache text holds, parsed whole; None when it is not a mapping of JSON."""
    try:
        found = data_of(cache_text)
    except ValueError:
        return None
    return found if type(found) is dict else None


def model_of_rows(layout: Layout, rows: CachedRows) -> Progress | None:
    """The model of ``rows`` whose units are built when read in full (None: not that shape).
    A unit that turns out not to be valid is an error, and the cache is removed."""
    try:
        rest = rows.rest()
    except ValueError:
        return None

    def build(position: int) -> Unit:
        try:
            return built_unit(rows.row(position), rows.columns.entry(position))
        except (ValueError, ProgressFileError) as exc:
            with contextlib.suppress(OSError):
                cache_file(layout).unlink()
            message = getattr(exc, "message", "the progress cache disagrees with progress.yaml")
            raise ProgressFileError(
                message, hint="the damaged cache was removed: run the command again"
            ) from None

    return model_from_index(rest, rows.columns, build)


def write(
    layout: Layout,
    digest: str,
    model_data: dict[str, Any],
    encoded: bytes,
    *,
    blocks: Blocks | None = None,
    previous: tuple[str, dict[str, Any]] | None = None,
) -> str:
    """Write the cache of ``model_data`` for the progress file's bytes ``encoded`` (whose
    :func:`~resume_kit.core.digest.file_key` is ``digest``); its text. ``previous``: the cache
    text and data of the version this one replaces: the lines of the units that did not change
    are taken from it."""
    units = model_data["units"]
    old_rows = CachedRows.of(previous[0]) if previous is not None else None
    reused = old_rows.rows_for(units, previous[1].get("units")) if old_rows and previous else None
    text = payload(digest, model_data, blocks, reused)
    first = next((unit["id"] for unit in units if unit["status"] == "in_progress"), None)
    store(layout, text, encoded, first)
    return text


def store(layout: Layout, cache_text: str, encoded: bytes, in_progress: str | None) -> None:
    """Write ``cache_text`` and the hook's record that ``in_progress`` (an id, or None) is the
    unit in progress in exactly the progress file's bytes ``encoded``."""
    with contextlib.suppress(OSError):  # checked against progress.yaml's digest when read
        atomic_write(cache_file(layout), cache_text, durable=False)
    write_in_progress(layout, encoded, in_progress)


class CacheText:
    """A cache text as this process last read or wrote it: the text, and the tail lines
    appended to the file since, joined only when the whole is asked for. A checkpoint appends
    one line to a 4.4 MB text (:func:`store_unit`) that verify-next never reads back: joining
    them made 4.4 MB of new memory (~1,100 page faults, ~2.5 ms)."""

    __slots__ = ("_tails", "_text")

    def __init__(self, text: str, tails: str = "") -> None:
        self._text = text
        self._tails = tails

    def whole(self) -> str:
        if self._tails:
            self._text, self._tails = f"{self._text}{self._tails}", ""
        return self._text

    def digest(self) -> str | None:
        """:func:`~resume_kit.progress_file.cache_json.digest_of` the whole, not joined."""
        if not self._tails:
            return digest_of(self._text)
        return digest_in(self._text, self._text[-1:] + self._tails)

    def appended(self, line: str) -> CacheText:
        return CacheText(self._text, self._tails + line)


def store_unit(
    layout: Layout,
    previous: CacheText | None,
    rows: CachedRows,
    change: tuple[int, dict[str, Any], str, Blocks | None],
    encoded: bytes,
    in_progress: str | None,
) -> tuple[CacheText | None, CachedRows | None]:
    """:func:`store` the cache of a checkpoint that changed one unit: ``change`` is the
    position, the data, the new key and the new blocks (:meth:`CachedRows.replaced`) of the
    unit in ``rows``, the rows of the cache text ``previous``. A tail line is appended to the
    file when it still holds ``previous``'s model; the text is written whole otherwise. The
    new text and its rows; None and None when ``previous`` turns out not to hold a line for
    each unit (a cache changed by hand): then the cache is removed."""
    base = previous.digest() if previous is not None else None
    if previous is not None and base is not None:
        tail = rows.tail(*change)
        if tail is not None and _append(layout, tail[0], base):
            write_in_progress(layout, encoded, in_progress)
            return previous.appended(tail[0]), tail[1]
    try:
        text, replaced = rows.replaced(*change)
    except ValueError:
        with contextlib.suppress(OSError):
            cache_file(layout).unlink()
        write_in_progress(layout, encoded, in_progress)
        return None, None
    store(layout, text, encoded, in_progress)
    return CacheText(text), replaced


_LAST_LINE_BYTES = 1 << 16  # a longer tail line is not looked for: the text is written whole


def _append(layout: Layout, line: str, base: str) -> bool:
    """Append ``line`` to the cache file if it still holds the model of the progress text
    whose key is ``base`` (another process may have written the cache of another version
    since this one read it); whether it did."""
    import os

    from resume_kit.infra.safefs import open_regular

    try:
        with open_regular(cache_file(layout), append=True) as handle:
            size = os.fstat(handle.fileno()).st_size
            reach = min(size, _LAST_LINE_BYTES)
            handle.seek(0)
            start = handle.read(HEAD_SIZE).decode("utf-8", "replace")
            handle.seek(size - reach)
            end = handle.read(reach).decode("utf-8", "replace")
            if digest_in(start, end) != base:
                return False
            handle.write(line.encode("utf-8"))  # at the end whatever was read: O_APPEND
    except OSError:
        return False
    return True


def in_progress_file(layout: Layout) -> Path:
    from resume_kit.infra.cachedir import in_progress_file as named

    return Path(named(str(layout.user_cache)))


def write_in_progress(layout: Layout, encoded: bytes, unit_id: str | None) -> None:
    """Tell the git hook which unit is in progress in exactly this text (see hookentry)."""
    from resume_kit.integrations.hook_entry import write_unit_in_progress

    write_unit_in_progress(str(in_progress_file(layout)), encoded, unit_id)


def first_in_progress(progress: Progress) -> str | None:
    """The id of the first unit in progress (a status is read without building its unit)."""
    return next((u.id for u in progress.units if u.status == "in_progress"), None)
