"""The state library: ``history search``, ``history show``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from resume_kit.cli.params import PLAIN, JsonOpt, exit_with

app = typer.Typer()  # top-level: timeline
history_app = typer.Typer(
    help="Search the state library: every snapshot, brief, verify outcome and ledger attempt.",
    no_args_is_help=True,
)


@history_app.command("search")
def search(
    text: Annotated[
        str, typer.Argument(metavar="TEXT", click_type=PLAIN, help="Words to find, as a phrase.")
    ],
    json_out: JsonOpt = False,
    all_repos: Annotated[
        bool, typer.Option("--all-repos", help="Search your other work trees' history too.")
    ] = False,
) -> None:
    """When TEXT (an error message, a command) first and last appeared, under which unit and
    commit, and whether a later verify passed."""
    from resume_kit.cli.commands import history as cmd

    exit_with(cmd.search(text, json_out, all_repos))


@history_app.command("show")
def show(
    ident: Annotated[
        str, typer.Argument(metavar="ID", click_type=PLAIN, help="A unit id or a trace id.")
    ],
    json_out: JsonOpt = False,
) -> None:
    """A unit's records over time (or every record of one run or agent session, by trace id)."""
    from resume_kit.cli.commands import history as cmd

    exit_with(cmd.show(ident, json_out))


@app.command()
def timeline(
    html_file: Annotated[
        Path | None,
        typer.Option("--html", metavar="FILE", help="Also write a one-page HTML report there."),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Sessions, compactions, verified units and failures over time, with a burn-down."""
    from resume_kit.cli.commands import timeline as cmd

    exit_with(cmd.run(html_file, json_out))
