"""Shared fixtures: real git repositories in temporary folders, the real CLI (also on a
terminal), isolated HOME."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test may touch the real home directory or user data (trust approvals, agent sessions)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "author@example.com")
    monkeypatch.setenv("NO_COLOR", "1")
    for name in (
        "RESUME_KIT_TRUST",
        "RESUME_KIT_DEBUG",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Author\n\temail = author@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[advice]\n\tdetachedHead = false\n"
    )
    return home


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, check=check, text=True, capture_output=True)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def out(self) -> str:
        return self.stdout


def run_cli(
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    """Run the real ``resume-kit`` CLI in a subprocess (``python -m resume_kit``)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", *args],
        cwd=cwd,
        input=input,
        text=True,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@dataclass
class TerminalResult:
    code: int
    stdout: bytes
    shown: str  # what the terminal received on stderr, escape sequences included


def run_cli_on_terminal(*args: str, cwd: Path, env: dict[str, str]) -> TerminalResult:
    """Run the real CLI with stderr on a pseudo-terminal (TERM=xterm, 100 columns), stdout on
    a pipe, and collect everything the terminal was sent."""
    master, replica = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "resume_kit", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=replica,
        env={**os.environ, **env, "TERM": "xterm", "COLUMNS": "100"},
    )
    os.close(replica)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = proc.communicate(timeout=60)
    reader.join(timeout=10)
    os.close(master)
    return TerminalResult(proc.returncode, out, b"".join(chunks).decode("utf-8", "replace"))


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A fresh git repository with one commit."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    yield root


@pytest.fixture
def cli(repo: Path):  # type: ignore[no-untyped-def]
    """``cli("status", "--json")`` runs the real CLI inside ``repo``."""

    def call(*args: str, **kwargs: object) -> Result:
        kwargs.setdefault("cwd", repo)
        return run_cli(*args, **kwargs)  # type: ignore[arg-type]

    return call
