"""A brief the served path could not serve walks the tree once: the build takes the ``git
status`` the served path started (resume_kit.infra.deps.take_status, facts/git.EarlyStatus)
and prints what a fresh build prints. git's own trace counts the walks; no sleeps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git


def brief(repo: Path, trace: Path, *, fast: bool = True) -> tuple[str, str]:
    """(stdout, the fast path's debug lines) of ``resume-kit brief`` with git tracing into
    ``trace`` (the same variable every run: it is part of the served brief's key)."""
    env = dict(os.environ, GIT_TRACE=str(trace), RESUME_KIT_DEBUG_FASTPATH="1")
    env.pop("RESUME_KIT_NO_FASTPATH", None)
    if not fast:
        env["RESUME_KIT_NO_FASTPATH"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", "brief"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    debug = "".join(line for line in proc.stderr.splitlines(True) if "fastpath:" in line)
    return proc.stdout, debug


def status_runs(trace: Path) -> int:
    return sum(" built-in: git status " in line for line in trace.read_text().splitlines())


@pytest.mark.parametrize("change", ["tracked file", "progress file"])
def test_a_brief_that_is_not_served_runs_git_status_once(repo: Path, cli, change: str) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "One walk").code == 0
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("A = 1\n")
    assert cli("add", "Alpha", "--verify", "true", "--id", "alpha", "--files", "src/a.py").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "units")
    trace = repo.parent / "git-trace.txt"
    for _ in range(3):  # a build within fastpath.RACY_NS of the commit stores no receipt
        if "stored the brief" in brief(repo, trace)[1]:
            break
    assert "served" in brief(repo, trace)[1]

    if change == "tracked file":  # git status output differs: the served path collected it
        (repo / "src" / "a.py").write_text("A = 2\n")
        expected = "git status differs"
    else:  # an input changed while the served path's git status was still running
        progress = repo / ".resume-kit" / "progress.yaml"
        progress.write_text(progress.read_text() + "# a note\n")
        expected = "changed: "
    trace.write_text("")
    printed, debug = brief(repo, trace)
    assert expected in debug and "served the stored brief" not in debug
    assert status_runs(trace) == 1
    assert printed == brief(repo, trace, fast=False)[0]
