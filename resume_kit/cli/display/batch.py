"""run's progress: a Rich bar with rate, ETA, the running units and the last failure on a
terminal; a start line, failures as they happen and a heartbeat otherwise; JSON lines on stdout
with ``--json``. Both displays are the engine's :class:`~resume_kit.runner.batch_engine.Reporter`."""

from __future__ import annotations

import time

from resume_kit.cli.display.common import (
    clip,
    clock,
    id_list,
    json_line,
    live_terminal,
    not_recorded_line,
    rate,
)
from resume_kit.cli.ui import info, say
from resume_kit.core.typing_light import TYPE_CHECKING, Any
from resume_kit.infra.messages import prefixed

if TYPE_CHECKING:
    from resume_kit.core.batch import Failure
    from resume_kit.runner.batch_engine import Status
    from resume_kit.runner.verify import Outcome

HEARTBEAT_S = 10.0  # plain progress: one line this often


def running_text(status: Status, width: int = 160) -> str:
    now = time.monotonic()
    with status.lock:
        items = list(status.running.items())
        lines = dict(status.last_lines)
    parts = []
    for unit_id, since in items:
        text = f"{unit_id} ({now - since:.0f}s)"
        if len(items) == 1 and lines.get(unit_id):
            text += f": {clip(lines[unit_id], max(20, width - len(text) - 12))}"
        parts.append(text)
    return ", ".join(parts)


def eta(status: Status) -> str:
    elapsed = time.monotonic() - status.started_at
    if not status.passed or elapsed <= 0:
        return "-"
    return clock((status.total - status.done) * elapsed / status.passed)


class _Report:
    """The engine's events as lines through the display's ``note``."""

    def __init__(self, status: Status, json_out: bool):
        self.status = status
        self.json_out = json_out

    def note(self, text: str) -> None:
        info(text)

    def failed(self, outcome: Outcome, failure: Failure, what: str) -> None:
        repeats = f", same failure {failure.repeats}x running" if failure.repeats > 1 else ""
        self.note(
            prefixed(
                f"{outcome.unit_id} {what} after {outcome.result.duration_s:.1f}s{repeats}"
                + (f": {clip(failure.first_line)}" if failure.first_line else "")
                + f" (full output: {outcome.log})"
            )
        )

    def not_recorded(self, unit_id: str) -> None:
        self.note(not_recorded_line(unit_id))

    def stopping(self, running: list[str], now: bool) -> None:
        if now:
            self.note(prefixed(f"stopping {id_list(running)} now; they stay not done"))
        else:
            self.note(
                prefixed(
                    f"stopping: no new units will start; waiting for {id_list(running)} "
                    "(Ctrl-C again stops them now and leaves them not done)"
                )
            )

    def recorded(self, outcome: Outcome) -> None:
        if self.json_out:
            result = outcome.result
            json_line(
                {
                    "unit": outcome.unit_id,
                    "passed": result.passed,
                    "exit_code": 124 if result.timed_out else result.exit_code,
                    "duration_s": round(result.duration_s, 2),
                    "log": outcome.log,
                }
            )


class PlainDisplay(_Report):
    """Not a terminal: a start line, failures as they happen, a progress line now and then."""

    def __init__(self, status: Status, json_out: bool):
        super().__init__(status, json_out)
        self.next_beat = time.monotonic() + HEARTBEAT_S

    def begin(self, jobs: int) -> None:
        s = self.status
        say(
            f"run: {s.total - s.done} units to go ({s.done}/{s.total} done)"
            + (f", {jobs} at a time" if jobs > 1 else "")
        )

    def refresh(self) -> None:
        now = time.monotonic()
        if now < self.next_beat:
            return
        self.next_beat = now + HEARTBEAT_S
        s = self.status
        running = running_text(s)
        say(
            f"{s.done}/{s.total} done, {s.failed} failed, "
            f"{rate(s.passed, now - s.started_at)}, ETA {eta(s)}"
            + (f"; running: {running}" if running else "")
        )

    def close(self) -> None:
        return None


class LiveDisplay(_Report):
    """A terminal: a Rich progress bar on stderr with rate, ETA, the running units and the
    last failure."""

    def __init__(self, status: Status, json_out: bool):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        from resume_kit.cli.ui import stderr_console

        super().__init__(status, json_out)
        shared = status
        console = stderr_console()

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                elapsed = time.monotonic() - shared.started_at
                return Text(rate(shared.passed, elapsed), style="dim")

        class BatchProgress(Progress):
            def get_renderables(self) -> Any:
                yield self.make_tasks_table(self.tasks)
                width = console.width  # not self.console: Live asks for this during __init__
                running = running_text(shared, width)
                if running:
                    yield Text("running: ", style="dim") + Text(running)
                if shared.last_failure:
                    yield Text("last failure: ", style="red") + Text(
                        clip(shared.last_failure, max(20, width - 16))
                    )

        self.progress = BatchProgress(
            SpinnerColumn(),
            TextColumn("[bold]run"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=8,
        )
        self.task = self.progress.add_task("run", total=status.total, completed=status.done)

    def begin(self, jobs: int) -> None:
        self.progress.start()

    def note(self, text: str) -> None:
        self.progress.console.print(text, markup=False, highlight=False)

    def refresh(self) -> None:
        self.progress.update(self.task, completed=self.status.done)

    def close(self) -> None:
        self.refresh()
        self.progress.stop()


def batch_display(status: Status, json_out: bool) -> PlainDisplay | LiveDisplay:
    return LiveDisplay(status, json_out) if live_terminal() else PlainDisplay(status, json_out)
