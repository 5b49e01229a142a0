"""The one signal guard of verify-next and run: which signal drains and which kills."""

from __future__ import annotations

import os
import signal

from resume_kit.runner.signal_guard import Signals, signal_guard


def test_one_stage_any_signal_kills() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        guard = Signals()
        guard.handle(sig, None)
        assert guard.drain.is_set() and guard.kill.is_set(), sig


def test_two_stage_first_ctrl_c_drains_second_kills() -> None:
    guard = Signals(two_stage=True)
    guard.handle(signal.SIGINT, None)
    assert guard.drain.is_set() and not guard.kill.is_set()
    guard.handle(signal.SIGINT, None)
    assert guard.kill.is_set() and guard.interrupts == 2


def test_two_stage_sigterm_and_sighup_kill_at_once() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):
        guard = Signals(two_stage=True)
        guard.handle(sig, None)
        assert guard.kill.is_set(), sig


def test_the_guard_catches_real_signals_and_restores_the_old_handlers() -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with signal_guard(two_stage=True) as guard:
        os.kill(os.getpid(), signal.SIGHUP)  # delivered before kill() returns to us
        assert guard.kill.is_set()
    assert {sig: signal.getsignal(sig) for sig in before} == before
