"""verify-next's progress for one unit: a spinner with the last output line on a terminal, a
start line and a heartbeat otherwise."""

from __future__ import annotations

import time

from resume_kit.cli.display.common import clip, live_terminal, shown
from resume_kit.cli.ui import say
from resume_kit.core.typing_light import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resume_kit.model.progress import Unit

HEARTBEAT_S = 15.0  # plain progress: one line this often


class PlainProgress:
    """Non-interactive progress: a start line, then a heartbeat with the last output line."""

    def __init__(self, unit: Unit):
        self.unit = unit
        self.next_beat = HEARTBEAT_S

    def __enter__(self) -> PlainProgress:
        say(f"running {self.unit.id}: {shown(self.unit.verify or '')}")
        return self

    def tick(self, elapsed: float, last_line: str) -> None:
        if elapsed >= self.next_beat:
            self.next_beat += HEARTBEAT_S
            tail = f": {clip(last_line)}" if last_line else ""
            say(f"{self.unit.id} still running ({elapsed:.0f}s){tail}")

    def __exit__(self, *exc: object) -> None:
        return None


class LiveProgress:
    """Interactive progress on stderr: a Rich spinner, elapsed time and the last output line."""

    def __init__(self, unit: Unit):
        from resume_kit.cli.ui import stderr_console

        self.unit = unit
        self.console = stderr_console()
        self.status: Any = None
        self.shown_line = ""
        self.clipped = ""
        self.last_update = 0.0

    def _text(self, elapsed: float) -> Any:
        from rich.text import Text

        text = Text()
        text.append(f"{self.unit.id}", style="bold")
        text.append(f" {elapsed:5.1f}s ", style="dim")
        text.append(self.clipped or clip(self.unit.verify or "", 80))
        return text

    def __enter__(self) -> LiveProgress:
        self.status = self.console.status(self._text(0.0), spinner="dots")
        self.status.__enter__()
        return self

    def tick(self, elapsed: float, last_line: str) -> None:
        now = time.monotonic()
        if now - self.last_update < 0.1:
            return
        self.last_update = now
        if last_line != self.shown_line:
            self.shown_line = last_line
            width = max(20, self.console.width - len(self.unit.id) - 14)
            self.clipped = clip(last_line, width)
        self.status.update(self._text(elapsed))

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(None, None, None)


def unit_display(unit: Unit) -> PlainProgress | LiveProgress:
    return LiveProgress(unit) if live_terminal() else PlainProgress(unit)
