"""Shared fixtures: real git repositories in temporary folders, the real CLI (in this process
or in a subprocess, also on a terminal), isolated HOME."""

from __future__ import annotations

import contextlib
import importlib
import os
import pty
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


# In the development tier (``pytest -m "not slow"``) a Hypothesis test tries at most this many
# examples; the full run (plain ``pytest``, CI) tries each test's own count.
FAST_EXAMPLES = 20


def fast_tier(config: pytest.Config) -> bool:
    return "not slow" in str(config.getoption("markexpr", "") or "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not fast_tier(config):
        return
    from hypothesis import settings

    for item in items:
        test = getattr(item, "obj", None)
        if getattr(test, "hypothesis", None) is None:
            continue
        # Where @given keeps the test's settings (hypothesis' own pytest plugin reads it too);
        # an explicit @settings(max_examples=N) wins over any profile, so it is narrowed here.
        current = test._hypothesis_internal_use_settings  # type: ignore[union-attr]
        if current.max_examples > FAST_EXAMPLES:
            test._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
                current, max_examples=FAST_EXAMPLES
            )


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


def run_cli_subprocess(
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


# Module-level state of resume_kit that lives "once per process": a subprocess starts with it
# empty, so the in-process runner empties it before every call. A name that moves or goes
# away fails loudly here (AttributeError) rather than leaking state silently.
PROCESS_STATE: tuple[tuple[str, str], ...] = (
    ("resume_kit.cli.ui", "stdout_console"),  # bound to the sys.stdout of its first call
    ("resume_kit.cli.ui", "stderr_console"),
    ("resume_kit.infra.trust", "_warned_trust_all"),  # the RESUME_KIT_TRUST=all warning
    ("resume_kit.progress_file.config", "_NOTED"),  # the config.yaml note
    ("resume_kit.progress_file.io", "_LOADED"),  # the text this process last read or wrote
    ("resume_kit.infra.gitcmd", "_filter_cache"),  # filter drivers per directory
)
# Kept on purpose, being pure functions of the installed package: the cl100k ranks
# (resume_kit.infra.tokens._encoding), the YAML loader class, lru_caches of pure functions.


def reset_process_state() -> None:
    """Empty what a fresh ``resume-kit`` process would start without (see PROCESS_STATE)."""
    for module_name, attr in PROCESS_STATE:
        module = sys.modules.get(module_name)
        if module is None:
            continue  # never imported: nothing to forget
        value = getattr(module, attr)
        if hasattr(value, "cache_clear"):
            value.cache_clear()
        elif isinstance(value, (dict, set, list)):
            value.clear()
        elif isinstance(value, bool):
            setattr(module, attr, False)
        else:  # pragma: no cover - a new kind of state: teach this function about it
            raise TypeError(f"{module_name}.{attr}: cannot reset a {type(value).__name__}")


@contextlib.contextmanager
def _standard_streams(stdin_text: str | None) -> Iterator[dict[str, str]]:
    """Point file descriptors 0, 1, 2 and sys.stdin/stdout/stderr at fresh files (stdin: the
    input or /dev/null), as a subprocess would see them: what the CLI's own children (git,
    verify commands) write lands in the same files. Everything is restored afterwards; the
    yielded dict then holds ``stdout`` and ``stderr`` as ``subprocess.run(text=True)`` would
    (UTF-8, universal newlines)."""
    captured: dict[str, str] = {}
    with contextlib.ExitStack() as files:
        out_file = files.enter_context(tempfile.TemporaryFile())
        err_file = files.enter_context(tempfile.TemporaryFile())
        if stdin_text is None:
            in_fd = files.enter_context(open(os.devnull, "rb")).fileno()
        else:
            in_file = files.enter_context(tempfile.TemporaryFile())
            in_file.write(stdin_text.encode())
            in_file.seek(0)
            in_fd = in_file.fileno()
        saved_streams = (sys.stdin, sys.stdout, sys.stderr)
        for stream in saved_streams:
            with contextlib.suppress(Exception):
                stream.flush()
        saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
        try:
            for fd, target in ((0, in_fd), (1, out_file.fileno()), (2, err_file.fileno())):
                os.dup2(target, fd)
            with (
                open(0, encoding="utf-8", closefd=False) as sys.stdin,
                open(1, "w", encoding="utf-8", closefd=False) as sys.stdout,
                open(
                    2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1
                ) as sys.stderr,
            ):
                yield captured
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            for fd, saved in zip((0, 1, 2), saved_fds, strict=True):
                os.dup2(saved, fd)
                os.close(saved)
        for name, handle in (("stdout", out_file), ("stderr", err_file)):
            handle.seek(0)
            text = handle.read().decode("utf-8")
            captured[name] = text.replace("\r\n", "\n").replace("\r", "\n")


def run_cli_in_process(
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    """Run the real CLI's ``main`` in this process, seeing what a subprocess would: ``cwd``
    as the working directory, ``os.environ`` plus ``env``, fresh standard streams, per-process
    state emptied (PROCESS_STATE). Working directory, environment and streams are restored
    afterwards. ``timeout`` is accepted for the same signature and not enforced."""
    del timeout
    saved_cwd = os.getcwd()
    saved_env = dict(os.environ)
    saved_argv = sys.argv
    main = importlib.import_module("resume_kit.cli.app").main
    code = 0
    try:
        os.chdir(cwd)
        os.environ.update(env or {})
        sys.argv = ["resume-kit", *args]
        reset_process_state()
        with _standard_streams(input) as captured:
            try:
                main(list(args))
            except SystemExit as exc:
                if exc.code is None:
                    code = 0
                elif isinstance(exc.code, int):
                    code = exc.code
                else:  # sys.exit("message"): printed on stderr, status 1
                    sys.stderr.write(f"{exc.code}\n")
                    code = 1
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Result(code, captured["stdout"], captured["stderr"])


# Which runner ``run_cli`` and the ``cli`` fixture use for the running test (set by the
# autouse fixture ``_choose_runner``).
_runner: Callable[..., Result] = run_cli_subprocess
IN_PROCESS_TIERS = ("unit", "cli")


def run_cli(
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    """Run the real CLI the way the running test's tier asks: in this process for tests in
    ``tests/unit`` and ``tests/cli`` (unless marked ``subprocess``), in a subprocess
    everywhere else. Same arguments and ``Result`` either way."""
    return _runner(*args, cwd=cwd, input=input, env=env, timeout=timeout)


def tier_of(path: Path) -> str | None:
    """``unit``, ``cli``, ``e2e`` or ``adversarial`` for a test file, None outside the tiers."""
    try:
        parts = path.resolve().relative_to(REPO_ROOT / "tests").parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 else None


@pytest.fixture(autouse=True)
def _choose_runner(request: pytest.FixtureRequest) -> Iterator[None]:
    global _runner
    in_process = (
        tier_of(Path(str(request.node.path))) in IN_PROCESS_TIERS
        and request.node.get_closest_marker("subprocess") is None
    )
    _runner = run_cli_in_process if in_process else run_cli_subprocess
    try:
        yield
    finally:
        _runner = run_cli_subprocess


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
    """``cli("status", "--json")`` runs the real CLI inside ``repo`` (through ``run_cli``: in
    this process or a subprocess, as the test's tier asks)."""

    def call(*args: str, **kwargs: object) -> Result:
        kwargs.setdefault("cwd", repo)
        return run_cli(*args, **kwargs)  # type: ignore[arg-type]

    return call
