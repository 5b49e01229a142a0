"""`resume-kit mcp` without the `mcp` package: one line naming the extra, exit 2."""

from __future__ import annotations

import sys

import pytest


def test_missing_extra_names_it(repo, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if it were not installed
    result = cli("mcp")
    assert result.code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "resume-kit: error: the MCP server needs the `mcp` package, which is not installed"
    )
    assert lines[1] == 'hint: install the extra: pip install "resume-kit[mcp]"'
