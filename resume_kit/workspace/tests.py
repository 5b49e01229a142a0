"""Test facts: the ids pytest remembers as failed (its ``lastfailed`` cache).

pytest writes ``.pytest_cache/v/cache/lastfailed``, a JSON object ``{node id: true}``, after each
run. The cache at the root wins; otherwise the newest one in a top-level folder (a project whose
tests run from ``backend/``). A missing, huge or broken file gives an empty list, never an error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LASTFAILED = Path(".pytest_cache") / "v" / "cache" / "lastfailed"
MAX_CACHE_BYTES = 4 * 1024 * 1024


def _candidates(root: Path) -> list[Path]:
    top = root / LASTFAILED
    if top.is_file():
        return [top]
    found: list[tuple[float, Path]] = []
    try:
        children = list(root.iterdir())
    except OSError:
        return []
    for child in children:
        if child.name.startswith(".") or not child.is_dir():
            continue
        cache = child / LASTFAILED
        try:
            found.append((cache.stat().st_mtime, cache))
        except OSError:
            continue
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
    from resume_kit.redact import redact
    from resume_kit.store import read_regular

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
