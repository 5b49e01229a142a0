"""`resume-kit hook install | uninstall | status` and the hidden `hook run NAME` entry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from resume_kit.cli.ui import note, out, print_json, say
from resume_kit.infra.paths import find_layout
from resume_kit.integrations import git_hooks as hooks


def install(hook_names: str, commit_attributes: bool = False) -> int:
    from resume_kit.integrations.merge_setup import register

    names = hooks.parse_hook_names(hook_names)
    layout = find_layout()
    directory = hooks.hooks_dir(layout)
    for name in names:
        what = hooks.install_hook(directory, name)
        out(f"{name}: {what} ({directory / name})")
    out(register(layout, commit_attributes))
    if not layout.state_dir.is_dir():
        note('no .resume-kit/ here yet: the hooks stay idle until `resume-kit init --goal "..."`')
    return 0


def uninstall() -> int:
    from resume_kit.integrations.hook_entry import remove_hook_copy
    from resume_kit.integrations.merge_setup import unregister

    layout = find_layout()
    directory = hooks.hooks_dir(layout)
    changed = False
    for name in hooks.SUPPORTED:
        what = hooks.uninstall_hook(directory, name)
        if what is not None:
            out(f"{name}: {what}")
            changed = True
    if (driver := unregister(layout)) is not None:
        out(driver)
        changed = True
    if remove_hook_copy(str(layout.root)):
        out("removed prepare-commit-msg's copy of progress.yaml from the user's cache")
        changed = True
    if not changed:
        out(f"no resume-kit hooks in {directory}: nothing to do")
    return 0


def status(json_out: bool) -> int:
    directory = hooks.hooks_dir(find_layout())
    reports = [hooks.hook_report(directory, name) for name in hooks.SUPPORTED]
    if json_out:
        print_json({"hooks_dir": str(directory), "hooks": [r.to_json() for r in reports]})
        return 0
    out(f"hooks dir: {directory}")
    for report in reports:
        line = f"  {report.name}: {report.state}"
        if report.legacy:
            line += f" (previous hook kept as {report.name}{hooks.LEGACY_SUFFIX}, runs first)"
        if report.state == "installed" and not report.python_found:
            line += f" (interpreter {report.python} is gone: falls back to resume-kit on PATH)"
        if report.state == "foreign":
            line += " (not ours: `resume-kit hook install` keeps it and runs it first)"
        out(line)
    return 0


def run_hook(name: str, args: Sequence[str], repo: Path | None = None) -> int:
    """What an installed hook does, for the PATH fallback and the pre-commit framework.

    ``repo`` is the work tree (default: the one around the current directory). Fail-open:
    every path returns 0 except a pre-push check of a unit whose verify fails.
    """
    if name == "prepare-commit-msg":
        from resume_kit.integrations.hook_entry import prepare_commit_msg

        return prepare_commit_msg(list(args), str(repo) if repo is not None else ".")
    if name == "post-commit":
        return _spawn_snapshot(repo)
    if name == "pre-push":
        from resume_kit.runner.unitcheck import pre_push_check

        return pre_push_check(repo)
    say(f"hook run: unknown hook {name!r} (ignored)")
    return 0


def _spawn_snapshot(repo: Path | None) -> int:
    """Start the post-commit snapshot detached and return at once (fail-open): the installed
    interpreter isolated (``-I``), from ``/``, with the work tree as ``--repo``; it writes its
    own log in the user's cache directory (:func:`resume_kit.integrations.git_hooks.post_commit_log`)."""
    import os
    import subprocess
    import sys

    from resume_kit.infra.gitcmd import clean_git_env

    try:
        layout = find_layout(repo)
        if not layout.state_dir.is_dir():
            return 0
        subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-m",
                "resume_kit.integrations.hook_entry",
                "post-commit",
                "--repo",
                str(layout.root),
            ],
            cwd=os.path.abspath(os.sep),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=clean_git_env(),
            start_new_session=os.name != "nt",
            close_fds=True,
        )
    except Exception as exc:  # fail-open
        say(f"post-commit: no snapshot: {exc}")
    return 0
