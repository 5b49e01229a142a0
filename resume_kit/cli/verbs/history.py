"""The state library: ``history search``, ``history show``, ``history keep``."""

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
    """A unit's records over time (or everything of one run or agent session, by trace id:
    its records, run logs and drill receipt)."""
    from resume_kit.cli.commands import history as cmd

    exit_with(cmd.show(ident, json_out))


@history_app.command("keep")
def keep(
    where: Annotated[
        str | None,
        typer.Argument(
            metavar="[PLACE]",
            click_type=PLAIN,
            help="in-repo: keep the history in .resume-kit/history.sqlite; user-data: in your "
            "data directory (the default). Without it: where it is kept now.",
        ),
    ] = None,
) -> None:
    """Where this work tree's history is kept. Changing it needs a person at a terminal (an
    agent's shell is refused); the records so far move with it (docs/history.md)."""
    from resume_kit.cli.commands import history as cmd

    exit_with(cmd.keep(where))


@app.command()
def timeline(
    html_file: Annotated[
        Path | None,
        typer.Option("--html", metavar="FILE", help="Also write a one-page HTML report there."),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Sessions, compactions, verified units and failures over time, with a burn-down and the
    tokens spent per verified unit."""
    from resume_kit.cli.commands import timeline as cmd

    exit_with(cmd.run(html_file, json_out))
