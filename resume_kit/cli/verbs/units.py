"""The commands that change a unit after it exists: start, block, reset, edit, rm, rename,
note."""

from __future__ import annotations

from typing import Annotated

import typer

from resume_kit.cli.params import PLAIN, exit_with

app = typer.Typer()

UnitId = Annotated[
    str, typer.Argument(metavar="ID", click_type=PLAIN, help="The id of the unit to change.")
]


@app.command()
def start(
    unit_id: Annotated[str, typer.Argument(metavar="ID", click_type=PLAIN, help="The unit's id.")],
) -> None:
    """Mark a unit in progress."""
    from resume_kit.cli.commands import units as cmd

    exit_with(cmd.set_status(unit_id, "in_progress"))


@app.command()
def block(
    unit_id: Annotated[str, typer.Argument(metavar="ID", click_type=PLAIN, help="The unit's id.")],
    reason: Annotated[
        str,
        typer.Option(
            "--reason",
            metavar="TEXT",
            help="Why it is blocked (kept on the unit; status and the brief show it).",
        ),
    ],
) -> None:
    """Mark a unit blocked; verify-next skips it."""
    from resume_kit.cli.commands import units as cmd

    exit_with(cmd.set_status(unit_id, "blocked", reason=reason))


@app.command()
def reset(
    unit_id: Annotated[str, typer.Argument(metavar="ID", click_type=PLAIN, help="The unit's id.")],
) -> None:
    """Put a unit back to todo, dropping its evidence, last failure and block reason."""
    from resume_kit.cli.commands import units as cmd

    exit_with(cmd.set_status(unit_id, "todo"))


@app.command()
def edit(
    unit_id: UnitId,
    title: Annotated[
        str | None, typer.Option("--title", metavar="TEXT", help="A new title.")
    ] = None,
    verify: Annotated[
        str | None,
        typer.Option(
            "--verify",
            metavar="CMD",
            help="A new verify command (approved when you type it on a terminal; an agent's "
            "is not).",
        ),
    ] = None,
    files: Annotated[
        list[str] | None,
        typer.Option(
            "--files", metavar="GLOB", help="Files the unit owns, replacing the list (repeatable)."
        ),
    ] = None,
    artifact: Annotated[
        list[str] | None,
        typer.Option(
            "--artifact",
            metavar="PATH",
            help="Files that must exist once done, replacing the list (repeatable).",
        ),
    ] = None,
    after: Annotated[
        list[str] | None,
        typer.Option(
            "--after",
            metavar="ID",
            help="Units that must be done first, replacing the list (repeatable).",
        ),
    ] = None,
    side_effects: Annotated[
        bool | None,
        typer.Option(
            "--side-effects/--no-side-effects",
            help="Whether its verify command changes things outside the work tree (a drill "
            "never runs such a unit).",
        ),
    ] = None,
) -> None:
    """Change a unit's title, verify command, files, artifacts, dependencies or side-effects
    mark."""
    from resume_kit.cli.commands import edit as cmd
    from resume_kit.progress_file.edits import Edit

    exit_with(cmd.edit(unit_id, Edit(title, verify, files, artifact, after, side_effects)))


@app.command()
def rm(
    unit_id: Annotated[
        str, typer.Argument(metavar="ID", click_type=PLAIN, help="The id of the unit to remove.")
    ],
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Remove it even when other units wait for it (and unlink them)."
        ),
    ] = False,
) -> None:
    """Remove a unit; refused while other units depend on it, unless --force."""
    from resume_kit.cli.commands import edit as cmd

    exit_with(cmd.remove(unit_id, force))


@app.command()
def rename(
    old: Annotated[
        str, typer.Argument(metavar="OLD", click_type=PLAIN, help="The unit's current id.")
    ],
    new: Annotated[str, typer.Argument(metavar="NEW", click_type=PLAIN, help="Its new id.")],
) -> None:
    """Give a unit a new id; after lists, evidence and approval follow it."""
    from resume_kit.cli.commands import edit as cmd

    exit_with(cmd.rename(old, new))


@app.command()
def note(
    unit_id: UnitId,
    text: Annotated[
        str,
        typer.Argument(
            metavar="TEXT",
            click_type=PLAIN,
            help="What you are in the middle of (replaces the unit's note; empty clears it).",
        ),
    ],
) -> None:
    """Keep a note on a unit: what you were in the middle of."""
    from resume_kit.cli.commands import edit as cmd

    exit_with(cmd.set_note(unit_id, text))
