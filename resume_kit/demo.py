"""The demo workspace: generated contracts, the extraction and check scripts, and their edits.

Everything here is pure (text in, text out) except :func:`write_workspace_files`, which writes
the generated files into a folder. The batch itself, the git history and the walkthrough are
driven through the real CLI by ``resume_kit.commands.demo``.

The story: 200 small service contracts in ``docs/``; ``extract.py`` turns each into
``out/NNN.json`` and ``check.sh`` proves every field of the record has a value. Contract 137
names its second party ``Counterparty:`` instead of ``Party B:``, so ``extract.py`` raises a
real ``KeyError: 'party_b'`` there, logged to ``logs/extract.log``. The fix teaches
``extract.py`` that label.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import random
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DOC_COUNT = 200
QUIRK_DOC = 137  # the contract that uses another label for its second party
GOAL = "Extract parties, dates and amounts from the 200 contracts in docs/ into out/"
MARKER_NAME = "resume-kit-demo"  # kept inside .git/, so it never shows as a change
# What an earlier demo folder may hold at its top level; anything else means it is not ours.
DEMO_ENTRIES = frozenset(
    {
        ".git",
        ".gitignore",
        ".resume-kit",
        "README.md",
        "check.py",  # made by earlier versions of the demo
        "check.sh",
        "docs",
        "extract.py",
        "logs",
        "out",
    }
)

_COMPANIES = (
    "Northwind Logistics GmbH",
    "Blue Harbor Analytics Ltd",
    "Kestrel Software AB",
    "Marlow & Finch LLP",
    "Orchid Biotech SAS",
    "Granite Peak Engineering Inc",
    "Tidewater Freight BV",
    "Silverline Payments Oy",
    "Copperleaf Media SRL",
    "Aurora Facilities Ltd",
    "Helios Energy Services AG",
    "Juniper Data Systems Inc",
    "Lindqvist Consulting AB",
    "Pacific Rim Components KK",
    "Redwood Legal Services LLP",
    "Saffron Foods SpA",
)
_SERVICES = (
    "software maintenance",
    "freight forwarding",
    "data analysis",
    "facility cleaning",
    "legal translation",
    "cloud hosting",
    "payroll processing",
    "equipment calibration",
)
_LAWS = ("England and Wales", "Germany", "Sweden", "the Netherlands", "France", "New York")
_CURRENCIES = ("EUR", "GBP", "USD", "SEK")


def doc_name(n: int) -> str:
    """``137`` -> ``"137"``: the zero-padded stem shared by a contract and its output."""
    return f"{n:03d}"


def unit_id(n: int) -> str:
    """The unit id ``resume-kit plan`` derives from ``docs/NNN.txt``."""
    return f"docs-{doc_name(n)}"


def contract_text(n: int) -> str:
    """Contract ``n`` (1-based): deterministic, a few hundred bytes, labelled fields."""
    rng = random.Random(n * 7919)
    party_a, party_b = rng.sample(_COMPANIES, 2)
    start = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(0, 700))
    end = start + dt.timedelta(days=365 * rng.choice((1, 2, 3)) - 1)
    amount = rng.randrange(2_000_00, 250_000_00) / 100
    currency = rng.choice(_CURRENCIES)
    service = rng.choice(_SERVICES)
    second_label = "Counterparty" if n == QUIRK_DOC else "Party B"
    return (
        f"SERVICES AGREEMENT No. {doc_name(n)}\n"
        "\n"
        f"Party A: {party_a}\n"
        f"{second_label}: {party_b}\n"
        f"Effective date: {start.isoformat()}\n"
        f"Term end: {end.isoformat()}\n"
        f"Amount: {currency} {amount:,.2f}\n"
        f"Governing law: {rng.choice(_LAWS)}\n"
        "\n"
        f"1. Scope. The second party provides {service} to the first party as described in\n"
        "   Schedule 1.\n"
        "2. Fees. The amount above is payable in four equal quarterly instalments.\n"
        "3. Term. This agreement runs from the effective date to the term end unless ended\n"
        "   earlier in writing with ninety days notice.\n"
    )


EXTRACT_PY = '''\
"""Extract the parties, dates and amount of one contract into out/NNN.json.

Usage: python3 extract.py docs/NNN.txt   (logs to logs/extract.log)
"""

import json
import os
import sys
import time

LOG_FILE = os.path.join("logs", "extract.log")


def log(level, message):
    """Append one entry to logs/extract.log: "time LEVEL extract: message"."""
    os.makedirs(os.path.dirname(LOG_FILE), exist_ok=True)
    with open(LOG_FILE, "a", encoding="utf-8") as handle:
        handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {level} extract: {message}\\n")


def labelled_fields(text):
    """The "Label: value" lines of a contract, keyed by label in snake_case."""
    fields = {}
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if sep and value.strip() and not line.startswith(" "):
            fields[label.strip().lower().replace(" ", "_")] = value.strip()
    return fields


def parse_amount(text):
    currency, _, number = text.partition(" ")
    return currency, float(number.replace(",", ""))


def extract(text):
    fields = labelled_fields(text)
    currency, amount = parse_amount(fields["amount"])
    return {
        "party_a": fields["party_a"],
        "party_b": fields["party_b"],
        "effective_date": fields["effective_date"],
        "term_end": fields["term_end"],
        "amount": amount,
        "currency": currency,
        "governing_law": fields.get("governing_law"),
    }


def main(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    target = os.path.join("out", stem + ".json")
    try:
        with open(path, encoding="utf-8") as handle:
            record = extract(handle.read())
    except Exception:
        import traceback  # only a failure needs it, and most runs never fail

        log("ERROR", f"{path}: extraction failed\\n{traceback.format_exc().rstrip()}")
        raise
    os.makedirs("out", exist_ok=True)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(record, indent=2) + "\\n")
    log("INFO", f"{path} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
'''

# The independent check is a small shell script: a second Python start for every contract
# would almost double the cost of each verify run, and one grep answers the question that
# matters here (is every field there, with a value) at a fraction of it.
CHECK_SH = r"""#!/bin/sh
# Check one extracted record: each of the 6 fields has a value (a non-empty string or a
# number). Usage: sh check.sh out/NNN.json   (exit 0 when sound)
record=$1
fields='party_a|party_b|effective_date|term_end|amount|currency'
found=$(grep -Ec "^  \"($fields)\": (\"[^\"]|[0-9])" "$record")
if [ "$found" != 6 ]; then
    echo "$record: ${found:-0} of the 6 fields have a value" >&2
    exit 1
fi
"""

# The work the interrupted session left half done: a table of label aliases, still empty.
_ALIASES_ANCHOR = '''\
def labelled_fields(text):
    """The "Label: value" lines of a contract, keyed by label in snake_case."""
    fields = {}
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if sep and value.strip() and not line.startswith(" "):
            fields[label.strip().lower().replace(" ", "_")] = value.strip()
    return fields
'''
_ALIASES_HALF = '''\
# Labels some contracts use instead of ours.
LABEL_ALIASES = {}


def labelled_fields(text):
    """The "Label: value" lines of a contract, keyed by label in snake_case."""
    fields = {}
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if sep and value.strip() and not line.startswith(" "):
            key = label.strip().lower().replace(" ", "_")
            fields[LABEL_ALIASES.get(key, key)] = value.strip()
    return fields
'''
_ALIASES_EMPTY = "LABEL_ALIASES = {}\n"
_ALIASES_FIXED = 'LABEL_ALIASES = {"counterparty": "party_b"}\n'


def extract_half_edited(source: str) -> str:
    """``extract.py`` as the interrupted session left it: an alias table begun but empty."""
    if _ALIASES_ANCHOR not in source:
        raise ValueError("extract.py does not hold the expected labelled_fields()")
    return source.replace(_ALIASES_ANCHOR, _ALIASES_HALF, 1)


def extract_fixed(source: str) -> str:
    """The fix: ``Counterparty:`` is read as ``party_b``."""
    if _ALIASES_EMPTY not in source:
        raise ValueError("extract.py does not hold the empty LABEL_ALIASES table")
    return source.replace(_ALIASES_EMPTY, _ALIASES_FIXED, 1)


def unified_diff(before: str, after: str, path: str) -> str:
    """A ``git diff``-style unified diff of one file."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )


README_MD = f"""\
# Contract extraction (a resume-kit demo)

{GOAL}.

- `docs/NNN.txt`: the contracts.
- `extract.py docs/NNN.txt` writes `out/NNN.json` (and logs to `logs/extract.log`).
- `sh check.sh out/NNN.json` exits 0 when every field of the record has a value.

Progress lives in `.resume-kit/progress.yaml`: one unit per contract, each verified by
running both scripts. Built by `resume-kit demo`; safe to delete.
"""

GITIGNORE = "logs/\n__pycache__/\n"


def verify_template(python: str) -> str:
    """The ``plan --verify`` template: extract the contract, then check the record."""
    py = shlex.quote(python)
    return f"{py} extract.py {{path}} && sh check.sh out/{{stem}}.json"


def write_workspace_files(root: Path) -> None:
    """The contracts, the scripts, the README and .gitignore (the state before any commit)."""
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for n in range(1, DOC_COUNT + 1):
        (docs / f"{doc_name(n)}.txt").write_text(contract_text(n), encoding="utf-8")
    (root / "extract.py").write_text(EXTRACT_PY, encoding="utf-8")
    (root / "check.sh").write_text(CHECK_SH, encoding="utf-8")
    (root / "README.md").write_text(README_MD, encoding="utf-8")
    (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")


# --------------------------------------------------------------------------- building it
#
# I/O from here on: git through resume_kit.gitcmd and the real CLI in subprocesses (init,
# plan, and run for the batch that went on until the interruption).

# The batch before the interruption, as the commits that recorded it: (first, last) documents.
COMMITTED_CHUNKS = ((1, 50), (51, 100), (101, 120))
UNCOMMITTED_CHUNK = (121, QUIRK_DOC - 1)  # passed, not committed


def batch_jobs() -> int:
    """``resume-kit run --jobs`` for the build: one more than the cores, at most 8. Each
    command is short and resume-kit checkpoints between them, so one job per core leaves a
    core idle part of the time (on 2 cores, 3 jobs built the workspace ~10% faster)."""
    return max(2, min((os.cpu_count() or 1) + 1, 8))


DEMO_GIT_CONFIG = (
    ("user.name", "resume-kit demo"),
    ("user.email", "demo@resume-kit.invalid"),
    ("commit.gpgsign", "false"),
)


class DemoBuildError(Exception):
    """Building the workspace went wrong in a way the demo cannot explain away."""


@dataclass
class CliResult:
    """One run of the real ``resume-kit`` CLI."""

    args: tuple[str, ...]
    code: int
    stdout: str  # with ``merged``, stdout and stderr interleaved as they were written
    stderr: str
    seconds: float

    @property
    def typed(self) -> str:
        """The command line as a user would type it."""
        return " ".join(["resume-kit", *(shlex.quote(a) for a in self.args)])


def cli_env() -> dict[str, str]:
    """Our environment for the CLI runs: no blanket trust (approvals come from ``plan``), no
    leaked repository variables, no colour in captured output."""
    from resume_kit.gitcmd import LEAKED_GIT_VARS

    env = dict(os.environ)
    for name in (*LEAKED_GIT_VARS, "RESUME_KIT_TRUST", "RESUME_KIT_DEBUG", "FORCE_COLOR"):
        env.pop(name, None)
    env["NO_COLOR"] = "1"
    return env


def run_cli(root: Path, *args: str, merged: bool = False, timeout_s: float = 300.0) -> CliResult:
    """Run ``resume-kit ARGS`` (this interpreter's) in ``root`` and capture its output;
    ``merged`` keeps stdout and stderr in one stream, in the order they were written."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", *args],
        cwd=root,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout_s,
        check=False,
    )
    return CliResult(
        args=tuple(args),
        code=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr or "",
        seconds=time.monotonic() - started,
    )


def _cli(root: Path, *args: str, expect: int = 0) -> CliResult:
    result = run_cli(root, *args, merged=True)
    if result.code != expect:
        lines = result.stdout.strip().splitlines()
        raise DemoBuildError(
            f"`{result.typed}` exited {result.code}, not {expect}: "
            f"{lines[-1] if lines else 'no output'}"
        )
    return result


def git(root: Path, *args: str) -> str:
    """git in the demo repository, with hooks off (the user's global hooks are not ours to run)."""
    from resume_kit.gitcmd import run_git

    return run_git(root, "-c", "core.hooksPath=/dev/null", *args)


def _commit(root: Path, message: str, *paths: str) -> None:
    git(root, "add", "--", *paths)
    git(root, "commit", "-q", "--no-verify", "-m", message)


def _done_count(root: Path) -> int:
    from resume_kit.paths import find_layout
    from resume_kit.progress_io import load

    return load(find_layout(root)).progress.counts()["done"]


@dataclass
class BuildReport:
    """What building did, for the walkthrough to tell."""

    root: Path
    commands: list[CliResult]  # every resume-kit command run, in order
    commits: list[str]  # "sha subject", oldest first
    done: int
    failed_unit: str
    failure: str  # the failing run's output, as `resume-kit run` reported it
    seconds: float


def build_workspace(root: Path, on_step: Callable[[str], None] | None = None) -> BuildReport:
    """Build the interrupted batch job in the empty folder ``root`` (see the module docstring).

    Git history: the contracts, the scripts, the progress file, then three commits of the
    results of a first ``resume-kit run`` (contracts 1..120). A second run passes 121..136
    (not committed) and stops at 137 with a KeyError, and ``extract.py`` gets the half-made
    fix the interrupted session left behind.
    """
    started = time.monotonic()
    say = on_step or (lambda _text: None)

    say("writing 200 contracts, extract.py and check.sh")
    write_workspace_files(root)
    git(root, "init", "-q")
    git(root, "symbolic-ref", "HEAD", "refs/heads/main")
    for key, value in DEMO_GIT_CONFIG:
        git(root, "config", key, value)
    (Path(git(root, "rev-parse", "--absolute-git-dir")) / MARKER_NAME).write_text(
        "built by `resume-kit demo`; the folder may be rebuilt by it\n", encoding="utf-8"
    )
    _commit(root, "Add 200 service contracts to extract", "docs", "README.md", ".gitignore")
    _commit(
        root, "extract.py and check.sh: contract fields to out/NNN.json", "extract.py", "check.sh"
    )

    say("planning one unit per contract: resume-kit init, resume-kit plan")
    commands = [
        _cli(root, "init", "--goal", GOAL),
        _cli(
            root,
            "plan",
            "--each",
            "docs/*.txt",
            "--title",
            "Extract contract {stem}",
            "--verify",
            verify_template(sys.executable),
            "--artifact",
            "out/{stem}.json",
        ),
    ]
    _commit(root, "Track the extraction with resume-kit: 200 units", ".resume-kit")

    def batch(first: int, last: int, expect: int = 0) -> CliResult:
        say(f"resume-kit run: contracts {doc_name(first)}-{doc_name(last)}")
        count = str(last - first + 1)
        result = _cli(root, "run", "--jobs", str(batch_jobs()), "--max-units", count, expect=expect)
        commands.append(result)
        return result

    # One run for everything that got committed (every run pays a start-up), then the
    # session's commits of its results, chunk by chunk, the progress file with the last.
    batch(COMMITTED_CHUNKS[0][0], COMMITTED_CHUNKS[-1][1])
    for first, last in COMMITTED_CHUNKS:
        outputs = [f"out/{doc_name(n)}.json" for n in range(first, last + 1)]
        if last == COMMITTED_CHUNKS[-1][1]:
            outputs.append(".resume-kit/progress.yaml")
        _commit(
            root,
            f"out: contracts {doc_name(first)}-{doc_name(last)} extracted and checked",
            *outputs,
        )
    # The last run ends with the quirky contract: it stops there with exit 1.
    stopped = batch(UNCOMMITTED_CHUNK[0], QUIRK_DOC, expect=1)
    done = _done_count(root)
    if done != QUIRK_DOC - 1:
        raise DemoBuildError(f"{done} units done before the interruption, not {QUIRK_DOC - 1}")

    # The session that was fixing it was interrupted half way through the fix.
    extract = root / "extract.py"
    extract.write_text(extract_half_edited(extract.read_text(encoding="utf-8")), encoding="utf-8")

    return BuildReport(
        root=root,
        commands=commands,
        commits=git(root, "log", "--reverse", "--format=%h %s").splitlines(),
        done=done,
        failed_unit=unit_id(QUIRK_DOC),
        failure=stopped.stdout,
        seconds=time.monotonic() - started,
    )
