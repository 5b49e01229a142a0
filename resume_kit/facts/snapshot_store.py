"""The snapshot store (SPEC 2): ``snapshots/<id>.json``, written, pruned, read back and checked.

Ids sort by creation time; the ``checksum`` is a SHA-256 over the canonical JSON of everything
else. Reading a file checks its integrity (checksum, version) here and its shape in
:func:`resume_kit.model.facts.parse_snapshot`; loading skips a damaged file and uses the one
before it. On the post-commit hook path: stdlib only at import.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

from resume_kit.core.digest import sha256
from resume_kit.infra.paths import Layout
from resume_kit.infra.store import atomic_write, ensure_gitignore, prune
from resume_kit.model.facts import Snapshot, parse_snapshot

SCHEMA_VERSION = 1
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024

# The names new_snapshot_id gives snapshot files: pruning removes these and nothing else.
SNAPSHOT_NAME = re.compile(r"[0-9]{8}T[0-9]{9}Z-[0-9a-f]{6}\.json")


def new_snapshot_id(now_ns: int | None = None) -> str:
    """``20261129T080000123Z-a1b2c3``: UTC time to the millisecond, then a random suffix."""
    ns = time.time_ns() if now_ns is None else now_ns
    seconds, millis = divmod(ns // 1_000_000, 1000)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds))
    return f"{stamp}{millis:03d}Z-{os.urandom(3).hex()}"


def canonical_bytes(snapshot: Mapping[str, object]) -> bytes:
    """The canonical form the checksum covers: every key but ``checksum``, sorted, compact."""
    return _canonical(_value_texts(snapshot))


def compute_checksum(snapshot: Mapping[str, object]) -> str:
    return _checksum_of(_value_texts(snapshot))


def canonical_text(value: object) -> str:
    """One value in the canonical form: sorted keys, compact (json's C encoder: ``indent``
    makes it use the pure-Python one, ~4x slower)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Encoded:
    """Sections' canonical texts made while the snapshot was assembled, each kept with the
    very object it encodes: :func:`save_snapshot` uses a text only for that object, so a
    section replaced since is encoded anew (a section must not be changed in place between
    the two; the snapshot's assembly hands it over untouched)."""

    __slots__ = ("_texts",)

    def __init__(self) -> None:
        self._texts: dict[str, tuple[object, str]] = {}

    def keep(self, key: str, value: object, text: str) -> None:
        self._texts[key] = (value, text)

    def text(self, key: str, value: object) -> str | None:
        entry = self._texts.get(key)
        return entry[1] if entry is not None and entry[0] is value else None


def _value_texts(snapshot: Mapping[str, object], encoded: Encoded | None = None) -> dict[str, str]:
    """Each top-level value in the canonical form: what the stored text is made of, and
    joined in key order the canonical form itself, so a snapshot is encoded once to be
    checksummed and written (``encoded``: the texts already made, see :class:`Encoded`)."""
    texts: dict[str, str] = {}
    for key, value in snapshot.items():
        known = encoded.text(key, value) if encoded is not None else None
        texts[key] = canonical_text(value) if known is None else known
    return texts


def _canonical(texts: Mapping[str, str]) -> bytes:
    """The canonical form of the snapshot whose :func:`_value_texts` are ``texts``: what
    ``json.dumps`` with sorted keys and compact separators gives for all but ``checksum``."""
    joined = ",".join(
        f"{json.dumps(key, ensure_ascii=False)}:{texts[key]}"
        for key in sorted(texts)
        if key != "checksum"
    )
    return ("{" + joined + "}").encode("utf-8")


def _checksum_of(texts: Mapping[str, str]) -> str:
    return "sha256:" + sha256(_canonical(texts)).hexdigest()


def _top_level_lines(texts: Mapping[str, str]) -> str:
    """JSON with one top-level key per line, each value compact: readable enough."""
    lines = [f" {json.dumps(key, ensure_ascii=False)}: {text}" for key, text in texts.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def dump_snapshot(snapshot: Snapshot) -> str:
    """The stored text of ``snapshot`` (as :func:`save_snapshot` writes it)."""
    return _top_level_lines(_value_texts(snapshot))


def save_snapshot(
    layout: Layout,
    snapshot: Snapshot,
    keep: int,
    *,
    session: str | None = None,
    encoded: Encoded | None = None,
) -> Path:
    """Add the trace id (``session``: the agent session a hook named) and the checksum, write
    ``snapshots/<id>.json`` atomically, keep the newest ``keep``. ``encoded``: the sections'
    texts :func:`~resume_kit.facts.snapshot.take_snapshot` made (not encoded twice)."""
    from resume_kit.facts.history_db import trace_id

    snapshot.pop("checksum", None)
    snapshot["trace"] = trace_id(session)
    texts = _value_texts(snapshot, encoded)
    snapshot["checksum"] = _checksum_of(texts)
    texts["checksum"] = json.dumps(snapshot["checksum"])
    ensure_gitignore(layout)  # snapshots never show up as untracked work, even before `init`
    if layout.snapshots.exists() and not layout.snapshots.is_dir():
        from resume_kit.infra.errors import ResumeKitError

        raise ResumeKitError(
            f"{layout.rel(layout.snapshots)} is not a folder: cannot store snapshots there",
            hint="move that file away; resume-kit keeps its snapshots in that folder",
        )
    path = layout.snapshots / f"{snapshot['id']}.json"
    atomic_write(path, _top_level_lines(texts))
    prune(layout.snapshots, SNAPSHOT_NAME, max(1, keep))
    _remember(layout, snapshot)
    return path


def _remember(layout: Layout, snapshot: Snapshot) -> None:
    """The snapshot into the state library (facts/history_db; one INSERT, fails open)."""
    from resume_kit.facts.history_db import append

    repo = snapshot.get("repo")
    head = repo.get("head") if isinstance(repo, dict) else None
    text = f"snapshot {snapshot.get('id')} trigger {snapshot.get('trigger')}"
    commit = head if isinstance(head, str) else None
    append(layout, "snapshot", text, commit=commit, trace=snapshot.get("trace"))


def _integrity_problem(data: Mapping[str, object]) -> str | None:
    """Why ``data`` was not written whole by a resume-kit that can read it, or None."""
    checksum = data.get("checksum")
    if not isinstance(checksum, str):
        return "no checksum"
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        return "no schema_version"
    if version > SCHEMA_VERSION:
        return f"schema_version {version} is newer than this resume-kit understands"
    try:
        actual = compute_checksum(data)
    except (TypeError, ValueError, UnicodeEncodeError):
        return "content cannot be checked"
    if actual != checksum:
        return "checksum does not match its content"
    return None


def check_snapshot(data: object) -> tuple[Snapshot | None, str | None]:
    """Stored JSON as a :class:`Snapshot` when intact (integrity, then shape), else a reason."""
    if isinstance(data, dict):
        problem = _integrity_problem(data)
        if problem is not None:
            return None, problem
    return parse_snapshot(data)


def read_snapshot(path: Path) -> tuple[Snapshot | None, str | None]:
    """(snapshot, None) for an intact file, else (None, reason)."""
    from resume_kit.infra.store import FileTooLarge, NotARegularFile, read_regular

    try:
        data = json.loads(read_regular(path, MAX_SNAPSHOT_BYTES).decode("utf-8"))
    except NotARegularFile as exc:
        return None, f"not a regular file ({exc.kind})"
    except FileTooLarge:
        return None, f"larger than {MAX_SNAPSHOT_BYTES // (1024 * 1024)} MiB"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or type(exc).__name__})"
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except (ValueError, RecursionError):
        return None, "not valid JSON (truncated or corrupt)"
    return check_snapshot(data)


def load_latest(layout: Layout) -> tuple[Snapshot | None, list[str]]:
    """The newest intact snapshot, skipping damaged ones with a warning each."""
    warnings: list[str] = []
    try:
        paths = sorted(layout.snapshots.glob("*.json"), reverse=True)
    except OSError:
        return None, warnings
    for path in paths:
        data, problem = read_snapshot(path)
        if data is not None:
            return data, warnings
        warnings.append(f"skipped snapshot {path.name}: {problem}; using the one before it")
    return None, warnings
