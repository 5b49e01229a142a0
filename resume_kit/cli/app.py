"""The command line: parse arguments, call the core, print. Nothing else lives here.

Every command body imports its implementation lazily so that ``resume-kit --help`` and the hook
paths load only what they use.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from resume_kit import __version__

app = typer.Typer(
    name="resume-kit",
    help="Resume an interrupted coding-agent task from a verified progress snapshot, "
    "not a chat history. Exit codes: 0 ok, 1 verification failed, 2 usage/config/input "
    "error, 3 nothing to do, 4 untrusted command refused, 124 timed out, 130 interrupted, "
    "70 internal error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
action_app = typer.Typer(
    help="The side-effect ledger: what must not happen twice.", no_args_is_help=True
)
hook_app = typer.Typer(
    help="Git hooks: post-commit snapshots and Resume-Unit trailers.", no_args_is_help=True
)
integrate_app = typer.Typer(help="Agent hooks for Claude Code and Codex CLI.", no_args_is_help=True)
app.add_typer(action_app, name="action")
app.add_typer(hook_app, name="hook")
app.add_typer(integrate_app, name="integrate")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _plain_type() -> Any:
    """A string parameter type whose help row names no Python type.

    typer prints an argument's type (``<str>``, ``<path>``) beside its metavar in ``--help``;
    this click type reports an empty metavar of its own, so only the argument's name shows.
    """
    try:  # typer >= 0.24 vendors click as typer._click
        from typer._click.types import StringParamType
    except ImportError:  # pragma: no cover - older typer on a real click
        from click.types import (  # type: ignore[no-redef,import-not-found,unused-ignore]
            StringParamType,
        )

    class PlainText(StringParamType):  # type: ignore[misc,valid-type,unused-ignore]
        def get_metavar(self, *args: Any, **kwargs: Any) -> str:
            return ""

    return PlainText()


PLAIN = _plain_type()


def _at_least(low: float) -> Callable[[Any], Any]:
    """The range check of typer's ``min=``, without the ``[x>=N]`` it adds to the help line."""

    def check(value: Any) -> Any:
        if value is not None and value < low:
            raise typer.BadParameter(f"{value} is not in the range x>={low}.")
        return value

    return check


class BriefFormat(str, Enum):
    markdown = "markdown"
    json = "json"
    claude_hook = "claude-hook"


class Trigger(str, Enum):
    manual = "manual"
    post_commit = "post-commit"
    brief = "brief"
    verify = "verify"
    pre_compact = "pre-compact"


def _exit(code: int) -> None:
    if code:
        raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"resume-kit {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Resume an interrupted coding-agent task from a verified progress snapshot."""


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
            help="Import units from a Markdown task list (- \\[ ] / - \\[x] lines) or a Task "
            "Master tasks.json.",
        ),
    ] = None,
) -> None:
    """Create .resume-kit/ with a progress file (never overwrites one)."""
    from resume_kit.cli.commands import init as cmd

    _exit(cmd.run(goal, import_file))


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
) -> None:
    """Append a unit of work with the command that verifies it."""
    from resume_kit.cli.commands import units as cmd

    _exit(cmd.add(title, verify, unit_id, files or [], artifact or [], after or []))


@app.command()
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
            "--verify", metavar="CMD", help="Each unit's verify command, filled in like --title."
        ),
    ],
    artifact: Annotated[
        str | None,
        typer.Option(
            "--artifact", metavar="PATH", help="Each unit's artifact, filled in like --title."
        ),
    ] = None,
    id_prefix: Annotated[
        str, typer.Option("--id-prefix", metavar="PREFIX", help="Put before each generated id.")
    ] = "",
) -> None:
    """Add one unit per matching path; re-running adds only new paths."""
    from resume_kit.cli.commands import units as cmd

    _exit(cmd.plan(each, title, verify, artifact, id_prefix))


@app.command()
def status(json_out: JsonOpt = False) -> None:
    """Units with status and evidence age, plus reconcile findings."""
    from resume_kit.cli.commands import status as cmd

    _exit(cmd.run(json_out))


@app.command()
def start(
    unit_id: Annotated[str, typer.Argument(metavar="ID", click_type=PLAIN, help="The unit's id.")],
) -> None:
    """Mark a unit in progress."""
    from resume_kit.cli.commands import units as cmd

    _exit(cmd.set_status(unit_id, "in_progress"))


@app.command()
def block(
    unit_id: Annotated[str, typer.Argument(metavar="ID", click_type=PLAIN, help="The unit's id.")],
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why it is blocked (kept in notes).")
    ],
) -> None:
    """Mark a unit blocked; verify-next skips it."""
    from resume_kit.cli.commands import units as cmd

    _exit(cmd.set_status(unit_id, "blocked", reason=reason))


@app.command()
def reset(
    unit_id: Annotated[str, typer.Argument(metavar="ID", click_type=PLAIN, help="The unit's id.")],
) -> None:
    """Put a unit back to todo, dropping its evidence and last failure."""
    from resume_kit.cli.commands import units as cmd

    _exit(cmd.set_status(unit_id, "todo"))


@app.command()
def snapshot(
    json_out: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")] = False,
    trigger: Annotated[
        Trigger,
        typer.Option(
            "--trigger",
            metavar="TRIGGER",
            help="What asked for this snapshot: manual, post-commit, brief, verify or pre-compact.",
        ),
    ] = Trigger.manual,
) -> None:
    """Record the workspace facts; print what changed since the previous snapshot."""
    from resume_kit.cli.commands import snapshot as cmd

    _exit(cmd.run(json_out, quiet, trigger.value))


@app.command()
def brief(
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            metavar="N",
            callback=_at_least(50),
            help="Most tokens the brief may take (cl100k_base, at least 50); default 1500.",
        ),
    ] = None,
    fmt: Annotated[
        BriefFormat,
        typer.Option("--format", metavar="FORMAT", help="markdown, json or claude-hook."),
    ] = BriefFormat.markdown,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", metavar="FILE", help="Write to FILE (atomically)."),
    ] = None,
    summarize: Annotated[
        bool | None,
        typer.Option(
            "--summarize/--no-summarize",
            help="Ask the Anthropic API for a summary once (or turn it off once).",
        ),
    ] = None,
) -> None:
    """Take a snapshot, reconcile, and print the fresh-context prompt."""
    from resume_kit.cli.commands import brief as cmd

    _exit(cmd.run(max_tokens, fmt.value, output, summarize))


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
            callback=_at_least(0.01),
            help="Seconds before the command is killed (exit 124).",
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Run the next unit's verify command; checkpoint it done only if it passes."""
    from resume_kit.cli.commands import verify as cmd

    _exit(cmd.run(unit, stale, dry_run, timeout, json_out))


@app.command("run")
def run_batch(
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            metavar="N",
            callback=_at_least(1),
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
            callback=_at_least(1),
            help="Stop after N failures (with --keep-going).",
        ),
    ] = None,
    max_units: Annotated[
        int | None,
        typer.Option("--max-units", metavar="N", callback=_at_least(1), help="Stop after N units."),
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
) -> None:
    """Work through the remaining units as a resumable batch."""
    from resume_kit.cli.commands import run as cmd

    _exit(cmd.run(jobs, keep_going, max_failures, max_units, time_budget, json_out))


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

    _exit(cmd.record(key, description, status_))


@action_app.command("list")
def action_list(json_out: JsonOpt = False) -> None:
    """List recorded side effects."""
    from resume_kit.cli.commands import action as cmd

    _exit(cmd.list_actions(json_out))


@hook_app.command("install")
def hook_install(
    hooks: Annotated[
        str,
        typer.Option("--hooks", metavar="NAMES", help="Comma-separated git hooks to install."),
    ] = "post-commit,prepare-commit-msg",
) -> None:
    """Install git hooks (keeps an existing hook and runs it first)."""
    from resume_kit.cli.commands import hook as cmd

    _exit(cmd.install(hooks))


@hook_app.command("uninstall")
def hook_uninstall() -> None:
    """Remove our git hooks and restore the originals byte for byte."""
    from resume_kit.cli.commands import hook as cmd

    _exit(cmd.uninstall())


@hook_app.command("status")
def hook_status(json_out: JsonOpt = False) -> None:
    """Show which git hooks are installed."""
    from resume_kit.cli.commands import hook as cmd

    _exit(cmd.status(json_out))


@hook_app.command("run", hidden=True)
def hook_run(
    name: Annotated[
        str, typer.Argument(metavar="NAME", click_type=PLAIN, help="The git hook that ran.")
    ],
    args: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ARGS]...", click_type=PLAIN, help="What git passed to it."),
    ] = None,
    repo: Annotated[
        Path | None,
        typer.Option("--repo", metavar="DIR", help="The work tree (default: the current one)."),
    ] = None,
) -> None:
    """Entry point for installed git hooks (internal)."""
    from resume_kit.cli.commands import hook as cmd

    _exit(cmd.run_hook(name, args or [], repo))


@integrate_app.command("claude")
def integrate_claude(
    user: Annotated[
        bool,
        typer.Option("--user", help="Change ~/.claude/settings.json instead of the project's."),
    ] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Remove our hooks again.")] = False,
    stop_verify: Annotated[
        bool,
        typer.Option(
            "--stop-verify", help="Also add a Stop hook that runs the unit's verify command."
        ),
    ] = False,
) -> None:
    """Add SessionStart and PreCompact hooks to Claude Code's settings."""
    from resume_kit.cli.commands import integrate as cmd

    _exit(cmd.claude(user, remove, stop_verify))


@integrate_app.command("codex")
def integrate_codex(
    remove: Annotated[bool, typer.Option("--remove", help="Remove our hooks again.")] = False,
    stop_verify: Annotated[
        bool,
        typer.Option(
            "--stop-verify", help="Also add a Stop hook that runs the unit's verify command."
        ),
    ] = False,
) -> None:
    """Add SessionStart and PreCompact hooks to .codex/hooks.json."""
    from resume_kit.cli.commands import integrate as cmd

    _exit(cmd.codex(remove, stop_verify))


@app.command("stop-check", hidden=True)
def stop_check() -> None:
    """Stop-hook entry point (internal): block stopping while the unit in progress fails."""
    from resume_kit.cli.commands import integrate as cmd

    _exit(cmd.stop_check())


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

    _exit(cmd.run(show, yes))


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

    _exit(cmd.run(directory))


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("RESUME_KIT_DEBUG", "") not in ("", "0")


def main(argv: list[str] | None = None) -> None:
    """Console entry point: one error handler, documented exit codes, no traceback by default."""
    try:  # typer >= 0.24 vendors click as typer._click
        from typer import _click as click
    except ImportError:  # pragma: no cover - older typer on a real click
        import click  # type: ignore[no-redef,import-not-found,unused-ignore]

    exit_types = (typer.Exit, getattr(click.exceptions, "Exit", typer.Exit))
    abort_types = (KeyboardInterrupt, typer.Abort, getattr(click.exceptions, "Abort", typer.Abort))

    from resume_kit.cli.ui import error_line
    from resume_kit.infra.errors import EXIT_INTERRUPTED, EXIT_USAGE, ResumeKitError

    args = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(args)
    if "--" in args:
        cut = args.index("--")
        args = [a for a in args[:cut] if a != "--debug"] + args[cut:]
    else:
        args = [a for a in args if a != "--debug"]
    command = typer.main.get_command(app)
    code = 0
    try:
        result = command.main(args=args, prog_name="resume-kit", standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except exit_types as exc:
        code = exc.exit_code
    except click.exceptions.UsageError as exc:
        error_line(
            exc.format_message(),
            exc.ctx.get_usage().splitlines()[0] + "  (see --help)" if exc.ctx else None,
        )
        code = EXIT_USAGE
    except click.exceptions.ClickException as exc:
        error_line(exc.format_message())
        code = EXIT_USAGE
    except abort_types:
        error_line("interrupted")
        code = EXIT_INTERRUPTED
    except ResumeKitError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        error_line(exc.message, exc.hint)
        code = exc.exit_code
    except BrokenPipeError:
        code = 0
        sys.stderr.close()
    except Exception as exc:
        if debug:
            import traceback

            traceback.print_exc()
        from resume_kit.infra.errors import environment_error

        if (known := environment_error(exc)) is not None:
            error_line(known.message, known.hint)
            sys.exit(known.exit_code)
        from resume_kit.cli.crash import report_crash

        code = report_crash(exc, args)
    sys.exit(code)
