"""How much time resume-kit's git hooks add to ``git commit``.

Two fresh repositories with the same progress file (a unit in progress, so the trailer path
does its full work); one gets ``resume-kit hook install``. Commits alternate between them so
both see the same machine load, and each commit is timed from start to exit. Between
commits the background snapshot of the previous commit is awaited (untimed), as when a person
or an agent commits seconds apart; ``--back-to-back`` skips that wait (worst case: the
snapshot of the previous commit still runs). Also times each hook script on its own.

    python bench/bench_hooks.py [--commits 20] [--back-to-back]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import workspaces  # bench/ is on sys.path when this script runs

from resume_kit.model.progress import SCHEMA_VERSION as PROGRESS_SCHEMA

PROGRESS = f"""\
schema_version: {PROGRESS_SCHEMA}
goal: Extract parties, dates and amounts from the contracts in docs/ into out/
units:
  - id: doc-001
    title: Extract contract 001
    status: done
    verify: python check.py out/001.json
  - id: doc-002
    title: Extract contract 002
    status: in_progress
    verify: python check.py out/002.json
"""

ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="bench",
    GIT_AUTHOR_EMAIL="b@example.com",
    GIT_COMMITTER_NAME="bench",
    GIT_COMMITTER_EMAIL="b@example.com",
    GIT_CONFIG_NOSYSTEM="1",
)
# An installed package has its .pyc files; a session that forbids writing them would time
# the compiler instead of the hook.
ENV.pop("PYTHONDONTWRITEBYTECODE", None)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=ENV
    ).stdout


def make_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "commit.gpgsign", "false")
    (path / ".resume-kit").mkdir()
    (path / ".resume-kit" / "progress.yaml").write_text(PROGRESS)
    for n in range(50):
        (path / f"file{n}.txt").write_text(f"{n}\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_commit(repo: Path, n: int) -> tuple[float, float]:
    """Wall time and CPU time (git and the hooks it waited for) of one commit."""
    (repo / "work.txt").write_text(f"change {n}\n")
    git(repo, "add", "work.txt")
    cpu = cpu_of_children()
    started = time.perf_counter()
    subprocess.run(
        ["git", "commit", "-q", "-m", f"change {n}"],
        cwd=repo, check=True, capture_output=True, env=ENV, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - started, cpu_of_children() - cpu


def wait_for_snapshot(repo: Path) -> bool:
    return workspaces.wait_for_snapshot(repo, git(repo, "rev-parse", "HEAD").strip())


def time_script(argv: list[str], cwd: Path, runs: int = 20) -> str:
    """Median wall and CPU time of running ``argv`` (the detached snapshot's CPU not included)."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu = cpu_of_children()
        started = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True, env=ENV)
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_of_children() - cpu)
    return f"{ms(statistics.median(walls))}  {ms(statistics.median(cpus))}"


def remove_when_settled(folder: Path, deadline_s: float = 60.0) -> None:
    """Remove ``folder`` once the detached snapshots still writing into it are done."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            shutil.rmtree(folder)
            return
        except OSError:
            if time.monotonic() > end:
                print(f"note: left {folder} behind (background snapshots still running)")
                return
            time.sleep(0.2)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:6.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--back-to-back", action="store_true")
    options = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="rk-bench-hooks-")
    try:
        plain = make_repo(Path(tmp) / "plain")
        hooked = make_repo(Path(tmp) / "hooked")
        subprocess.run(
            [sys.executable, "-m", "resume_kit", "hook", "install"],
            cwd=hooked, check=True, capture_output=True, env=ENV,
        )  # fmt: skip
        for repo in (plain, hooked):  # warm the caches once
            timed_commit(repo, -1)
        wait_for_snapshot(hooked)

        without: list[tuple[float, float]] = []
        with_hooks: list[tuple[float, float]] = []
        missed = 0
        for n in range(options.commits):
            without.append(timed_commit(plain, n))
            with_hooks.append(timed_commit(hooked, n))
            if not options.back_to_back and not wait_for_snapshot(hooked):
                missed += 1
        trailers = git(hooked, "log", f"-{options.commits}", "--format=%(trailers:valueonly)")

        message = Path(tmp) / "msg"
        message.write_text("subject\n")
        hooks_dir = hooked / ".git" / "hooks"
        prepare = time_script(
            [str(hooks_dir / "prepare-commit-msg"), str(message), "message"], hooked
        )
        post = time_script([str(hooks_dir / "post-commit")], hooked)
        shell = time_script(["sh", "-c", "exit 0"], hooked)
    finally:
        remove_when_settled(Path(tmp))

    wall_without = sorted(w for w, _ in without)
    wall_with = sorted(w for w, _ in with_hooks)
    cpu_without = statistics.median(c for _, c in without)
    cpu_with = statistics.median(c for _, c in with_hooks)
    p90 = int(0.9 * len(wall_with))
    print(f"git commit, median of {options.commits} "
          f"({'back to back' if options.back_to_back else 'snapshot settled between commits'}):")  # fmt: skip
    print("                     wall time   CPU time")
    print(f"  without hooks      {ms(statistics.median(wall_without))}  {ms(cpu_without)}")
    print(f"  with resume-kit    {ms(statistics.median(wall_with))}  {ms(cpu_with)}")
    print(f"  added              "
          f"{ms(statistics.median(wall_with) - statistics.median(wall_without))}  "
          f"{ms(cpu_with - cpu_without)}")  # fmt: skip
    print(f"  p90 wall without / with {ms(wall_without[p90])} / {ms(wall_with[p90])}")
    print(f"  load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print("each hook script alone (median of 20; wall, CPU):")
    print(f"  prepare-commit-msg {prepare}   (trailer for the unit in progress)")
    print(f"  post-commit        {post}   (starts the detached snapshot)")
    print(f"  sh -c 'exit 0'     {shell}   (the floor for any hook)")
    print(
        f"Resume-Unit trailers on the timed commits: {trailers.count('doc-002')}/{options.commits}"
    )
    if missed:
        print(f"warning: {missed} background snapshot(s) did not appear within 30 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
