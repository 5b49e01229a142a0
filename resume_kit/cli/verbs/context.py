"""The commands that read the workspace: snapshot, brief, demo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from resume_kit.cli.params import BriefFormat, JsonOpt, Trigger, at_least, exit_with

app = typer.Typer()


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

    exit_with(cmd.run(json_out, quiet, trigger.value))


@app.command()
def brief(
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            metavar="N",
            callback=at_least(50),
            help="Most tokens the brief may take (cl100k_base, at least 50); default 1500.",
        ),
    ] = None,
    fmt: Annotated[
        BriefFormat,
        typer.Option(
            "--format", metavar="FORMAT", help="markdown, json, claude-hook or copilot-hook."
        ),
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

    exit_with(cmd.run(max_tokens, fmt.value, output, summarize))


@app.command()
def mcp(
    repo: Annotated[
        Path | None,
        typer.Option(
            "--repo", metavar="DIR", help="The repository to serve (default: the current one)."
        ),
    ] = None,
) -> None:
    """Serve the brief, progress and side-effect ledger as MCP tools on stdio (needs the
    `mcp` extra)."""
    from resume_kit.cli.commands import mcp as cmd

    exit_with(cmd.run(repo))
