"""How long ``read_git_facts`` takes on a big, busy repository.

Builds (once, cached in a temporary folder) a repository with 20,000 tracked files in 200
folders, 2,000 of them modified (half staged), plus 50 untracked files, then times
``read_git_facts`` several times and prints the figures.

    python bench/bench_git_facts.py [--dir /tmp/rk-bench-git] [--runs 7] [--rebuild]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRACKED = 20_000
MODIFIED = 2_000
FOLDERS = 200


def git(cwd: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@example.com")  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def build(root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    per_folder = TRACKED // FOLDERS
    for d in range(FOLDERS):
        folder = root / "src" / f"pkg{d:03}"
        folder.mkdir(parents=True)
        for f in range(per_folder):
            (folder / f"mod{f:03}.py").write_text(f"# module {d}/{f}\nVALUE = {f}\n\n" * 5)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "20k files")
    for n in range(MODIFIED):
        d, f = divmod(n * (TRACKED // MODIFIED), per_folder)
        path = root / "src" / f"pkg{d:03}" / f"mod{f:03}.py"
        path.write_text(path.read_text() + f"CHANGED = {n}\n")
        if n % 2 == 0:
            git_path = path.relative_to(root).as_posix()
            with (root / ".bench-staged").open("a") as handle:
                handle.write(git_path + "\n")
    staged = (root / ".bench-staged").read_text().split()
    (root / ".bench-staged").unlink()
    for i in range(0, len(staged), 500):
        git(root, "add", "--", *staged[i : i + 500])
    for i in range(50):
        (root / f"scratch{i:02}.txt").write_text("x\n")
    (root / ".bench-ready").write_text("ok")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "rk-bench-git")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    root: Path = args.dir.resolve()
    if args.rebuild or not (root / ".bench-ready").exists():
        start = time.perf_counter()
        build(root)
        print(f"built {root} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    (root / ".bench-ready").unlink(missing_ok=True)  # not part of the measured state

    start = time.perf_counter()
    from resume_kit.facts.git import read_git_facts

    import_s = time.perf_counter() - start
    git_dir = root / ".git"
    times = []
    result = {}
    for _ in range(args.runs):
        start = time.perf_counter()
        result = read_git_facts(root, git_dir, git_dir)
        times.append(time.perf_counter() - start)
    (root / ".bench-ready").write_text("ok")

    counts = result["changes"]["counts"]
    print(f"repository: {TRACKED} tracked files, {MODIFIED} modified; counts {counts}, "
          f"truncated={result['changes']['truncated']}")  # fmt: skip
    print(f"import resume_kit.facts.git: {import_s * 1000:.0f} ms")
    print(f"read_git_facts first call: {times[0] * 1000:.0f} ms (includes GitPython import)")
    print(
        f"read_git_facts over {args.runs} runs: median {statistics.median(times) * 1000:.0f} ms,"
        f" min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
