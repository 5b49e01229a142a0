"""The brief's clock: the time now, or ``$RESUME_KIT_NOW`` (epoch seconds) when set, so that
tests cross a minute without sleeping. Standard library only (the served brief reads it)."""

from __future__ import annotations

import os
import time

CLOCK_ENV = "RESUME_KIT_NOW"
ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # how resume-kit writes every time: UTC, whole seconds


def clock_ns() -> int:
    """Nanoseconds since the epoch: ``time.time_ns()`` unless ``$RESUME_KIT_NOW`` is a number."""
    fixed = os.environ.get(CLOCK_ENV, "")
    if fixed:
        try:
            return int(float(fixed) * 1_000_000_000)
        except ValueError:
            pass
    return time.time_ns()


def now_utc() -> str:
    """The system clock's time now (never ``$RESUME_KIT_NOW``) in resume-kit's one format,
    without datetime (the served hook brief stamps its meter event with it)."""
    return time.strftime(ISO_FORMAT, time.gmtime())
