"""The one way resume-kit runs git: GitPython's command runner, argv lists, no optional locks.

Leaked ``GIT_DIR``/``GIT_INDEX_FILE``/``GIT_WORK_TREE`` (set by git while it runs a hook) are
removed so a command aimed at a work tree never acts on another repository by accident.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

LEAKED_GIT_VARS = (
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
)


def clean_git_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment with leaked repository variables removed."""
    env = dict(os.environ if base is None else base)
    for name in LEAKED_GIT_VARS:
        env.pop(name, None)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env.setdefault("LC_ALL", "C")
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


class GitFailed(Exception):
    def __init__(self, args: list[str], status: int, stderr: str):
        super().__init__(f"git {' '.join(args)} exited {status}: {stderr.strip()}")
        self.status = status
        self.stderr = stderr


def run_git_bytes(cwd: Path, *args: str, check: bool = True) -> tuple[int, bytes, bytes]:
    """Run ``git --no-optional-locks ARGS`` in ``cwd``; return (status, stdout, stderr) as bytes."""
    from git.cmd import Git  # lazy: GitPython costs ~60 ms to import

    argv = ["git", "--no-optional-locks", *args]
    runner = Git(str(cwd))
    result: Any = runner.execute(
        argv,
        with_extended_output=True,
        with_exceptions=False,
        stdout_as_string=False,
        strip_newline_in_stdout=False,
        env=clean_git_env(),
    )
    status, out, err = result
    err_bytes = err if isinstance(err, bytes) else str(err).encode()
    if check and status != 0:
        raise GitFailed(list(args), status, err_bytes.decode("utf-8", "replace"))
    return int(status), bytes(out), err_bytes


def run_git(cwd: Path, *args: str, check: bool = True) -> str:
    """Like :func:`run_git_bytes` but decoded as UTF-8 (with surrogate escapes) and stripped."""
    _, out, _ = run_git_bytes(cwd, *args, check=check)
    return out.decode("utf-8", "surrogateescape").strip()
