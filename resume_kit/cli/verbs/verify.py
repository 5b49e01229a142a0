"""The commands that run verify commands, and the approval of them: verify-next, run, trust."""

from __future__ import annotations

from typing import Annotated

import typer

from resume_kit.cli.params import JsonOpt, at_least, exit_with

app = typer.Typer()

ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Verify and record even while a merge or rebase has unresolved conflicts.",
    ),
]


@app.command("verify-next")
def verify_next(
    unit: Annotated[
        str | None,
        typer.Option("--unit", metavar="ID", help="Verify this unit instead of the next one."),
    ] = None,
    stale: Annotated[
        bool, typer.Option("--stale", help="Re-verify done units whose evidence no longer matches.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say which unit and command; run nothing.")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            callback=at_least(0.01),
            help="Seconds before the command is killed (exit 124).",
        ),
    ] = None,
    json_out: JsonOpt = False,
    force: ForceOpt = False,
) -> None:
    """Run the next unit's verify command; checkpoint it done only if it passes."""
    from resume_kit.cli.commands import verify as cmd

    exit_with(cmd.run(unit, stale, dry_run, timeout, json_out, force))


@app.command("run")
def run_batch(
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            metavar="N",
            callback=at_least(1),
            help="Independent units to run at once.",
        ),
    ] = 1,
    keep_going: Annotated[
        bool, typer.Option("--keep-going", help="Continue past failures.")
    ] = False,
    max_failures: Annotated[
        int | None,
        typer.Option(
            "--max-failures",
            metavar="N",
            callback=at_least(1),
            help="Stop after N failures (with --keep-going).",
        ),
    ] = None,
    max_units: Annotated[
        int | None,
        typer.Option("--max-units", metavar="N", callback=at_least(1), help="Stop after N units."),
    ] = None,
    time_budget: Annotated[
        str | None,
        typer.Option(
            "--time-budget",
            metavar="DURATION",
            help="Stop starting units after this long (90s, 15m, 2h).",
        ),
    ] = None,
    json_out: JsonOpt = False,
    force: ForceOpt = False,
) -> None:
    """Work through the remaining units as a resumable batch."""
    from resume_kit.cli.commands import run as cmd

    exit_with(cmd.run(jobs, keep_going, max_failures, max_units, time_budget, json_out, force))


@app.command()
def trust(
    show: Annotated[bool, typer.Option("--show", help="Only show what would be approved.")] = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            help="Approve everything shown without asking: a person's explicit act "
            "(never an agent's).",
        ),
    ] = False,
) -> None:
    """Show verify commands and the brief template that did not come from this machine, and
    ask a person to approve each (y/N); with no terminal nothing is approved (exit 4)."""
    from resume_kit.cli.commands import trust as cmd

    exit_with(cmd.run(show, yes))
