"""The one way resume-kit talks to a git remote (``claim``, ``release``, ``leases``): the
safeguards of :mod:`resume_kit.infra.gitcmd` plus those a network command needs.

The repository's ``.git/config`` is hostile (docs/security.md): it can name the remote's URL
(``ext::sh -c …``), ``core.sshCommand``, ``core.askPass``, credential helpers (also per URL),
``remote.<name>.receivepack``/``uploadpack`` (run locally for a path remote), ``core.gitProxy``,
a remote helper (``remote.<name>.vcs``) and hooks (``reference-transaction``, ``pre-push``).
Every git command here therefore gets, as ``-c`` options that outrank every config file:

* transports: only ``file``, ``ssh``, ``https`` and ``http`` (gitcmd's ``protocol.allow=never``
  keeps ``ext``, ``git`` and every remote helper off);
* ``core.hooksPath=/dev/null`` and ``--no-verify``: no hook runs;
* ``core.sshCommand``, ``core.askPass`` and ``credential.helper`` reset, then set again from the
  user's own (global and system) configuration only;
* ``push.gpgSign=false``; and :func:`run_remote` gives ``push`` and ``fetch`` git's own
  ``--receive-pack``/``--upload-pack`` (a ``-c`` cannot: git keeps the first value it reads).
"""

from __future__ import annotations

import os
import re
import subprocess

from resume_kit.infra.errors import ResumeKitError
from resume_kit.infra.gitcmd import clean_git_env, git_argv

REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
NETWORK_TIMEOUT_S = 60.0
_TRANSPORTS = ("file", "ssh", "https", "http")

_user_cache: list[str] | None = None


def _user_values(key: str) -> list[str]:
    """``key``'s values in the user's own configuration (global, then system): never the
    repository's."""
    values: list[str] = []
    for scope in ("--system", "--global"):
        proc = subprocess.run(
            ["git", "config", scope, "-z", "--get-all", key],
            cwd=os.path.abspath(os.sep),
            env=clean_git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
        if proc.returncode == 0:
            values += [v.decode("utf-8", "surrogateescape") for v in proc.stdout.split(b"\0") if v]
    return values


def _user_overrides() -> list[str]:
    global _user_cache
    if _user_cache is None:
        out = ["-c", "credential.helper="]
        for helper in _user_values("credential.helper"):
            out += ["-c", f"credential.helper={helper}"]
        for key, fallback in (("core.sshCommand", "ssh"), ("core.askPass", "")):
            mine = _user_values(key)
            out += ["-c", f"{key}={mine[-1] if mine else fallback}"]
        _user_cache = out
    return _user_cache


def check_remote_name(name: str) -> str:
    if not REMOTE_NAME.match(name):
        raise ResumeKitError(
            f"--remote {name!r} is not a remote name", hint="see `git remote` for the names"
        )
    return name


def network_args(remote: str) -> list[str]:
    """The ``-c`` options every network command for ``remote`` gets (see the module docstring)."""
    out = ["-c", "core.hooksPath=/dev/null", "-c", "push.gpgSign=false"]
    for transport in _TRANSPORTS:
        out += ["-c", f"protocol.{transport}.allow=always"]
    return out + _user_overrides()


def run_remote(
    cwd: os.PathLike[str], remote: str, *args: str, timeout: float = NETWORK_TIMEOUT_S
) -> tuple[int, bytes, bytes]:
    """git ARGS against ``remote`` with every safeguard; (status, stdout, stderr). A timeout is
    status 124."""
    pack = {"push": "--receive-pack=git-receive-pack", "fetch": "--upload-pack=git-upload-pack"}
    if args and args[0] in pack:
        args = (args[0], pack[args[0]], *args[1:])
    argv = git_argv(cwd, (*network_args(check_remote_name(remote)), *args))
    env = clean_git_env()
    env.setdefault("GIT_ASKPASS", "")  # an empty one: git asks no program for a password
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        return 124, exc.stdout or b"", exc.stderr or b""
    return proc.returncode, proc.stdout, proc.stderr


def local_args() -> list[str]:
    """The options of a local ref update: no hook (``reference-transaction``) runs."""
    return ["-c", "core.hooksPath=/dev/null"]
