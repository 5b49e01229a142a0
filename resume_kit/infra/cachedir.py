"""Where resume-kit keeps its caches: the user's cache folder, one folder per work tree.

A cache decides what runs and what the brief says (the parsed progress model, the unit in
progress, summaries, ancestry, file hashes), so it never lives in the repository, where a clone
could ship a forged one (docs/security.md). It imports only ``os``, ``sys`` and CPython's SHA-256:
the commit hook finds the same folder without site-packages.
"""

from __future__ import annotations

import os
import sys

APP = "resume-kit"
# The unit in progress as the CLI last read progress.yaml, for the prepare-commit-msg hook
# (resume_kit.integrations.hook_entry writes and reads it).
IN_PROGRESS_NAME = "in-progress"


def user_cache_root() -> str:
    """``platformdirs.user_cache_dir("resume-kit", appauthor=False)``, computed without
    importing platformdirs (tests check the two agree): ``$XDG_CACHE_HOME/resume-kit``, else
    ``~/.cache/resume-kit`` on Linux and the BSDs."""
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Caches"), APP)
    if os.name == "nt":  # pragma: no cover - Windows
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, APP, "Cache")
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base.strip():
        base = os.path.expanduser("~/.cache")
    return os.path.join(base, APP)


def worktree_cache(root: str, git_common_dir: str) -> str:
    """The cache folder of the work tree at ``root`` (a real path): keyed by a hash of the
    root and of the git common dir, so linked worktrees and a new clone at an old path never
    share one."""
    material = f"{root}\0{git_common_dir}".encode("utf-8", "surrogateescape")
    from resume_kit.core.digest import sha256_hex

    key = sha256_hex(material)[:32]
    return os.path.join(user_cache_root(), "worktrees", key)


def in_progress_file(cache_folder: str) -> str:
    """The in-progress cache inside a work tree's cache folder (:func:`worktree_cache`)."""
    return os.path.join(cache_folder, IN_PROGRESS_NAME)


def ensure_private(folder: str) -> str:
    """Create ``folder`` (and the ``worktrees`` folder above it), readable by the user only."""
    os.makedirs(folder, 0o700, exist_ok=True)
    for path in (os.path.dirname(folder), folder):
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o700)
    return folder


def open_lock(path: str) -> int:
    """A descriptor of the lock file ``path`` in the user's cache, for ``flock``: created (mode
    0600) when missing; never through a symlink, never waiting on what is not a regular file
    (``O_NONBLOCK``: a FIFO put there does not hold up the open), closed on exec."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
