"""The command line: the ``resume-kit`` app, its commands in ``--help`` order, and :func:`main`.

The commands are declared in :mod:`resume_kit.cli.verbs`, one module per area; every command body
imports its implementation lazily so that ``resume-kit --help`` and the hook paths load only what
they use.
"""

# No `from __future__ import annotations`: typer reads _root's annotations at run time, and
# they name the typer imported inside _build_app.
import os
import sys

# Not typing.TYPE_CHECKING: importing typing costs `--version` a few ms (mypy knows the name).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import typer


def _build_app(only: "str | None" = None) -> "typer.Typer":
    """The typer app; built on first use, so that ``--version`` never imports typer.

    With ``only`` naming one command or command group, the app holds just that one: typer
    turns every declared command into a click command up front (about 50 ms for all of
    them), and a run needs one. Help and usage lines of that command are the same."""
    from typing import Annotated

    import typer

    from resume_kit import __version__
    from resume_kit.cli.verbs import (
        context,
        demo,
        drill,
        history,
        hooks,
        leases,
        progress,
        units,
        verify,
    )

    built = typer.Typer(
        name="resume-kit",
        help="Resume an interrupted coding-agent task from a verified progress snapshot, "
        "not a chat history. Exit codes: 0 ok, 1 verification failed, 2 usage/config/input "
        "error, 3 nothing to do, 4 untrusted command refused, 5 unit leased by someone else, "
        "124 timed out, 130 interrupted, "
        "70 internal error.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for area in (progress, units, context, verify, leases, drill, history, hooks, demo):
        built.registered_commands.extend(area.app.registered_commands)
    groups = {
        "action": progress.action_app,
        "history": history.history_app,
        "hook": hooks.hook_app,
        "integrate": hooks.integrate_app,
    }
    names = [_command_name(c) for c in built.registered_commands]
    if only is not None and (only in groups or names.count(only) == 1):
        built.registered_commands = [
            c for c, name in zip(built.registered_commands, names, strict=True) if name == only
        ]
        groups = {name: group for name, group in groups.items() if name == only}
    for name, group in groups.items():
        built.add_typer(group, name=name)

    def _version(value: bool) -> None:
        if value:
            typer.echo(f"resume-kit {__version__}")
            raise typer.Exit(0)

    @built.callback()
    def _root(
        version: Annotated[
            bool,
            typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
        ] = False,
    ) -> None:
        """Resume an interrupted coding-agent task from a verified progress snapshot."""

    return built


def _command_name(command: "Any") -> str:
    """The name a registered command is invoked by (typer's rule: the function's name with
    dashes for underscores, unless the declaration names it)."""
    return str(command.name or command.callback.__name__.lower().replace("_", "-"))


_app: "typer.Typer | None" = None


def __getattr__(name: str) -> "Any":
    """``app``: the typer app, built once on first access (PEP 562)."""
    global _app
    if name == "app":
        if _app is None:
            _app = _build_app()
        return _app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def entry(serve_first: bool = True) -> None:
    """The console script's and ``python -m resume_kit``'s entry point: :func:`main`, then the
    process ends without the interpreter's teardown (:mod:`resume_kit.cli.process_end`)."""
    from resume_kit.infra.collector import one_shot_process

    one_shot_process()
    try:
        main(serve_first=serve_first)
    except SystemExit as done:
        code = done.code
    else:  # pragma: no cover - main always exits
        code = 0
    from resume_kit.cli.process_end import end_process

    end_process(code)


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("RESUME_KIT_DEBUG", "") not in ("", "0")


def main(
    argv: "list[str] | None" = None, *, fast_start: bool = True, serve_first: bool = True
) -> None:
    """Console entry point: one error handler, documented exit codes, no traceback by default.

    ``fast_start=False`` sends every command through typer (the tests' reference for
    :mod:`resume_kit.cli.fast_start`); ``serve_first=False``: the stored brief was not served
    (cli/isolated_entry.py asked first), so a brief is built."""
    args = list(sys.argv[1:] if argv is None else argv)
    if [a for a in args if a != "--debug"] == ["--version"]:  # the start-up cost alone
        from resume_kit import __version__

        sys.stdout.write(f"resume-kit {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    if serve_first and args[:1] == ["brief"]:  # nothing changed since the previous brief: print
        from resume_kit.brief.fastpath import serve  # it (stdlib only)

        served = serve(args)
        if served is not None:
            sys.exit(served)
    _load_site_packages()
    debug = _debug_requested(args)
    if "--" in args:
        cut = args.index("--")
        args = [a for a in args[:cut] if a != "--debug"] + args[cut:]
    else:
        args = [a for a in args if a != "--debug"]
    if fast_start and args[:1] in (["brief"], ["verify-next"]):
        from resume_kit.cli.fast_start import parse

        parsed = parse(args)
        if parsed is not None:
            sys.exit(_run_parsed(*parsed, args, debug))
    sys.exit(_run_typer(args, debug))


def _load_site_packages() -> None:
    """Started with ``-S`` (cli/isolated_entry.py, the agents' brief hooks), the served brief
    needed the standard library only; every other path needs site-packages (typer, PyYAML)."""
    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()


def _run_parsed(command: str, values: "dict[str, object]", args: "list[str]", debug: bool) -> int:
    """A command :mod:`resume_kit.cli.fast_start` parsed, with typer's main's handling of what
    escapes it, then ours (:func:`_run_typer`): the same output and exit codes."""
    from resume_kit.cli.fast_start import invoke

    try:
        return invoke(command, values)
    except KeyboardInterrupt:
        return 130  # typer's main: Exit(130), nothing printed
    except EOFError:  # typer's main: an empty line, then Abort
        from resume_kit.cli.ui import error_line
        from resume_kit.infra.errors import EXIT_INTERRUPTED

        sys.stderr.write("\n")
        sys.stderr.flush()
        error_line("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        import errno

        if isinstance(exc, OSError) and exc.errno == errno.EPIPE:  # typer's main: quiet, 1
            _pacify_streams()
            return 1
        return _failed(exc, args, debug)


def _pacify_streams() -> None:
    try:  # typer >= 0.24 vendors click as typer._click
        from typer._click.utils import PacifyFlushWrapper
    except ImportError:  # pragma: no cover - older typer on a real click
        from click.utils import (  # type: ignore[no-redef,import-not-found,unused-ignore]
            PacifyFlushWrapper,
        )

    sys.stdout = PacifyFlushWrapper(sys.stdout)  # type: ignore[assignment,unused-ignore]
    sys.stderr = PacifyFlushWrapper(sys.stderr)  # type: ignore[assignment,unused-ignore]


def _failed(exc: Exception, args: "list[str]", debug: bool) -> int:
    """The exit code for an exception a command let out (not a usage error); its one line."""
    from resume_kit.cli.ui import error_line
    from resume_kit.infra.errors import ResumeKitError

    if isinstance(exc, ResumeKitError):
        if debug:
            import traceback

            traceback.print_exc()
        error_line(exc.message, exc.hint)
        return exc.exit_code
    if isinstance(exc, BrokenPipeError):
        sys.stderr.close()
        return 0
    if debug:
        import traceback

        traceback.print_exc()
    from resume_kit.infra.errors import environment_error

    if (known := environment_error(exc)) is not None:
        error_line(known.message, known.hint)
        return known.exit_code
    from resume_kit.cli.crash import report_crash

    return report_crash(exc, args)


def _run_typer(args: "list[str]", debug: bool) -> int:
    import typer

    try:  # typer >= 0.24 vendors click as typer._click
        from typer import _click as click
    except ImportError:  # pragma: no cover - older typer on a real click
        import click  # type: ignore[no-redef,import-not-found,unused-ignore]

    exit_types = (typer.Exit, getattr(click.exceptions, "Exit", typer.Exit))
    abort_types = (KeyboardInterrupt, typer.Abort, getattr(click.exceptions, "Abort", typer.Abort))

    from resume_kit.cli.params import plain_usage
    from resume_kit.cli.ui import error_line
    from resume_kit.infra.errors import EXIT_INTERRUPTED, EXIT_USAGE

    first = next((a for a in args if not a.startswith("-")), None) if args[:1] != ["--"] else None
    command = plain_usage(typer.main.get_command(_build_app(only=first)))
    try:
        result = command.main(args=args, prog_name="resume-kit", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except exit_types as exc:
        return int(exc.exit_code)
    except click.exceptions.UsageError as exc:
        error_line(
            exc.format_message(),
            exc.ctx.get_usage().splitlines()[0] + "  (see --help)" if exc.ctx else None,
        )
        return EXIT_USAGE
    except click.exceptions.ClickException as exc:
        error_line(exc.format_message())
        return EXIT_USAGE
    except abort_types:
        error_line("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        return _failed(exc, args, debug)
