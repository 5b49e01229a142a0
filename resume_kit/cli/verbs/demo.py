"""``resume-kit demo``: the walk-through on a throw-away batch job."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from resume_kit.cli.params import PLAIN, exit_with

app = typer.Typer()


@app.command()
def demo(
    directory: Annotated[
        Path | None,
        typer.Argument(
            metavar="[DIR]",
            click_type=PLAIN,
            help="Where to build it; default: a new temporary folder.",
        ),
    ] = None,
) -> None:
    """Build a throw-away interrupted batch job and walk through snapshot, brief and verify-next."""
    from resume_kit.cli.commands import demo as cmd

    exit_with(cmd.run(directory))
