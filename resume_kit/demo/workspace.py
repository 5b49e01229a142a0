"""The demo workspace: 200 contracts, extract.py and check.sh, and a batch stopped at contract 137
(its ``Counterparty:`` label raises a real ``KeyError: 'party_b'``), built with the real CLI."""

from __future__ import annotations

import datetime as dt
import os
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ResumeKitError

DOC_COUNT = 200
QUIRK_DOC = 137  # the contract that uses another label for its second party
GOAL = "Extract parties, dates and amounts from the 200 contracts in docs/ into out/"
MARKER_NAME = "resume-kit-demo"  # kept inside .git/, so it never shows as a change
# What an earlier demo folder may hold at its top level (check.py: from earlier versions).
DEMO_ENTRIES = {".git", ".gitignore", ".resume-kit", "README.md", "docs", "out", "logs"}
DEMO_ENTRIES |= {"extract.py", "check.sh", "check.py"}
EXIT_OFF_SCRIPT = 70
IDENTITY = ["-c", "user.name=resume-kit demo", "-c", "user.email=demo@resume-kit.invalid"]
IDENTITY += ["-c", "commit.gpgsign=false"]  # the demo's own commits only; yours stay yours

_NAMES = ("Northwind", "Blue Harbor", "Kestrel", "Marlow & Finch", "Orchid", "Granite Peak")
_KINDS = ("Logistics GmbH", "Analytics Ltd", "Software AB", "Biotech SAS", "Freight BV", "Inc")
_LAWS = ("England and Wales", "Germany", "Sweden", "the Netherlands", "France", "New York")


def doc_name(n: int) -> str:
    """``7`` -> ``"007"``: the zero-padded stem shared by a contract and its output."""
    return f"{n:03d}"


def unit_id(n: int) -> str:
    """The unit id ``resume-kit plan`` derives from ``docs/NNN.txt``."""
    return f"docs-{doc_name(n)}"


def contract_text(n: int) -> str:
    """Contract ``n`` (1-based): deterministic, a few hundred bytes, labelled fields."""
    rng = random.Random(n * 7919)
    party_a, party_b = (f"{rng.choice(_NAMES)} {kind}" for kind in rng.sample(_KINDS, 2))
    start = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(0, 700))
    end = start + dt.timedelta(days=365 * rng.choice((1, 2, 3)) - 1)
    amount = f"{rng.choice(('EUR', 'GBP', 'USD', 'SEK'))} {rng.randrange(2_000, 250_000):,}.00"
    return (
        f"SERVICES AGREEMENT No. {doc_name(n)}\n\nParty A: {party_a}\n"
        f"{'Counterparty' if n == QUIRK_DOC else 'Party B'}: {party_b}\n"
        f"Effective date: {start}\nTerm end: {end}\nAmount: {amount}\n"
        f"Governing law: {rng.choice(_LAWS)}\n\n1. Scope. Services as in Schedule 1.\n"
    )


EXTRACT_PY = """\
# python3 extract.py docs/NNN.txt: one contract's fields into out/NNN.json, logged.
import json, os, sys, time

path = sys.argv[1]
target = os.path.join("out", os.path.basename(path).replace(".txt", ".json"))
os.makedirs("logs", exist_ok=True)
log = open(os.path.join("logs", "extract.log"), "a", encoding="utf-8")
stamp = time.strftime("%Y-%m-%d %H:%M:%S")
try:
    fields = {}  # the "Label: value" lines, keyed by label in snake_case
    for line in open(path, encoding="utf-8").read().splitlines():
        label, sep, value = line.partition(": ")
        if sep and not line.startswith(" "):
            key = label.lower().replace(" ", "_")
            fields[key] = value
    currency, amount = fields["amount"].split(" ")
    record = {"amount": float(amount.replace(",", "")), "currency": currency}
    for key in ("party_a", "party_b", "effective_date", "term_end"):
        record[key] = fields[key]
except Exception:
    import traceback  # only a failure needs it
    log.write(f"{stamp} ERROR extract: {path}: extraction failed\\n{traceback.format_exc()}")
    raise
os.makedirs("out", exist_ok=True)
with open(target, "w", encoding="utf-8") as out:
    out.write(json.dumps(record, indent=2) + "\\n")
log.write(f"{stamp} INFO extract: {path} -> {target}\\n")
"""
# A grep, not a second Python start per contract: that would almost double each verify run.
CHECK_SH = r"""#!/bin/sh
# sh check.sh out/NNN.json: exit 0 when each of the 6 fields has a value.
fields='party_a|party_b|effective_date|term_end|amount|currency'
found=$(grep -Ec "^  \"($fields)\": (\"[^\"]|[0-9])" "$1")
[ "$found" = 6 ] || { echo "$1: ${found:-0} of the 6 fields have a value" >&2; exit 1; }
"""


def extract_half_edited(source: str) -> str:
    """``extract.py`` as the interrupted session left it: an alias table begun but empty."""
    table = "# Labels some contracts use instead of ours.\nLABEL_ALIASES = {}\n\n"
    source = source.replace("path = ", table + "path = ", 1)
    return source.replace("fields[key] =", "fields[LABEL_ALIASES.get(key, key)] =", 1)


def extract_fixed(source: str) -> str:
    """The fix: ``Counterparty:`` is read as ``party_b``."""
    return source.replace("LABEL_ALIASES = {}", 'LABEL_ALIASES = {"counterparty": "party_b"}', 1)


def write_workspace_files(root: Path) -> None:
    """The contracts, the scripts, the README and .gitignore (the state before any commit)."""
    (root / "docs").mkdir(parents=True, exist_ok=True)
    for n in range(1, DOC_COUNT + 1):
        (root / "docs" / f"{doc_name(n)}.txt").write_text(contract_text(n), encoding="utf-8")
    readme = f"# Contract extraction (a resume-kit demo)\n\n{GOAL}. Made by `resume-kit demo`.\n"
    files = {"extract.py": EXTRACT_PY, "check.sh": CHECK_SH, "README.md": readme}
    for name, text in {**files, ".gitignore": "logs/\n__pycache__/\n"}.items():
        (root / name).write_text(text, encoding="utf-8")


@dataclass
class CliResult:
    """One run of the real ``resume-kit`` CLI (``stdout`` holds stderr too when merged)."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def typed(self) -> str:
        return " ".join(["resume-kit", *(shlex.quote(a) for a in self.args)])


def spawn(root: Path, *args: str, **streams: Any) -> subprocess.Popen[str]:
    """``resume-kit ARGS`` in ``root``: no blanket trust (``plan`` approved), no leaked git vars."""
    from resume_kit.infra.gitcmd import LEAKED_GIT_VARS

    drop = {*LEAKED_GIT_VARS, "RESUME_KIT_TRUST", "RESUME_KIT_DEBUG", "FORCE_COLOR"}
    env = {**{k: v for k, v in os.environ.items() if k not in drop}, "NO_COLOR": "1"}
    streams |= {"cwd": root, "env": env, "stdin": subprocess.DEVNULL, "errors": "replace"}
    return subprocess.Popen([sys.executable, "-m", "resume_kit", *args], text=True, **streams)


def off_script(what: str, root: Path) -> ResumeKitError:
    """A step did not behave as the story says: a bug, reported as one (exit 70)."""
    hint = f"this is a bug in resume-kit; the workspace is kept in {root}"
    return ResumeKitError(f"the demo went off script: {what}", hint, EXIT_OFF_SCRIPT)


def run_cli(root: Path, *args: str, merged: bool = False, expect: int | None = None) -> CliResult:
    """``resume-kit ARGS`` run in ``root`` (``merged``: one output stream); not ``expect``: stop."""
    started, err = time.monotonic(), subprocess.STDOUT if merged else subprocess.PIPE
    with spawn(root, *args, stdout=subprocess.PIPE, stderr=err) as proc:
        out, err_text = proc.communicate(timeout=300)
    result = CliResult(args, proc.returncode, out, err_text or "", time.monotonic() - started)
    if expect is not None and result.code != expect:
        last = (out + result.stderr).strip().splitlines() or ["no output"]
        raise off_script(f"`{result.typed}` exited {result.code}, not {expect}: {last[-1]}", root)
    return result


def git(root: Path, *args: str) -> str:
    """git in the demo repository, with hooks off (the user's global hooks are not ours to run)."""
    from resume_kit.infra.gitcmd import run_git

    return run_git(root, "-c", "core.hooksPath=/dev/null", *args)


def done_ids(root: Path) -> list[str]:
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.io import load

    return [u.id for u in load(find_layout(root)).progress.units if u.status == "done"]


@dataclass
class BuildReport:
    commands: list[CliResult]  # every resume-kit command run, in order
    commits: list[str]  # "sha subject", oldest first
    failure: str  # the output of the run that stopped at contract 137
    seconds: float


def build_workspace(root: Path) -> BuildReport:
    """The interrupted batch in the empty ``root``: contracts, scripts and progress file committed,
    a run of 1-120 committed, a run of 121-137 that stops at 137, a half-made fix."""
    started, commands = time.monotonic(), []
    write_workspace_files(root)
    git(root, "init", "-q")
    git(root, "symbolic-ref", "HEAD", "refs/heads/main")
    marker = Path(git(root, "rev-parse", "--absolute-git-dir")) / MARKER_NAME
    marker.write_text("built by `resume-kit demo`; it may rebuild this folder\n", encoding="utf-8")

    def commit(message: str, *paths: str) -> None:
        git(root, "add", "--", *paths)
        git(root, *IDENTITY, "commit", "-q", "--no-verify", "-m", message)

    def cli(*args: str, expect: int = 0) -> CliResult:
        commands.append(run_cli(root, *args, merged=True, expect=expect))
        return commands[-1]

    commit("Add 200 service contracts to extract", "docs", "README.md", ".gitignore")
    commit("extract.py and check.sh: contract fields to out/NNN.json", "extract.py", "check.sh")
    cli("init", "--goal", GOAL)
    verify = f"{shlex.quote(sys.executable)} extract.py {{path}} && sh check.sh out/{{stem}}.json"
    each = ("--each", "docs/*.txt", "--title", "Extract contract {stem}")
    cli("plan", *each, "--verify", verify, "--artifact", "out/{stem}.json")
    commit("Track the extraction with resume-kit: 200 units", ".resume-kit")
    # One job more than the cores (at most 8): one per core leaves a core idle part of the time.
    jobs = str(max(2, min((os.cpu_count() or 1) + 1, 8)))
    cli("run", "--jobs", jobs, "--max-units", "120")
    for first, last in ((1, 50), (51, 100), (101, 120)):
        paths = [f"out/{doc_name(n)}.json" for n in range(first, last + 1)]
        paths += [".resume-kit/progress.yaml"] if last == 120 else []
        commit(f"out: contracts {doc_name(first)}-{doc_name(last)} extracted and checked", *paths)
    stopped = cli("run", "--jobs", jobs, "--max-units", str(QUIRK_DOC - 120), expect=1)
    extract = root / "extract.py"  # the session fixing it was interrupted half way
    extract.write_text(extract_half_edited(extract.read_text(encoding="utf-8")), encoding="utf-8")
    commits = git(root, "log", "--reverse", "--format=%h %s").splitlines()
    seconds = time.monotonic() - started
    return BuildReport(commands, commits, stopped.stdout, seconds)
