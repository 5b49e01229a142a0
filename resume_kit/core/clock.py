"""The brief's clock: the time now, or ``$RESUME_KIT_NOW`` (epoch seconds) when set, so that
tests cross a minute without sleeping. Standard library only (the served brief reads it)."""

from __future__ import annotations

import os
import time

CLOCK_ENV = "RESUME_KIT_NOW"


def clock_ns() -> int:
    """Nanoseconds since the epoch: ``time.time_ns()`` unless ``$RESUME_KIT_NOW`` is a number."""
    fixed = os.environ.get(CLOCK_ENV, "")
    if fixed:
        try:
            return int(float(fixed) * 1_000_000_000)
        except ValueError:
            pass
    return time.time_ns()
