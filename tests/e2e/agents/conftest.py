"""The real agent binaries (Claude Code, Codex CLI, Copilot CLI) against a loopback model server.

The pinned npm packages (``npm/package-lock.json``) are installed once per lock-file hash into
a cache folder outside the per-test home: ``$RESUME_KIT_AGENTS_CACHE`` or
``${XDG_CACHE_HOME:-~/.cache}/resume-kit-tests/agents-npm-<hash>``, read when this module is
imported (before ``isolated_home`` changes HOME). Only when node or npm is missing are the
tests skipped; an install that fails is an error.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.agent_server import AgentServer, Script, answer_ok
from tests.conftest import git

NPM_DIR = Path(__file__).resolve().parent / "npm"
CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
CODEX_PACKAGE = "@openai/codex"
COPILOT_PACKAGE = "@github/copilot"

_cache_env = os.environ.get("RESUME_KIT_AGENTS_CACHE")
_xdg_cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
CACHE_ROOT = Path(_cache_env) if _cache_env else Path(_xdg_cache) / "resume-kit-tests"

AGENT_TIMEOUT_S = int(os.environ.get("RESUME_KIT_AGENT_TIMEOUT", "120"))

# Every variable that could point an agent at a real account, a real server or the user's
# own configuration is dropped from the agents' environment.
_DROPPED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_API_KEY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
)


def lock_hash() -> str:
    return hashlib.sha256((NPM_DIR / "package-lock.json").read_bytes()).hexdigest()[:16]


def pinned_version(package: str) -> str:
    lock = json.loads((NPM_DIR / "package-lock.json").read_text(encoding="utf-8"))
    return str(lock["packages"][f"node_modules/{package}"]["version"])


@dataclass(frozen=True)
class AgentBins:
    claude: Path
    codex: Path
    node_bin: Path
    copilot: Path
    # Copilot CLI unpacks its JavaScript (about 240 MB) here once, not in each test's home.
    copilot_cache: Path

    @property
    def claude_version(self) -> str:
        return pinned_version(CLAUDE_PACKAGE)

    @property
    def codex_version(self) -> str:
        return pinned_version(CODEX_PACKAGE)

    @property
    def copilot_version(self) -> str:
        return pinned_version(COPILOT_PACKAGE)


def _install(target: Path) -> None:
    """``npm ci`` of the lock file into ``target`` (built beside it, then renamed into place,
    so a half-done install is never used). Scripts are off except the one Claude Code needs:
    its postinstall puts the platform's native binary in place of the bin stub."""
    npm = shutil.which("npm")
    assert npm is not None
    building = target.with_name(f"{target.name}.building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(NPM_DIR / name, building / name)
    command = [
        npm,
        "ci",
        "--prefer-offline",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--cache",
        str(CACHE_ROOT / "npm-cache"),
    ]
    subprocess.run(command, cwd=building, check=True, capture_output=True, timeout=900)
    package = building / "node_modules" / CLAUDE_PACKAGE
    subprocess.run(
        ["node", "install.cjs"], cwd=package, check=True, capture_output=True, timeout=300
    )
    os.replace(building, target)


@pytest.fixture(scope="session")
def agent_bins() -> AgentBins:
    """The pinned agent binaries, installed on first use (about 25 s and 800 MB)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to install the pinned agent binaries (npm/)")
    target = CACHE_ROOT / f"agents-npm-{lock_hash()}"
    bins = target / "node_modules" / ".bin"
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install at a time across test processes
        if not all((bins / name).exists() for name in ("claude", "codex", "copilot")):
            _install(target)
    found = AgentBins(
        bins / "claude",
        bins / "codex",
        Path(node).parent,
        bins / "copilot",
        target / "copilot-cache",
    )
    env = {
        **os.environ,
        "COPILOT_CACHE_HOME": str(found.copilot_cache),
        "COPILOT_HOME": str(target / "copilot-version-home"),  # never the user's ~/.copilot
        "COPILOT_AUTO_UPDATE": "false",
    }
    for binary, version in (
        (found.claude, found.claude_version),
        (found.codex, found.codex_version),
        (found.copilot, found.copilot_version),
    ):
        proc = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=120, env=env
        )
        assert version in proc.stdout, (binary, proc.stdout, proc.stderr)
    return found


@dataclass
class AgentRun:
    code: int
    stdout: str
    stderr: str
    seconds: float


@dataclass
class Workspace:
    """A git repository with a progress file, the mock server and the agents' environment."""

    root: Path
    home: Path
    server: AgentServer
    bins: AgentBins
    env: dict[str, str]

    def write_goal(self, goal: str, verify: str = "true") -> None:
        state = self.root / ".resume-kit"
        state.mkdir(exist_ok=True)
        (state / "progress.yaml").write_text(
            "schema_version: 1\n"
            f"goal: {goal}\n"
            "units:\n"
            "  - id: unit-001\n"
            "    title: First unit\n"
            "    status: in_progress\n"
            f"    verify: {json.dumps(verify)}\n",
            encoding="utf-8",
        )

    def resume_kit(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "resume_kit", *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    def run(self, binary: Path, *args: str) -> AgentRun:
        started = time.monotonic()
        proc = subprocess.run(
            [str(binary), *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=AGENT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        return AgentRun(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)

    def snapshot_triggers(self) -> list[str]:
        """The ``trigger`` of every snapshot resume-kit wrote, oldest first."""
        folder = self.root / ".resume-kit" / "snapshots"
        files = sorted(folder.glob("*.json")) if folder.is_dir() else []
        return [str(json.loads(f.read_text(encoding="utf-8"))["trigger"]) for f in files]

    def bodies(self, suffix: str) -> list[str]:
        """Raw bodies of the model requests the server received, in order."""
        return [
            r.text
            for r in self.server.recorded
            if r.method == "POST" and r.path.split("?")[0].endswith(suffix)
        ]


@pytest.fixture
def workspace(agent_bins: AgentBins, tmp_path: Path, isolated_home: Path) -> Iterator[Workspace]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    # The hooks call `resume-kit` by name: a shim on PATH runs this checkout's code.
    shims = tmp_path / "bin"
    shims.mkdir()
    shim = shims / "resume-kit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m resume_kit "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    path = os.pathsep.join([str(shims), str(agent_bins.node_bin), env.get("PATH", "")])
    env.update(
        {
            "PATH": path,
            "CLAUDE_CONFIG_DIR": str(isolated_home / ".claude"),
            "CODEX_HOME": str(isolated_home / ".codex"),
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # Anything but the loopback model server goes to a proxy that is not there.
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
        }
    )
    script: Script = answer_ok
    with AgentServer(script) as server:
        yield Workspace(root, isolated_home, server, agent_bins, env)


# ``RESUME_KIT_WRITE_FIXTURES=1 pytest tests/e2e/agents/test_transcripts.py`` copies what the
# real binaries wrote into tests/fixtures/<agent>/<version>/ for the readers' tests. To keep
# them small, in a record over MAX_FIXTURE_RECORD characters every string over 512 is replaced
# by a marker (system prompts, request blobs, tool listings, compaction history); a record
# still over 4 times that is dropped. Every other record is kept exactly as the agent wrote it.
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
WRITE_FIXTURES = os.environ.get("RESUME_KIT_WRITE_FIXTURES") == "1"
MAX_FIXTURE_RECORD = 4096
_ELIDED = "…(elided by tests/e2e/agents: the full text is in the agent's own file)"


def _shorten(value: object) -> object:
    if isinstance(value, str) and len(value) > 512:
        return _ELIDED
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    return value


def small_jsonl(text: str) -> str:
    kept: list[str] = []
    for line in text.splitlines():
        if len(line) <= MAX_FIXTURE_RECORD:
            kept.append(line)
            continue
        short = json.dumps(_shorten(json.loads(line)), ensure_ascii=False)
        if len(short) <= 4 * MAX_FIXTURE_RECORD:
            kept.append(short)
    return "".join(f"{line}\n" for line in kept)


def save_fixture(agent: str, version: str, source: Path, name: str) -> None:
    """Copy ``source`` to tests/fixtures/AGENT/VERSION/NAME (JSONL made small) when asked."""
    if not WRITE_FIXTURES:
        return
    target = FIXTURES / agent / version / name
    target.parent.mkdir(parents=True, exist_ok=True)
    text = source.read_text(encoding="utf-8")
    target.write_text(small_jsonl(text) if name.endswith(".jsonl") else text, encoding="utf-8")
