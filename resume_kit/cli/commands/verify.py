"""``resume-kit verify-next``: pick the unit, check trust, run its command, report (SPEC 5).

The progress display is :mod:`resume_kit.cli.display.unit`; Ctrl-C, SIGTERM or SIGHUP stop the
command and mark nothing (:mod:`resume_kit.runner.signal_guard`)."""

from __future__ import annotations

from resume_kit.cli.approval import require_approved
from resume_kit.cli.commands.verify_report import (
    after_run,
    dry_run_list,
    json_result,
    nothing_to_do,
    report,
)
from resume_kit.cli.display.common import not_recorded_line
from resume_kit.cli.ui import info, print_json, say, warn
from resume_kit.core.typing_light import TYPE_CHECKING, Any
from resume_kit.infra.collector import fewer_collections
from resume_kit.infra.errors import (
    EXIT_INTERRUPTED,
    EXIT_NOTHING_TO_DO,
    EXIT_OK,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    EXIT_VERIFY_FAILED,
    ResumeKitError,
)
from resume_kit.runner.conflicts import refuse_while_conflicted, start_conflicts_check
from resume_kit.runner.leases import known_leases, pick_unleased, verify_leased

if TYPE_CHECKING:
    from resume_kit.facts.leases import LeaseRef
    from resume_kit.infra.paths import Layout
    from resume_kit.model.progress import Progress, Unit
    from resume_kit.progress_file.io import Reusing
    from resume_kit.runner.verify import Outcome


def _require_verify(unit: Unit) -> str:
    if unit.verify is None:
        raise ResumeKitError(
            f"unit '{unit.id}' has no verify command",
            hint=f"add a `verify:` line to unit '{unit.id}' in .resume-kit/progress.yaml "
            "(a shell command that exits 0 when the unit is done)",
            exit_code=EXIT_USAGE,
        )
    return unit.verify


def _exit_code(outcome: Outcome) -> int:
    if outcome.result.timed_out:
        return EXIT_TIMEOUT
    return EXIT_OK if outcome.result.passed and outcome.recorded else EXIT_VERIFY_FAILED


def _verify_one(
    layout: Layout,
    unit: Unit,
    timeout_s: float,
    held: Reusing,
    leases: list[LeaseRef] | None = None,
) -> tuple[int, Outcome]:
    from resume_kit.cli.display.unit import unit_display
    from resume_kit.runner.signal_guard import signal_guard

    with signal_guard() as signals, unit_display(unit) as display:
        outcome = verify_leased(
            layout, unit, timeout_s, info, signals.kill, display.tick, held.transaction, leases
        )
    if outcome.result.interrupted:
        say(f"interrupted: stopped {unit.id}; nothing was marked")
        return EXIT_INTERRUPTED, outcome
    if not outcome.recorded:
        info(not_recorded_line(unit.id))
    return _exit_code(outcome), outcome


def _run_stale(
    layout: Layout,
    progress: Progress,
    held: Reusing,
    timeout_s: float,
    dry_run: bool,
    json_out: bool,
) -> int:
    from resume_kit.runner.verify import stale_units

    stale = stale_units(layout.root, progress)
    if not stale:
        say("nothing to do: no done unit's evidence is stale")
        return EXIT_NOTHING_TO_DO
    runnable = [u for u in stale if u.verify is not None]
    for unit in stale:
        if unit.verify is None:
            warn(f"{unit.id} is stale but has no verify command; skipped")
    if not runnable:
        raise ResumeKitError(
            "no stale unit has a verify command",
            hint="add a `verify:` line to each unit in .resume-kit/progress.yaml",
        )
    if dry_run:
        return dry_run_list(layout, runnable, json_out, as_list=True)
    require_approved(layout.root, runnable)
    results: list[dict[str, Any]] = []
    code = EXIT_OK
    for unit in runnable:
        code, outcome = _verify_one(layout, unit, timeout_s, held)
        if json_out:
            results.append(json_result(outcome))
        elif code != EXIT_INTERRUPTED:
            report(outcome, layout, held)
        if code != EXIT_OK:
            break
    if json_out:
        print_json(results)
    return code


@fewer_collections()  # the model of 10,000 units holds no cycles
def run(
    unit_id: str | None,
    stale: bool,
    dry_run: bool,
    timeout: float | None,
    json_out: bool,
    force: bool = False,
) -> int:
    from contextlib import nullcontext

    from resume_kit.infra.paths import find_layout
    from resume_kit.runner.verify import spare_supervisor

    layout = find_layout(config_ahead=True)
    # started now, its start-up overlaps the model's build and the checks
    with nullcontext() if dry_run else spare_supervisor(layout.root):
        return _run(layout, unit_id, stale, dry_run, timeout, json_out, force)


def _run(
    layout: Layout,
    unit_id: str | None,
    stale: bool,
    dry_run: bool,
    timeout: float | None,
    json_out: bool,
    force: bool,
) -> int:
    from resume_kit.progress_file import config
    from resume_kit.progress_file.io import Reusing, load

    if not dry_run and not force:
        start_conflicts_check(layout)  # git reads the index while the model is built
    doc = load(layout, units_when_read=True)  # the pick reads statuses, the run one unit
    held = Reusing(doc)  # the model is built once: picking, recording, reporting
    progress = doc.progress
    timeout_s = timeout if timeout is not None else config.load(layout).verify_timeout_s
    if stale:
        if unit_id is not None:
            raise ResumeKitError(
                "--stale and --unit cannot be used together",
                hint="use --unit ID to re-verify one unit, or --stale for every stale one",
            )
        if not dry_run:
            refuse_while_conflicted(layout, force)
        code = _run_stale(layout, progress, held, timeout_s, dry_run, json_out)
        _refresh_aider_brief(layout)
        return code
    leases = known_leases(layout)  # read once: picking, renewing, releasing
    unit = pick_unleased(layout, progress, unit_id, say, leases)
    if unit is None:
        if json_out:
            print_json({"unit": None, "next": None})
        return nothing_to_do(progress)
    _require_verify(unit)
    if dry_run:
        return dry_run_list(layout, [unit], json_out)
    refuse_while_conflicted(layout, force)
    require_approved(layout.root, [unit])
    code, outcome = _verify_one(layout, unit, timeout_s, held, leases)
    if code == EXIT_INTERRUPTED:
        return code
    if json_out:
        data = json_result(outcome)
        next_unit = after_run(layout, held)[0] if code == EXIT_OK else None
        data["next"] = next_unit.id if next_unit is not None else None
        print_json(data)
    else:
        report(outcome, layout, held)
    _refresh_aider_brief(layout)
    return code


def _refresh_aider_brief(layout: Layout) -> None:
    from resume_kit.integrations.aider import refresh

    refresh(layout)  # `integrate aider` only; fail-open
