"""A few calls run alongside this thread: ``concurrent.futures.ThreadPoolExecutor``'s ``with``,
``submit`` and ``result``, without importing concurrent.futures (with logging and queue it
costs every snapshot and brief ~4 ms of start-up).

As with the executor: at most ``workers`` calls run at once, an exception (any
``BaseException``) is raised again by ``result()``, and leaving the ``with`` block waits for
every call submitted in it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from types import TracebackType

from resume_kit.core.typing_light import Any, Generic, TypeVar

T = TypeVar("T")


class Later(Generic[T]):
    """One submitted call; :meth:`result` waits for it."""

    __slots__ = ("_done", "_error", "_value")

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def result(self) -> T:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class Threads:
    """``with Threads(2, "name") as pool: later = pool.submit(fn, arg); later.result()``.

    Calls start in the order submitted (the executor's queue): a worker thread takes the
    next waiting call when it finishes one, and ends when none is waiting."""

    def __init__(self, workers: int, name: str = "resume-kit") -> None:
        self._workers = workers
        self._name = name
        self._lock = threading.Lock()
        self._waiting: deque[tuple[Later[Any], Callable[..., Any], tuple[object, ...]]] = deque()
        self._active = 0
        self._threads: list[threading.Thread] = []

    def submit(self, fn: Callable[..., T], *args: object) -> Later[T]:
        later: Later[T] = Later()
        with self._lock:
            self._waiting.append((later, fn, args))
            if self._active >= self._workers:
                return later
            self._active += 1
            thread = threading.Thread(target=self._work, name=f"{self._name}_{len(self._threads)}")
            self._threads.append(thread)
        thread.start()
        return later

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._waiting:
                    self._active -= 1
                    return
                later, fn, args = self._waiting.popleft()
            try:
                later._value = fn(*args)
            except BaseException as exc:  # the executor keeps any exception for result()
                later._error = exc
            finally:
                later._done.set()

    def __enter__(self) -> Threads:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        for thread in list(self._threads):
            thread.join()
