"""The MCP server's entry in each agent's project config: `.mcp.json` (Claude Code),
`.gemini/settings.json` and `.cursor/mcp.json` under ``mcpServers``, and Codex's
`.codex/config.toml` under ``[mcp_servers.resume-kit]`` (a tomlkit round trip, so the person's
comments and layout survive). Project files are reached with no symlink on the way
(docs/security.md row 15); the command is the absolute resume-kit script, as for the hooks."""

from __future__ import annotations

import contextlib
from pathlib import Path

from resume_kit.core.typing_light import Any
from resume_kit.integrations import settings

NAME = "resume-kit"
JSON_FILES = {
    "claude": Path(".mcp.json"),
    "gemini": Path(".gemini/settings.json"),
    "cursor": Path(".cursor/mcp.json"),
}
CODEX_FILE = Path(".codex/config.toml")
MAX_TOML_BYTES = settings.MAX_SETTINGS_BYTES


def entry(exe: str | None) -> dict[str, Any]:
    return {"command": exe or "resume-kit", "args": ["mcp"]}


def config_file(agent: str) -> Path:
    return CODEX_FILE if agent == "codex" else JSON_FILES[agent]


def apply(root: Path, agent: str, exe: str | None, remove: bool) -> bool:
    """Add (or take out) our server; whether the file changed."""
    path = root / config_file(agent)
    if agent == "codex":
        return _apply_toml(root, path, exe, remove)
    return _apply_json(root, path, exe, remove)


def _apply_json(root: Path, path: Path, exe: str | None, remove: bool) -> bool:
    from resume_kit.infra.store import atomic_write

    current = settings.read_settings(path, root)
    data = dict(current.data)
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise settings.SettingsError(
            f"{current.path}: mcpServers is not an object; nothing was changed",
            hint="fix the file by hand",
        )
    servers = dict(servers)
    if remove:
        if NAME not in servers:
            return False
        del servers[NAME]
    else:
        if servers.get(NAME) == entry(exe):
            return False
        servers[NAME] = entry(exe)
    if servers:
        data["mcpServers"] = servers
    else:
        data.pop("mcpServers", None)
    if not data and current.existed:
        _unlink(root, current.path)
        return True
    atomic_write(current.path, settings.render(data, current.indent), mode=current.mode)
    return True


def _apply_toml(root: Path, path: Path, exe: str | None, remove: bool) -> bool:
    import tomlkit

    from resume_kit.infra.store import atomic_write

    target, text, mode = _read_toml(root, path)
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise settings.SettingsError(
            f"{target}: not valid TOML ({exc}); nothing was changed",
            hint="fix the file (or move it away), then run the command again",
        ) from None
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise settings.SettingsError(
            f"{target}: mcp_servers is not a table; nothing was changed",
            hint="fix the file by hand",
        )
    if remove:
        if servers is None or NAME not in servers:
            return False
        del servers[NAME]
        if not servers:
            del doc["mcp_servers"]
    else:
        if servers is not None and _plain(servers.get(NAME)) == entry(exe):
            return False
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        table = tomlkit.table()
        table.update(entry(exe))
        servers[NAME] = table
    out = tomlkit.dumps(doc)
    if remove:  # the blank line tomlkit kept before our table goes with it
        out = out.rstrip("\n") + "\n" if out.strip() else ""
    if not out.strip() and text:
        _unlink(root, target)
        return True
    atomic_write(target, out, mode=mode)
    return True


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _read_toml(root: Path, path: Path) -> tuple[Path, str, int | None]:
    import os

    from resume_kit.infra.safefs import NotARegularFile, open_regular

    target = settings.settings_target(path, root)
    try:
        with open_regular(target) as handle:
            raw = handle.read(MAX_TOML_BYTES + 1)
            mode = os.fstat(handle.fileno()).st_mode & 0o7777
    except FileNotFoundError:
        return target, "", None
    except NotARegularFile as exc:
        raise settings.SettingsError(
            f"{target} is not a regular file ({exc.kind}); nothing was changed",
            hint="move it away, then run the command again",
        ) from None
    if len(raw) > MAX_TOML_BYTES:
        raise settings.SettingsError(f"{target} is too large; nothing was changed")
    try:
        return target, raw.decode("utf-8-sig"), mode
    except UnicodeDecodeError:
        raise settings.SettingsError(
            f"{target} is not UTF-8 text; nothing was changed", hint="fix the file by hand"
        ) from None


def _unlink(root: Path, path: Path) -> None:
    path.unlink()
    if path.parent != root:
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when nothing else is in it
