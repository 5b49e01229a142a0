"""The progress-file commands: init, import, add, plan, status; and the side-effect ledger
(``action``). The commands that change one unit are in :mod:`resume_kit.cli.verbs.units`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from resume_kit.cli.params import PLAIN, JsonOpt, exit_with
from resume_kit.core.placeholders import PLACEHOLDERS

PLACEHOLDER_HELP = ", ".join(f"{{{name}}} {words}" for name, words in PLACEHOLDERS.items())

app = typer.Typer()
ImportFormat = Literal["auto", "markdown", "taskmaster", "speckit"]
FORMAT_OPTION = typer.Option(
    "--format",
    metavar="FORMAT",
    help="The list's format: auto (from the name and content), markdown, taskmaster or speckit.",
)
action_app = typer.Typer(
    help="The side-effect ledger: what must not happen twice.", no_args_is_help=True
)


@app.command()
def init(
    goal: Annotated[
        str | None, typer.Option("--goal", metavar="TEXT", help="The goal, in one sentence.")
    ] = None,
    import_file: Annotated[
        Path | None,
        typer.Option(
            "--import",
            metavar="FILE",
            help="Import units from a Markdown checklist (- \\[ ], - \\[x], 1. \\[ ] lines), a "
            "spec-kit tasks.md or a Task Master tasks.json.",
        ),
    ] = None,
    fmt: Annotated[ImportFormat, FORMAT_OPTION] = "auto",
) -> None:
    """Create .resume-kit/ with a progress file (never overwrites one)."""
    from resume_kit.cli.commands import init as cmd

    exit_with(cmd.run(goal, import_file, fmt))


@app.command("import")
def import_(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE",
            click_type=PLAIN,
            help="A Markdown checklist, a spec-kit tasks.md or a Task Master tasks.json.",
        ),
    ],
    fmt: Annotated[ImportFormat, FORMAT_OPTION] = "auto",
) -> None:
    """Merge a task list into the progress file: new units added, known ones (same id or
    title) updated where they have no evidence, none twice."""
    from resume_kit.cli.commands import imports as cmd

    exit_with(cmd.run(Path(file), fmt))


@app.command()
def add(
    title: Annotated[
        str, typer.Argument(metavar="TITLE", click_type=PLAIN, help="What the unit achieves.")
    ],
    verify: Annotated[
        str,
        typer.Option(
            "--verify", metavar="CMD", help="Shell command that proves the unit done (exit 0)."
        ),
    ],
    unit_id: Annotated[
        str | None,
        typer.Option("--id", metavar="ID", help="Unit id; default: derived from the title."),
    ] = None,
    files: Annotated[
        list[str] | None,
        typer.Option("--files", metavar="GLOB", help="Files this unit owns (repeatable)."),
    ] = None,
    artifact: Annotated[
        list[str] | None,
        typer.Option(
            "--artifact", metavar="PATH", help="A file that must exist once done (repeatable)."
        ),
    ] = None,
    after: Annotated[
        list[str] | None,
        typer.Option("--after", metavar="ID", help="A unit that must be done first (repeatable)."),
    ] = None,
    side_effects: Annotated[
        bool,
        typer.Option(
            "--side-effects",
            help="Its verify command changes things outside the work tree: a drill never runs it.",
        ),
    ] = False,
) -> None:
    """Append a unit of work with the command that verifies it."""
    from resume_kit.cli.commands import units as cmd

    exit_with(
        cmd.add(title, verify, unit_id, files or [], artifact or [], after or [], side_effects)
    )


@app.command(
    help="Add one unit per matching path (which it owns); re-running adds only new paths.\n\n"
    f"Placeholders in --title, --verify, --artifact and --files: {PLACEHOLDER_HELP}."
)
def plan(
    each: Annotated[
        str, typer.Option("--each", metavar="GLOB", help="One unit per matching path, sorted.")
    ],
    title: Annotated[
        str,
        typer.Option(
            "--title",
            metavar="TEMPLATE",
            help="Each unit's title; {path} {stem} {name} {n} are filled in.",
        ),
    ],
    verify: Annotated[
        str,
        typer.Option(
            "--verify",
            metavar="CMD",
            help="Each unit's verify command; {path} {stem} {name} {n} are filled in, each as "
            "one shell word.",
        ),
    ],
    artifact: Annotated[
        str | None,
        typer.Option(
            "--artifact", metavar="PATH", help="Each unit's artifact, filled in like --title."
        ),
    ] = None,
    id_prefix: Annotated[
        str,
        typer.Option(
            "--id-prefix",
            metavar="PREFIX",
            help="Put before each generated id, joined with '-' (a first folder it names is left "
            "out).",
        ),
    ] = "",
    files: Annotated[
        list[str] | None,
        typer.Option(
            "--files",
            metavar="GLOB",
            help="More files each unit owns besides its matched path, filled in like --title "
            "(repeatable).",
        ),
    ] = None,
    after: Annotated[
        list[str] | None,
        typer.Option("--after", metavar="ID", help="A unit every new unit waits for (repeatable)."),
    ] = None,
) -> None:
    from resume_kit.cli.commands import plan as cmd

    exit_with(cmd.plan(each, title, verify, artifact, id_prefix, files or [], after or []))


@app.command()
def status(json_out: JsonOpt = False) -> None:
    """Units with status and evidence age, plus reconcile findings."""
    from resume_kit.cli.commands import status as cmd

    exit_with(cmd.run(json_out))


@action_app.command("record")
def action_record(
    key: Annotated[
        str,
        typer.Argument(metavar="KEY", click_type=PLAIN, help="A stable key for the side effect."),
    ],
    description: Annotated[
        str, typer.Option("--description", metavar="TEXT", help="What was done.")
    ],
    status_: Annotated[
        str,
        typer.Option("--status", metavar="STATUS", help="How it went: success, unknown or failed."),
    ] = "success",
) -> None:
    """Record a side effect so a resume never repeats it."""
    from resume_kit.cli.commands import action as cmd

    exit_with(cmd.record(key, description, status_))


@action_app.command("list")
def action_list(json_out: JsonOpt = False) -> None:
    """List recorded side effects."""
    from resume_kit.cli.commands import action as cmd

    exit_with(cmd.list_actions(json_out))


KeyArg = Annotated[
    str, typer.Argument(metavar="KEY", click_type=PLAIN, help="The side effect's key.")
]


@action_app.command("check")
def action_check(key: KeyArg) -> None:
    """Exit 0 when KEY never succeeded, 1 when it did (for scripts, before acting)."""
    from resume_kit.cli.commands import action as cmd

    exit_with(cmd.check(key))


@action_app.command("forget")
def action_forget(key: KeyArg) -> None:
    """Remove KEY from the ledger, every attempt (a person's decision to allow it again)."""
    from resume_kit.cli.commands import action as cmd

    exit_with(cmd.forget(key))
