"""The cyclic garbage collector's pace while a command builds large short-lived data.

A brief or a verify-next allocates hundreds of thousands of objects that hold no cycles
(parsed JSON, the progress model, status entries): at CPython's default threshold (700) the
collector ran ~350 times during a brief of the 10,000-unit bench workspace, 10-15% of its CPU.
At 200,000 it runs a few times and the peak memory is the same: verify-next on huge took
0.90x the wall time it took at the default, where 50,000 gave 0.97x; the brief on huge took
the same at 50,000 and 200,000 (paired runs, 2026-12-02).

Parsing a progress file without its cache (libyaml, then validation) is paused instead: even at
200,000 the collections while libyaml builds the millions of objects of a 4 MB file made that
parse grow faster than the file (2.0 s on the 10,000-unit bench file against 0.28 s on the
2,000-unit one, x7 for x5; 1.34 s against 0.34 s, x4, with the collector off; 2026-12-04).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

ONE_SHOT_THRESHOLD = (200_000, 20, 100)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """:data:`ONE_SHOT_THRESHOLD` inside the block; the caller's threshold after it (a
    long-lived caller, the MCP server, keeps its own)."""
    before = gc.get_threshold()
    gc.set_threshold(*ONE_SHOT_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextlib.contextmanager
def paused_collections() -> Iterator[None]:
    """No cyclic collection inside the block (reference counting still frees what it can);
    the collector as it was after it. For building plain, acyclic data in bulk."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
