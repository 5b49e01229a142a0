"""`resume-kit mcp [--repo DIR]`: serve the repository over MCP on stdio (docs/mcp.md)."""

from __future__ import annotations

from pathlib import Path

from resume_kit.infra.errors import ResumeKitError


def run(repo: Path | None) -> int:
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise ResumeKitError(
            "the MCP server needs the `mcp` package, which is not installed",
            hint='install the extra: pip install "resume-kit[mcp]"',
        )
    from resume_kit.infra.paths import find_layout

    root = find_layout(repo).root  # refuse a directory outside a work tree before serving
    from resume_kit.infra.collector import long_lived_process
    from resume_kit.mcp_server.server import run as serve

    long_lived_process()

    serve(str(root))
    return 0
