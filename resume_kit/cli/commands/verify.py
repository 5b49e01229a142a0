"""``resume-kit verify-next``: pick the unit, check trust, run its command, report (SPEC 5)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from resume_kit.cli.ui import PROG, info, out, print_json
from resume_kit.infra.errors import (
    EXIT_INTERRUPTED,
    EXIT_NOTHING_TO_DO,
    EXIT_OK,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    EXIT_VERIFY_FAILED,
    ResumeKitError,
    UntrustedCommandError,
)

if TYPE_CHECKING:
    from resume_kit.infra.paths import Layout
    from resume_kit.model.progress import Progress, Unit
    from resume_kit.runner.verify import Outcome

HEARTBEAT_S = 15.0  # plain (non-terminal) progress: one line this often
LIVE_LINE_CHARS = 160


def _shown(text: str) -> str:
    """A title or command from the progress file as one printable line."""
    from resume_kit.core.escape import escape_controls

    return escape_controls(text)


def _clip(text: str, limit: int = LIVE_LINE_CHARS) -> str:
    from resume_kit.infra.redact import redact
    from resume_kit.infra.trust import display_command

    line = display_command(redact(text))
    return line if len(line) <= limit else line[: limit - 1] + "…"


class PlainProgress:
    """Non-interactive progress: a start line, then a heartbeat with the last output line."""

    def __init__(self, unit: Unit):
        self.unit = unit
        self.next_beat = HEARTBEAT_S

    def __enter__(self) -> PlainProgress:
        info(f"{PROG}: running {self.unit.id}: {_shown(self.unit.verify or '')}")
        return self

    def tick(self, elapsed: float, last_line: str) -> None:
        if elapsed >= self.next_beat:
            self.next_beat += HEARTBEAT_S
            tail = f": {_clip(last_line)}" if last_line else ""
            info(f"{PROG}: {self.unit.id} still running ({elapsed:.0f}s){tail}")

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
        text.append(self.clipped or _clip(self.unit.verify or "", 80))
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
            self.clipped = _clip(last_line, width)
        self.status.update(self._text(elapsed))

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(None, None, None)


def _progress_display(unit: Unit) -> PlainProgress | LiveProgress:
    """A spinner when stderr is a terminal (NO_COLOR only takes the colour away)."""
    import os

    isatty = getattr(sys.stderr, "isatty", None)
    if isatty is not None and isatty() and os.environ.get("TERM", "") != "dumb":
        return LiveProgress(unit)
    return PlainProgress(unit)


def _nothing_to_do(progress: Progress) -> int:
    counts = progress.counts()
    total = len(progress.units)
    if total == 0:
        info(f"{PROG}: nothing to do: there are no units yet")
        info('hint: add one with `resume-kit add "TITLE" --verify "COMMAND"`')
    elif counts["done"] == total:
        info(f"{PROG}: nothing to do: all {total} units done")
    else:
        parts = []
        if counts["blocked"]:
            parts.append(f"{counts['blocked']} blocked")
        waiting = counts["todo"] + counts["in_progress"]  # none of them is ready
        if waiting:
            parts.append(f"{waiting} waiting for unfinished units")
        info(f"{PROG}: nothing verifiable: {', '.join(parts)}")
        info("hint: `resume-kit status` shows why; unblock with `resume-kit start ID`")
    return EXIT_NOTHING_TO_DO


def _require_verify(unit: Unit) -> str:
    if unit.verify is None:
        raise ResumeKitError(
            f"unit '{unit.id}' has no verify command",
            hint=f"add a `verify:` line to unit '{unit.id}' in .resume-kit/progress.yaml "
            "(a shell command that exits 0 when the unit is done)",
            exit_code=EXIT_USAGE,
        )
    return unit.verify


def _require_trusted(layout: Layout, units: list[Unit]) -> None:
    from resume_kit.infra.trust import untrusted

    refused = untrusted(layout.root, units)
    if not refused:
        return
    first = refused[0]
    more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
    raise UntrustedCommandError(
        f"unit '{first.id}': verify command not approved on this machine{more}: "
        f"{_shown(first.verify or '')}",
        hint="it did not come from `resume-kit add/plan/init` here (a pull or a hand edit?); "
        "a person must read it and approve it with `resume-kit trust`",
    )


def _after_run(layout: Layout) -> tuple[Unit | None, int, int]:
    """(the next unit, done count, total) as progress.yaml stands now."""
    from resume_kit.model.progress import pick_next
    from resume_kit.progress_file.io import load

    try:
        progress = load(layout).progress
    except ResumeKitError:
        return None, 0, 0
    done = sum(1 for u in progress.units if u.status == "done")
    return pick_next(progress), done, len(progress.units)


def _json_result(outcome: Outcome) -> dict[str, Any]:
    result = outcome.result
    data: dict[str, Any] = {
        "unit": outcome.unit_id,
        "command": outcome.command,
        "exit_code": 124 if result.timed_out else result.exit_code,
        "passed": result.passed and outcome.recorded,
        "timed_out": result.timed_out,
        "duration_s": round(result.duration_s, 2),
        "log": outcome.log,
    }
    if outcome.failure is not None:
        data["excerpt"] = outcome.failure.excerpt.splitlines()
        data["repeats"] = outcome.failure.repeats
    return data


def _report(outcome: Outcome, layout: Layout) -> None:
    """Human report: the pass and the next unit on stdout, a failure's excerpt on stderr."""
    result = outcome.result
    if not outcome.recorded:
        return
    if result.passed:
        next_unit, done, total = _after_run(layout)
        out(f"passed: {outcome.unit_id} in {result.duration_s:.2f}s ({done}/{total} done)")
        if next_unit is not None:
            out(f"next: {next_unit.id} — {_shown(next_unit.title)}")
            if next_unit.verify:
                out(f"  verify: {_shown(next_unit.verify)}")
        elif done == total:
            out(f"all {total} units done")
        else:
            out("next: nothing ready to verify (see `resume-kit status`)")
        return
    failure = outcome.failure
    what = "timed out" if result.timed_out else f"failed (exit {result.exit_code})"
    repeats = (
        f", same failure {failure.repeats}x running" if failure and failure.repeats > 1 else ""
    )
    info(f"{PROG}: {outcome.unit_id} {what} after {result.duration_s:.1f}s{repeats}")
    if failure and failure.excerpt:
        for line in failure.excerpt.splitlines():
            info(f"  | {line}")
    info(f"full output: {outcome.log}")


def _exit_code(outcome: Outcome) -> int:
    if outcome.result.timed_out:
        return EXIT_TIMEOUT
    if outcome.result.passed and outcome.recorded:
        return EXIT_OK
    return EXIT_VERIFY_FAILED


def _verify_one(layout: Layout, unit: Unit, timeout_s: float) -> tuple[int, Outcome]:
    from resume_kit.runner.verify import interrupt_guard, verify_unit

    with interrupt_guard() as stop, _progress_display(unit) as display:
        outcome = verify_unit(layout, unit, timeout_s, stop=stop, on_tick=display.tick)
    if outcome.result.interrupted:
        info(f"{PROG}: interrupted: stopped {unit.id}; nothing was marked")
        return EXIT_INTERRUPTED, outcome
    if not outcome.recorded:
        info(
            f"{PROG}: warning: unit '{unit.id}' was removed or its verify command changed "
            "while it ran; nothing recorded"
        )
    return _exit_code(outcome), outcome


def _run_stale(
    layout: Layout, progress: Progress, timeout_s: float, dry_run: bool, json_out: bool
) -> int:
    from resume_kit.runner.verify import stale_units

    stale = stale_units(layout.root, progress)
    if not stale:
        info(f"{PROG}: nothing to do: no done unit's evidence is stale")
        return EXIT_NOTHING_TO_DO
    runnable = [u for u in stale if u.verify is not None]
    for unit in stale:
        if unit.verify is None:
            info(f"{PROG}: warning: {unit.id} is stale but has no verify command; skipped")
    if not runnable:
        raise ResumeKitError(
            "no stale unit has a verify command",
            hint="add a `verify:` line to each unit in .resume-kit/progress.yaml",
        )
    if dry_run:
        return _dry_run(layout, runnable, json_out, as_list=True)
    _require_trusted(layout, runnable)
    results: list[dict[str, Any]] = []
    code = EXIT_OK
    for unit in runnable:
        code, outcome = _verify_one(layout, unit, timeout_s)
        if json_out:
            results.append(_json_result(outcome))
        elif code != EXIT_INTERRUPTED:
            _report(outcome, layout)
        if code != EXIT_OK:
            break
    if json_out:
        print_json(results)
    return code


def _dry_run(layout: Layout, units: list[Unit], json_out: bool, as_list: bool = False) -> int:
    from resume_kit.infra.trust import untrusted

    refused = {u.id for u in untrusted(layout.root, units)}
    if json_out:
        items = [
            {"unit": u.id, "title": u.title, "command": u.verify, "trusted": u.id not in refused}
            for u in units
        ]
        print_json(items if as_list else items[0])
        return EXIT_OK
    for unit in units:
        out(f"{unit.id} — {_shown(unit.title)}")
        out(f"  verify: {_shown(unit.verify or '')}")
        if unit.id in refused:
            out(
                "  (not approved on this machine: a person must review it and approve it "
                "with `resume-kit trust`)"
            )
    return EXIT_OK


def run(
    unit_id: str | None, stale: bool, dry_run: bool, timeout: float | None, json_out: bool
) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.model.progress import pick_next
    from resume_kit.progress_file import config
    from resume_kit.progress_file.io import load

    layout = find_layout()
    progress = load(layout).progress
    timeout_s = timeout if timeout is not None else config.load(layout).verify_timeout_s
    if stale:
        if unit_id is not None:
            raise ResumeKitError(
                "--stale and --unit cannot be used together",
                hint="use --unit ID to re-verify one unit, or --stale for every stale one",
            )
        return _run_stale(layout, progress, timeout_s, dry_run, json_out)
    unit = pick_next(progress, unit_id)
    if unit is None:
        if json_out:
            print_json({"unit": None, "next": None})
        return _nothing_to_do(progress)
    _require_verify(unit)
    if dry_run:
        return _dry_run(layout, [unit], json_out)
    _require_trusted(layout, [unit])
    code, outcome = _verify_one(layout, unit, timeout_s)
    if code == EXIT_INTERRUPTED:
        return code
    if json_out:
        data = _json_result(outcome)
        next_unit = _after_run(layout)[0] if code == EXIT_OK else None
        data["next"] = next_unit.id if next_unit is not None else None
        print_json(data)
    else:
        _report(outcome, layout)
    return code
