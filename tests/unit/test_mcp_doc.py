"""docs/mcp.md is generated from the MCP server's own schemas: it fails when they drift apart."""

from __future__ import annotations

from resume_kit.mcp_server import docs


def test_docs_mcp_md_matches_the_tool_schemas() -> None:
    assert docs.DOC.read_text(encoding="utf-8") == docs.render(), (
        "docs/mcp.md is stale: run `python -m resume_kit.mcp_server.docs`"
    )


def test_every_tool_is_documented() -> None:
    text = docs.DOC.read_text(encoding="utf-8")
    for name in ("brief", "status", "next_unit", "verify_next", "add_unit", "start_unit",
                 "note_unit", "record_action", "check_action", "list_actions"):  # fmt: skip
        assert f"### `{name}`" in text
