"""Git hooks and agent hooks: ``hook``, ``integrate`` and the hidden ``stop-check``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from resume_kit.cli.params import PLAIN, JsonOpt, exit_with

app = typer.Typer()
hook_app = typer.Typer(
    help="Git hooks: post-commit snapshots and Resume-Unit trailers.", no_args_is_help=True
)
integrate_app = typer.Typer(
    help="Agent hooks for Claude Code, Codex CLI, Gemini CLI, Cursor and Copilot CLI; Aider's brief file; an AGENTS.md block.",
    no_args_is_help=True,
)
RemoveOpt = Annotated[bool, typer.Option("--remove", help="Remove our hooks again.")]
McpOpt = Annotated[
    bool,
    typer.Option(
        "--mcp", help="Add the `resume-kit mcp` server to the agent's MCP config instead."
    ),
]
StopVerifyOpt = Annotated[
    bool,
    typer.Option("--stop-verify", help="Also add a Stop hook that runs the unit's verify command."),
]


@hook_app.command("install")
def hook_install(
    hooks: Annotated[
        str,
        typer.Option("--hooks", metavar="NAMES", help="Comma-separated git hooks to install."),
    ] = "post-commit,prepare-commit-msg",
    commit_attributes: Annotated[
        bool,
        typer.Option(
            "--commit-attributes",
            help="Put the progress.yaml merge driver's attribute in .gitattributes (committed) "
            "instead of .git/info/attributes.",
        ),
    ] = False,
) -> None:
    """Install git hooks (keeps an existing hook and runs it first) and the merge driver for
    progress.yaml."""
    from resume_kit.cli.commands import hook as cmd

    exit_with(cmd.install(hooks, commit_attributes))


@hook_app.command("uninstall")
def hook_uninstall() -> None:
    """Remove our git hooks (restoring the originals byte for byte), the merge driver and the
    commit hook's copy of progress.yaml in the user's cache."""
    from resume_kit.cli.commands import hook as cmd

    exit_with(cmd.uninstall())


@hook_app.command("status")
def hook_status(json_out: JsonOpt = False) -> None:
    """Show which git hooks are installed."""
    from resume_kit.cli.commands import hook as cmd

    exit_with(cmd.status(json_out))


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

    exit_with(cmd.run_hook(name, args or [], repo))


@integrate_app.command("claude")
def integrate_claude(
    user: Annotated[
        bool,
        typer.Option("--user", help="Change ~/.claude/settings.json instead of the project's."),
    ] = False,
    local: Annotated[
        bool,
        typer.Option("--local", help="Change .claude/settings.local.json (yours, not in git)."),
    ] = False,
    remove: RemoveOpt = False,
    stop_verify: StopVerifyOpt = False,
    mcp: McpOpt = False,
) -> None:
    """Add SessionStart, PostCompact and PreCompact hooks to Claude Code's settings."""
    from resume_kit.cli.commands import integrate as cmd

    if mcp:
        _mcp("claude", remove, user or local)
    exit_with(cmd.claude(user, remove, stop_verify, local))


@integrate_app.command("codex")
def integrate_codex(
    remove: RemoveOpt = False,
    stop_verify: StopVerifyOpt = False,
    mcp: McpOpt = False,
) -> None:
    """Add SessionStart and PreCompact hooks to .codex/hooks.json."""
    from resume_kit.cli.commands import integrate as cmd

    if mcp:
        _mcp("codex", remove)
    exit_with(cmd.codex(remove, stop_verify))


@integrate_app.command("gemini")
def integrate_gemini(
    remove: RemoveOpt = False, stop_verify: StopVerifyOpt = False, mcp: McpOpt = False
) -> None:
    """Add SessionStart and PreCompress hooks to .gemini/settings.json."""
    from resume_kit.cli.commands import integrate as cmd

    if mcp:
        _mcp("gemini", remove)
    exit_with(cmd.gemini(remove, stop_verify))


@integrate_app.command("cursor")
def integrate_cursor(remove: RemoveOpt = False, mcp: McpOpt = False) -> None:
    """A preCompact snapshot hook in .cursor/hooks.json and a rules file to read the brief."""
    from resume_kit.cli.commands import integrate as cmd

    if mcp:
        _mcp("cursor", remove)
    exit_with(cmd.cursor(remove))


@integrate_app.command("copilot")
def integrate_copilot(remove: RemoveOpt = False) -> None:
    """The brief on the first prompt of each GitHub Copilot CLI session (.github/hooks/)."""
    from resume_kit.cli.commands import integrate as cmd

    exit_with(cmd.copilot(remove))


@integrate_app.command("aider")
def integrate_aider(remove: RemoveOpt = False) -> None:
    """Keep .resume-kit/brief.md fresh and list it under `read:` in .aider.conf.yml."""
    from resume_kit.cli.commands import integrate as cmd

    exit_with(cmd.aider(remove))


@integrate_app.command("agents-md")
def integrate_agents_md(
    files: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[FILE]...",
            click_type=PLAIN,
            help="AGENTS.md, CLAUDE.md and/or GEMINI.md (default: AGENTS.md).",
        ),
    ] = None,
    remove: RemoveOpt = False,
) -> None:
    """Write (or remove) one marked block telling agents how to work with resume-kit."""
    from resume_kit.cli.commands import integrate as cmd

    exit_with(cmd.agents_md(files or ["AGENTS.md"], remove))


@app.command("stop-check", hidden=True)
def stop_check() -> None:
    """Stop-hook entry point (internal): block stopping while the unit in progress fails."""
    from resume_kit.cli.commands import stop_check as cmd

    exit_with(cmd.run())


@app.command("hook-tool", hidden=True)
def hook_tool(
    phase: Annotated[
        str,
        typer.Argument(metavar="PHASE", click_type=PLAIN, help="pre (before the call) or post."),
    ],
    agent: Annotated[
        str, typer.Option("--agent", metavar="NAME", help="claude, codex, gemini or cursor.")
    ] = "claude",
) -> None:
    """Tool-hook entry point (internal): record side effects, ask before repeating one."""
    from resume_kit.integrations import tool_hook

    exit_with(tool_hook.main([phase, "--agent", agent]))


def _mcp(agent: str, remove: bool, user: bool = False) -> None:
    """`--mcp`: the MCP server's entry instead of the hooks (exits)."""
    from resume_kit.cli.commands import integrate_mcp

    raise typer.Exit(integrate_mcp.run(agent, remove, user))
