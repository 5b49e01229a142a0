"""What verify-next prints once a command has ended: the pass and the next unit on stdout, a
failure's excerpt on stderr, or one JSON object; why there was nothing to verify; and what
--dry-run would run."""

from __future__ import annotations

from resume_kit.cli.display.common import shown
from resume_kit.cli.ui import hint, info, out, print_json, say
from resume_kit.core.typing_light import TYPE_CHECKING, Any
from resume_kit.infra.errors import EXIT_NOTHING_TO_DO, EXIT_OK, ResumeKitError

if TYPE_CHECKING:
    from resume_kit.infra.paths import Layout
    from resume_kit.model.progress import Progress, Unit
    from resume_kit.progress_file.io import Reusing
    from resume_kit.runner.verify import Outcome


def after_run(layout: Layout, held: Reusing | None = None) -> tuple[Unit | None, int, int]:
    """(the next unit, done count, total) as progress.yaml stands now (read again; ``held``'s
    model when the bytes are the ones it saved)."""
    from resume_kit.model.progress import pick_next
    from resume_kit.progress_file.io import load

    try:
        progress = (held.load(layout) if held is not None else load(layout)).progress
    except ResumeKitError:
        return None, 0, 0
    done = sum(1 for u in progress.units if u.status == "done")
    return pick_next(progress), done, len(progress.units)


def json_result(outcome: Outcome) -> dict[str, Any]:
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
        data["reruns"] = outcome.failure.reruns
    return data


def report(outcome: Outcome, layout: Layout, held: Reusing | None = None) -> None:
    """Human report: the pass and the next unit on stdout, a failure's excerpt on stderr."""
    result = outcome.result
    if not outcome.recorded:
        return
    if result.passed:
        next_unit, done, total = after_run(layout, held)
        out(f"passed: {outcome.unit_id} in {result.duration_s:.2f}s ({done}/{total} done)")
        if next_unit is not None:
            out(f"next: {next_unit.id} — {shown(next_unit.title)}")
            if next_unit.verify:
                out(f"  verify: {shown(next_unit.verify)}")
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
    if failure and failure.reruns:
        repeats += (
            ", nothing changed since the last attempt: a plain re-run "
            f"({failure.reruns} so far; not counted toward stuck)"
        )
    say(f"{outcome.unit_id} {what} after {result.duration_s:.1f}s{repeats}")
    if failure and failure.excerpt:
        for line in failure.excerpt.splitlines():
            info(f"  | {line}")
    info(f"full output: {outcome.log}")


def nothing_to_do(progress: Progress) -> int:
    """What verify-next says when no unit is ready: why, and what to do (exit 3)."""
    counts = progress.counts()
    total = len(progress.units)
    if total == 0:
        say("nothing to do: there are no units yet")
        hint('add one with `resume-kit add "TITLE" --verify "COMMAND"`')
    elif counts["done"] == total:
        say(f"nothing to do: all {total} units done")
    else:
        parts = []
        if counts["blocked"]:
            parts.append(f"{counts['blocked']} blocked")
        waiting = counts["todo"] + counts["in_progress"]  # none of them is ready
        if waiting:
            parts.append(f"{waiting} waiting for unfinished units")
        say(f"nothing verifiable: {', '.join(parts)}")
        hint("`resume-kit status` shows why; unblock with `resume-kit start ID`")
    return EXIT_NOTHING_TO_DO


def dry_run_list(layout: Layout, units: list[Unit], json_out: bool, as_list: bool = False) -> int:
    """What --dry-run prints: each unit's command, and whether it is approved here."""
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
        out(f"{unit.id} — {shown(unit.title)}")
        out(f"  verify: {shown(unit.verify or '')}")
        if unit.id in refused:
            out(
                "  (not approved on this machine: a person must review it and approve it "
                "with `resume-kit trust`)"
            )
    return EXIT_OK
