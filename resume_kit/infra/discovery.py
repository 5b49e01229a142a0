"""The work tree around a folder found from the files git reads, without starting git (a
``git rev-parse`` is ~2-4 ms of every command: the brief at each session start, verify-next
after each unit).

Only the common layouts are read: a ``.git`` folder, or a ``.git`` file naming the git dir (a
linked worktree), in a folder above with nothing unusual on the way. Anything else is None
and git is asked as before: a variable that moves the repository or changes how it is found,
a folder or file not owned by this user (git's ``safe.directory`` check), a folder that is
itself a git dir (inside ``.git``, a bare repository), a file system boundary, a ``.git``
that is a link or a FIFO, a config that sets or includes anything touching where the work
tree is (``core.worktree``, ``core.bare`` other than false, ``include``, ``extensions``).
Without git on ``PATH`` it is None too: git says so. The files are read without following a
final link or blocking, and bounded.
"""

from __future__ import annotations

import os
import stat

# Variables that move the repository or change how git finds it (clean_git_env removes
# GIT_DIR, GIT_WORK_TREE and the like before git runs, so those are not here).
MOVING_VARIABLES = (
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
)
MAX_GIT_FILE_BYTES = 4096
MAX_CONFIG_BYTES = 1024 * 1024


def discover(cwd: str) -> tuple[str, str, str] | None:
    """(work tree root, git dir, common git dir), real paths, as ``git rev-parse
    --show-toplevel --git-dir --git-common-dir`` run in ``cwd`` gives them; None when the
    layout is not one of the plain ones read here."""
    from resume_kit.infra.gitcmd import find_program

    if any(name in os.environ for name in MOVING_VARIABLES) or find_program("git") is None:
        return None
    try:
        here = os.path.realpath(cwd)
        device = os.stat(here).st_dev
    except (OSError, ValueError):
        return None
    folder = here
    while True:
        dot_git = os.path.join(folder, ".git")
        try:
            info = os.lstat(dot_git)
        except FileNotFoundError:
            info = None
        except OSError:
            return None
        if info is not None:
            return _layout(folder, dot_git, info, here)
        if os.path.lexists(os.path.join(folder, "HEAD")):
            return None  # maybe a git dir itself (inside .git, a bare repository)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None  # no repository: git says so
        try:
            if os.stat(parent).st_dev != device:
                return None  # git stops at a file system's edge
        except OSError:
            return None
        folder = parent


def _layout(
    folder: str, dot_git: str, info: os.stat_result, here: str
) -> tuple[str, str, str] | None:
    uid = os.geteuid()
    if stat.S_ISDIR(info.st_mode):
        git_dir = dot_git
    elif stat.S_ISREG(info.st_mode):
        named = _read(dot_git, MAX_GIT_FILE_BYTES)
        if named is None or not named.startswith("gitdir: ") or not named.endswith("\n"):
            return None
        target = named[len("gitdir: ") : -1]
        if not target or "\n" in target or target != target.strip():
            return None
        git_dir = os.path.realpath(os.path.join(folder, target))
    else:
        return None  # a link or anything else: git decides
    if here == git_dir or here.startswith(git_dir + os.sep):
        return None  # inside the git dir: no work tree there
    common = git_dir
    if os.path.lexists(os.path.join(git_dir, "commondir")):
        shared = _read(os.path.join(git_dir, "commondir"), MAX_GIT_FILE_BYTES)
        if shared is None or not shared.strip() or "\n" in shared.strip():
            return None
        common = os.path.realpath(os.path.join(git_dir, shared.strip()))
    try:
        owners = {os.stat(folder).st_uid, os.lstat(git_dir).st_uid, info.st_uid}
        head = os.lstat(os.path.join(git_dir, "HEAD"))
        plain = all(
            stat.S_ISDIR(os.lstat(os.path.join(common, name)).st_mode)
            for name in ("objects", "refs")
        )
    except OSError:
        return None
    if owners != {uid} or not stat.S_ISREG(head.st_mode) or not plain:
        return None
    config = _read(os.path.join(common, "config"), MAX_CONFIG_BYTES)
    if config is None or not _plain_config(config):
        return None
    return folder, git_dir, common  # folder: a real path's parent, so real


def _plain_config(text: str) -> bool:
    """Whether a repository's config says nothing about where its work tree is."""
    lowered = text.lower()
    if any(word in lowered for word in ("worktree", "include", "extensions")):
        return False
    return all(
        "".join(line.split()) == "bare=false" for line in lowered.splitlines() if "bare" in line
    )


def _read(path: str, limit: int) -> str | None:
    from resume_kit.infra.safefs import read_regular

    try:
        return read_regular(path, limit).decode("utf-8")
    except (OSError, ValueError):
        return None
