"""`resume-kit mcp` through the SDK's own stdio client: a real subprocess, the real protocol."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

TOOLS = {
    "brief",
    "status",
    "next_unit",
    "verify_next",
    "add_unit",
    "start_unit",
    "note_unit",
    "record_action",
    "check_action",
    "list_actions",
}


@asynccontextmanager
async def server(repo: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "resume_kit", "mcp", "--repo", str(repo)],
        env=dict(os.environ),
        cwd=str(repo.parent),
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def drive(repo: Path, body: Callable[[ClientSession], Awaitable[None]]) -> None:
    async def main() -> None:
        async with server(repo) as session:
            with anyio.fail_after(60):
                await body(session)

    anyio.run(main)


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.fixture
def project(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "Serve it over MCP").code == 0
    assert cli("add", "Alpha", "--verify", "true", "--id", "alpha").code == 0
    return repo


def test_lists_the_tools_with_schemas(project: Path) -> None:
    async def body(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        assert tools["add_unit"].input_schema["required"] == ["title", "verify"]
        assert tools["brief"].input_schema["properties"]["format"]["enum"] == ["markdown", "json"]

    drive(project, body)


def test_calls_each_tool(project: Path) -> None:
    async def body(session: ClientSession) -> None:
        brief = structured(await session.call_tool("brief", {"max_tokens": 2000}))
        assert "Serve it over MCP" in brief["text"]
        as_json = structured(await session.call_tool("brief", {"format": "json"}))
        assert isinstance(as_json["brief"], dict)

        status = structured(await session.call_tool("status", {}))
        assert status["counts"]["total"] == 1
        assert status["next"]["id"] == "alpha"

        nxt = structured(await session.call_tool("next_unit", {}))["next"]
        assert (nxt["id"], nxt["verify"], nxt["approved"]) == ("alpha", "true", True)

        started = structured(await session.call_tool("start_unit", {"unit": "alpha"}))
        assert started["status"] == "in_progress"
        noted = structured(
            await session.call_tool("note_unit", {"unit": "alpha", "text": "halfway"})
        )
        assert noted["notes"] == "halfway"

        passed = structured(await session.call_tool("verify_next", {}))
        assert (passed["unit"], passed["passed"], passed["next"]) == ("alpha", True, None)

        added = structured(
            await session.call_tool(
                "add_unit", {"title": "Beta", "verify": "true", "after": ["alpha"]}
            )
        )
        assert (added["id"], added["approved"], added["after"]) == ("beta", False, ["alpha"])

        rec = structured(
            await session.call_tool(
                "record_action", {"key": "mail-42", "description": "mail the reviewer"}
            )
        )
        assert rec["key"] == "mail-42"
        check = structured(await session.call_tool("check_action", {"key": "mail-42"}))
        assert (check["recorded"], check["succeeded"]) == (True, True)
        never = structured(await session.call_tool("check_action", {"key": "other"}))
        assert (never["recorded"], never["succeeded"]) == (False, False)
        listed = structured(await session.call_tool("list_actions", {}))
        assert [a["key"] for a in listed["actions"]] == ["mail-42"]

        progress = await session.read_resource("resume-kit://progress")
        text = progress.contents[0]
        assert isinstance(text, types.TextResourceContents) and "beta" in text.text
        brief_res = await session.read_resource("resume-kit://brief")
        assert isinstance(brief_res.contents[0], types.TextResourceContents)
        prompt = await session.get_prompt("resume")
        first = prompt.messages[0]
        assert first.role == "user" and isinstance(first.content, types.TextContent)
        assert "Serve it over MCP" in first.content.text

    drive(project, body)


def test_an_agent_added_command_is_refused(project: Path, cli) -> None:  # type: ignore[no-untyped-def]
    marker = project / "ran"

    async def body(session: ClientSession) -> None:
        structured(
            await session.call_tool("add_unit", {"title": "Gamma", "verify": f"touch {marker}"})
        )
        result = await session.call_tool("verify_next", {"unit": "gamma"})
        text = error_text(result)
        assert text.startswith("resume-kit: error: unit 'gamma': verify command not approved")
        assert "`resume-kit trust`" in text.splitlines()[1]

    drive(project, body)
    assert not marker.exists()
    status = json.loads(cli("status", "--json").out)
    gamma = next(u for u in status["units"] if u["id"] == "gamma")
    assert gamma["status"] == "todo"


def test_errors_carry_the_cli_line_and_hint(project: Path) -> None:
    async def body(session: ClientSession) -> None:
        text = error_text(await session.call_tool("start_unit", {"unit": "nope"}))
        first, hint = text.splitlines()  # exactly the CLI's two lines
        assert first.startswith("resume-kit: error: ") and "nope" in first
        assert hint.startswith("hint: ")

    drive(project, body)


BAD_ARGUMENTS = [
    ("brief", {"format": "xml"}),
    ("brief", {"max_tokens": 0}),
    ("add_unit", {"title": "No verify"}),
    ("add_unit", {"title": "", "verify": "true"}),
    ("record_action", {"key": "k", "status": "maybe"}),
    ("verify_next", {"timeout_s": -1}),
    ("start_unit", {}),
]


def test_bad_arguments_are_rejected_by_schema(project: Path) -> None:
    async def body(session: ClientSession) -> None:
        for tool, args in BAD_ARGUMENTS:
            try:
                result = await session.call_tool(tool, args)
            except MCPError as exc:
                assert exc.error.code == types.INVALID_PARAMS
                continue
            text = error_text(result)
            assert text.startswith(f"Error executing tool {tool}: "), text
            assert "validation error" in text, (tool, text)

    drive(project, body)
    progress = (project / ".resume-kit" / "progress.yaml").read_text()
    assert "No verify" not in progress and "actions" not in progress


def test_cancel_stops_the_process_group_and_marks_nothing(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    pgid_file = repo / "pgid"
    command = f"ps -o pgid= -p $$ > {pgid_file}; sleep 60"
    assert cli("init", "--goal", "Cancel it").code == 0
    assert cli("add", "Slow", "--verify", command, "--id", "slow").code == 0
    progressed = anyio.Event()
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)
        progressed.set()

    async def body(session: ClientSession) -> None:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await session.call_tool("verify_next", {}, progress_callback=on_progress)

            tg.start_soon(call)
            await progressed.wait()
            tg.cancel_scope.cancel()
        pgid = int(pgid_file.read_text())
        with anyio.fail_after(20):
            while _group_alive(pgid):
                await anyio.sleep(0.05)
        # the server is still serving: ask it how the unit stands
        status = structured(await session.call_tool("status", {}))
        slow = next(u for u in status["units"] if u["id"] == "slow")
        assert slow["status"] != "done"

    drive(repo, body)
    assert seen and seen[0] >= 1.0
    progress = (repo / ".resume-kit" / "progress.yaml").read_text()
    assert "evidence:" not in progress and "last_failure:" not in progress
    assert "status: todo" in progress


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_missing_repo_is_a_cli_error(tmp_path: Path) -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", "mcp", "--repo", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("resume-kit: error: not inside a git work tree")
