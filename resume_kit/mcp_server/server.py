"""The MCP server: registers the tools, resources and prompt on the SDK's ``MCPServer`` and
runs it on stdio. The tools' bodies are :mod:`resume_kit.mcp_server.engine`; a ResumeKitError
becomes a tool error carrying the CLI's one line and hint."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from resume_kit.infra import messages
from resume_kit.infra.errors import ResumeKitError
from resume_kit.mcp_server import engine

T = TypeVar("T")
BriefFormat = Literal["markdown", "json"]
Key = Annotated[str, Field(min_length=1, description="A stable key, e.g. notify-reviewer-pr-42.")]
UnitId = Annotated[str, Field(min_length=1, description="The unit's id.")]
PROGRESS_EVERY_S = 1.0


def error_message(exc: ResumeKitError) -> str:
    """The CLI's error line, and its hint on the next line."""
    lines = [messages.error_text(exc.message)]
    if exc.hint:
        lines.append(messages.hint_text(exc.hint))
    return "\n".join(lines)


def tool_error(exc: ResumeKitError) -> Any:
    """The tool error with exactly the CLI's lines: a raised ToolError would reach the client
    behind the SDK's own "Error executing tool NAME: " lead, and a CallToolResult is passed on
    as it is (typed Any: the tools declare the dictionary they return on success)."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=error_message(exc))], is_error=True
    )


async def _call(fn: Callable[..., T], *args: Any) -> T:
    """Run an engine call in a worker thread (it runs git and takes locks)."""
    try:
        return await anyio.to_thread.run_sync(lambda: fn(*args))
    except ResumeKitError as exc:
        return tool_error(exc)  # type: ignore[no-any-return]


async def _read(fn: Callable[..., T], *args: Any) -> T:
    """:func:`_call` for resources and the prompt, whose errors are protocol errors."""
    try:
        return await anyio.to_thread.run_sync(lambda: fn(*args))
    except ResumeKitError as exc:
        raise ToolError(error_message(exc)) from None


def build_server() -> MCPServer[Any]:
    from resume_kit import __version__

    server: MCPServer[Any] = MCPServer(
        name=messages.PROG,
        version=__version__,
        instructions="The task's progress: call `brief` first, then `next_unit`, work on it, and "
        "`verify_next` to prove it done. Record side effects before repeating them.",
    )

    @server.tool()
    async def brief(
        max_tokens: Annotated[int | None, Field(ge=1, description="Token budget.")] = None,
        format: Annotated[BriefFormat, Field(description="The brief's format.")] = "markdown",
    ) -> dict[str, Any]:
        """The fresh-context prompt: goal, next unit, findings, workspace facts."""
        return await _call(engine.brief, max_tokens, format)

    @server.tool()
    async def status() -> dict[str, Any]:
        """Units, counts, the next unit with why, workspace and findings (`status --json`)."""
        return await _call(engine.status)

    @server.tool()
    async def next_unit() -> dict[str, Any]:
        """The next unit: its verify command and whether a person approved it."""
        return await _call(engine.next_unit)

    @server.tool()
    async def verify_next(
        ctx: Context,
        unit: Annotated[str | None, Field(min_length=1, description="A unit id.")] = None,
        timeout_s: Annotated[float | None, Field(gt=0, description="Seconds.")] = None,
    ) -> dict[str, Any]:
        """Run the next (or the named) unit's verify command, only if a person approved it, and
        record the evidence on success (`verify-next --json`). Cancel it to stop the command."""
        return await _verify(ctx, unit, timeout_s)

    @server.tool()
    async def add_unit(
        title: Annotated[str, Field(min_length=1, description="What the unit achieves.")],
        verify: Annotated[str, Field(min_length=1, description="Command exiting 0 when done.")],
        files: Annotated[list[str], Field(description="Globs the unit owns.")] = [],  # noqa: B006
        artifacts: Annotated[list[str], Field(description="Files that must exist.")] = [],  # noqa: B006
        after: Annotated[list[str], Field(description="Units done first.")] = [],  # noqa: B006
    ) -> dict[str, Any]:
        """Append a unit. Its command is NOT approved: a person must run `resume-kit trust`."""
        return await _call(engine.add_unit, title, verify, files, artifacts, after)

    @server.tool()
    async def start_unit(unit: UnitId) -> dict[str, Any]:
        """Mark a unit in progress."""
        return await _call(engine.start_unit, unit)

    @server.tool()
    async def note_unit(
        unit: UnitId,
        text: Annotated[str, Field(description="What you are in the middle of; empty clears.")],
    ) -> dict[str, Any]:
        """Keep a note on a unit (replaces its note)."""
        return await _call(engine.note_unit, unit, text)

    @server.tool()
    async def record_action(
        key: Key,
        description: Annotated[str, Field(description="What the side effect is.")] = "",
        status: Annotated[
            Literal["success", "unknown", "failed"],
            Field(description="unknown when you cannot tell whether it happened."),
        ] = "success",
    ) -> dict[str, Any]:
        """Record an attempt at a side effect in the ledger (`action record`)."""
        return await _call(engine.record_action, key, description, status)

    @server.tool()
    async def check_action(key: Key) -> dict[str, Any]:
        """Whether a side effect already succeeded (then do not repeat it)."""
        return await _call(engine.check_action, key)

    @server.tool()
    async def list_actions() -> dict[str, Any]:
        """The side-effect ledger (`action list --json`)."""
        return await _call(engine.list_actions)

    @server.resource("resume-kit://brief", mime_type="text/markdown")
    async def brief_resource() -> str:
        """The brief in Markdown."""
        data = await _read(engine.brief, None, "markdown")
        return str(data["text"])

    @server.resource("resume-kit://progress", mime_type="application/yaml")
    async def progress_resource() -> str:
        """The progress file as it stands."""
        return await _read(_progress_text)

    @server.prompt(name="resume")
    async def resume() -> str:
        """Resume the interrupted task: the brief as the opening message."""
        data = await _read(engine.brief, None, "markdown")
        return str(data["text"])

    return server


def _progress_text() -> str:
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file import io

    layout = find_layout()
    io.load(layout)  # the same checks as every command: a folder or file that is a link, ...
    return io.read_text(layout.progress)


async def _verify(ctx: Context, unit_id: str | None, timeout_s: float | None) -> dict[str, Any]:
    try:
        plan = await anyio.to_thread.run_sync(engine.verify_plan, unit_id, timeout_s)
    except ResumeKitError as exc:
        return tool_error(exc)  # type: ignore[no-any-return]
    if plan is None:
        return {"unit": None, "next": None}
    layout, unit, timeout = plan
    stop = threading.Event()
    finished = threading.Event()
    gate = threading.Lock()
    state = {"started": False, "abandoned": False}
    last = [0.0]

    def tick(elapsed: float, line: str) -> None:
        if elapsed - last[0] < PROGRESS_EVERY_S or stop.is_set():
            return
        last[0] = elapsed
        # the client went away or the call was cancelled: the command keeps its own course
        with contextlib.suppress(Exception):
            anyio.from_thread.run(ctx.report_progress, elapsed, timeout, line or None)

    def work() -> dict[str, Any]:
        with gate:
            if state["abandoned"]:
                return {}
            state["started"] = True
        try:
            return engine.verify_run(layout, unit, timeout, stop, tick)
        finally:
            finished.set()

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        stop.set()  # the process group is stopped and nothing is recorded
        with gate:
            # cancelled before the worker took it up: anyio may never run it at all
            state["abandoned"] = not state["started"]
        if not state["abandoned"]:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(finished.wait)
        raise
    except ResumeKitError as exc:
        return tool_error(exc)  # type: ignore[no-any-return]


def run(repo: str | None) -> None:
    import os

    if repo is not None:
        os.chdir(repo)
    build_server().run("stdio")
