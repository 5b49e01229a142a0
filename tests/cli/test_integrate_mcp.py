"""`integrate claude|codex|gemini|cursor --mcp [--remove]`: the MCP server in each agent's
project config, the person's other entries and formatting kept, symlinks refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit

from resume_kit.integrations import settings

JSON_FILES = {
    "claude": ".mcp.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/mcp.json",
}


def expected_command() -> str:
    return settings.executable() or "resume-kit"


@pytest.mark.parametrize("agent", sorted(JSON_FILES))
def test_json_configs_gain_and_lose_the_server(repo: Path, cli, agent: str) -> None:  # type: ignore[no-untyped-def]
    path = repo / JSON_FILES[agent]
    path.parent.mkdir(exist_ok=True)
    other = {"theme": "dark", "mcpServers": {"other": {"command": "x"}}}
    path.write_text(json.dumps(other, indent=4) + "\n")
    result = cli("integrate", agent, "--mcp")
    assert result.code == 0, result.stderr
    assert result.stdout == f"added the resume-kit MCP server to {JSON_FILES[agent]}\n"
    data = json.loads(path.read_text())
    assert data["mcpServers"]["resume-kit"] == {"command": expected_command(), "args": ["mcp"]}
    assert data["mcpServers"]["other"] == {"command": "x"} and data["theme"] == "dark"
    assert "hooks" not in data  # --mcp writes the server only
    again = cli("integrate", agent, "--mcp")
    assert "already in" in again.stdout
    assert cli("integrate", agent, "--mcp", "--remove").code == 0
    assert path.read_text() == json.dumps(other, indent=4) + "\n"


def test_a_file_holding_only_our_server_is_removed(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("integrate", "cursor", "--mcp").code == 0
    assert (repo / ".cursor" / "mcp.json").is_file()
    assert cli("integrate", "cursor", "--mcp", "--remove").code == 0
    assert not (repo / ".cursor").exists()
    nothing = cli("integrate", "cursor", "--mcp", "--remove")
    assert nothing.stdout == "no resume-kit MCP server in .cursor/mcp.json: nothing changed\n"


CODEX = """\
# my Codex settings
model = "o3"   # keep this comment

[mcp_servers.other]
command = "x"
args = ["--flag"]
"""


def test_codex_config_toml_round_trip_keeps_the_persons_formatting(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX)
    assert cli("integrate", "codex", "--mcp").code == 0
    text = path.read_text()
    assert text.startswith(CODEX)
    doc = tomlkit.parse(text).unwrap()
    assert doc["mcp_servers"]["resume-kit"] == {"command": expected_command(), "args": ["mcp"]}
    assert doc["mcp_servers"]["other"] == {"command": "x", "args": ["--flag"]}
    assert not (repo / ".codex" / "hooks.json").exists()
    assert cli("integrate", "codex", "--mcp", "--remove").code == 0
    assert path.read_text() == CODEX


def test_codex_config_created_and_removed(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("integrate", "codex", "--mcp").code == 0
    text = (repo / ".codex" / "config.toml").read_text()
    assert "[mcp_servers.resume-kit]" in text
    assert cli("integrate", "codex", "--mcp", "--remove").code == 0
    assert not (repo / ".codex").exists()


def test_invalid_toml_is_left_alone(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = \n")
    result = cli("integrate", "codex", "--mcp")
    assert result.code == 2
    assert result.stderr.startswith("resume-kit: error: ")
    assert "not valid TOML" in result.stderr
    assert path.read_text() == "model = \n"


@pytest.mark.parametrize(
    ("agent", "link"),
    [
        ("claude", ".mcp.json"),
        ("codex", ".codex/config.toml"),
        ("codex", ".codex"),
        ("gemini", ".gemini"),
        ("cursor", ".cursor/mcp.json"),
    ],
)
def test_symlinked_config_files_are_refused(
    repo: Path, tmp_path: Path, cli, agent: str, link: str
) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "victim"
    target.write_text("{}\n")
    path = repo / link
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(outside if link in (".codex", ".gemini") else target)  # a folder or the file
    result = cli("integrate", agent, "--mcp")
    assert result.code == 2
    assert result.stderr.startswith("resume-kit: error: ")
    assert "symlink" in result.stderr
    assert target.read_text() == "{}\n"
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]


def test_user_and_local_are_for_the_hooks(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("integrate", "claude", "--mcp", "--local")
    assert result.code == 2
    assert not (repo / ".mcp.json").exists()
