"""Test facts: the ids pytest remembers as failed (its ``lastfailed`` cache).

pytest writes ``.pytest_cache/v/cache/lastfailed``, a JSON object ``{node id: true}``, after each
run. The cache at the root wins; otherwise the newest one in a top-level folder (a project whose
tests run from ``backend/``). Only a regular file reached with no symlink on the way is read. A missing, huge or broken file gives an empty list, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path

from resume_kit.core.typing_light import Any

LASTFAILED = Path(".pytest_cache") / "v" / "cache" / "lastfailed"
MAX_CACHE_BYTES = 4 * 1024 * 1024


def _regular_inside(root: Path, rel: Path) -> Path | None:
    """``root / rel`` when it is a regular file reached with no symlink on the way."""
    from resume_kit.infra.safefs import UnsafePath, contained

    try:
        full = contained(root, rel, missing_ok=False)
        return full if stat.S_ISREG(os.lstat(full).st_mode) else None
    except (UnsafePath, OSError):
        return None


def _candidates(root: Path) -> list[Path]:
    top = _regular_inside(root, LASTFAILED)
    if top is not None:
        return [top]
    found: list[tuple[float, Path]] = []
    try:
        children = list(os.scandir(root))
    except OSError:
        return []
    for child in children:
        if child.name.startswith(".") or not child.is_dir(follow_symlinks=False):
            continue
        cache = _regular_inside(root, Path(child.name) / LASTFAILED)
        if cache is not None:
            with contextlib.suppress(OSError):
                found.append((cache.stat().st_mtime, cache))
    return [path for _, path in sorted(found, key=lambda item: -item[0])]


def parse_lastfailed(text: str) -> list[str] | None:
    """Node ids marked failed, in the file's order; None when it is not the expected JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return [key for key, value in data.items() if isinstance(key, str) and value]


def read_test_facts(root: Path) -> dict[str, Any]:
    """``{"pytest_last_failed": [node id, ...], "source": path relative to root | None}``."""
    from resume_kit.infra.redact import redact
    from resume_kit.infra.store import read_regular

    for cache in _candidates(root):
        try:  # a regular file only: a FIFO here would block the snapshot
            text = read_regular(cache, MAX_CACHE_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        failed = parse_lastfailed(text)
        if failed is not None:
            # test ids are data: a parametrised id can carry a credential
            return {
                "pytest_last_failed": [redact(node) for node in failed],
                "source": cache.relative_to(root).as_posix(),
            }
    return {"pytest_last_failed": [], "source": None}
