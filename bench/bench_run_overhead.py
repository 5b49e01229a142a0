"""Overhead of ``resume-kit run`` per unit over running the same commands in a shell loop.

Builds a throw-away git repository with N units (``plan --each``), each verified by a small
real command, then times alternately, in the same process and on the same tree:

* the floor: one ``/bin/sh`` running ``/bin/sh -c '<verify>'`` for every unit in order (what a
  shell loop over the commands costs: the same per-unit process spawn resume-kit does);
* ``resume-kit run --jobs J`` over the same units from a fresh progress file;
* ``resume-kit run`` with nothing left to do (exit 3): the fixed start-up cost.

Per-unit overhead = (run - floor) / N, and the same with the start-up taken out. Medians over
the rounds; the machine is shared and noisy, so only ratios measured side by side mean much.

    python bench/bench_run_overhead.py [--units 200] [--rounds 3] [--jobs 1]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 30.0


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
        NO_COLOR="1",
    )
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "RESUME_KIT_TRUST"):
        env.pop(name, None)
    return env


def _cli(repo: Path, env: dict[str, str], *args: str, ok: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode not in ok:
        sys.exit(f"resume-kit {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return elapsed


def build(root: Path, units: int, env: dict[str, str]) -> tuple[Path, list[str]]:
    repo = root / "repo"
    (repo / "items").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env, check=True)
    for n in range(1, units + 1):
        (repo / "items" / f"{n:04d}.txt").write_text(f"item {n}\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "items"], cwd=repo, env=env, check=True)
    _cli(repo, env, "init", "--goal", "benchmark the batch runner")
    verify = "test -s {path} && echo {stem} >> side.txt"
    _cli(repo, env, "plan", "--each", "items/*.txt", "--title", "item {stem}", "--verify", verify)
    commands = [
        f"test -s items/{n:04d}.txt && echo {n:04d} >> side.txt" for n in range(1, units + 1)
    ]
    return repo, commands


def reset(repo: Path, pristine: str) -> None:
    state = repo / ".resume-kit"
    (state / "progress.yaml").write_text(pristine)
    for folder in ("runs", "history"):
        shutil.rmtree(state / folder, ignore_errors=True)
    (repo / "side.txt").unlink(missing_ok=True)


def shell_loop(repo: Path, script: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(["/bin/sh", str(script)], cwd=repo, env=env, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="rk-bench-run-") as tmp:
        root = Path(tmp)
        env = _env(root / "home")
        repo, commands = build(root, args.units, env)
        pristine = (repo / ".resume-kit" / "progress.yaml").read_text()
        script = root / "loop.sh"
        script.write_text("".join(f"/bin/sh -c {shlex.quote(c)} || exit 1\n" for c in commands))
        floors, runs, startups = [], [], []
        for _ in range(args.rounds):
            reset(repo, pristine)
            floors.append(shell_loop(repo, script, env))
            reset(repo, pristine)
            runs.append(_cli(repo, env, "run", "--jobs", str(args.jobs)))
            lines = (repo / "side.txt").read_text().split()
            if sorted(lines) != sorted(f"{n:04d}" for n in range(1, args.units + 1)):
                sys.exit("the run did not execute every command exactly once")
            startups.append(_cli(repo, env, "run", ok=(3,)))

    n = args.units
    floor, run, startup = (statistics.median(x) for x in (floors, runs, startups))
    per_unit = (run - floor) / n * 1000
    marginal = (run - floor - startup) / n * 1000
    print(f"units: {n}, jobs: {args.jobs}, rounds: {args.rounds} (medians)")
    print(f"shell loop:             {floor:8.3f} s  ({floor / n * 1000:6.2f} ms/unit)")
    print(f"resume-kit run:         {run:8.3f} s  ({run / n * 1000:6.2f} ms/unit)")
    print(f"start-up (nothing left):{startup:8.3f} s")
    print(f"overhead per unit:      {per_unit:8.2f} ms  (target <= {TARGET_MS:.0f} ms)")
    print(f"  without the start-up: {marginal:8.2f} ms")
    print("result:", "MET" if per_unit <= TARGET_MS else "MISSED")


if __name__ == "__main__":
    main()
