"""Crash safety: SIGKILL at random moments, then check that nothing was lost (issue 6, part 1).

Each scenario runs one command again and again on the same repository and kills it with SIGKILL
at a random moment, chosen one of two ways:

* **by event**: the command runs under a small wrapper with a Python audit hook that counts the
  file operations on resume-kit's state (``open``, ``os.rename``/``os.replace``, ``os.remove``,
  ``os.link``, ``os.mkdir``, ``subprocess.Popen``) and kills its own process just before the
  N-th one, N drawn at random from the count a full run makes: every stage of every write is
  hit (before the temporary file, before the rename, before the history copy, before the lock
  is released ...);
* **by time**: the real ``python -m resume_kit`` is killed after a random delay drawn from the
  length of a full run, measured on the child's pidfd (an event wait with a random deadline,
  not a sleep), so the kill also lands between operations, inside fsyncs and inside git.

Hook-triggered runs are real ``git commit``s with the hooks installed: the kill takes git's
process group and every resume-kit process still working in the repository at that moment (the
detached post-commit snapshot included).

After every run:

* progress.yaml parses (libyaml and the round-trip parser) and validates;
* no unit is done without a passing run: each verify command writes ``markers/<id>`` as its
  very last step, so done (and evidence) implies the marker;
* no unit that existed before the run is gone, and a changed progress.yaml has its previous
  version in ``history/``;
* every file in the snapshot store is intact (checksum) and the latest loads with no warning;
  the trust file still parses;
* the next command succeeds: a writer (``action record``) in-process after every run, and the
  real CLI in a subprocess after every fifth, both with a short lock timeout, so a stale lock
  would fail them.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from resume_kit.facts.snapshot_store import load_latest, read_snapshot
from resume_kit.infra.paths import GITIGNORE_BODY, find_layout
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file import roundtrip as progress_yaml
from resume_kit.progress_file import validate as progress_validate
from tests.conftest import git

pytestmark = pytest.mark.slow  # about a minute and a half; CI runs it (plain `pytest`)

CALIBRATION_RUNS = 3
RUNS = {"add": 45, "verify-next": 55, "snapshot": 35, "hook": 45, "hook run": 15, "run": 25}
SEED = int(os.environ.get("RESUME_KIT_CRASH_SEED", str(time.time_ns() % 10**9)))
LOCK_TIMEOUT = "3"
STRAGGLER_DEADLINE_S = 60.0

WRAPPER = r"""
import os, signal, sys
target = int(os.environ.get("RK_KILL_AT_EVENT", "0"))
count_file = os.environ.get("RK_EVENT_COUNT_FILE")
WATCHED = {"open", "os.rename", "os.remove", "os.link", "os.mkdir", "os.rmdir", "os.truncate",
           "subprocess.Popen", "os.posix_spawn", "os.utime", "os.chmod"}
seen = 0

def hook(event, args):
    global seen
    if event not in WATCHED:
        return
    if event == "open":
        path = args[0]
        if isinstance(path, int):
            return
        try:
            path = os.fsdecode(path)
        except Exception:
            return
        if "resume-kit" not in path:
            return
    seen += 1
    if seen == target:
        os.kill(os.getpid(), signal.SIGKILL)

sys.addaudithook(hook)
if count_file:
    import atexit
    atexit.register(lambda: open(count_file, "w").write(str(seen)))
sys.argv = ["resume-kit", *sys.argv[1:]]
from resume_kit.cli.app import main
main()
"""


# --------------------------------------------------------------------------- processes


def env_for(repo: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        **os.environ,
        "RESUME_KIT_TRUST": "all",
        "RESUME_KIT_LOCK_TIMEOUT": LOCK_TIMEOUT,
        **(extra or {}),
    }


def wait_exit(proc: subprocess.Popen[bytes], deadline_s: float) -> bool:
    """Wait for ``proc`` to exit, at most ``deadline_s``: True if it did. Waits on the pidfd (an
    event with a deadline), so the deadline is as exact as the scheduler allows."""
    if proc.poll() is not None:
        return True
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # pragma: no cover - kernels before 5.3
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            if proc.poll() is not None:
                return True
        return proc.poll() is not None
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.poll(max(0, int(deadline_s * 1000)))
    finally:
        os.close(fd)
    return proc.poll() is not None


def pid_exit_wait(pid: int, deadline_s: float) -> bool:
    """Wait for a process we did not start (an orphan) to be gone."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(int(deadline_s * 1000)))
    finally:
        os.close(fd)


def processes_in(root: Path) -> list[int]:
    """Live processes (not zombies) working in ``root``: their working directory is ``root``
    or inside it, or an argument names it. The detached post-commit snapshot runs from ``/``
    with ``--repo <root>``: between its git calls only its arguments tie it to ``root``."""
    places = {os.path.realpath(root), os.path.abspath(root)}

    def inside(path: str) -> bool:
        return any(path == place or path.startswith(place + "/") for place in places)

    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
            with open(f"/proc/{name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                args = os.fsdecode(handle.read()).split("\0")
        except (OSError, IndexError):
            continue
        if state in (b"Z", b"X"):
            continue
        if inside(cwd) or any(inside(arg) for arg in args):
            found.append(int(name))
    return found


def kill_all_in(root: Path) -> bool:
    """SIGKILL every process working in ``root``; True if there was one."""
    pids = processes_in(root)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return bool(pids)


def kill_at_deadline(root: Path, deadline: float) -> bool:
    """Wait for the exit events of the processes working in ``root`` until ``deadline``
    (monotonic), then SIGKILL whatever is left; True if something was killed."""
    for pid in processes_in(root):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        pid_exit_wait(pid, left)
    return kill_all_in(root)


def wait_for_stragglers(root: Path) -> None:
    """Orphans of a killed run (a verify command, a detached snapshot) finish on their own;
    wait for each one's exit event so the checks see a quiet repository."""
    end = time.monotonic() + STRAGGLER_DEADLINE_S
    while pids := processes_in(root):
        for pid in pids:
            left = end - time.monotonic()
            assert left > 0, f"processes still running in {root}: {pids}"
            pid_exit_wait(pid, left)


# --------------------------------------------------------------------------- the invariants


@dataclass
class State:
    text: str
    ids: set[str]


def read_state(repo: Path) -> State:
    text = (repo / ".resume-kit" / "progress.yaml").read_text()
    return State(text, {u["id"] for u in yaml.safe_load(text)["units"]})


def check_invariants(repo: Path, before: State, what: str) -> State:
    state_dir = repo / ".resume-kit"
    text = (state_dir / "progress.yaml").read_text()
    assert yaml.safe_load(text) is not None, what
    model = progress_validate.validate(
        progress_yaml.parse_text(text)
    )  # the round-trip parser, strict, as every writer
    assert progress_io.parse_and_validate(text) == model, what
    for unit in model.units:
        if unit.status == "done":
            assert unit.evidence is not None, f"{what}: {unit.id} done without evidence"
            assert (repo / "markers" / unit.id).exists(), (
                f"{what}: {unit.id} is done but its verify command never passed"
            )
    ids = {u.id for u in model.units}
    assert before.ids <= ids, f"{what}: units lost: {sorted(before.ids - ids)}"
    if text != before.text:
        history = {p.read_text() for p in (state_dir / "history").glob("progress-*.yaml")}
        assert before.text in history, f"{what}: the previous version is not in history/"
    for path in (state_dir / "snapshots").glob("*.json"):
        _, problem = read_snapshot(path)
        assert problem is None, f"{what}: {path.name}: {problem}"
    _, warnings = load_latest(find_layout(repo))
    assert warnings == [], f"{what}: {warnings}"
    trust = Path(os.environ["XDG_DATA_HOME"]) / "resume-kit"
    for path in trust.glob("*.json"):
        json.loads(path.read_text())
    # what a killed write leaves behind (temporary files) never shows up as work in git
    untracked = git(repo, "status", "--porcelain", "-uall", "--", ".resume-kit").stdout.split("\n")
    assert [line for line in untracked if line.startswith("??")] == [], f"{what}: {untracked}"
    return State(text, ids)


def next_command_in_process(repo: Path, n: int) -> None:
    """A writer through the real CLI entry point, in this process (cheap): it takes the progress
    lock, so a stale lock left by the kill would make it fail after LOCK_TIMEOUT seconds."""
    from resume_kit.cli.app import main

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(repo)
        mp.setenv("RESUME_KIT_LOCK_TIMEOUT", LOCK_TIMEOUT)
        with pytest.raises(SystemExit) as exited:
            main(["action", "record", f"after-kill-{n}", "--description", "harness"])
    assert exited.value.code in (0, None), f"the next command failed after kill {n}"


def next_command_cli(repo: Path, argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", *argv],
        cwd=repo,
        env=env_for(repo),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert proc.returncode in (0, 3), f"{argv}: exit {proc.returncode}: {proc.stderr}"


# --------------------------------------------------------------------------- the harness


@dataclass
class Stats:
    runs: int = 0
    killed: int = 0
    by_event: int = 0
    by_time: int = 0
    seconds: float = 0.0
    exit_codes: dict[int, int] = field(default_factory=dict)
    leftovers: int = 0  # temporary files left by killed writes (ignored by git)


STATS: dict[str, Stats] = {}


@pytest.fixture(scope="module")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crash") / "kill_at_event.py"
    path.write_text(WRAPPER)
    return path


@dataclass
class Scenario:
    name: str
    argv: Callable[[int], list[str]]  # the command for run i
    before_run: Callable[[Path, int], None] = lambda repo, i: None
    git_commit: bool = False  # the run is a real `git commit` (killed by time only)
    ok_codes: tuple[int, ...] = (0,)


def spawn(repo: Path, argv: list[str], extra_env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=repo,
        env=env_for(repo, extra_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def command_line(scenario: Scenario, wrapper: Path, i: int, by_event: bool) -> list[str]:
    if scenario.git_commit:
        return ["git", "commit", "-q", "-a", "-m", f"step {i}"]
    head = [sys.executable, str(wrapper)] if by_event else [sys.executable, "-m", "resume_kit"]
    return [*head, *scenario.argv(i)]


def calibrate(repo: Path, scenario: Scenario, wrapper: Path, count_file: Path) -> tuple[int, float]:
    """(state events, seconds) of full, unkilled runs: the ranges kill points are drawn from.

    The seconds are the median of CALIBRATION_RUNS runs: one slow first run (cold caches, a
    busy CI machine) would otherwise stretch every delay past the end of the runs it draws for,
    and almost none would be killed."""
    events, durations = 1, []
    for k in range(CALIBRATION_RUNS):
        scenario.before_run(repo, -1 - k)
        started = time.monotonic()
        proc = spawn(repo, command_line(scenario, wrapper, -1 - k, by_event=not scenario.git_commit),
                     {"RK_EVENT_COUNT_FILE": str(count_file)})  # fmt: skip
        _, err = proc.communicate(timeout=120)
        wait_for_stragglers(repo)
        durations.append(time.monotonic() - started)
        assert proc.returncode in scenario.ok_codes, err.decode(errors="replace")
        if count_file.exists():
            events = max(events, int(count_file.read_text()))
    return events, statistics.median(durations)


def crash_loop(repo: Path, scenario: Scenario, runs: int, wrapper: Path, tmp: Path) -> Stats:
    rng = random.Random(f"{SEED}-{scenario.name}")
    events, seconds = calibrate(repo, scenario, wrapper, tmp / f"{scenario.name}.count")
    state = read_state(repo)
    stats = STATS.setdefault(scenario.name, Stats())
    started = time.monotonic()
    for i in range(runs):
        scenario.before_run(repo, i)
        by_event = not scenario.git_commit and rng.random() < 0.5
        extra: dict[str, str] = {}
        if by_event:
            point = rng.randint(1, events + 1)  # events + 1: now and then the run completes
            extra["RK_KILL_AT_EVENT"] = str(point)
            what = f"{scenario.name} run {i} (seed {SEED}), killed at state event {point}/{events}"
        else:
            delay = rng.uniform(0, seconds * 1.2)
            what = f"{scenario.name} run {i} (seed {SEED}), killed after {delay * 1000:.0f} ms"
        launched = time.monotonic()
        proc = spawn(repo, command_line(scenario, wrapper, i, by_event), extra)
        killed_orphans = False
        if not by_event and not wait_exit(proc, delay):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            if scenario.git_commit:
                killed_orphans = kill_all_in(repo)  # the detached snapshot too, at once
        elif scenario.git_commit:
            # git is done; its detached post-commit snapshot may not be: wait for its exit
            # event until the same deadline, and kill it there
            killed_orphans = kill_at_deadline(repo, launched + delay)
        _, err = proc.communicate(timeout=120)
        code = proc.returncode
        stats.exit_codes[code] = stats.exit_codes.get(code, 0) + 1
        if code == -signal.SIGKILL or killed_orphans:
            stats.killed += 1
        else:
            assert code in scenario.ok_codes, f"{what}: exit {code}: {err.decode(errors='replace')}"
        stats.by_event += by_event
        stats.by_time += not by_event
        wait_for_stragglers(repo)
        if scenario.git_commit:
            # git's own lock files, left by the killed git (what a user removes after a crash)
            for lock in (repo / ".git").rglob("*.lock"):
                lock.unlink()
        state = check_invariants(repo, state, what)
        next_command_in_process(repo, stats.runs)
        if i % 5 == 4:
            next_command_cli(repo, ["action", "record", f"cli-after-{i}", "--description", "x"])
        state = read_state(repo)
        stats.runs += 1
    stats.seconds += time.monotonic() - started
    stats.leftovers = len(list((repo / ".resume-kit").rglob("*.tmp")))
    return stats


# --------------------------------------------------------------------------- repositories


def verify_command(unit_id: str, flaky: bool) -> str:
    """Passes (flaky: on its second try), writing markers/<id> as its very last step."""
    passing = f"mkdir -p markers && touch markers/{unit_id}"
    if not flaky:
        return passing
    return f"if [ -e tries/{unit_id} ]; then {passing}; else mkdir -p tries && touch tries/{unit_id}; echo 'error: first try' >&2; exit 1; fi"


def make_project(repo: Path, units: int, *, keep_snapshots: int = 4) -> None:
    state = repo / ".resume-kit"
    state.mkdir()
    (state / ".gitignore").write_text(GITIGNORE_BODY)  # what `init` writes
    (state / "config.yaml").write_text(f"keep_snapshots: {keep_snapshots}\n")
    doc = {
        "schema_version": 1,
        "goal": "Survive being killed",
        "units": [
            {
                "id": f"u-{n:03d}",
                "title": f"Unit {n}",
                "verify": verify_command(f"u-{n:03d}", flaky=n % 3 == 1),
                "files": [f"src/f{n % 7}.txt"],
            }
            for n in range(units)
        ],
    }
    (state / "progress.yaml").write_text(
        "# written by the crash harness; comments must survive\n"
        + yaml.safe_dump(doc, sort_keys=False, width=4096)
    )
    (repo / "src").mkdir()
    for n in range(7):
        (repo / "src" / f"f{n}.txt").write_text(f"file {n}\n")
    (repo / "build.log").write_text("ok\nerror: something failed once\n")
    (repo / ".gitignore").write_text("markers/\ntries/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "project")


def report(name: str) -> str:
    s = STATS[name]
    return (
        f"{name}: {s.runs} runs, {s.killed} killed ({s.by_event} by event, {s.by_time} by time), "
        f"{s.seconds:.1f}s, exit codes {dict(sorted(s.exit_codes.items()))}, "
        f"{s.leftovers} temporary files left"
    )


def test_the_harness_runs_at_least_200_kills() -> None:
    assert sum(RUNS.values()) >= 200


def test_kill_add(repo: Path, wrapper: Path, tmp_path: Path) -> None:
    make_project(repo, 3)
    scenario = Scenario(
        "add", lambda i: ["add", f"Added unit {i}", "--verify", verify_command(f"a-{i}", False), "--id", f"a-{i}"]
    )  # fmt: skip
    stats = crash_loop(repo, scenario, RUNS["add"], wrapper, tmp_path)
    print(report("add"))
    assert stats.killed >= RUNS["add"] // 3, report("add")


def test_kill_verify_next(repo: Path, wrapper: Path, tmp_path: Path) -> None:
    make_project(repo, RUNS["verify-next"] + 10)
    scenario = Scenario("verify-next", lambda i: ["verify-next"], ok_codes=(0, 1, 3))
    stats = crash_loop(repo, scenario, RUNS["verify-next"], wrapper, tmp_path)
    print(report("verify-next"))
    assert stats.killed >= RUNS["verify-next"] // 3, report("verify-next")
    done = [u for u in progress_io.load(find_layout(repo)).progress.units if u.status == "done"]
    assert done, "no unit ever passed: the harness proved nothing"


def test_kill_snapshot(repo: Path, wrapper: Path, tmp_path: Path) -> None:
    make_project(repo, 5, keep_snapshots=3)

    def change_something(repo: Path, i: int) -> None:
        (repo / "src" / f"f{i % 7}.txt").write_text(f"changed {i}\n")
        (repo / f"new-{i % 4}.txt").write_text("x\n")

    trigger = ["manual", "post-commit", "pre-compact", "verify"]
    scenario = Scenario(
        "snapshot",
        lambda i: ["snapshot", "--trigger", trigger[i % 4], *(["--json"] if i % 3 else [])],
        before_run=change_something,
    )
    stats = crash_loop(repo, scenario, RUNS["snapshot"], wrapper, tmp_path)
    print(report("snapshot"))
    assert stats.killed >= RUNS["snapshot"] // 3, report("snapshot")
    latest, warnings = load_latest(find_layout(repo))
    assert latest is not None and warnings == []


def test_kill_hook_triggered_runs(repo: Path, wrapper: Path, tmp_path: Path) -> None:
    """Real `git commit`s with both hooks installed, killed with everything they started."""
    make_project(repo, 5, keep_snapshots=3)
    env = env_for(repo)
    subprocess.run([sys.executable, "-m", "resume_kit", "hook", "install"], cwd=repo, env=env,
                   check=True, capture_output=True)  # fmt: skip
    subprocess.run([sys.executable, "-m", "resume_kit", "start", "u-001"], cwd=repo, env=env,
                   check=True, capture_output=True)  # fmt: skip

    def edit(repo: Path, i: int) -> None:
        (repo / "src" / f"f{i % 7}.txt").write_text(f"commit {i}\n")

    scenario = Scenario("hook", lambda i: [], before_run=edit, git_commit=True)
    stats = crash_loop(repo, scenario, RUNS["hook"], wrapper, tmp_path)
    print(report("hook"))
    assert stats.killed >= RUNS["hook"] // 4, report("hook")
    trailers = git(repo, "log", "--format=%(trailers:key=Resume-Unit,valueonly)").stdout.split()
    assert set(trailers) <= {"u-001"}
    # the hooks still work after all this
    edit(repo, 1000)
    git(repo, "commit", "-q", "-a", "-m", "after the storm")
    wait_for_stragglers(repo)
    assert "Resume-Unit: u-001" in git(repo, "log", "-1", "--format=%B").stdout
    latest, warnings = load_latest(find_layout(repo))
    assert latest is not None and latest["trigger"] == "post-commit" and warnings == []


def test_kill_hook_run_entry(repo: Path, wrapper: Path, tmp_path: Path) -> None:
    """`resume-kit hook run post-commit` (the PATH fallback and pre-commit framework entry),
    killed while it starts the detached snapshot; the snapshot it started runs to its end."""
    make_project(repo, 5, keep_snapshots=3)

    def edit(repo: Path, i: int) -> None:
        (repo / "src" / f"f{i % 7}.txt").write_text(f"edit {i}\n")

    scenario = Scenario("hook run", lambda i: ["hook", "run", "post-commit"], before_run=edit)
    stats = crash_loop(repo, scenario, RUNS["hook run"], wrapper, tmp_path)
    print(report("hook run"))
    assert stats.killed >= RUNS["hook run"] // 4, report("hook run")
    latest, warnings = load_latest(find_layout(repo))
    assert latest is not None and latest["trigger"] == "post-commit" and warnings == []


def test_kill_run(repo: Path, wrapper: Path, tmp_path: Path) -> None:
    """`resume-kit run` (the batch): each kill loses at most the units that were running."""
    make_project(repo, (RUNS["run"] + CALIBRATION_RUNS) * 3 + 10)
    scenario = Scenario(
        "run", lambda i: ["run", "--max-units", "3", "--keep-going", *(["--jobs", "2"] if i % 2 else [])],
        ok_codes=(0, 1, 3),
    )  # fmt: skip
    stats = crash_loop(repo, scenario, RUNS["run"], wrapper, tmp_path)
    print(report("run"))
    assert stats.killed >= RUNS["run"] // 3, report("run")
