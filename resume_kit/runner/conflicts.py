"""The refusal to record evidence while git has unresolved conflicts: a pass in a half-merged
tree proves nothing about the result (verify-next and run; ``--force`` overrides)."""

from __future__ import annotations

import atexit
import os
from contextlib import suppress

from resume_kit.core.typing_light import TYPE_CHECKING
from resume_kit.infra.errors import ResumeKitError

if TYPE_CHECKING:
    from resume_kit.infra.gitcmd import Child
    from resume_kit.infra.paths import Layout

SHOWN = 5  # conflicted paths named in the message
_CONTINUE = {
    "merge": "`git merge --continue` (or `git merge --abort`)",
    "rebase": "`git rebase --continue` (or `git rebase --abort`)",
    "am": "`git am --continue` (or `git am --abort`)",
    "cherry-pick": "`git cherry-pick --continue` (or `git cherry-pick --abort`)",
    "revert": "`git revert --continue` (or `git revert --abort`)",
}


_UNMERGED = ("ls-files", "--unmerged", "-z")


class _Untaken(dict[str, "Child"]):
    """Work tree -> the check started ahead; emptied, it stops what is still running."""

    def clear(self) -> None:
        while self:
            _stop(self.popitem()[1])


_started = _Untaken()
atexit.register(_started.clear)  # what is still running when the process exits is stopped


def start_conflicts_check(layout: Layout) -> None:
    """Start ``git ls-files --unmerged`` now (it reads the whole index: 10 ms and more on a
    large one); the next :func:`unmerged_paths` of this work tree takes its answer. One that
    is never taken is stopped when the process exits."""
    from resume_kit.infra.gitcmd import start_git

    key = os.fspath(layout.root)
    if key in _started:  # an answer never taken is an old one
        _stop(_started.pop(key))
    with suppress(OSError):
        _started[key] = start_git(layout.root, *_UNMERGED)


def _stop(proc: Child) -> None:
    proc.kill()
    proc.communicate()


def unmerged_paths(layout: Layout) -> list[str]:
    """The paths with unresolved conflicts in the index (``git ls-files --unmerged``)."""
    from resume_kit.facts.git import display_path
    from resume_kit.infra.gitcmd import run_git_bytes

    started = _started.pop(os.fspath(layout.root), None)
    if started is not None:
        out, _ = started.communicate()
        code = started.returncode
    else:
        code, out, _ = run_git_bytes(layout.root, *_UNMERGED, check=False)
    if code != 0:
        return []  # git could not say: the snapshot and reconcile report what they can
    paths: dict[str, None] = {}
    for record in out.split(b"\0"):
        _, tab, path = record.partition(b"\t")
        if tab:
            paths[display_path(path.decode("utf-8", "surrogateescape"))] = None
    return list(paths)


def refuse_while_conflicted(layout: Layout, force: bool) -> None:
    """Raise (exit 2) while the index holds unresolved conflicts, unless ``force``."""
    if force:
        return
    paths = unmerged_paths(layout)
    if not paths:
        return
    from resume_kit.core.escape import escape_controls
    from resume_kit.facts.git import operation_in_progress

    operation = operation_in_progress(layout.git_dir)
    during = f"a {operation} has" if operation else "the index has"
    count = f"{len(paths)} unresolved conflict{'s' if len(paths) != 1 else ''}"
    finish = _CONTINUE.get(operation or "", "`git add` each file")
    listed = ", ".join(paths[:SHOWN]) + (
        f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else ""
    )
    raise ResumeKitError(
        f"{during} {count} ({escape_controls(listed)}): a pass now would prove nothing about "
        "the result, so nothing is verified",
        hint=f"resolve them, `git add` them and finish with {finish}; "
        "or pass --force to verify and record anyway",
    )
