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

import gc

TYPE_CHECKING = False  # not typing's: `--version` sets the pace and imports nothing else
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])

ONE_SHOT_THRESHOLD = (200_000, 20, 100)
LONG_LIVED_THRESHOLD = (700, 10, 10)  # CPython's default


_one_shot = False


def one_shot_process() -> None:
    """:data:`ONE_SHOT_THRESHOLD` for the whole of a process that runs one command and ends
    (the console script's): the imports' collections go too, and the first allocation after a
    :func:`fewer_collections` block no longer collects everything the block built (a brief on
    the 2,000-unit bench workspace: 18 collections, one of them 4 ms right after the build).
    The process is marked so (:func:`is_one_shot`)."""
    global _one_shot
    _one_shot = True
    gc.set_threshold(*ONE_SHOT_THRESHOLD)


def is_one_shot() -> bool:
    """Whether this process runs one command and ends through cli.process_end."""
    return _one_shot


def long_lived_process() -> None:
    """CPython's default pace, for a command that runs until it is stopped or for as long as
    the work it runs takes (the MCP server, `run`, `drill`): at the one-shot pace the oldest
    generation would be collected about once in 400 million allocations. Such a process is
    no longer one-shot (:func:`is_one_shot`): work would wait for its end its whole life."""
    global _one_shot
    _one_shot = False
    gc.set_threshold(*LONG_LIVED_THRESHOLD)


class _Pace:
    """A block (or, as a decorator, a function's every call) run at another pace; the pace
    before it afterwards."""

    def __init__(self, pause: bool) -> None:
        self._pause = pause
        self._before: list[tuple[tuple[int, int, int], bool]] = []

    def __enter__(self) -> None:
        self._before.append((gc.get_threshold(), gc.isenabled()))
        if self._pause:
            gc.disable()
        else:
            gc.set_threshold(*ONE_SHOT_THRESHOLD)

    def __exit__(self, *exc: object) -> None:
        threshold, enabled = self._before.pop()
        gc.set_threshold(*threshold)
        if enabled:
            gc.enable()

    def __call__(self, func: F) -> F:
        import functools

        @functools.wraps(func)
        def paced(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return paced  # type: ignore[return-value]


def fewer_collections() -> _Pace:
    """:data:`ONE_SHOT_THRESHOLD` inside the block; the caller's threshold after it (a
    long-lived caller, the MCP server, keeps its own)."""
    return _Pace(pause=False)


def paused_collections() -> _Pace:
    """No cyclic collection inside the block (reference counting still frees what it can);
    the collector as it was after it. For building plain, acyclic data in bulk."""
    return _Pace(pause=True)
