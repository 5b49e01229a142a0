"""`resume-kit integrate claude|codex|gemini|cursor --mcp [--remove]`: the MCP server in the
agent's project config (the engine is :mod:`resume_kit.integrations.mcp_config`)."""

from __future__ import annotations

from resume_kit.cli.ui import out, warn
from resume_kit.infra.errors import ResumeKitError


def run(agent: str, remove: bool, user: bool = False) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations import mcp_config, settings

    if user:
        raise ResumeKitError(
            "--mcp writes the project's config file; --user and --local are for the hooks",
            hint=f"run `resume-kit integrate {agent} --mcp` inside the repository",
        )
    root = find_layout().root
    exe = settings.executable()
    where = mcp_config.config_file(agent).as_posix()
    changed = mcp_config.apply(root, agent, exe, remove)
    if remove:
        out(
            f"removed the resume-kit MCP server from {where}"
            if changed
            else f"no resume-kit MCP server in {where}: nothing changed"
        )
        return 0
    out(
        f"added the resume-kit MCP server to {where}"
        if changed
        else f"resume-kit MCP server already in {where}: nothing changed"
    )
    if exe is None:
        warn(
            "`resume-kit` is not on PATH and this process is not its script: the agent starts "
            "the server through PATH, so it fails until it is (for example: pipx install resume-kit)"
        )
    return 0
