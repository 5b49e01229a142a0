"""Register resume-kit's merge driver for ``.resume-kit/progress.yaml`` with git.

``merge.resume-kit.driver`` goes into the clone's own ``.git/config`` (the line is ours: the
installing interpreter, isolated, and git's placeholders); the attribute line goes into
``.git/info/attributes`` so nothing committed changes, or into ``.gitattributes`` for a team
that wants it committed. Both writes are idempotent.
"""

from __future__ import annotations

import sys
from pathlib import Path

from resume_kit.infra.paths import Layout

DRIVER = "resume-kit"
ATTRIBUTE_LINE = f".resume-kit/progress.yaml merge={DRIVER}"


def driver_command(python: str | None = None) -> str:
    from resume_kit.integrations.git_hooks import sh_quote

    return f"{sh_quote(python or sys.executable)} -I -m resume_kit merge-driver %O %A %B %L"


def _add_line(path: Path) -> bool:
    """Append :data:`ATTRIBUTE_LINE` to ``path`` unless it holds it; True when written."""
    from resume_kit.infra.safefs import read_regular
    from resume_kit.infra.store import atomic_write

    try:
        text = read_regular(path, 1_000_000).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        text = ""
    if ATTRIBUTE_LINE in text.splitlines():
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (text + ATTRIBUTE_LINE + "\n").encode("utf-8", "surrogateescape"))
    return True


def register(layout: Layout, commit_attributes: bool = False) -> str:
    """Register the driver; the line ``hook install`` prints."""
    from resume_kit.infra.gitcmd import run_git

    run_git(
        layout.root,
        "config",
        "--local",
        f"merge.{DRIVER}.name",
        "resume-kit progress.yaml merge by unit",
    )
    run_git(layout.root, "config", "--local", f"merge.{DRIVER}.driver", driver_command())
    if commit_attributes:
        from resume_kit.infra.safefs import contained

        target = contained(layout.root, ".gitattributes")
        where = ".gitattributes (commit it)"
    else:
        target = layout.git_common_dir / "info" / "attributes"
        where = ".git/info/attributes"
    _add_line(target)
    return f"merge driver: registered for .resume-kit/progress.yaml (.git/config, {where})"


def _drop_line(path: Path) -> bool:
    """Take :data:`ATTRIBUTE_LINE` out of ``path`` (the person's other lines kept); True when
    it was there."""
    from resume_kit.infra.safefs import read_regular
    from resume_kit.infra.store import atomic_write

    try:
        text = read_regular(path, 1_000_000).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return False
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if line.rstrip("\r\n") != ATTRIBUTE_LINE]
    if len(kept) == len(lines):
        return False
    atomic_write(path, "".join(kept).encode("utf-8", "surrogateescape"))
    return True


def unregister(layout: Layout) -> str | None:
    """Undo :func:`register`; the line ``hook uninstall`` prints, or None when nothing was
    registered."""
    from resume_kit.infra.gitcmd import run_git_bytes
    from resume_kit.infra.safefs import contained

    status, _, _ = run_git_bytes(
        layout.root, "config", "--local", "--remove-section", f"merge.{DRIVER}", check=False
    )
    dropped = [
        where
        for where, path in (
            (".git/info/attributes", layout.git_common_dir / "info" / "attributes"),
            (".gitattributes", contained(layout.root, ".gitattributes")),
        )
        if _drop_line(path)
    ]
    if status != 0 and not dropped:
        return None
    return "merge driver: removed" + (f" (and its line in {', '.join(dropped)})" if dropped else "")
