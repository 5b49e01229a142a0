"""``resume-kit run``: work through the remaining units as a resumable batch (SPEC 3).

The engine is :mod:`resume_kit.runner.batch_engine`, scheduling and budgets
:mod:`resume_kit.core.batch`, the progress display :mod:`resume_kit.cli.display.batch`. A run
killed at any point continues, next time, with the first unit not yet done, and nothing that
passed runs again.

Ctrl-C once: start nothing more, let running units finish. Twice (or SIGTERM, SIGHUP): stop the
running units' process groups, leave them not done, exit 130.
"""

from __future__ import annotations

from resume_kit.cli.display.common import LIST_MAX, clip, clock, id_list, json_line
from resume_kit.cli.ui import hint, info, say
from resume_kit.core.typing_light import TYPE_CHECKING, Any
from resume_kit.infra.errors import EXIT_UNTRUSTED, ResumeKitError
from resume_kit.infra.messages import prefixed
from resume_kit.model.findings import STUCK_REPEATS

if TYPE_CHECKING:
    from resume_kit.model.progress import Progress, Unit
    from resume_kit.runner.batch_engine import Options


def _may_run(progress: Progress) -> list[Unit]:
    """Units this run could start at some point: not done, not blocked, not stuck, verifiable
    (all of them are trust-checked before anything starts)."""
    return [
        u
        for u in progress.units
        if u.status in ("todo", "in_progress")
        and u.verify is not None
        and not (u.last_failure is not None and u.last_failure.repeats >= STUCK_REPEATS)
    ]


_STOP_TEXT = {
    "failure": "stopped at the first failure (--keep-going continues past failures)",
    "max-failures": "stopped after {max_failures} failures (--max-failures)",
    "max-units": "stopped after {max_units} units (--max-units)",
    "time-budget": "time budget of {time_budget} used up (--time-budget)",
    "interrupted": "interrupted",
    "error": "stopped on an error",
}


def _print_summary(summary: dict[str, Any], options: Options) -> None:
    passed: list[str] = summary["passed"]
    failed: list[dict[str, Any]] = summary["failed"]
    total, done, left = summary["total"], summary["done"], summary["remaining"]
    if not passed and not failed and not summary["interrupted"] and summary["stopped"] is None:
        if total == 0:
            say("nothing to do: there are no units yet")
            hint('add one with `resume-kit add "TITLE" --verify "COMMAND"`')
        elif done == total:
            say(f"nothing to do: all {total} units done")
        elif summary["stuck"]:
            say(
                f"nothing run: {id_list(summary['stuck'])} failed the same way "
                f"{STUCK_REPEATS} times running (UNIT_STUCK) and is not retried by `run`"
            )
            hint(
                "change the approach, then check it with "
                f"`resume-kit verify-next --unit {summary['stuck'][0]}`"
            )
        elif summary["no_verify"]:
            say(f"nothing run: no verify command on {id_list(summary['no_verify'])}")
            hint("add a `verify:` line (a command that exits 0 when the unit is done)")
        elif summary["refused"]:
            say(f"nothing run: not approved: {id_list(summary['refused'])}")
            hint("a person must review them and approve them with `resume-kit trust`")
        elif summary.get("leased"):
            say(
                f"nothing run: the ready units are leased by someone else: {id_list(summary['leased'])}"
            )
            hint("`resume-kit leases` shows who holds them and until when")
        else:
            say(f"nothing verifiable: {left} units left, none of them ready")
            hint("`resume-kit status` shows why; unblock with `resume-kit start ID`")
        return
    head = prefixed(f"run {'interrupted' if summary['stopped'] == 'interrupted' else 'ended'}")
    info(
        f"{head} after {clock(summary['duration_s'])}: {len(passed)} passed, "
        f"{len(failed)} failed; {done}/{total} done, {left} left"
        + (f" ({summary['blocked']} blocked)" if summary["blocked"] else "")
    )
    if passed:
        info(f"  passed: {id_list(passed)}")
    for item in failed[:LIST_MAX]:
        code = "timed out" if item["exit_code"] == 124 else f"exit {item['exit_code']}"
        excerpt = f": {clip(item['excerpt'])}" if item["excerpt"] else ""
        info(f"  failed: {item['unit']} ({code}){excerpt}")
    if len(failed) > LIST_MAX:
        info(f"  … and {len(failed) - LIST_MAX} more failed")
    if summary["interrupted"]:
        info(f"  stopped while running (not done): {id_list(summary['interrupted'])}")
    if summary["stuck"]:
        info(
            f"  not retried, stuck on the same failure {STUCK_REPEATS} times running: "
            f"{id_list(summary['stuck'])}"
            " (change the approach, then `resume-kit verify-next --unit ID`)"
        )
    if summary["refused"]:
        info(f"  not approved (changed during the run): {id_list(summary['refused'])}")
    if summary.get("leased"):
        info(
            f"  skipped, leased by someone else: {id_list(summary['leased'])} (`resume-kit leases`)"
        )
    if summary["no_verify"]:
        info(f"  no verify command: {id_list(summary['no_verify'])}")
    stop = summary["stopped"]
    if stop is not None and stop != "interrupted":
        info(
            "  "
            + _STOP_TEXT[stop].format(
                max_failures=options.max_failures,
                max_units=options.max_units,
                time_budget=options.time_budget,
            )
        )
    if summary["continue"]:
        info(f"  continue with: {summary['continue']}")


def run(
    jobs: int,
    keep_going: bool,
    max_failures: int | None,
    max_units: int | None,
    time_budget: str | None,
    json_out: bool,
    force: bool = False,
) -> int:
    from resume_kit.cli.approval import require_approved
    from resume_kit.cli.display.batch import batch_display
    from resume_kit.core.batch import Batch, Limits, parse_duration
    from resume_kit.infra.collector import long_lived_process
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file import config
    from resume_kit.runner.batch_engine import Options, Runner
    from resume_kit.runner.batch_store import BatchStore
    from resume_kit.runner.conflicts import refuse_while_conflicted
    from resume_kit.runner.signal_guard import signal_guard

    long_lived_process()  # a batch runs for as long as its units take
    budget_s = parse_duration(time_budget) if time_budget is not None else None
    options = Options(max(1, jobs), keep_going, max_failures, max_units, time_budget, json_out)
    layout = find_layout()
    refuse_while_conflicted(layout, force)
    store = BatchStore(layout)
    with store.view() as progress:
        candidates = _may_run(progress)
        total = len(progress.units)
        done = progress.counts()["done"]
    require_approved(layout.root, candidates)
    timeout_s = config.load(layout).verify_timeout_s
    limits = Limits(
        keep_going=keep_going or max_failures is not None,
        max_failures=max_failures,
        max_units=max_units,
        time_budget_s=budget_s,
    )
    batch = Batch(limits)
    trusted = {(u.id, u.verify or "") for u in candidates}
    runner = Runner(layout, store, batch, options, timeout_s, trusted, total, done)
    display = batch_display(runner.status, json_out)
    with signal_guard(two_stage=True) as signals:
        if candidates:
            display.begin(options.jobs)
        try:
            runner.loop(signals, display)
        finally:
            display.close()
        runner.announce(signals, display)
    try:
        with store.view() as progress:
            remaining = batch.remaining(progress)
    except ResumeKitError:
        if runner.error is None:
            raise
        raise runner.error from None
    code = batch.exit_code(remaining)
    if runner.refused and code in (0, 3):
        code = EXIT_UNTRUSTED
    if isinstance(runner.error, ResumeKitError):
        code = runner.error.exit_code
    summary = runner.summary(remaining, code)
    _print_summary(summary, options)
    if json_out:
        json_line({"summary": summary})
    if runner.error is not None:
        raise runner.error
    return code
