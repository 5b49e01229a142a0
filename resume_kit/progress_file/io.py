"""Reading and writing progress.yaml: load (content-hash cache, libyaml, ruamel for exact
errors), save, the locked transaction, and create."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from resume_kit.core.digest import file_key, file_key_started
from resume_kit.core.typing_light import TYPE_CHECKING, Any, TypeVar
from resume_kit.infra.errors import ProgressFileError
from resume_kit.infra.paths import Layout
from resume_kit.infra.store import FileLock, atomic_write, ensure_gitignore, keep_history
from resume_kit.model.progress import TOP_KEYS, Progress
from resume_kit.progress_file import cache
from resume_kit.progress_file.cache_json import CachedRows
from resume_kit.progress_file.roundtrip import (
    detect_indent,
    dump,
    merge_into,
    new_document,
    parse_text,
    to_data,
    unit_data,
)
from resume_kit.progress_file.validate import migrate, model_from_cache, validate

if TYPE_CHECKING:
    import re

Text = TypeVar("Text", str, bytes)

MAX_FILE_BYTES = 16 * 1024 * 1024


class ProgressDoc:
    """A loaded progress file: the typed model, its text, and the data it was loaded as.

    The text is decoded from its bytes when first read: a model from the cache and a checkpoint
    that rewrites one unit in the bytes never need the whole text (4 MB on a large plan)."""

    def __init__(
        self,
        path: Path,
        progress: Progress,
        text: str | None,
        data: dict[str, Any] | None = None,
        *,
        _rows: CachedRows | None = None,
        _cache_text: cache.CacheText | None = None,
        _bytes: bytes | None = None,
    ) -> None:
        if text is None and _bytes is None:
            raise ValueError("a progress document needs its text or its bytes")
        self.path = path
        self.progress = progress
        self._text = text
        # to_data() of the model as loaded; empty until :meth:`loaded` when the model's units
        # are built when read (then _rows holds the cache's lines, _cache_text its text)
        self.data: dict[str, Any] = data if data is not None else {}
        self._raw: Any = None
        # the one unit the model changed in, when the caller says so (changed_only)
        self._only_unit: str | None = None
        self._rows = _rows
        self._cache_text = _cache_text
        self._bytes = _bytes  # the text's bytes, as read or written

    @property
    def text(self) -> str:
        if self._text is None:
            assert self._bytes is not None
            # bytes this process wrote, or whose validated model the cache holds: UTF-8
            self._text = self._bytes.decode("utf-8")
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        self._text = value

    def loaded(self) -> dict[str, Any]:
        """:attr:`data`, parsed from the cache's text first when the units are built when read."""
        if not self.data and self._cache_text is not None:
            self.data = cache.data(self._cache_text.whole()) or to_data(self.progress)
            self._rows = None
        return self.data

    def changed_only(self, unit_id: str) -> None:
        """Tell :func:`save` that the model changed in unit ``unit_id`` alone: the data of
        the other units is then taken as loaded, not made again from 10,000 objects."""
        self._only_unit = unit_id

    def changed_data(self) -> dict[str, Any]:
        """``to_data(self.progress)``, by way of :meth:`changed_only` when it was called."""
        unit_id, self._only_unit = self._only_unit, None
        units, loaded = self.progress.units, self.loaded().get("units")
        if unit_id is not None and type(loaded) is list and len(loaded) == len(units):
            for index, unit in enumerate(units):
                if unit.id == unit_id and loaded[index].get("id") == unit_id:
                    fresh = list(loaded)
                    fresh[index] = unit_data(unit)
                    return {**self.loaded(), "units": fresh}
        return to_data(self.progress)

    @property
    def raw(self) -> Any:
        """The ruamel.yaml round-trip document (parsed on first use: it is slow)."""
        if self._raw is None:
            self._raw, _ = migrate(parse_text(self.text, self.path.name), self.path.name)
        return self._raw

    def render(self) -> str:
        """The full round trip: merge the model into the parsed document and dump it."""
        merged = merge_into(self.raw, to_data(self.progress))
        self._raw = merged
        return dump(merged, detect_indent(self.text))

    def render_fast(self, new: dict[str, Any] | None = None) -> str:
        """Like :meth:`render`, re-rendering only the changed units and ledger entries when
        that is safe; ``new``: ``to_data(self.progress)`` when the caller has it already."""
        from resume_kit.progress_file.patch import KEYED_LISTS, patch_list

        if new is None:
            new = to_data(self.progress)
        old = self.loaded()
        changed = [k for k in TOP_KEYS if old.get(k) != new.get(k)]
        if old and all(k in KEYED_LISTS for k in changed):
            patched: str | None = self.text
            for name in changed:
                if patched is not None:
                    patched = patch_list(patched, name, old.get(name, []), new.get(name, []))
            if patched is not None:
                patched = _with_version(patched, new["schema_version"])
            if patched is not None:
                return patched
        text = self.render()
        validate(
            parse_text(text, self.path.name), self.path.name
        )  # never write what we cannot read
        return text


# At the text's start or the newline before the line: str.find finds that literal fast, where a
# MULTILINE ^ is tried at every position of a large file.
_VERSION_LINE = r"(?:\A|\n)schema_version:[ \t]*(\d+)[ \t]*(?=#|\r?$)"
_VERSION_START = "\nschema_version:"  # its literal start after the first line


def _with_version(text: str, version: int) -> str | None:
    """``text`` whose one top-level ``schema_version`` line says ``version`` (an older file is
    rewritten as the current version when it is written for another reason), or None when
    that line is not plainly there (then the full round trip decides)."""
    match = _version_line(text)
    if match is None:
        return None
    if int(match.group(1)) == version:
        return text
    bumped = text[: match.start(1)] + str(version) + text[match.end(1) :]
    if _only_comments(text[: match.start()]):
        # the document's first line: the first key of its (validated) top-level mapping
        return bumped
    # once per file: check that the line was the key and not text inside a value
    from resume_kit.progress_file.patch import normalise, safe_load

    try:
        before, after = normalise(safe_load(text)), normalise(safe_load(bumped))
    except Exception:
        return None
    if not isinstance(after, dict) or after.get("schema_version") != version:
        return None
    after["schema_version"] = before.get("schema_version") if isinstance(before, dict) else None
    return bumped if after == before else None


def _version_line(text: Text) -> re.Match[Text] | None:
    """The one top-level ``schema_version`` line of ``text``; None when there is none or more
    than one (the line is not plainly there)."""
    found = _version_lines(text)
    return found[0] if len(found) == 1 else None


def _version_lines(text: Text) -> list[re.Match[Text]]:
    """The matches of :data:`_VERSION_LINE` in ``text`` (a str, or bytes of UTF-8), tried only
    where its literal start occurs (``find``): a regex scan of a 4 MB file took several
    milliseconds."""
    import re

    if isinstance(text, str):
        return _lines_matching(text, re.compile(_VERSION_LINE, re.MULTILINE), _VERSION_START)
    pattern = re.compile(_VERSION_LINE.encode("ascii"), re.MULTILINE)
    return _lines_matching(text, pattern, _VERSION_START.encode("ascii"))


def _lines_matching(text: Text, pattern: re.Pattern[Text], start: Text) -> list[re.Match[Text]]:
    found: list[re.Match[Text]] = []
    at = 0 if text.startswith(start[1:]) else text.find(start)
    while at >= 0:
        match = pattern.match(text, at)
        if match is not None:
            found.append(match)
        at = text.find(start, at + 1)
    return found


def _only_comments(text: str) -> bool:
    """Whether ``text`` holds nothing but blank lines, comment lines and ``---`` lines."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and line.rstrip() != "---":
            return False
    return True


def read_text(path: Path) -> str:
    """progress.yaml's text (a one-line error when it is missing, too large, not a regular
    file or not UTF-8)."""
    return _decoded(read_bytes(path), path)


def read_bytes(path: Path) -> bytes:
    """progress.yaml's bytes (a one-line error when it is missing, too large or not a regular
    file)."""
    import errno

    from resume_kit.infra.store import FileTooLarge, NotARegularFile, read_regular

    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise ProgressFileError(
            f"no progress file at {path}",
            hint='run `resume-kit init --goal "..."` first',
        ) from None
    except FileTooLarge as exc:
        raise ProgressFileError(
            f"{path.name} is {exc.size // (1024 * 1024)} MiB, larger than the "
            f"{MAX_FILE_BYTES // (1024 * 1024)} MiB a progress file may be",
            hint="keep progress.yaml small: long logs belong in .resume-kit/runs/",
        ) from None
    except NotARegularFile as exc:
        if exc.kind == "a directory":
            raise ProgressFileError(f"{path} is a directory, not a file") from None
        raise ProgressFileError(
            f"{path} is not a regular file ({exc.kind})",
            hint="progress.yaml must be a plain text file; move this one away",
        ) from None
    except PermissionError:
        raise ProgressFileError(
            f"cannot read {path}: permission denied", hint="check the file's permissions"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise ProgressFileError(
                f"{path.parent} is not a folder, so there is no progress file in it",
                hint=f"move {path.parent.name} away and run `resume-kit init`",
            ) from None
        raise ProgressFileError(
            f"cannot read {path}: {exc.strerror or exc}",
            hint="progress.yaml must be a plain text file (a symbolic link loop?)",
        ) from None
    return data


def _checked_text(data: bytes, path: Path) -> str:
    """The text of progress.yaml's bytes: UTF-8 without NUL (bytes the cache holds the model
    of passed this when the cache was written)."""
    text = _decoded(data, path)
    if "\x00" in text:
        raise ProgressFileError(f"{path.name}: the file holds binary data (NUL bytes)")
    return text


def _decoded(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ProgressFileError(
            f"{path.name}:{line}: not UTF-8 text",
            hint="save progress.yaml as UTF-8; resume-kit never overwrites a file it cannot read",
        ) from None


def progress_cache_file(layout: Layout) -> Path:
    """The validated model of progress.yaml, keyed by its BLAKE2b, in the user's cache."""
    return cache.cache_file(layout)


def _parse_fast(text: str) -> Any:
    """Plain data through libyaml's safe loader, or None when it cannot say (then ruamel does)."""
    from resume_kit.progress_file.patch import safe_load

    try:
        return safe_load(text)
    except RecursionError:
        return _TOO_DEEP
    except Exception as exc:
        # libyaml stops at 1000 levels; ruamel would then recurse for seconds before failing
        return _TOO_DEEP if "maximum nesting depth" in str(exc) else None


MAX_DEPTH = 64  # a progress file nests about five levels deep
_TOO_DEEP = object()  # what _parse_fast returns for nesting even libyaml's constructor gave up on


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether lists and mappings nest more than ``limit`` levels (each shared node visited
    once, so an alias bomb costs its size in text, not its expanded size)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict | list) or id(node) in seen:
            continue
        if depth > limit:
            return True
        seen.add(id(node))
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_and_validate(text: str, name: str = "progress.yaml") -> Progress:
    """Validate ``text``: libyaml when it agrees the file is valid; ruamel for exact errors."""
    from resume_kit.infra.collector import paused_collections

    with paused_collections():  # plain data in bulk: see infra/collector.py
        fast = _parse_fast(text)
        if fast is not None and fast is not _TOO_DEEP:
            with contextlib.suppress(ProgressFileError):
                return validate(fast, name, strings_as_read=True)
    # ruamel takes seconds to fail on deep nesting
    if fast is not None and (fast is _TOO_DEEP or _deeper_than(fast, MAX_DEPTH)):
        raise ProgressFileError(
            f"{name}: nested more than {MAX_DEPTH} levels deep: not a progress file",
            hint="fix the file by hand; resume-kit never overwrites a file it cannot read",
        )
    return validate(parse_text(text, name), name)


# The bytes this process last read or wrote, per file, with the cache's text and data: a
# command that loads the same unchanged file again (verify-next reads it before and after the
# run) skips hashing it and reading the cache. Only exact text equality counts.
_LOADED: dict[str, tuple[bytes, cache.CacheText | None, dict[str, Any] | None]] = {}


def load(
    layout: Layout, reuse: ProgressDoc | None = None, *, units_when_read: bool = False
) -> ProgressDoc:
    """The progress file as it is now. ``reuse``: a document this process loaded or saved
    before; when the file still holds exactly its text, it is returned as it is (its model
    not built again), so the caller must not have changed its model without saving it.
    ``units_when_read``: from the cache, each unit is built when a field other than its id,
    status and ``after`` is first read (a caller that reads those of every unit and one unit
    in full: verify-next), and the data is parsed only when asked for (:meth:`loaded`)."""
    from resume_kit.infra.safefs import holds_bytes

    path = layout.progress
    if reuse is not None and reuse.path == path and reuse._bytes is not None:
        if holds_bytes(path, reuse._bytes):  # no 4 MB read whole, decoded or hashed again
            return reuse
        reuse = None  # other bytes, another text
    raw = read_bytes(path)
    remembered = _LOADED.get(str(path))
    if remembered is not None and remembered[0] != raw:
        remembered = None
    # hashed while the cache is read, unless this process knows the bytes
    key = file_key_started(raw) if remembered is None else (lambda: file_key(raw))
    text = None
    if reuse is not None and reuse.path == path:
        text = _checked_text(raw, path)
        if reuse.text == text:
            return reuse
    if remembered is not None:
        held, cached = remembered[1], remembered[2]  # this process read or wrote them
    else:
        found = cache.read(layout, key)
        held, cached = (cache.CacheText(found) if found is not None else None), None
    cache_text = held.whole() if held is not None else None
    model: Progress | None = None
    rows = None
    if cache_text is not None:
        if units_when_read and cached is None:
            rows = CachedRows.of(cache_text)
            model = cache.model_of_rows(layout, rows) if rows is not None else None
        if model is None:
            rows = None
            cached = cached if cached is not None else cache.data(cache_text)
            model = model_from_cache(cached) if cached is not None else None
        if model is None and cached is not None:
            with contextlib.suppress(ProgressFileError):
                model = validate(cached, path.name)
        if model is not None and not cache.in_progress_file(layout).exists():
            cache.write_in_progress(layout, raw, cache.first_in_progress(model))
    if model is None:
        text = text if text is not None else _checked_text(raw, path)
        model = parse_and_validate(text, path.name)
        cached, held, rows = to_data(model), None, None
        if layout.state_dir.is_dir():
            from resume_kit.progress_file.patch import blocks_of

            blocks = blocks_of(text, "units")
            held = cache.CacheText(cache.write(layout, key(), cached, raw, blocks=blocks))
    _LOADED[str(path)] = (raw, held, cached)
    return ProgressDoc(
        path=path,
        progress=model,
        text=text,
        data=cached if cached is not None else {},
        _rows=rows,
        _cache_text=held,
        _bytes=raw,
    )


def save(layout: Layout, doc: ProgressDoc) -> bool:
    """Write ``doc`` if its model changed: previous version to history/, then an atomic replace.

    The caller must hold the progress lock (see :func:`transaction`).
    """
    if doc._only_unit is not None and doc._rows is not None:
        saved = _save_unit(layout, doc, doc._only_unit, doc._rows)
        if saved is not None:
            return saved
    new_data = doc.changed_data()
    if new_data == doc.loaded():
        return False
    text = doc.render_fast(new_data)
    encoded = text.encode("utf-8")
    key = _write_progress(layout, doc, encoded)
    remembered = _LOADED.get(str(doc.path))
    previous = None
    # the cache of the version replaced
    if remembered is not None and remembered[2] is doc.data and remembered[0] == doc._bytes:
        previous = (remembered[1].whole(), doc.data) if remembered[1] is not None else None
    doc.text, doc.data, doc._raw, doc._bytes = text, new_data, None, encoded
    written = cache.CacheText(cache.write(layout, key(), new_data, encoded, previous=previous))
    doc._cache_text = written
    _LOADED[str(doc.path)] = (encoded, written, new_data)
    return True


def _write_progress(layout: Layout, doc: ProgressDoc, encoded: bytes) -> Callable[[], str]:
    """Keep the version ``doc`` was loaded as in history/, write ``encoded`` (encoded once:
    for the file, the cache key and the hook's record); the cache key, hashed on a thread
    while the file is written."""
    key = file_key_started(encoded)
    ensure_gitignore(layout)
    keep_history(doc.path, layout.history)
    atomic_write(doc.path, encoded)
    return key


def _save_unit(layout: Layout, doc: ProgressDoc, unit_id: str, rows: CachedRows) -> bool | None:
    """:func:`save` of a model that changed in unit ``unit_id`` alone, from the cache's lines
    (no other unit parsed or dumped); None when that cannot be done (then save does it whole)."""
    from resume_kit.progress_file.patch import patch_item

    units, ids = doc.progress.units, rows.columns.ids
    try:
        position = ids.index(unit_id)
    except ValueError:
        return None
    if len(units) != len(ids) or units[position].id != unit_id:
        return None
    try:
        old = rows.row(position)
    except ValueError:
        return None
    new = unit_data(units[position])
    if new == old:
        doc._only_unit = None
        return False
    spliced = _patched_bytes(doc, position, old, new, rows)
    if spliced is not None:
        text, (encoded, blocks) = None, spliced
    else:
        patched = patch_item(doc.text, "units", position, len(units), old, new, rows.blocks)
        text = _with_version(patched[0], doc.progress.schema_version) if patched else None
        if patched is None or text is None:
            return None
        blocks = patched[1] if len(text) == len(patched[0]) else None
        encoded = text.encode("utf-8")
    key = _write_progress(layout, doc, encoded)
    change = (position, new, key(), blocks)
    in_progress = cache.first_in_progress(doc.progress)
    cache_text, new_rows = cache.store_unit(
        layout, doc._cache_text, rows, change, encoded, in_progress
    )
    doc._text, doc.data, doc._raw, doc._only_unit = text, {}, None, None
    doc._rows, doc._cache_text, doc._bytes = new_rows, cache_text, encoded
    _LOADED[str(doc.path)] = (encoded, cache_text, None)
    return True


def _patched_bytes(
    doc: ProgressDoc, position: int, old: dict[str, Any], new: dict[str, Any], rows: CachedRows
) -> tuple[bytes, list[Any] | None] | None:
    """The file's bytes with unit ``position`` rewritten from ``old`` to ``new`` and where the
    blocks then are, spliced in the bytes as read (:func:`patch_item_ascii`), when they are
    ASCII and their version line stays as it is; None: patch the text."""
    from resume_kit.progress_file.patch import patch_item_ascii

    raw = doc._bytes
    if raw is None or rows.blocks is None or not raw.isascii():
        return None
    spliced = patch_item_ascii(raw, position, len(doc.progress.units), old, new, rows.blocks)
    if spliced is None:
        return None
    match = _version_line(spliced[0])
    if match is None or int(match.group(1)) != doc.progress.schema_version:
        return None  # no version line, or an older one: the text path decides and bumps it
    return spliced


@contextlib.contextmanager
def transaction(layout: Layout, reuse: ProgressDoc | None = None) -> Iterator[ProgressDoc]:
    """Load under the lock, let the caller change ``doc.progress``, save if it changed. The
    file is always read again under the lock; ``reuse`` (see :func:`load`) is the document
    used when the bytes are still the same."""
    with FileLock(layout.progress):
        doc = load(layout, reuse)
        yield doc
        save(layout, doc)


class Reusing:
    """Transactions that start from the document this process holds while the file still has
    its bytes (verify-next: the model it picked the unit from, then the one it saved), so the
    model is built once. :attr:`doc` is None after a transaction that raised: its model may
    hold changes that were never saved."""

    def __init__(self, doc: ProgressDoc | None) -> None:
        self.doc = doc

    @contextlib.contextmanager
    def transaction(self, layout: Layout) -> Iterator[ProgressDoc]:
        held, self.doc = self.doc, None
        with transaction(layout, held) as doc:
            yield doc
        self.doc = doc

    def load(self, layout: Layout) -> ProgressDoc:
        """The file as it is now (read again), this document when its bytes are unchanged."""
        self.doc = load(layout, self.doc)
        return self.doc


def create(layout: Layout, progress: Progress, header: str = "") -> None:
    """Write a new progress file; refuse when one exists (checked again under the lock)."""
    text = header + dump(new_document(progress))
    validate(parse_text(text, layout.progress.name), layout.progress.name)
    with FileLock(layout.progress):
        if layout.progress.exists():
            raise ProgressFileError(
                f"{layout.rel(layout.progress)} already exists",
                hint="init never overwrites; add units with `resume-kit add`, or move the file away",
            )
        atomic_write(layout.progress, text)
