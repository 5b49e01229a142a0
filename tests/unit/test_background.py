"""resume_kit.infra.background: ThreadPoolExecutor's with/submit/result, without its imports."""

from __future__ import annotations

import threading

import pytest

from resume_kit.infra.background import Threads


def test_a_result_is_the_calls_value_and_an_exception_is_raised_again() -> None:
    def fail(text: str) -> int:
        raise ValueError(text)

    with Threads(2) as pool:
        good = pool.submit(lambda a, b: a + b, 2, 3)
        bad = pool.submit(fail, "broken")
        interrupted = pool.submit(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert good.result() == 5
    with pytest.raises(ValueError, match="broken"):
        bad.result()
    with pytest.raises(KeyboardInterrupt):  # any BaseException, as the executor keeps it
        interrupted.result()


def test_at_most_the_workers_run_at_once_and_the_block_waits_for_all() -> None:
    release = threading.Event()
    started: list[int] = []
    two_running = threading.Barrier(3)
    lock = threading.Lock()

    def work(n: int) -> int:
        with lock:
            started.append(n)
        if n < 2:
            two_running.wait()
        release.wait()
        return n

    with Threads(2, "test") as pool:
        later = [pool.submit(work, n) for n in range(3)]
        two_running.wait()  # the first two hold both slots
        with lock:
            assert sorted(started) == [0, 1]  # the third waits for a slot
        release.set()
    assert sorted(started) == [0, 1, 2]
    assert all(not t.is_alive() for t in pool._threads)
    assert [x.result() for x in later] == [0, 1, 2]
