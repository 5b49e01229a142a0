"""Hostile repositories, built for real: an attacker's source repository, a ``git clone`` of
it, then the victim's ordinary commands (docs/security.md).

Every security test goes through these so the files arrive the way they do for a user: by
git, with symlinks checked out as symlinks and the attacker's commit messages and branch
names intact.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import Result, git

# The installed console script, as a user runs it: unlike ``python -m`` it does not put the
# current directory on sys.path, so a planted ``resume_kit/`` in the clone is not what runs
# unless resume-kit itself imports from the work tree.
RESUME_KIT = str(Path(sys.executable).with_name("resume-kit"))

CANARY_KEY = "AKIAZZZCANARY7777ABCD"
CANARY_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY1"


def plant_user_secrets(home: Path) -> dict[str, Path]:
    """Files a clone must never read or change: AWS credentials, an SSH key, a shell rc."""
    aws = home / ".aws" / "credentials"
    aws.parent.mkdir(parents=True, exist_ok=True)
    aws.write_text(
        f"[default]\naws_access_key_id = {CANARY_KEY}\naws_secret_access_key = {CANARY_SECRET}\n"
    )
    ssh = home / ".ssh" / "id_ed25519"
    ssh.parent.mkdir(parents=True, exist_ok=True)
    ssh.write_text(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "QyNTUxOQAAACCANARYCANARYCANARYCANARYCANARYCANARYCANARYCAAAAJhCANARYQ\n"
        "-----END OPENSSH PRIVATE KEY-----\n"
    )
    bashrc = home / ".bashrc"
    bashrc.write_text("# the user's own shell setup\nexport KEEP_ME=1\n")
    return {"aws": aws, "ssh": ssh, "bashrc": bashrc}


def make_source_repo(
    path: Path,
    files: Mapping[str, str | bytes] | None = None,
    *,
    symlinks: Mapping[str, str] | None = None,
    executable: tuple[str, ...] = (),
    message: str = "initial",
    branch: str = "main",
) -> Path:
    """The attacker's repository: ``files`` (relative path -> content), ``symlinks``
    (relative path -> target, committed as symlinks), one commit with ``message``."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", branch)
    for rel, content in (files or {}).items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    for rel in executable:
        os.chmod(path / rel, 0o755)
    for rel, link_to in (symlinks or {}).items():
        link = path / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(link_to, link)
    git(path, "add", "-A", "-f")
    git(path, "commit", "-q", "--allow-empty", "-m", message)
    return path


def clone(source: Path, dest: Path, *args: str) -> Path:
    """``git clone`` as the victim does it."""
    git(source.parent, "clone", "-q", *args, str(source), str(dest))
    return dest


def hostile_clone(
    tmp_path: Path,
    files: Mapping[str, str | bytes] | None = None,
    *,
    symlinks: Mapping[str, str] | None = None,
    executable: tuple[str, ...] = (),
    message: str = "initial",
    branch: str = "main",
) -> Path:
    """A fresh clone of an attacker's repository holding ``files`` and ``symlinks``."""
    source = make_source_repo(
        tmp_path / "attacker",
        files,
        symlinks=symlinks,
        executable=executable,
        message=message,
        branch=branch,
    )
    return clone(source, tmp_path / "victim")


def run_user(
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> Result:
    """Run the installed ``resume-kit`` console script the way a user types it."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(
        [RESUME_KIT, *args],
        cwd=cwd,
        input=input,
        text=True,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def user_git(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A git command the victim types (hooks run as they would for them)."""
    return subprocess.run(
        ["git", *args], cwd=cwd, text=True, capture_output=True, timeout=timeout, check=False
    )


def install_hooks_for_every_repository(home: Path) -> None:
    """resume-kit's git hooks installed once for all of the user's repositories (a global
    ``core.hooksPath``): one install arms every clone made afterwards."""
    benign = home / "benign"
    benign.mkdir()
    user_git(benign, "init", "-q")
    user_git(benign, "config", "--global", "core.hooksPath", str(home / "git-hooks"))
    installed = run_user("hook", "install", cwd=benign)
    assert installed.code == 0, installed.stderr
