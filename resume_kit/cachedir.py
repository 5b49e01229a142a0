"""Where resume-kit keeps its caches: the user's cache folder, one folder per work tree.

A cache decides what runs and what the brief says (the parsed progress model, the unit in
progress, summaries, ancestry, file hashes), so it never lives in the repository, where a clone
could ship a forged one (docs/security.md). It imports only ``os``, ``sys`` and ``hashlib``:
the commit hook finds the same folder without site-packages.
"""

from __future__ import annotations

import os
import sys

APP = "resume-kit"


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
    import hashlib

    material = f"{root}\0{git_common_dir}".encode("utf-8", "surrogateescape")
    key = hashlib.sha256(material).hexdigest()[:32]
    return os.path.join(user_cache_root(), "worktrees", key)


def ensure_private(folder: str) -> str:
    """Create ``folder`` (and the ``worktrees`` folder above it), readable by the user only."""
    os.makedirs(folder, 0o700, exist_ok=True)
    for path in (os.path.dirname(folder), folder):
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o700)
    return folder
