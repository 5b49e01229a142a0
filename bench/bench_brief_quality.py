"""Brief quality on the demo workspace (issue 4, "Quality").

Builds the demo workspace (the interrupted batch job of ``resume-kit demo``) in a temporary
folder, takes the brief with the real CLI, counts its tokens (cl100k_base) and checks that a
reader can answer from the brief alone: the goal, how many units are done, which one is next,
its verify command, the last error, and which files are uncommitted. Each answer is an
explicit string check against what the workspace is known to hold.

    python bench/bench_brief_quality.py [--keep]

Prints a table; exits 1 when a check fails or the brief is over 800 tokens.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TOKEN_LIMIT = 800


@dataclass
class Check:
    question: str
    expected: str
    passed: bool
    detail: str = ""


def section(brief: str, heading: str) -> str:
    """The text under ``## heading`` up to the next ``## `` heading (empty if missing)."""
    match = re.search(rf"^## {re.escape(heading)}[^\n]*\n(.*?)(?=^## |\Z)", brief, re.M | re.S)
    return match.group(1) if match else ""


# `out/` (16 untracked files: `out/121.json` … `out/136.json`): many changes in one folder.
_FOLDED = re.compile(r"`([^`]+/)` \((\d+) \w+ files: `([^`]+)` … `([^`]+)`\)")
_NUMBER = re.compile(r"(\d+)")


def named_paths(brief: str, changed: list[str]) -> list[str]:
    """The changed paths a reader can name from the brief: listed verbatim, or in a folded
    line whose count and first and last names are those of the folder's changed paths, and
    whose names are a run of consecutive numbers (so every name between can be written out)."""
    named = [path for path in changed if f"`{path}`" in brief]
    for folder, count, first, last in _FOLDED.findall(brief):
        inside = sorted(p for p in changed if p.startswith(folder) and "/" not in p[len(folder) :])
        numbers = [int(m.group(1)) for p in inside if (m := _NUMBER.search(p[len(folder) :]))]
        if (
            len(inside) == int(count)
            and inside[:1] == [first]
            and inside[-1:] == [last]
            and len(numbers) == len(inside)
            and numbers == list(range(numbers[0], numbers[0] + len(inside)))
        ):
            named += [p for p in inside if p not in named]
    return named


def checks(brief: str, root: Path) -> list[Check]:
    from resume_kit.demo import workspace as demo
    from resume_kit.infra.gitcmd import run_git
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.io import load

    progress = load(find_layout(root)).progress
    done = progress.counts()["done"]
    total = len(progress.units)
    quirk = progress.require_unit(demo.unit_id(demo.QUIRK_DOC))
    next_part = section(brief, "Next")
    outside = ("--", ".", ":!.resume-kit")
    modified = run_git(root, "diff", "--name-only", "HEAD", *outside).splitlines()
    untracked = run_git(root, "ls-files", "--others", "--exclude-standard", *outside).splitlines()
    changed = sorted(modified + untracked)
    named = named_paths(brief, changed)

    return [
        Check("the goal", progress.goal, progress.goal in brief),
        Check("how many units are done", f"{done}/{total}", f"{done}/{total}" in brief),
        Check(
            "which unit is next",
            quirk.id,
            quirk.id in next_part and "exactly one" in brief,
            "named in the Next section",
        ),
        Check(
            "its verify command",
            quirk.verify or "",
            bool(quirk.verify) and (quirk.verify or "") in next_part,
            "verbatim in the Next section",
        ),
        Check("the last error", "KeyError: 'party_b'", "KeyError: 'party_b'" in brief),
        Check(
            "which files are uncommitted",
            f"{len(changed)} paths (extract.py modified, out/121-136.json new)",
            len(named) == len(changed) and "`extract.py`" in brief,
            f"{len(named)}/{len(changed)} named",
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the workspace and print it")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="rk-bench-quality-")).resolve()
    # Approvals from `plan` go to a throw-away data dir, not the user's.
    os.environ["XDG_DATA_HOME"] = str(folder / "xdg-data")
    root = folder / "demo"
    root.mkdir()

    from resume_kit.demo import workspace as demo
    from resume_kit.infra.tokens import count_tokens

    report = demo.build_workspace(root)
    result = demo.run_cli(root, "brief")
    if result.code != 0:
        print(f"resume-kit brief exited {result.code}:\n{result.stderr}", file=sys.stderr)
        return 1
    started = time.monotonic()
    tokens = count_tokens(result.stdout)
    count_s = time.monotonic() - started
    results = checks(result.stdout, root)

    width = max(len(c.question) for c in results)
    print(f"demo workspace built in {report.seconds:.1f} s; brief in {result.seconds:.2f} s")
    print(
        f"brief: {tokens} tokens (cl100k_base, counted in {count_s * 1000:.0f} ms), "
        f"limit {TOKEN_LIMIT}: {'ok' if tokens <= TOKEN_LIMIT else 'OVER'}"
    )
    print()
    print(f"{'question'.ljust(width)}  answered  expected")
    print(f"{'-' * width}  --------  --------")
    for check in results:
        mark = "yes" if check.passed else "NO"
        detail = f"  ({check.detail})" if check.detail else ""
        print(f"{check.question.ljust(width)}  {mark.ljust(8)}  {check.expected}{detail}")
    answered = sum(c.passed for c in results)
    print()
    print(f"{answered}/{len(results)} questions answered from the brief alone")
    if args.keep:
        print(f"workspace: {root}")
    else:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return 0 if answered == len(results) and tokens <= TOKEN_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
