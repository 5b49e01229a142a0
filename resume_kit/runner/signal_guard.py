"""The signal guard of ``verify-next`` and ``run``: signals become flags the main loop reads.

While the guard is active, SIGINT, SIGTERM and SIGHUP no longer kill resume-kit; they set
``drain`` (start nothing more) and ``kill`` (stop the running commands' process groups, leave
their units not done, exit 130). With ``two_stage`` (``run``) the first Ctrl-C only drains and
a second one kills; SIGTERM and SIGHUP always kill. Only usable from the main thread.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from resume_kit.core.light_dataclass import dataclass, field

GUARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Signals:
    two_stage: bool = False
    drain: threading.Event = field(default_factory=threading.Event)
    kill: threading.Event = field(default_factory=threading.Event)
    interrupts: int = 0
    announced: int = 0  # how many of the above the main loop has told the user about

    def handle(self, signum: int, frame: FrameType | None) -> None:
        # Only set flags here: printing from a handler can hit a reentrant write on stderr.
        self.interrupts += 1
        self.drain.set()
        if not self.two_stage or signum != signal.SIGINT or self.interrupts > 1:
            self.kill.set()


@contextlib.contextmanager
def signal_guard(two_stage: bool = False) -> Iterator[Signals]:
    signals = Signals(two_stage)
    previous = [(sig, signal.signal(sig, signals.handle)) for sig in GUARDED]
    try:
        yield signals
    finally:
        for sig, old in previous:
            signal.signal(sig, old)
