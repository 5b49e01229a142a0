"""resume-kit's benchmark suite: the one entry point. Writes docs/benchmarks.md.

    python bench/run.py [--quick] [--sizes small,large,huge] [--rounds N] [--keep]
                        [--dir DIR] [--out docs/benchmarks.md] [--no-doc]

Builds its workspaces (see ``bench/workspaces.py``) in a temporary folder, never in the
repository, then measures with the real CLI in child processes (the ``resume-kit`` console
script beside the interpreter, as users run it; ``python -m resume_kit`` only without one;
``PYTHONPATH`` names this tree either way), in rounds whose order rotates,
so every figure in a table shared the machine's load with the others (this machine is noisy:
only ratios measured side by side mean much). Figures are medians over the rounds:

* ``brief``, ``snapshot`` and ``status`` wall time as a ratio to the floor: a bare
  ``python -S -c pass`` plus ``git status --porcelain=v2 -z`` on the same tree;
  warm (progress cache present) and cold (``progress.json`` in the user cache removed first,
  as after a hand edit of progress.yaml);
* peak memory of each: ``ru_maxrss`` from ``os.wait4`` on the child (the child and the
  processes it waited for, the larger of them);
* time ``git commit`` takes with the hooks installed minus without, in a clone of the
  workspace, alternating commits, the background snapshot awaited between commits (untimed);
* ``verify-next`` wall time minus running its verify command directly with ``/bin/sh -c``;
* brief tokens (cl100k_base) against the tokens of the agent session it replaces.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(REPO))

import workspaces  # noqa: E402

from resume_kit.brief.fastpath import RACY_NS  # noqa: E402
from resume_kit.facts.fact_reuse import RACY_NS as FACTS_RACY_NS  # noqa: E402

PYTHON = sys.executable
# What users run: the console script the install put beside the interpreter (the installer's
# wrapper, its `import re` included); `python -m resume_kit` only when there is none.
SCRIPT = Path(PYTHON).parent / "resume-kit"
CLI = [str(SCRIPT)] if SCRIPT.is_file() else [PYTHON, "-m", "resume_kit"]
CLI_SHOWN = "the `resume-kit` console script" if SCRIPT.is_file() else "`python -m resume_kit`"
# How the agents' brief hooks start (integrations/settings.isolated_command_line: the command
# `integrate` writes execs this; the agent's shell before it is not counted, as for every row).
HOOK_START = [PYTHON, "-I", "-S", str(REPO / "resume_kit" / "cli" / "isolated_entry.py")]
UNCHANGED_BRIEF = "brief, nothing changed since the previous one (served)"
UNCHANGED_HOOK_BRIEF = (
    "brief --format claude-hook started as the agents' hooks start it (`python -I -S` "
    "cli/isolated_entry.py), the SessionStart payload on stdin, nothing changed since the "
    "previous one (served)"
)
AFTER_WORK_BRIEF = (
    "brief after the agent worked (a file edited, the session and the log grown; "
    "built, its receipt stored after the answer by a detached child, as by default)"
)
AFTER_COMMIT_BRIEF = (
    "brief right after a commit (a file committed with a subject never seen before; "
    "built, its receipt stored after the answer by a detached child, as by default)"
)
# Small's rounds are cheap and its ratios the noisiest (a floor of ~13 ms): 9 rounds until
# 2026-12-07, when its two served rows sat at their 1.5x target from run to run.
DEFAULT_ROUNDS = {"small": 21, "large": 7, "huge": 5}
HOOK_COMMITS = {"small": 15, "large": 11, "huge": 7}

# Targets (issue 7).
# Issue 18's targets.
BRIEF_RATIO_SMALL = 6.0
BRIEF_RATIO_LARGE = 3.0
BRIEF_RATIO_UNCHANGED = 1.5
BRIEF_S_HUGE = 1.0
BRIEF_MB_HUGE = 150.0
HOOK_MS = 30.0
VERIFY_MS = {"small": 100.0, "large": 150.0, "huge": 150.0}
VERIFY_ALONE = "verify command alone (/bin/sh -c)"
VERIFY_NEXT = "verify-next"
CLEAN = ", clean tree"  # the series measured with the workspace's changes stashed
EDITED = ", only the unit's file edited"  # then with the unit's own file changed, not staged
VERIFY_SERIES = (
    ("", "the workspace as built"),
    (CLEAN, "clean tree"),
    (EDITED, "only the unit's file edited"),
)
VERSION_MS = 40.0


@dataclass
class Sample:
    wall: float
    rss_kb: int
    cpu: float = 0.0  # user + system time of the child and the processes it waited for


@dataclass
class Series:
    samples: list[Sample] = field(default_factory=list)

    def add(self, sample: Sample) -> None:
        self.samples.append(sample)

    @property
    def wall(self) -> float:
        return statistics.median(s.wall for s in self.samples)

    @property
    def rss_mb(self) -> float:
        return max(s.rss_kb for s in self.samples) / 1024

    @property
    def cpu(self) -> float:
        return statistics.median(s.cpu for s in self.samples)


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


class MissingLine(Exception):
    """The child ran but did not print the stderr line it was expected to."""


def spawn(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    ok: tuple[int, ...] = (0,),
    stderr_has: str | None = None,
    stdin: bytes | None = None,
) -> Sample:
    """Wall time and peak RSS of one child process (stdout discarded; stdin empty, or
    ``stdin`` written to it and closed, as an agent hands a hook its payload).

    A child's ``ru_maxrss`` starts from the RSS of the process that forked it, so when
    ``/usr/bin/time`` exists it does the forking (its own RSS is a couple of MB) and reports
    the child's ``ru_maxrss``; without it, ``os.wait4`` on the child (bounded below by this
    process's RSS). Wall time is measured here either way.
    """
    with tempfile.NamedTemporaryFile(prefix="rk-rss-") as rss, tempfile.TemporaryFile() as err:
        command = [TIME, "-f", "%M", "-o", rss.name, *argv] if TIME else argv
        started = time.perf_counter()
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        if proc.stdin is not None:
            proc.stdin.write(stdin or b"")
            proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        detail = err.read().decode("utf-8", "replace")
        if proc.returncode not in ok:
            raise SystemExit(
                f"{' '.join(argv)} in {cwd} exited {proc.returncode}:\n{detail[-2000:]}"
            )
        if stderr_has is not None and stderr_has not in detail:
            raise MissingLine(f"{' '.join(argv)} in {cwd}: no {stderr_has!r} in:\n{detail[-2000:]}")
        rss_kb = usage.ru_maxrss
        if TIME:
            reported = Path(rss.name).read_text().split()
            rss_kb = int(reported[-1]) if reported and reported[-1].isdigit() else rss_kb
    return Sample(wall, rss_kb, usage.ru_utime + usage.ru_stime)


def alternate(
    rounds: int, tasks: dict[str, Callable[[], Sample]], before: Callable[[str], None] | None = None
) -> dict[str, Series]:
    """Run every task once per round, the order rotating each round; a series per task."""
    names = list(tasks)
    series = {name: Series() for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            if before is not None:
                before(name)
            series[name].add(tasks[name]())
    return series


# --------------------------------------------------------------------------- machine


_PACE_LOOP = (
    "import time\ns = time.perf_counter()\nx = 0\n"
    "for i in range(3_000_000): x += i\nprint(time.perf_counter() - s)"
)


def python_pace() -> str:
    """How fast this machine runs Python now: a fixed loop in ``python -S``, median of 3 (a
    virtual machine's speed drifts within minutes; Python's work slows more than git's). The
    additions allocate, as resume-kit's work does: on this VM an empty loop barely slowed
    (160 -> 176 ms) while these went from ~250 to ~530 ms (2026-12-06)."""
    runs = sorted(
        float(subprocess.run([PYTHON, "-S", "-c", _PACE_LOOP], capture_output=True, text=True,
                             check=True).stdout)
        for _ in range(3)
    )  # fmt: skip
    return f"{runs[1] * 1000:.0f} ms"


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=REPO, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    load = os.getloadavg()
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "ram": ram,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "git": git_version.strip().removeprefix("git version "),
        "load": f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        "pace": python_pace(),
        "commit": commit + (" (+ uncommitted changes)" if dirty else ""),
    }


# --------------------------------------------------------------------------- measurements


_CACHE_FILES: dict[Path, Path] = {}


def progress_cache(ws: workspaces.Workspace) -> Path:
    """The progress cache of ``ws``: in the (benchmark's) user cache directory since issue 12,
    asked of resume-kit itself so the path is never spelled twice."""
    if ws.root not in _CACHE_FILES:
        code = (
            "import sys; from resume_kit.infra.paths import find_layout; "
            "from resume_kit.progress_file.io import progress_cache_file; "
            "from pathlib import Path; print(progress_cache_file(find_layout(Path(sys.argv[1]))))"
        )
        out = subprocess.run(
            [PYTHON, "-c", code, str(ws.root)],
            env=ws.env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        _CACHE_FILES[ws.root] = Path(out.strip())
    return _CACHE_FILES[ws.root]


def measure_commands(ws: workspaces.Workspace, rounds: int) -> dict[str, Series]:
    root, env = ws.root, ws.env

    def floor_python() -> Sample:
        return spawn([PYTHON, "-S", "-c", "pass"], root, env)

    def floor_git() -> Sample:
        return spawn(["git", "status", "--porcelain=v2", "-z"], root, env)

    # The brief rows measure the full build; the "nothing changed" row the served brief.
    built = dict(env, RESUME_KIT_NO_FASTPATH="1")
    debug = dict(env, RESUME_KIT_DEBUG_FASTPATH="1")  # the served path says what it did

    def cli(*args: str) -> Callable[[], Sample]:
        return lambda: spawn([*CLI, *args], root, built if args[:1] == ("brief",) else env)

    def cold(*args: str) -> Callable[[], Sample]:
        def run() -> Sample:
            progress_cache(ws).unlink(missing_ok=True)
            return spawn([*CLI, *args], root, built if args[:1] == ("brief",) else env)

        return run

    def served_brief(args: list[str], stdin: bytes | None = None, start: list[str] = CLI) -> Sample:
        """A brief right after a brief (untimed, it stores the receipt): the second is served
        (checked: the debug line says so; the line is the only difference it makes)."""
        for _ in range(3):  # the brief's ages may have moved on between the two: again
            spawn([*start, *args], root, env, stdin=stdin)
            receipts_written(env)
            try:
                return spawn([*start, *args], root, debug, stderr_has="served the stored brief",
                             stdin=stdin)  # fmt: skip
            except MissingLine:
                continue
        return spawn([*start, *args], root, debug, stderr_has="served the stored brief",
                     stdin=stdin)  # fmt: skip

    # The brief Claude Code's SessionStart hook asks for: its payload on stdin, read and gated,
    # the meter's event written, the stored answer judged again.
    hook_payload = json.dumps(
        {"session_id": ws.session.stem, "transcript_path": str(ws.session), "cwd": str(root),
         "hook_event_name": "SessionStart", "source": "resume"}
    ).encode()  # fmt: skip

    def built_brief() -> Sample:
        """The default brief a moment after an agent's turn changed its inputs: built, its
        receipt then stored by a detached child (awaited untimed, and checked: a receipt newer
        than the run is there), as the agent's hook sees it: the answer and the exit."""
        # The next session starts a moment after the turn ended: files written within
        # fastpath.RACY_NS of a build are never trusted to a receipt, so it would not be stored.
        time.sleep(2 * RACY_NS / 1e9)
        written = time.monotonic()
        started_ns = time.time_ns()
        sample = spawn([*CLI, "brief"], root, env)
        if receipts_written(env) < started_ns:
            raise RuntimeError("the built brief stored no receipt")
        # Untimed: facts read from a file written less than FACTS_RACY_NS ago are never
        # recorded for reuse, so every command in the next two seconds would compute them
        # again, and the other rows, which say warm, would measure this row's case. Wait that
        # out and let one brief record them (and learn the new text's token counts), as the
        # next session start a while later would: built, since the stored one would be served.
        time.sleep(max(0.0, FACTS_RACY_NS / 1e9 - (time.monotonic() - written)) + 0.1)
        spawn([*CLI, "brief"], root, built)
        return sample

    def after_work_brief() -> Sample:
        """After what an agent's turn leaves behind (untimed): one more line in a source file
        no unit owns, one more assistant record in the session, one more log line; so the
        facts read from those files cannot be reused from the previous brief."""
        with (root / workspaces.src_path(ws.spec.tracked - ws.spec.done - 5)).open("a") as source:
            source.write("# edited\n")
        record = workspaces.record(
            "assistant",
            str(root),
            ws.session.stem,
            {"role": "assistant", "content": [{"type": "text", "text": "Continuing."}]},
        )
        with ws.session.open("a") as session:
            session.write(record + "\n")
        with (root / "logs" / "run.log").open("a") as log:
            log.write("2026-11-29 09:00:02 INFO still running\n")
        return built_brief()

    commits = [0]

    def after_commit_brief() -> Sample:
        """After the agent committed (untimed): a source file no unit owns, one more line,
        committed alone with a subject holding a word never seen before. HEAD, the index and
        the brief's text change: the evidence commits' ancestry, the index's listing and the
        new pieces' token counts are worked out again, as at a session start after a commit."""
        commits[0] += 1
        word = "".join(chr(ord("a") + commits[0] // 26**k % 26) for k in range(4))
        rel = workspaces.src_path(ws.spec.tracked - ws.spec.done - 6)
        with (root / rel).open("a") as source:
            source.write(f"# {word}\n")
        workspaces.git(root, env, "commit", "-q", "-m", f"Fix the qz{word} parser", "--", rel)
        return built_brief()

    tasks = {
        "floor: python -S -c pass": floor_python,
        "floor: git status --porcelain=v2 -z": floor_git,
        "resume-kit --version (CLI start-up)": cli("--version"),
        "brief": cli("brief"),
        "brief (cold cache)": cold("brief"),
        UNCHANGED_BRIEF: lambda: served_brief(["brief"]),
        UNCHANGED_HOOK_BRIEF: lambda: served_brief(
            ["brief", "--format", "claude-hook"], hook_payload, HOOK_START
        ),
        AFTER_WORK_BRIEF: after_work_brief,
        AFTER_COMMIT_BRIEF: after_commit_brief,
        "snapshot": cli("snapshot"),
        "snapshot (cold cache)": cold("snapshot"),
        "status": cli("status"),
    }
    for task in tasks.values():  # warm-up: page cache, .pyc files, the progress cache
        task()
    cli("status")()
    return alternate(rounds, tasks)


def receipts_written(env: dict[str, str]) -> int:
    """When the newest served-brief receipt was written (ns; 0: none), once the detached
    children that briefs leave to store theirs have ended (untimed: the next command must not
    share the machine with them)."""
    code = (
        "import os\n"
        "from resume_kit.infra.cachedir import user_cache_root\n"
        "from resume_kit.infra.detach import wait_for_detached\n"
        "wait_for_detached()\n"
        "folder = os.path.join(user_cache_root(), 'served-briefs')\n"
        "names = os.listdir(folder) if os.path.isdir(folder) else []\n"
        "print(max((os.stat(os.path.join(folder, n)).st_mtime_ns for n in names), default=0))\n"
    )
    done = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, check=True)
    return int(done.stdout)


def measure_verify(ws: workspaces.Workspace, rounds: int) -> dict[str, Series]:
    """verify-next on the unit in progress (made to pass) against its command run directly: on
    the workspace as built, on it with its changes stashed (a clean tree), then with only the
    unit's own file edited."""
    root, env = ws.root, ws.env
    artifact = root / workspaces.artifact_path(int(ws.next_unit.split("-")[1]))
    artifact.write_text(json.dumps({"party_a": "A", "party_b": "B", "date": "d", "amount": 1}))
    spawn([*CLI, "status"], root, env)  # the progress cache is warm
    progress = root / ".resume-kit" / "progress.yaml"
    pristine = progress.read_bytes()
    cache = progress_cache(ws).read_bytes()

    def restore(name: str) -> None:
        progress.write_bytes(pristine)
        progress_cache(ws).write_bytes(cache)

    def measured(suffix: str) -> dict[str, Series]:
        tasks = {
            f"{VERIFY_ALONE}{suffix}": lambda: spawn(["/bin/sh", "-c", ws.next_verify], root, env),
            f"{VERIFY_NEXT}{suffix}": lambda: spawn([*CLI, "verify-next"], root, env),
        }
        restore("")
        tasks[f"{VERIFY_NEXT}{suffix}"]()  # warm-up
        series = alternate(rounds, tasks, restore)
        restore("")
        return series

    series = measured("")
    # Then on a clean tree: the work (every tracked change outside .resume-kit/) stashed, so
    # the evidence's dirty flag is settled only after git has compared every file, where the
    # workspace's changes let it stop at the first. Put back as it was, the index included.
    before = workspaces.git(root, env, "status", "--porcelain=v2", "-z", "-uno")
    workspaces.git(root, env, "stash", "push", "-q", "--", ".", ":(exclude).resume-kit")
    try:
        series |= measured(CLEAN)
        # Then the agent's usual state when it verifies: the unit's own file changed, unstaged.
        own = root / workspaces.src_path(int(ws.next_unit.split("-")[1]))
        text = own.read_bytes()
        own.write_bytes(text + b"# edited by the agent\n")
        try:
            series |= measured(EDITED)
        finally:
            own.write_bytes(text)
    finally:
        workspaces.git(root, env, "stash", "pop", "-q", "--index")
    if workspaces.git(root, env, "status", "--porcelain=v2", "-z", "-uno") != before:
        raise RuntimeError("the workspace's changes did not come back whole from the stash")
    artifact.unlink()
    return series


def wait_quiet(folder: Path, deadline_s: float = 120.0) -> None:
    """Until no background snapshot of this clone still runs (removing the folder fails)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            shutil.rmtree(folder)
            return
        except OSError:
            time.sleep(0.2)


def measure_hooks(ws: workspaces.Workspace, commits: int) -> tuple[dict[str, Series], int, int]:
    """git commit with the hooks against without, alternating, in a clone of the workspace."""
    env = ws.env
    clone = ws.base / "hooks-clone"
    subprocess.run(
        ["git", "clone", "-q", str(ws.root), str(clone)], env=env, check=True, capture_output=True
    )
    for key, value in (("commit.gpgsign", "false"), ("gc.auto", "0")):
        workspaces.git(clone, env, "config", key, value)
    spawn([*CLI, "hook", "install"], clone, env)
    hooks = str(clone / ".git" / "hooks")
    empty = ws.base / "no-hooks"
    empty.mkdir(exist_ok=True)
    work = clone / "work.txt"
    counter = [0]
    missed = [0]

    def commit(hooks_path: str) -> Sample:
        counter[0] += 1
        work.write_text(f"change {counter[0]}\n")
        workspaces.git(clone, env, "add", "work.txt")
        sample = spawn(
            [
                "git",
                "-c",
                f"core.hooksPath={hooks_path}",
                "commit",
                "-q",
                "-m",
                f"change {counter[0]}",
            ],
            clone,
            env,
        )
        return sample

    def with_hooks() -> Sample:
        sample = commit(hooks)
        head = workspaces.git(clone, env, "rev-parse", "HEAD").strip()
        if not workspaces.wait_for_snapshot(clone, head, deadline_s=120.0, poll_s=0.05):
            missed[0] += 1
        return sample

    tasks = {
        "git commit without hooks": lambda: commit(str(empty)),
        "git commit with hooks": with_hooks,
    }
    for task in tasks.values():
        task()
    series = alternate(commits, tasks)
    log = workspaces.git(
        clone, env, "log", f"-{2 * (commits + 1)}", "--format=%(trailers:valueonly)"
    )
    trailers = log.count(ws.next_unit)
    wait_quiet(clone)
    return series, trailers, missed[0]


def brief_tokens(ws: workspaces.Workspace) -> tuple[int, int, int]:
    """(brief tokens, session text tokens, session bytes)."""
    from resume_kit.infra.tokens import count_tokens

    proc = subprocess.run(
        [*CLI, "brief"], cwd=ws.root, env=ws.env, capture_output=True, text=True, check=True
    )
    brief = count_tokens(proc.stdout)
    receipts_written(ws.env)
    block = sum(count_tokens(text) for text in ws.session_block_text)
    tail = sum(count_tokens(text) for text in ws.session_tail_text)
    return brief, block * ws.session_blocks + tail, ws.session.stat().st_size


def measure_run_overhead() -> str | None:
    """bench/bench_run_overhead.py's summary (`resume-kit run` per-unit overhead)."""
    script = HERE / "bench_run_overhead.py"
    if not script.is_file() or not (REPO / "resume_kit" / "cli" / "commands" / "run.py").is_file():
        return None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [PYTHON, str(script), "--units", "100", "--rounds", "3"],
        capture_output=True, text=True, cwd=REPO, env=env,
    )  # fmt: skip
    return proc.stdout.strip() if proc.returncode == 0 else f"failed: {proc.stderr.strip()[-300:]}"


# --------------------------------------------------------------------------- report


@dataclass
class SizeResult:
    spec: workspaces.Spec
    build_s: float
    rounds: int
    commands: dict[str, Series]
    verify: dict[str, Series] | None = None
    hooks: dict[str, Series] | None = None
    hook_commits: int = 0
    trailers: int = 0
    missed_snapshots: int = 0
    tokens: tuple[int, int, int] | None = None

    @property
    def floor(self) -> float:
        return (
            self.commands["floor: python -S -c pass"].wall
            + self.commands["floor: git status --porcelain=v2 -z"].wall
        )

    def verify_overhead(self, suffix: str = "") -> float:
        """verify-next's wall time minus its verify command run directly (``suffix``
        :data:`CLEAN` or :data:`EDITED`: that series)."""
        assert self.verify is not None
        return self.verify[VERIFY_NEXT + suffix].wall - self.verify[VERIFY_ALONE + suffix].wall


@dataclass
class Target:
    what: str
    goal: str
    measured: str
    met: bool
    why: str = ""


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def command_table(res: SizeResult) -> list[str]:
    lines = [
        "| command | median wall | × floor | CPU | peak RSS |",
        "|---|---:|---:|---:|---:|",
    ]
    floor = res.floor
    for name, series in res.commands.items():
        ratio = "" if name.startswith("floor") else f"{series.wall / floor:.1f}×"
        lines.append(
            f"| `{name}` | {ms(series.wall)} | {ratio} | {ms(series.cpu)} "
            f"| {series.rss_mb:.0f} MB |"
        )
    lines.append(f"| **floor** (sum of the two) | {ms(floor)} | 1.0× | | |")
    return lines


# Where the time goes (timelines, -X importtime, paired whole-process runs and CPU times on the
# bench workspaces; dated, and shares where the machine's phase differed).
BRIEF_PROFILE = (
    "Where a full `brief` on the large workspace spends its time (2026-12-06, this machine "
    "in its fast phase, unless dated). The budget, 3x the floor, was 126-138 ms in that "
    "day's runs (floors of 42-46 ms). Python's start and the brief's modules take ~67 ms "
    "of it (paired, 30 rounds: `python -c pass` 11.6 ms; "
    "the standard-library modules a brief ends with +29 ms: hashlib with OpenSSL ~3, pathlib "
    "with urllib.parse and ipaddress ~4.3, subprocess with signal, selectors and locale ~4 "
    "(these two groups off the path since that evening, below), datetime ~1.3, the rest re "
    "with enum, json, threading and collections; resume-kit's 78 "
    "modules +25 ms, ~9.5 ms of it the import machinery alone: 78 empty modules cost that, "
    "~120 us each). In the timelines of that day (150-170 ms of wall time) the work after "
    "them took ~90 ms where ~60-70 ms are left. It is Python's, "
    "on one core, with git on the other: the process's CPU time (user and system, its git "
    "included) is 180-210 ms against 150-170 ms of wall time; `git status` alone takes ~40 ms "
    "and 40-50 ms of CPU (up to 1.25 cores), and inside the brief its output arrives "
    "50-60 ms after it started; the main thread then waited for git's thread (the 2,500 "
    "entries parsed, reduced and redacted) in 6 of 7 timelines, 8-22 ms, a wait that "
    "thread's Python fills. "
    "So the wall time is about the Python's CPU time: a millisecond of Python taken out counts "
    "wherever it is. A timeline's shares (2026-12-05, slow phase, main thread unless marked): "
    "Python's start ~4%; the modules ~19%; the work tree found ~3% (since 2026-12-06 read "
    "from git's own files, paired 0.978x), then `git status` starts in a thread; the "
    "progress model of 2,000 units from its cache ~19% (alone ~14 ms: the 880 KB JSON "
    "~3-5 ms, the units checked and made ~7 ms; its key is BLAKE2b-256, hashed on a thread); "
    "the hash and fingerprint records and the reuse plan ~5%; the 2,000 artifacts' lstat "
    "and hash look-ups ~13% (since 2026-12-06 one batch walk, in-process 11.8 -> 11.0 ms); "
    "the done units' fingerprints and evidence ~3.5%; the facts made plain and encoded ~5%; "
    "the snapshot written ~3% (with the SHA-256 checksum the SPEC names, so OpenSSL's "
    "import); reconcile ~5%; the brief built ~7.5%; rendered and recorded ~2.5%. Measured, "
    "paired, 20 rounds (2026-12-06): the units made from the cache without their checks "
    "0.95-0.97x (1.005x in a slow phase; not done: the checks are what stands between a "
    "damaged cache and the model, and 5-8 ms is not the 12-35 needed); `git status` started "
    "before the brief's modules are imported 0.98-0.995x (it then takes the cores from the "
    "imports); as bounds, not options: the snapshot not saved at all 0.93x, the artifacts "
    "not read at all 0.86-0.92x. Earlier (2026-12-05, paired, 30 pairs: 0.91x): the units' "
    "and artifacts' facts encoded once, their text reused by the store; a changed path's "
    "line made only when it is not folded into its folder's; the transcript's todos matched "
    "against titles normalised once; the console script at the collector's one-shot pace "
    "(0.96x alone); glob no longer imported. Tried and rejected then: git's preload threads "
    "off (`core.preloadIndex=false`) 1.08x (slower), the snapshot saved by a forked child "
    "1.02x (the fork's copy-on-write faults cost what it saved), `git status` at a lower "
    "priority 0.96-0.98x (on a user's busy machine a niced git waits behind every other "
    "process); tried again 2026-12-07 (paired, 16-30 rounds): preload off 0.970x on large "
    "but 1.082x on huge and 1.044x on small, the snapshot saved by a forked child 1.012x, "
    "saved on a thread during reconcile and the build 0.994x. After the agent worked (its "
    "own row) the brief's text holds pieces never "
    "counted before, and its receipt is stored: that day the count built the tokenizer's "
    "100,000-entry table for them (~50 ms; since 2026-12-07 their ranks are looked up in the "
    "packed ranks cache, ~9 ms with the bundled file's SHA-256 check), and the receipt took "
    "~45-55 ms on large (every path git status lists is a dependency, by its lstat, since a "
    "listed file can change again without changing git's answer; 3,100 signatures), since "
    "2026-12-07 taken and stored by a detached child once the answer is out "
    "(infra/detach.py; after the agent worked, paired, 16 rounds: 208.6 -> 174.2 ms, "
    "0.838x). Later "
    "that day regular expressions a brief rarely needs were compiled on first use (the "
    "escape's whole class, ~0.6 ms, only for text that is not ASCII; paired, 40 rounds "
    "twice: 0.988x and 0.986x). That evening git was started with `os.posix_spawn` "
    "(infra/gitcmd.py, both pipes read with poll) instead of subprocess, signal imported only "
    "to limit a repository template, and OpenSSL's SHA-256 loaded only from 1 MiB (inside "
    "the brief the 538 KB snapshot's checksum took 2.8 ms built in against 3.8 ms with "
    "OpenSSL's import, medians of 15): "
    "subprocess, locale, selectors, signal, hashlib and _hashlib left the path (164 modules "
    "to 156), and the brief's instructions went from 834M to 824M (callgrind, -1.2%). Paired "
    "in a slow phase (briefs of 330-400 ms), 60 rounds twice: 0.994x and 1.001x, and in a "
    "faster one (170-190 ms), 40 rounds twice: 0.994x and 1.004x (CPU 0.990x, 0.982x): less "
    "than the runs' noise. Later that day (paired, 40 rounds, each tree with its own cache "
    "folder) the done units' artifacts' facts kept in the fingerprints' record and shown "
    "again while git proves their files unchanged (no lstat or hash look-up for 1,500 of the "
    "2,000 artifacts) measured 0.987-1.003x in three runs (CPU 0.977-0.988x) and was not "
    "kept: the check that replaces an artifact's look costs ~2 us of Python against ~5 us "
    "for the look, it runs after git's status where the look ran during it, and the record "
    "grows by 133 KB. On 2026-12-07 the two were tried together and kept (brief/pipeline.py, "
    "facts/fingerprint_reuse.py): with git started first, the imports join the main thread's "
    "work during git's walk and it outlasts git; the artifacts' look is what leaves it. "
    "Paired against the code before, 40 rounds: 0.942x and 0.949x on large (each alone "
    "0.955-0.990x and 0.984-0.994x), 0.991x on huge (12 rounds), 1.007x on small (30). "
    "How much of the main thread's wait for git is idle, measured with 12 "
    "ms of Python spun just before that wait against the same just after it: 0.934-1.005x in "
    "six runs (median ~0.97x, ~5 ms of the 12), so about 40% of work moved into the wait is "
    "hidden; the done units' work needs git's status, so moved there it would be done ahead "
    "on the record's word and checked after, and could hide ~4-6 ms at best. A run that "
    "evening met 3x (3.0x: 185 ms against a 62 ms floor whose `git status` took 50 ms, where "
    "it takes ~40): the ratio moves with git's speed against Python's. What would remove "
    "the 12-35 ms of Python's ~145 that stand "
    "between this and 3x (the runs of 2026-12-05 and -06 took 144-164 ms against budgets of "
    "126-138 ms): less Python per unit on every run (the done units' facts and their "
    "artifacts' facts kept with their fingerprints while git proves their files unchanged, "
    "with the reconcile and build parts they feed) and fewer modules on the path (each "
    "costs ~120 us before any of its code runs). A bound for the first (2026-12-06, slow "
    "phase, paired, 30 rounds): the same workspace with its 1,500 done units taken out of "
    "progress.yaml altogether took 0.714x the time, 72 ms less (2.85x its floor against "
    "3.62x). Reading the plan and checking the artifacts are about half of that difference "
    "(in-process profiles of both), and they stay in any redesign that keeps the cache's "
    "checks and never trusts a file it did not look at; with the rest gone the main thread "
    "waits for git's thread instead, so such a redesign would reach about 3x at best on "
    "this machine. The same bound in a fast phase, with git's start added (2026-12-06, "
    "Python's pace 223 ms, paired, 30 rounds, the floor one process: `python -S` exec'ing "
    "`git status`): the workspace as it is 2.94x; `git status` started before the modules "
    "3.08x; without the done units 2.37x, and 2.25x with `git status` started first. That "
    "last, 0.77x, is all that the done units and git's start can give together; runs in "
    "a slow phase measured 3.4-4.0x, and 0.77 of that is 2.6-3.1x. On one core (`taskset`, "
    "same pairing, 15 rounds) the ratio was 2.86x against 3.13x on two: git's preload "
    "threads use the second core for the floor too. Below that are Python's start and the "
    "modules, ~65 ms of a 126-138 ms budget. Counted in instructions, which do not move "
    "with the machine's phase (valgrind's "
    "callgrind on the Python process, not the git it runs; 2026-12-06, two runs 0.05% apart): "
    "a full brief on large executes 833M, 90% of them on the main thread; `python -S -c pass` "
    "28M, `python -c pass` 39M, importing the 164 modules a brief ends with 237M, so the "
    "start and the modules are 28% of the instructions (a larger share of the time: their "
    "files are found, read and mapped, and system calls and page faults are not "
    "instructions). Of the rest, decoding JSON takes 66M (7.9%, most of it the 811 KB "
    "progress cache), encoding it 59M (7.0%, most of it the snapshot's 538 KB canonical text) "
    "and regular expressions 38M (4.6%). The same workspace without its "
    "1,500 done units executes 412M, half as many: ~280,000 instructions a done unit (its "
    "cache line decoded and checked, its fingerprint's reuse decided, its artifact looked at, "
    "its facts encoded into the snapshot, its share of reconcile and of the done ranges), "
    "which are 29% of the wall time in the bound above: the fixed costs weigh more per "
    "instruction. Right after a commit (its own row since 2026-12-07, the session start that "
    "follows most agents' turns) a brief also paid, found that day by hand: one `git "
    "merge-base --is-ancestor` per distinct evidence commit (10 on large, ~58 ms on the main "
    "thread), now one in all (the ancestors known for the previous HEAD hold for a HEAD that "
    "descends from it: 0.803x, paired, 20 rounds); the new pieces' table (0.872-0.886x); the "
    "index's 20,000 entries parsed for the done units' 3,000 paths, now only those (17.6 -> "
    "10.4 ms, 0.956x); 20-26 fsync calls for caches that are checked when read, now 2 (0.989x "
    "on this machine's disk); and after any change to the index (a commit, a `git add`) "
    "every artifact hashed again, the hash cache having dropped them while the fingerprints' "
    "record served them (~20 ms warm, ~300 ms with the page cache dropped), now served by the "
    "record as the fingerprints are (0.887x after a `git add`). "
    "When nothing changed the stored brief is served instead (its own row)."
)
WHY = {
    "brief-ratio": BRIEF_PROFILE,
    "brief-ratio-small": (
        "On the small tree the floor is ~10-15 ms and Python's start with the brief's modules "
        "is most of the run. In-process (2026-12-02, load ~0.6, medians of 3; ~50 ms after "
        "Python's start then): importing the modules ~22 ms (resume-kit's 75 ~15 ms of their "
        "own time; pathlib with urllib.parse and ipaddress ~2.4 ms; enum, for re, ~1 ms); "
        "`git rev-parse` with the git config read alongside ~4.5 ms (since 2026-12-06 the "
        "work tree is read from git's own files); the snapshot ~7 ms (its "
        "`git status` and `git log`); writing it ~4 ms; building the brief ~3.5 ms; the "
        "dataclasses' `__init__`s, compiled ahead (core/light_inits.py), ~0.6 ms. Since "
        "2026-12-03 typing (~1.9 ms) and sqlite3 with its WAL (~4 ms for the two history "
        "records) are off the path: a history record is one journal line "
        "(facts/history_journal.py, ~1 ms with the text's redaction, 2026-12-04) and typing's "
        "names come from core/typing_light.py (paired with the tree before both: 0.88x, 41 "
        "pairs). What would remove most of the rest: fewer modules (resume-kit's own are "
        "~15 ms)."
    ),
    "brief-unchanged": (
        "Served from the receipt the previous brief stored (brief/fastpath.py), in a process that "
        "imports only the standard library and 12 small modules of ours (in-process, "
        "2026-12-02: importing the entry point ~1 ms, the whole serve ~9 ms, of which the "
        "checks with their `git status` ~5 ms): what is left over the floor is Python's start "
        "with site-packages (~5 ms over `python -S`: the .pth files, setuptools' distutils hack "
        "among them), reading the receipt and one stat per recorded input. pip 26's "
        "console-script wrapper imports only sys (older pips' wrappers also imported re, ~5-10 "
        "ms). Starting the brief with `python -S` and the package's path, as the git hooks do, "
        "would remove the site-packages start."
    ),
    "brief-unchanged-hook": (
        "The brief the agent's SessionStart hook asks for, served: the case the target names. "
        "Since 2026-12-07 it starts as the hooks `integrate` writes start it: `python -I -S` on "
        "cli/isolated_entry.py (no site-packages start; a brief that must be built loads them "
        "late), which asks for the stored brief before the CLI's modules are imported. Against "
        "the console script on the small tree, paired: 0.933x and 0.937x (100 rounds), then "
        "0.982x more for the entry's own serve and core.activity's inits in a table of their "
        "own (300 rounds). On top of the plain served brief (its own row) it reads and gates the "
        "hook's payload, judges the activity log again and writes the meter's event; since "
        "2026-12-07 without json, re, enum, pathlib, datetime or contextlib (core/light_json.py, "
        "infra/atomic_file.py), the log judged while its `git status` runs (35.6 ms became "
        "22.0 ms on the small tree, floor 12.3 ms). What is left, in-process after the "
        "interpreter's start (small tree): importing ~27 modules of ours, ~5 ms (the 29 it "
        "imported before: 15 ms against 10 ms for `python -I -S` importing only the standard "
        "modules they use, paired, 60 rounds; a module costs ~0.1-0.2 ms to find, read and run "
        "here, and the floor's `python -S -c pass` imports none, not even os); the payload, the "
        "receipt and its key ~1 ms; `git status` spawned and awaited beside the judge (~2 ms); "
        "the meter's event written, ~1.2-1.7 ms. What would remove it: fewer modules on this "
        "path (one module for the served hook brief, against one job per module), or no Python "
        "(prepare-commit-msg's sh path does that for the trailer; this path's checks, a hash of "
        "`git status`, a dozen stats and the meter's judgement, are not sh's). Tried and "
        "dropped: writing the meter's event while the served path's `git status` runs (the "
        "build then told not to add it again) measured 0.989x and 0.999x (paired, 60 rounds, "
        "the bench's small workspace) although in-process it left the path ~0.8 ms sooner: "
        "git and Python share the machine's two cores, so overlapping them saves no time."
    ),
    "version": (
        "`--version` is answered before typer (and typing) is imported: what is left is "
        "Python's start with site-packages (~5-7 ms over `python -S`: the .pth files, "
        "setuptools' distutils hack among them), the console-script wrapper (pip 26's imports "
        "only sys; older pips' also imported re, ~5-10 ms) and resume_kit's three small modules "
        "(~1-3 ms, the editable install's extra sys.path entry included). A non-editable install "
        "(`pip install .` into a fresh venv) measured ~8 ms of CPU less than the editable one "
        "on 2026-12-01 (paired runs, load 4)."
    ),
    "brief-huge-time": (
        "On 100,000 files `git status` is most of the floor; it now starts before the progress "
        "model is built and overlaps it. A profile of a full brief on huge (pyinstrument, "
        "2026-12-02, load ~9, so shares only): the progress model of 10,000 units from its 4 MB "
        "JSON cache ~40% (the JSON parse a quarter of that, the 10,000 units' objects the rest), "
        "reading the snapshot's facts ~27% (the artifacts' walk, the fingerprint reuse plan), "
        "reconcile ~13% (ownership per done unit), writing the 1.7 MB snapshot (encoded twice: "
        "checksum and text). What would remove most: a snapshot whose done-units part is kept "
        "when it did not change. " + BRIEF_PROFILE
    ),
    "brief-huge-memory": "Peak memory is the largest of the CLI and the git processes it runs.",
    "hooks": (
        "prepare-commit-msg runs no Python when progress.yaml's bytes equal the hook's copy in "
        "the user's cache (the first commit after a change still starts `python -I -S` and "
        "writes the copy): sh, one `cmp` and one `git interpret-trailers`; alone it took ~5 ms "
        "of CPU against ~22 ms for the Python path (whole processes, paired, load 6.9, 2026-12-02). "
        "post-commit forks the detached, niced snapshot (~1 ms in the commit). What is left is "
        "mostly `git interpret-trailers` (~2-3 ms; writing the trailer without git would have "
        "to follow git's trailer rules and the user's trailer.* config) and, on 2 cores, the "
        "detached snapshot (about a second of CPU on huge) competing with the next commits; "
        "`git commit` itself takes a quarter second on huge."
    ),
    # The verify-next phases: its functions wrapped with perf_counter in the real CLI process
    # (bench workspaces, 2026-12-03, load ~0.1-1, medians of 5), progress restored between runs.
    "verify-small": (
        "Phases of one run (in-process, 2026-12-03, load ~0.1, medians of 5; the run ends ~80 "
        "ms after Python's start, which takes ~15 ms with site-packages): importing the "
        "command's modules ~30 ms (with the standard library they need: pathlib, subprocess, "
        "datetime, json); finding the work tree ~3.6 ms; loading progress ~1 ms; the conflict "
        "check ~2.3 ms; the command handed to its supervisor, run and reaped ~9 ms (the "
        "command alone ~3-4 ms: the supervisor's own start overlaps the work before); HEAD, "
        "the dirty flag and the fingerprint ~4.3 ms; saving progress.yaml, its history copy "
        "and the cache ~7 ms; the history record ~1 ms (one journal line, "
        "facts/history_journal.py, 2026-12-04: sqlite3 with its WAL took ~5.5 ms), the report "
        "~0.3 ms. typing is no longer imported (core/typing_light.py, ~2 ms). No part is "
        "large: what would remove most is fewer and lighter modules on the path (the standard "
        "library's share is about half of the imports)."
    ),
    "verify-large": (
        "Phases of one run (in-process, 2026-12-04, medians of 7; the run ends ~110 ms after "
        "Python's start): importing the command's modules ~30-45 ms; finding the work tree ~4 "
        "ms; loading progress ~17 ms over its three reads (the cache's header and the 2,000 "
        "units' ids, statuses and links ~3 ms: the other fields of a unit are built when it is "
        "read, so only the unit run is, 2026-12-04), while `git ls-files --unmerged` runs "
        "alongside; running the command ~5 ms; HEAD, the dirty flag and the fingerprint ~8 ms; "
        "saving ~13-19 ms; the history record ~2 ms; the report ~1 ms. What is left is mostly "
        "the imports (158 modules, the standard library's about half) and the whole files "
        "read and written."
    ),
    "verify-huge": (
        "The unit's block is written by our own emitter at the offset the progress cache "
        "names (checked: the emitter must reproduce the old block exactly); the cache is a "
        "header (the units' ids, statuses and links, as columns since 2026-12-06: JSON reads "
        "10,000 strings in a list about three times faster than 10,000 small lists, 3.4-4.9 "
        "-> 1.5 ms) and one unit a line, so only the unit run is parsed, built and dumped, cut "
        "out of the text where the header says its line starts (no split into 10,000 lines; "
        "2026-12-04: loading and saving were ~89 and ~60-75 ms of a 10,000-unit model "
        "before); a checkpoint appends one tail line to the cache (the unit, the new key, how "
        "far the blocks after it moved) where it wrote the whole 4.4 MB text before, and "
        "writes it whole after 16 lines; the cache's key is BLAKE2b-256 from CPython's own "
        "`_blake2` (no OpenSSL import), hashed on a thread while the file is decoded and the "
        "cache read, and while progress.yaml is written; the lease refs are read once (none "
        "at all when the clone has none) and the unit run is the first ready one, found "
        "without listing the rest; the command's supervisor starts ahead of the command; "
        "`git ls-files --unmerged` (the conflict check) runs while the model is built; on an "
        "index over 1 MB the dirty flag comes from `git diff --quiet --cached` first, HEAD is "
        "read from the git dir's files (no `rev-parse`) and git compares the tree on a thread "
        "while the unit is fingerprinted, the lock taken and progress.yaml read again; the "
        "collector runs at a 200,000-object threshold and the interpreter's teardown (~30 ms) is "
        "skipped. Paired against the tree before, on huge (2026-12-06, 40-50 rounds each): "
        "the tail line 0.91-0.96x, HEAD and the git thread 0.962-0.963x, the columns "
        "0.966-0.986x, the line starts 0.959-0.985x, the work tree found from git's files "
        "0.975x. Phases of one run on huge (10,000 units, 100,000 files; in-process, "
        "2026-12-06, seven runs in this machine's fast phase, ~102-115 ms in the command after "
        "~28-41 ms of imports; a slow phase is ~1.3-1.4x slower): finding the work tree ~2-3 "
        "ms; the three loads of progress ~37-56 ms (the 4 MB file read three times ~6-7 ms "
        "and decoded ~2 ms; the 4.4 MB cache read and decoded, and its key waited for, ~10-15 "
        "ms; its header parsed ~3-9 ms; the 10,000 units' index checked and their model made "
        "~10-17 ms); the run ~4 ms; the checkpoint ~33-41 ms (git's HEAD and dirty flag "
        "~12-18 ms on its thread, of which the main thread waits what the lock and the "
        "re-read do not cover; saving ~23-26 ms: the unit's block found and rewritten ~6-8.5 "
        "ms, progress.yaml kept in history/ and written with fsync ~7-9 ms, the cache's tail "
        "line ~0.5 ms, the hook's in-progress record with a CRC-32 of the 4 MB ~2-3 ms); the "
        "history record ~2 ms; the report ~4-6 ms. What is left is in proportion to the "
        "files' size and the number of units, not to the work: every run "
        "reads ~17 MB and indexes 10,000 units. In a fresh process every new megabyte costs: "
        "the kernel maps and zeroes a page on its first touch (~1,000 page faults for 4 MB, "
        "~2-2.5 ms here, where copying 4 MB into memory already touched takes ~0.2 ms), and a "
        "run made ~13,000 page faults, ~10,000 of them for its data. Since the evening of "
        "2026-12-06 the re-reads that prove progress.yaml unchanged compare it in 256 KB "
        "chunks (no 4 MB read whole), its text is decoded only when something reads it (a "
        "model from the cache does not), a checkpoint splices the unit's block into the file's bytes when "
        "they are ASCII (the cache's character offsets are then byte offsets; a 4 MB str "
        "sliced and joined took ~5 ms, then ~2 ms to encode), and the cache's tail line is "
        "kept beside the text held instead of joined to it: ~9,400 page faults; paired "
        "against the tree before (huge, 30-40 rounds) 0.937x for the first three, "
        "0.955-0.983x for the last. Phases after them (in-process, fast phase): the modules "
        "~23 ms; the first load ~30-34 ms (progress.yaml read ~2.5-3 ms; the cache's 4.4 MB "
        "read and decoded ~5 ms while BLAKE2b hashes progress.yaml on a thread, 10-18 ms "
        "there against ~6.5 ms alone, and the load waits for it; the 10,000 units' index "
        "checked and made ~10 ms); the run and the fingerprint ~8 ms; the main thread then "
        "waits ~10 ms for git's HEAD and dirty flag; saving ~18 ms (the splice ~4.7 ms, "
        "progress.yaml kept in history/ and written with fsync ~6 ms, the cache's tail line "
        "and the hook's record with a CRC-32 of the 4 MB ~2.5 ms); the history record ~1.7 "
        "ms; the report ~2.6 ms. What would remove most of what is left: the key's hash "
        "skipped while progress.yaml's stat proves it unchanged since it was hashed (as git's "
        "index does, hashed again while the file is racily new; the benchmark restores "
        "progress.yaml just before each run, so it would show only after a wait of the racy "
        "margin), the one unit's line read at a byte offset with the header and the tail "
        "lines (no 4.4 MB read and decoded: ~5 ms), and fewer units made (the pick reads only "
        "ids, statuses and links). progress.yaml itself is rewritten whole, as it is the file "
        "people and agents read."
    ),
    "verify-edited": (
        "The workspace's changes stashed, then the unit's own file edited and not staged: an "
        "agent's usual state when it verifies. Until 2026-12-07 the dirty flag then cost what "
        "it costs on a clean tree (its own row): `git diff --quiet` checks every tracked "
        "file's stat before it answers, changes or not (on the huge tree ~100 ms with one file "
        "changed, as with none). Since then the unit's files that name one path and its "
        "artifacts are diffed alone (~14-16 ms; runner/verify._dirty_in_steps): first, beside "
        "the index's diff, when one of those files changed since git last wrote its index (its "
        "ctime; resume-kit's own git commands never write the index), else beside the whole "
        "diff; a change there settles the flag and stops the others. Paired on the huge "
        "workspace as this series leaves it, 12-16 rounds: 261 -> 134 ms (0.520x), and the "
        "other two series 1.014x (clean) and 0.997x (as built, changes staged). Tried first "
        "that day: always beside the index's diff (0.565x here, but 1.036-1.049x clean and "
        "1.057x staged); always beside the whole diff (1.005x and 1.004x, but 0.696-0.778x "
        "here: after the stash the index's diff alone took ~37 ms on this tree, ~15 ms on a "
        "fresh checkout); all three at once (1.000-1.116x clean, 0.633-0.742x here). A glob "
        "in `files` is not asked about: `**` over the clean huge tree made the flag 191 ms "
        "against 110. Later that day the unit's paths went to `diff --numstat` and the work "
        "tree to `status -uno`, which compare contents where only a stat changed: without an "
        "index rewrite, `diff --quiet` called a touched file, or one edited and put back, "
        "changed (a wrong dirty flag); paired on a clean checkout of huge, 16 rounds: 1.021x "
        "here, 1.012x clean. What is left is the rest of verify-next (the row as built)."
    ),
    "verify-clean": (
        "On a clean tree the evidence's dirty flag is settled only when git has compared every "
        "tracked file with the index: `git diff --quiet --cached HEAD` (the index against "
        "HEAD, ~14 ms on huge), then `git status -uno` over the work tree (`git diff --quiet` "
        "until 2026-12-07, as in the figures below: the same stat pass), which on the "
        "workspace's changes stops at the first one and here looks at all 100,000 files. "
        "Found 2026-12-07, when this row was added: on a clean checkout of the huge "
        "workspace verify-next's overhead was 263 ms against 113 ms with the changes (10 "
        "rounds each); in-process, git's two calls took 122-125 ms on their thread, the work "
        "tree's 107-111 ms of it, and the main thread waited ~120 ms for them after the "
        "command; `git diff --quiet` alone on that tree took 137 ms (37 ms user, 202 ms "
        "system: 100,000 `lstat` calls spread over git's preload threads). On large (20,000 "
        "files) the same took 29 ms alone and 101 ms in all, within its target. That stat "
        "pass is the check itself: no cheaper question tells a clean tree from one with a "
        "file changed in place (a directory's time does not move when a file in it is "
        "rewritten). On this machine's two cores the target is out of reach by arithmetic: "
        "that pass is ~190-245 ms of CPU (`git diff --quiet` 207 ms CPU in 124 ms wall over "
        "its preload threads, 187 ms on one thread with core.preloadIndex=false; `git status "
        "-uno` 245 ms CPU in 142 ms wall), and the rest of verify-next takes ~110-160 ms (the "
        "row as built), mostly the interpreter's work on one core: ~300 ms of CPU on two "
        "cores is 150 ms only if the two overlapped perfectly, and the flag must come after "
        "the command (settled while the command runs, it would describe the tree during the "
        "run: a command that rewrites a tracked file could leave it stale). A file-system "
        "monitor alone would not bring it under the target either. Measured 2026-12-07 on "
        "the clean checkout of huge, 15 rounds paired, with git given an fsmonitor hook that "
        "answers 'nothing changed' (a perfect monitor, simulated; resume-kit turns a "
        "repository's `core.fsmonitor` off, as it is a program from the clone's config, and "
        "git's built-in daemon exists on macOS and Windows only): `git status -uno` took 41 "
        "ms instead of 142 (40 ms CPU instead of 245) and verify-next's overhead 218 ms "
        "instead of 306. What is left then is paid once per process on a 100,000-entry "
        "index and a 10,000-unit progress file: each git call reads the 8.7 MB index (`git "
        "ls-files --unmerged` alone 18 ms; `git diff --quiet --cached HEAD` 20 ms, as a "
        "clean index is compared with HEAD in full) and the interpreter loads and rewrites "
        "the progress model (the row as built). Under 150 ms would take a resident process "
        "that keeps the index, the monitor's answers and the progress model in memory "
        "between commands, as tools for large repositories do (git's fsmonitor daemon, "
        "Watchman): a design change beyond this benchmark's commands."
    ),
}


def targets(results: dict[str, SizeResult]) -> list[Target]:
    out: list[Target] = []
    small, large, huge = results.get("small"), results.get("large"), results.get("huge")
    for res, name, goal, why in (
        (small, "small", BRIEF_RATIO_SMALL, "brief-ratio-small"),
        (large, "large", BRIEF_RATIO_LARGE, "brief-ratio"),
    ):
        if res:
            ratio = res.commands["brief"].wall / res.floor
            out.append(Target(f"`brief` on {name} (warm)", f"≤ {goal:.0f}× floor",
                              f"{ratio:.1f}×", ratio <= goal, WHY[why]))  # fmt: skip
    if huge:
        wall = huge.commands["brief"].wall
        rss = huge.commands["brief"].rss_mb
        out.append(Target("`brief` on huge (warm)", f"≤ {BRIEF_S_HUGE:.0f} s", ms(wall),
                          wall <= BRIEF_S_HUGE, WHY["brief-huge-time"]))  # fmt: skip
        out.append(Target("`brief` on huge (warm), memory", f"≤ {BRIEF_MB_HUGE:.0f} MB",
                          f"{rss:.0f} MB", rss <= BRIEF_MB_HUGE, WHY["brief-huge-memory"]))  # fmt: skip
    for name, res in results.items():
        # The bench's `brief` rounds run on an unchanged tree: each is the "nothing changed
        # since the previous brief" case.
        ratio = res.commands[UNCHANGED_BRIEF].wall / res.floor
        out.append(Target(f"`brief`, nothing changed since the previous one ({name})",
                          f"≤ {BRIEF_RATIO_UNCHANGED}× floor", f"{ratio:.1f}×",
                          ratio <= BRIEF_RATIO_UNCHANGED, WHY["brief-unchanged"]))  # fmt: skip
        ratio = res.commands[UNCHANGED_HOOK_BRIEF].wall / res.floor
        out.append(Target(f"the SessionStart hook's `brief`, nothing changed ({name})",
                          f"≤ {BRIEF_RATIO_UNCHANGED}× floor", f"{ratio:.1f}×",
                          ratio <= BRIEF_RATIO_UNCHANGED, WHY["brief-unchanged-hook"]))  # fmt: skip
    if small:
        wall = small.commands["resume-kit --version (CLI start-up)"].wall
        out.append(Target("`resume-kit --version`", f"≤ {VERSION_MS:.0f} ms", ms(wall),
                          wall * 1000 <= VERSION_MS, WHY["version"]))  # fmt: skip
    for name, res in results.items():
        if res.hooks:
            added = (
                res.hooks["git commit with hooks"].wall - res.hooks["git commit without hooks"].wall
            )
            out.append(Target(f"hooks added to `git commit` ({name})", f"≤ {HOOK_MS:.0f} ms",
                              ms(added), added * 1000 <= HOOK_MS, WHY["hooks"]))  # fmt: skip
        if res.verify:
            goal = VERIFY_MS.get(name, 150.0)
            for suffix, why in (
                ("", f"verify-{name}"),
                (CLEAN, "verify-clean"),
                (EDITED, "verify-edited"),
            ):
                added = res.verify_overhead(suffix)
                out.append(Target(f"`verify-next` overhead{suffix} ({name})", f"≤ {goal:.0f} ms",
                                  ms(added), added * 1000 <= goal, WHY[why]))  # fmt: skip
    return out


def _own_times(res: SizeResult) -> dict[str, float]:
    """Each measured command's time beyond what it cannot avoid: the floor for the CLI
    commands, the verify command itself for verify-next."""
    own = {
        name: series.wall - res.floor
        for name, series in res.commands.items()
        if not name.startswith("floor") and "--version" not in name
    }
    if res.verify:
        own["verify-next (overhead)"] = res.verify_overhead()
        own["verify-next on a clean tree (overhead)"] = res.verify_overhead(CLEAN)
        own["verify-next, only the unit's file edited (overhead)"] = res.verify_overhead(EDITED)
    return own


def scaling_table(results: dict[str, SizeResult]) -> list[str]:
    """How each command's own time grows from one workspace to the next against its inputs:
    a growth no larger than the smallest input's means nothing in it is super-linear."""
    import math

    names = [n for n in ("small", "large", "huge") if n in results]
    if len(names) < 2:
        return []
    steps = list(itertools.pairwise(names))
    own = {n: _own_times(results[n]) for n in names}
    head = " | ".join(f"{n}" for n in names)
    growth = " | ".join(f"{a}→{b}" for a, b in steps)
    lines = [
        "",
        "## Scaling",
        "",
        "Each command's own time (wall minus the floor; verify-next minus its command) on each "
        "workspace, and how much it grew from one to the next. The inputs grow together: "
        + "; ".join(
            f"{a}→{b}: files ×{_grow(results, a, b, 'tracked'):.0f}, units "
            f"×{_grow(results, a, b, 'units'):.0f}, log ×{_grow(results, a, b, 'log_mb'):.0f}, session "
            f"×{_grow(results, a, b, 'session_mb'):.0f}"
            for a, b in steps
        )
        + ". A growth below the smallest of them is linear or better in every input "
        "(the log and transcript are read from their tails, so their size barely counts).",
        "",
        f"| command | {head} | {growth} |",
        "|---|" + "---:|" * (len(names) + len(steps)),
    ]
    for command in own[names[0]]:
        if not all(command in own[n] for n in names):
            continue
        values = [own[n][command] for n in names]
        cells = " | ".join(ms(max(v, 0.0)) for v in values)
        rises = " | ".join(
            f"×{b / a:.1f}" if a > 0.001 and b > 0 else "n/a" for a, b in itertools.pairwise(values)
        )
        shown = command if command.startswith("verify") else f"`{command}`"
        lines.append(f"| {shown} | {cells} | {rises} |")
    # Each step against its own inputs: small→large grows them ×200, large→huge ×5.
    step_inputs = {
        (a, b): min(_grow(results, a, b, field) for field in ("tracked", "units")) for a, b in steps
    }
    rise, command, a, b = max(
        (
            (own[b][c] / own[a][c], c, a, b)
            for a, b in steps
            for c in own[a]
            if c in own[b] and own[a][c] > 0.001 and own[b][c] > 0
        ),
        key=lambda grown: math.log(grown[0]) / math.log(step_inputs[grown[2], grown[3]]),
    )
    inputs = step_inputs[a, b]
    slope = math.log(rise) / math.log(inputs)
    if rise <= inputs:
        verdict = "linear or better"
    elif rise <= 1.1 * inputs:
        verdict = "about linear (within the 10% these runs vary by)"
    else:
        verdict = "**faster than its inputs: super-linear**"
    lines += [
        "",
        f"The largest growth against its step's inputs: {command} ×{rise:.1f} ({a}→{b}, inputs "
        f"grown ×{inputs:.0f} at least): {verdict} (log-log slope {slope:.2f}).",
    ]
    return lines


def _grow(results: dict[str, SizeResult], a: str, b: str, field: str) -> float:
    """How many times the workspace ``b`` holds ``a``'s ``field`` (files, units, MB)."""
    ratio: float = getattr(results[b].spec, field) / getattr(results[a].spec, field)
    return ratio


def render_doc(
    info: dict[str, str],
    results: dict[str, SizeResult],
    run_overhead: str | None,
    imports_ok: str,
    argv: list[str],
    total_s: float,
) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Written by `python bench/run.py` (do not edit by hand; re-run it). Every figure is a "
        "median over rounds in which the commands ran alternately, in rotating order, on the same "
        "tree, so each shared the machine's load with the others. Peak RSS is `ru_maxrss` of the "
        "child from `os.wait4` (the child or the processes it waited for, the larger); CPU is "
        "the user plus system time from the same call (the child and every process it waited "
        "for, git included), the median over rounds: a wall time near the CPU time means the "
        "command kept about one core busy throughout, its git running alongside. The "
        "workspaces are generated by `bench/workspaces.py` in a temporary folder. The CLI "
        f"measured is what users run: {CLI_SHOWN} of the interpreter's environment, with "
        "`PYTHONPATH` naming the measured tree.",
        "",
        "**Floor** = a bare `python -S -c pass` plus `git status --porcelain=v2 -z` on the same "
        "tree. **Warm** = the progress cache (`progress.json` in the user's cache folder for the work tree, the validated "
        "model keyed by the BLAKE2b-256 of progress.yaml) is present, as on every run after the first "
        "since progress.yaml last changed, and so are the records the brief reuses facts from "
        "while their inputs' stat is unchanged (done units' fingerprints, the log and transcript "
        'facts; the row "after the agent worked" changes a source file, the session and the '
        "log first, and runs with the served brief on, as users do: it is built, and its "
        "receipt stored, which the other brief rows leave out (since 2026-12-07 by a detached "
        "child once the answer is out: not in the time or the CPU, and awaited, untimed, "
        "before the next command); facts read from a file written "
        "less than 2 s before are never recorded, so after that row the run waits 2 s and one "
        "untimed `status` records them: before 2026-12-02 the rows after it in a round measured "
        "a brief within 2 s of the agent's writes, as that row does); **cold** = the progress "
        "cache removed first, as after a hand "
        "edit of progress.yaml (the file is then parsed with libyaml).",
        "",
        "## Machine",
        "",
        f"- date: {info['date']}; resume-kit commit {info['commit']}",
        f"- CPU: {info['cpu']}, {info['cores']} cores; RAM {info['ram']}; {info['os']}",
        f"- Python {info['python']}; git {info['git']}",
        f"- load average at start: {info['load']}, at the end: {info['load_end']} (a shared "
        "machine: other work ran alongside)",
        f"- Python's pace (3,000,000 integer additions in `python -S`, median of 3): "
        f"{info['pace']} at the start, {info['pace_end']} at the end. This machine's speed "
        "drifts; compare runs by it: Python slows more than git, so a slow phase worsens the "
        "ratios to the floor as well as the times",
        f"- command: `python bench/run.py {' '.join(argv)}`; total time {total_s / 60:.1f} min",
        "",
        "## Targets",
        "",
        "| target | goal | measured | |",
        "|---|---|---|---|",
    ]
    found = targets(results)
    for t in found:
        lines.append(f"| {t.what} | {t.goal} | {t.measured} | {'met' if t.met else '**missed**'} |")
    lines.append(f"| hook path, `status`, `snapshot`, `brief` import no heavy module they do "
                 f"not need | `tests/e2e/test_imports.py` | {imports_ok} | "
                 f"{'met' if imports_ok == 'passes' else '**missed**'} |")  # fmt: skip
    missed = [t for t in found if not t.met]
    if missed:
        lines += ["", "Misses:", ""]
        lines += [f"- {t.what}: {t.measured} against {t.goal}. {t.why}" for t in missed]
    lines += scaling_table(results)
    lines += ["", "## Workspaces", "", "| | tracked files | changed | untracked | units (done) "
              "| log | agent session | built in |", "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, res in results.items():
        s = res.spec
        lines.append(
            f"| {name} | {s.tracked:,} | {s.changed:,} | {s.untracked:,} | {s.units:,} "
            f"({s.done:,}) | {s.log_mb} MB | {s.session_mb} MB | {res.build_s:.0f} s |"
        )
    for name, res in results.items():
        lines += ["", f"## {name}", "", f"{res.rounds} rounds.", ""]
        lines += command_table(res)
        if res.verify:
            v = res.verify
            lines += [
                "",
                f"`verify-next` on the unit in progress (its command passes), "
                f"{len(v[VERIFY_NEXT].samples)} rounds, progress.yaml and its cache restored "
                "between runs (untimed); then the same with the workspace's changes stashed "
                "(every tracked change outside `.resume-kit/`; put back after), a clean tree; "
                "then on that clean tree with the unit's own file edited and not staged (as an "
                "agent most often leaves it when it verifies):",
                "",
                "| | "
                + " | ".join(f"{shown}: median wall | peak RSS" for _, shown in VERIFY_SERIES)
                + " |",
                "|---|" + "---:|---:|" * len(VERIFY_SERIES),
            ]
            for name, shown in ((VERIFY_ALONE, "verify command alone (`/bin/sh -c`)"),
                                (VERIFY_NEXT, "`resume-kit verify-next`")):  # fmt: skip
                cells = [v[name + suffix] for suffix, _ in VERIFY_SERIES]
                lines.append(f"| {shown} | " + " | ".join(
                    f"{ms(c.wall)} | {c.rss_mb:.0f} MB" for c in cells) + " |")  # fmt: skip
            lines.append("| **overhead** | " + "".join(
                f"{ms(res.verify_overhead(suffix))} | | " for suffix, _ in VERIFY_SERIES))  # fmt: skip
        if res.hooks:
            h = res.hooks
            plain, hooked = h["git commit without hooks"], h["git commit with hooks"]
            lines += [
                "",
                f"`git commit` of a one-line change in a clone of the workspace, {res.hook_commits} "
                "commits each way, alternating; the detached post-commit snapshot is awaited "
                "(untimed) after each hooked commit. "
                f"Resume-Unit trailers on the hooked commits: {res.trailers}/{res.hook_commits + 1}"
                + (
                    f"; {res.missed_snapshots} snapshots did not appear"
                    if res.missed_snapshots
                    else ""
                )
                + ".",
                "",
                "| | median wall | peak RSS |",
                "|---|---:|---:|",
                f"| without hooks | {ms(plain.wall)} | {plain.rss_mb:.0f} MB |",
                f"| with hooks (`hook install`) | {ms(hooked.wall)} | {hooked.rss_mb:.0f} MB |",
                f"| **added** | {ms(hooked.wall - plain.wall)} | |",
            ]
        if res.tokens:
            brief, session, size = res.tokens
            lines += [
                "",
                f"Brief: **{brief:,} tokens** (cl100k_base, default budget) against **{session:,} "
                f"tokens** of text in the {size / 1e6:.0f} MB agent session it replaces "
                f"({session / max(1, brief):,.0f}×). The session's tokens are counted exactly: "
                "the text content of its records (text, tool inputs as JSON, tool results), "
                "counted once per repeated block of the generated file and multiplied by the "
                "number of blocks, plus the tail.",
            ]
    if run_overhead:
        lines += ["", "## `resume-kit run` (bench/bench_run_overhead.py)", "", "```text",
                  run_overhead, "```"]  # fmt: skip
    return "\n".join(lines) + "\n"


def imports_test() -> str:
    test = REPO / "tests" / "e2e" / "test_imports.py"
    if not test.exists():
        return "not written"
    proc = subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    return "passes" if proc.returncode == 0 else "fails"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="small,large,huge")
    parser.add_argument("--quick", action="store_true", help="skip the huge workspace")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per size (default 21/7/5)")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to build (default: a temp dir)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the workspaces afterwards")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--no-doc", action="store_true", help="print the report, write no file")
    args = parser.parse_args()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if args.quick:
        sizes = [s for s in sizes if s != "huge"]
    unknown = [s for s in sizes if s not in workspaces.SPECS]
    if unknown:
        parser.error(f"unknown size(s): {', '.join(unknown)}; known: {', '.join(workspaces.SPECS)}")

    info = machine()
    started = time.perf_counter()
    base = Path(tempfile.mkdtemp(prefix="rk-bench-", dir=args.dir))
    results: dict[str, SizeResult] = {}
    try:
        for name in sizes:
            spec = workspaces.SPECS[name]
            say(f"{name}: building")
            ws = workspaces.build(spec, base / name)
            say(f"{name}: built in {ws.build_s:.1f} s; timing commands")
            rounds = args.rounds or DEFAULT_ROUNDS[name]
            res = SizeResult(spec, ws.build_s, rounds, measure_commands(ws, rounds))
            say(f"{name}: brief {ms(res.commands['brief'].wall)}, floor {ms(res.floor)}")
            res.tokens = brief_tokens(ws)
            say(f"{name}: verify-next")
            res.verify = measure_verify(ws, rounds)
            say(f"{name}: hooks")
            res.hook_commits = args.rounds or HOOK_COMMITS[name]
            res.hooks, res.trailers, res.missed_snapshots = measure_hooks(ws, res.hook_commits)
            results[name] = res
            if not args.keep:
                shutil.rmtree(base / name, ignore_errors=True)
        say("run overhead")
        run_overhead = measure_run_overhead()
        say("import-list test")
        imports_ok = imports_test()
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            say(f"workspaces kept in {base}")
    load = os.getloadavg()
    info["load_end"] = f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    info["pace_end"] = python_pace()
    argv = sys.argv[1:]
    doc = render_doc(info, results, run_overhead, imports_ok, argv, time.perf_counter() - started)
    if args.no_doc:
        print(doc)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(doc, encoding="utf-8")
        print(doc)
        say(f"wrote {args.out}")
    return 0


def say(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
