"""The MCP server (`resume-kit mcp`): the brief, the progress file and the side-effect ledger as
MCP tools, resources and a prompt. Only :mod:`resume_kit.mcp_server.server` imports ``mcp``."""
