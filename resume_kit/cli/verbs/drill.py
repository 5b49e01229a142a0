"""The rehearsal of a resume: ``drill``."""

from __future__ import annotations

from typing import Annotated

import typer

from resume_kit.cli.params import JsonOpt, exit_with

app = typer.Typer()


@app.command()
def drill(
    kills: Annotated[int, typer.Option("--kills", metavar="N", help="SIGKILLs of the run.")] = 2,
    seed: Annotated[
        int | None, typer.Option("--seed", metavar="S", help="Reproduce the kill moments.")
    ] = None,
    units: Annotated[
        int | None, typer.Option("--units", metavar="M", help="Run at most M remaining units.")
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the throwaway work tree to inspect.")
    ] = False,
    in_repo: Annotated[
        bool, typer.Option("--in-repo", help="Save the receipt in .resume-kit/drills/.")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Rehearse a resume: run the remaining units in a throwaway worktree of HEAD, SIGKILL the
    run at N seeded moments, resume, and check the state after each kill (exit 1 if broken)."""
    from resume_kit.cli.commands import drill as cmd

    exit_with(cmd.run(kills, seed, units, keep, in_repo, json_out))
