"""Where things live: the git work tree and the ``.resume-kit/`` folder inside it (SPEC 2)."""

from __future__ import annotations

import os
from pathlib import Path

from resume_kit.core.light_dataclass import dataclass
from resume_kit.infra.errors import NotARepositoryError

STATE_DIR = ".resume-kit"
GITIGNORE_BODY = "# written by resume-kit: tool-owned state is never committed\nsnapshots/\nruns/\nhistory/\nhistory.sqlite*\n*.lock\ncache/\n*.tmp\n"


# Everything resume-kit reads or writes in .resume-kit/ by a fixed name (find_layout checks all).
_STATE_PATHS = (
    ("progress.yaml",),
    ("progress.yaml.lock",),
    ("config.yaml",),
    ("templates",),
    ("snapshots",),
    ("runs",),
    ("history",),
    ("cache",),
    ("running",),
    (".gitignore",),
)


@dataclass(frozen=True)
class Layout:
    root: Path  # top of the (current) work tree
    git_dir: Path  # this worktree's git dir
    git_common_dir: Path  # shared git dir (differs from git_dir in linked worktrees)

    def _state(self, *parts: str) -> Path:
        """A path in ``.resume-kit/``, every component from the work tree down checked: a
        symlink anywhere (the folder itself included) is refused with one line, never
        followed. The one check all state paths go through (docs/security.md)."""
        from resume_kit.infra.safefs import contained

        return contained(self.root, "/".join((STATE_DIR, *parts)))

    @property
    def state_dir(self) -> Path:
        return self._state()

    @property
    def progress(self) -> Path:
        return self._state("progress.yaml")

    @property
    def config(self) -> Path:
        return self._state("config.yaml")

    @property
    def templates(self) -> Path:
        return self._state("templates")

    @property
    def snapshots(self) -> Path:
        return self._state("snapshots")

    @property
    def runs(self) -> Path:
        return self._state("runs")

    @property
    def history(self) -> Path:
        return self._state("history")

    @property
    def cache(self) -> Path:
        """The repository's ``cache/`` folder: arrives with a clone, so no cache is read from
        it (see :attr:`user_cache`)."""
        return self._state("cache")

    @property
    def running(self) -> Path:
        """Where the claims of units being verified are held (``<id>.lock``)."""
        return self._state("running")

    @property
    def user_cache(self) -> Path:
        """This work tree's cache folder in the user's cache directory (created 0700): the
        one place for caches that decide what runs or what the brief says."""
        from resume_kit.infra.cachedir import ensure_private, worktree_cache

        return Path(ensure_private(worktree_cache(str(self.root), str(self.git_common_dir))))

    @property
    def drills(self) -> Path:
        """Where ``drill --in-repo`` saves its receipts (never read back)."""
        return self._state("drills")

    def drills_folder(self) -> Path:
        """:attr:`drills`, refused with one line (exit 2) when it, or a folder on the way, is a
        symlink, or when it is there but not a folder: checked before a drill runs and again
        before the receipt is written."""
        import stat

        from resume_kit.infra.safefs import UnsafePath

        folder = self.drills
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            return folder
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafePath(
                f"{STATE_DIR}/drills is not a folder; resume-kit writes drill receipts only "
                "into a real folder",
                hint=f"remove {STATE_DIR}/drills (it may have come with the repository), or "
                "drop --in-repo",
            )
        return folder

    @property
    def gitignore(self) -> Path:
        return self._state(".gitignore")

    def check_state(self) -> None:
        """Refuse a work tree whose ``.resume-kit/`` (or anything resume-kit keeps in it) is a
        symlink, before any command reads, writes or runs anything there."""
        for parts in _STATE_PATHS:
            self._state(*parts)

    def rel(self, path: Path) -> str:
        """``path`` relative to the work tree root, with forward slashes."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def as_posix(path: str) -> str:
    """``Path(path).as_posix()``; a path already in that form (the usual case) is returned as
    it is, without building a Path (snapshots handle thousands of declared paths)."""
    if (
        path
        and path != "."
        and not path.startswith("./")
        and not path.endswith(("/", "/."))
        and "//" not in path
        and "/./" not in path
    ):
        return path
    return Path(path).as_posix()


def find_layout(start: Path | None = None, *, config_ahead: bool = False) -> Layout:
    """Discover the work tree containing ``start`` (default: the current directory).
    ``config_ahead``: for a command that runs ``git status`` or ``diff``, read the git config
    they need (:func:`~resume_kit.infra.gitcmd.filter_overrides`) while ``rev-parse`` runs."""
    from resume_kit.infra.gitcmd import adopt_config_read, start_config_read

    try:
        cwd = Path.cwd() if start is None else start
    except FileNotFoundError:
        raise NotARepositoryError(
            "the current directory no longer exists",
            hint="cd into your repository and run the command again",
        ) from None
    if not cwd.is_dir():
        raise NotARepositoryError(f"{cwd} is not a directory", hint="run inside a git work tree")
    config_read = start_config_read(cwd) if config_ahead else None
    layout: Layout | None = None
    try:
        layout = _discover(cwd)
    finally:
        adopt_config_read(config_read, None if layout is None else layout.root)
    layout.check_state()
    return layout


# What git is asked when the layout is not read from its files: the work tree, the git dir and
# the shared git dir, each an absolute path on a line.
LAYOUT_QUERY = (
    "rev-parse",
    "--path-format=absolute",
    "--show-toplevel",
    "--git-dir",
    "--git-common-dir",
)


def _discover(cwd: Path) -> Layout:
    """The layout from the files git reads (:mod:`resume_kit.infra.discovery`), or else from
    ``git rev-parse``."""
    from resume_kit.infra.discovery import discover

    found = discover(str(cwd))
    if found is not None:
        root, git_dir, common = (Path(path) for path in found)
        return Layout(root=root, git_dir=git_dir, git_common_dir=common)
    from resume_kit.infra.gitcmd import GitFailed, run_git

    try:
        out = run_git(cwd, *LAYOUT_QUERY)
    except GitFailed as exc:
        detail = exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else "git failed"
        raise NotARepositoryError(
            f"not inside a git work tree ({detail})",
            hint="run resume-kit inside a git repository (create one with `git init`)",
        ) from None
    except FileNotFoundError:
        raise NotARepositoryError(
            "git is not installed or not on PATH", hint="install git and try again"
        ) from None
    lines = out.splitlines()
    if len(lines) < 3 or not lines[0]:
        raise NotARepositoryError(
            "not inside a git work tree (a bare repository or a .git folder)",
            hint="run resume-kit from a checked-out work tree",
        )
    root, git_dir, common = (Path(os.path.realpath(line)) for line in lines[:3])
    return Layout(root=root, git_dir=git_dir, git_common_dir=common)
