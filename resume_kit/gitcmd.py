"""The one way resume-kit runs git: argv lists, no optional locks, a cleaned environment.

Leaked ``GIT_DIR``/``GIT_INDEX_FILE``/``GIT_WORK_TREE`` (set by git while it runs a hook) are
removed so a command aimed at a work tree never acts on another repository by accident.

git runs through :mod:`subprocess` directly, as pre-commit does: GitPython's runner merges the
environment it is given into ``os.environ``, so it cannot remove an inherited ``GIT_DIR``, and
its import alone costs ~60 ms on the hook and brief paths.
"""

from __future__ import annotations

import os
from pathlib import Path

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
    import subprocess

    proc = subprocess.run(
        ["git", "--no-optional-locks", *args],
        cwd=cwd,
        env=clean_git_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    if check and proc.returncode != 0:
        raise GitFailed(list(args), proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc.returncode, proc.stdout, proc.stderr


def run_git(cwd: Path, *args: str, check: bool = True) -> str:
    """Like :func:`run_git_bytes` but decoded as UTF-8 (with surrogate escapes) and stripped."""
    _, out, _ = run_git_bytes(cwd, *args, check=check)
    return out.decode("utf-8", "surrogateescape").strip()
