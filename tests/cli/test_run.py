"""``resume-kit run`` through the real CLI on real repositories: kills, resumes, budgets,
signals, parallel units, JSON lines (SPEC 3, issue 9)."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from resume_kit.infra.paths import find_layout
from resume_kit.progress_file.io import load
from tests.conftest import git, run_cli, run_cli_on_terminal
from tests.helpers_snapshot import write_progress

TRUST_ALL = {"RESUME_KIT_TRUST": "all"}
FIXED_DATES = {
    "GIT_AUTHOR_DATE": "2026-11-29T08:00:00Z",
    "GIT_COMMITTER_DATE": "2026-11-29T08:00:00Z",
}


# --------------------------------------------------------------------------- helpers


def read_units(repo: Path) -> dict[str, dict[str, Any]]:
    """The units as the tool's own loader reads them (so the file is also proved valid)."""
    progress = load(find_layout(repo)).progress
    return {u.id: vars(u) for u in progress.units}


def statuses(repo: Path) -> dict[str, str]:
    return {uid: unit["status"] for uid, unit in read_units(repo).items()}


def side_lines(path: Path) -> collections.Counter[str]:
    return collections.Counter(path.read_text().split()) if path.exists() else collections.Counter()


def wait_for(condition: Callable[[], bool], what: str, within_s: float = 60.0) -> None:
    """Poll ``condition`` in a bounded loop (the moment is chosen by state, not by time)."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.005)


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working directory is ``folder`` (commands orphaned by a kill)."""
    target = os.path.realpath(folder)
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.readlink(entry / "cwd") == target:
                    pids.append(int(entry.name))
    return pids


def start_run(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "resume_kit", "run", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **TRUST_ALL, **(env or {})},
    )


class LineReader:
    """Collects a pipe's lines on a thread so the test can wait for one without blocking."""

    def __init__(self, stream: Any):
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line)

    def text(self) -> str:
        self.thread.join(timeout=30)
        return "".join(self.lines)

    def has(self, fragment: str) -> bool:
        return any(fragment in line for line in list(self.lines))


def batch_units(count: int, side: str = "side.txt") -> list[dict[str, Any]]:
    """``count`` units whose command checks its input and, as its very last step, appends the
    unit's id to ``side``."""
    return [
        {
            "id": f"item-{n:03d}",
            "title": f"Item {n}",
            "verify": f"test -s items/{n:03d}.txt && echo item-{n:03d} >> {side}",
            "artifacts": [f"items/{n:03d}.txt"],
        }
        for n in range(1, count + 1)
    ]


def make_items(repo: Path, count: int) -> None:
    (repo / "items").mkdir(exist_ok=True)
    for n in range(1, count + 1):
        (repo / "items" / f"{n:03d}.txt").write_text(f"item {n}\n")


# --------------------------------------------------------------------------- kill and resume


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")
@pytest.mark.parametrize("jobs", [1, 4])
def test_sigkill_at_a_random_point_then_resume_runs_every_unit_once(repo: Path, jobs: int) -> None:
    """Exactly once, and the one window where it cannot be.

    Each command appends its unit's id to side.txt as its very last step, and only when its
    work succeeded (``test -s ... && echo id >> side.txt``), so one line means one successful
    execution. A unit becomes done only after its command has exited, so a SIGKILL can land
    between the two: such a unit has a line but is not done, and the next run executes it
    again. That window cannot be closed (a checkpoint cannot be atomic with an arbitrary
    command's side effects); it is bounded by the units in flight at the kill: at most
    ``jobs`` commands running plus as many outcomes being written, so ``2 * jobs``.

    So the accounting is exact: once the commands orphaned by the kill have ended, every unit
    done in progress.yaml has exactly one line; after the resumed run every unit is done and
    has exactly one line, except the in-flight units (a line, but not done at the kill), which
    have exactly two. Nothing that passed runs again.
    """
    seed = random.randrange(1 << 30)
    count = 200
    kill_at = random.Random(seed).randint(20, 180)
    make_items(repo, count)
    write_progress(repo, batch_units(count))
    side = repo / "side.txt"

    proc = start_run(repo, "--jobs", str(jobs))
    try:
        wait_for(
            lambda: len(side_lines(side)) >= kill_at or proc.poll() is not None,
            f"{kill_at} lines (seed {seed})",
        )
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    wait_for(lambda: not processes_in(repo), "orphaned commands to end", within_s=30)

    at_kill = side_lines(side)
    done_at_kill = {uid for uid, status in statuses(repo).items() if status == "done"}
    assert done_at_kill, f"seed {seed}: nothing was checkpointed before the kill"
    assert len(done_at_kill) < count, f"seed {seed}: the run finished before the kill"
    assert all(at_kill[uid] == 1 for uid in done_at_kill), seed
    in_flight = set(at_kill) - done_at_kill
    assert len(in_flight) <= 2 * jobs, (seed, sorted(in_flight))
    assert all(at_kill[uid] == 1 for uid in in_flight), seed

    resumed = run_cli("run", "--jobs", str(jobs), cwd=repo, env=TRUST_ALL)
    assert resumed.code == 0, resumed.stderr
    assert set(statuses(repo).values()) == {"done"}
    final = side_lines(side)
    expected = {f"item-{n:03d}": 1 for n in range(1, count + 1)}
    for uid in in_flight:
        expected[uid] = 2
    assert dict(final) == expected, f"seed {seed}"
    assert f"{count - len(done_at_kill)} passed" in resumed.stderr


def _normalised_state(repo: Path) -> dict[str, Any]:
    """Statuses and evidence without what differs between two runs (times, logs, durations)."""
    state = {}
    for uid, unit in read_units(repo).items():
        evidence = unit["evidence"]
        failure = unit["last_failure"]
        state[uid] = {
            "status": unit["status"],
            "evidence": None
            if evidence is None
            else (evidence.commit, evidence.dirty, evidence.fingerprint),
            "failure": None
            if failure is None
            else (failure.exit_code, failure.signature, failure.repeats, failure.excerpt),
        }
    return state


def _mixed_batch(root: Path) -> Path:
    """A repository with independent units, shared files, dependencies and two failures."""
    root.mkdir()
    env = {**os.environ, **FIXED_DATES}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True, env=env)
    (root / "README.md").write_text("hello\n")
    make_items(root, 40)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)
    units = batch_units(40)
    units[6]["verify"] = "echo 'ValueError: bad row 7' >&2; exit 3"
    units[20]["verify"] = "echo 'Error: missing field' ; exit 1"
    for n in (10, 11, 12):
        units[n]["files"] = ["shared/*.txt"]
        units[n]["verify"] = f"mkdir -p shared && echo {n} >> shared/{n}.txt"
    units[30]["after"] = ["item-006"]  # behind a unit that passes
    units[31]["after"] = ["item-007"]  # behind a unit that fails: never started
    write_progress(root, units)
    return root


def test_jobs_4_gives_the_same_final_state_as_jobs_1(tmp_path: Path) -> None:
    serial = _mixed_batch(tmp_path / "serial")
    parallel = _mixed_batch(tmp_path / "parallel")
    one = run_cli("run", "--keep-going", cwd=serial, env=TRUST_ALL)
    four = run_cli("run", "--keep-going", "--jobs", "4", cwd=parallel, env=TRUST_ALL)
    assert one.code == four.code == 1, (one.stderr, four.stderr)
    state = _normalised_state(serial)
    assert state == _normalised_state(parallel)
    assert state["item-032"]["status"] == "todo"  # its dependency failed in this run
    assert state["item-031"]["status"] == "done"
    # a failed unit keeps its status (to do): in progress means someone started it
    assert not [uid for uid, s in state.items() if s["status"] == "in_progress"]
    assert {uid for uid, s in state.items() if s["failure"]} == {"item-007", "item-021"}
    assert side_lines(serial / "side.txt") == side_lines(parallel / "side.txt")


# --------------------------------------------------------------------------- parallel rules


def test_parallel_units_overlap_but_never_when_sharing_files_or_dependent(repo: Path) -> None:
    """Two independent units must meet (each waits, bounded, for the other to have started),
    so they really ran at once; units sharing files or linked by ``after`` never overlap."""
    marks = repo / "marks.txt"

    def command(uid: str, extra: str = "") -> str:
        return f"echo start {uid} >> marks.txt; {extra}echo end {uid} >> marks.txt"

    def meet(me: str, other: str) -> str:
        # Bounded: fails after about 20 s instead of hanging when the two never run together.
        return (
            f"touch {me}.here; n=0; while [ ! -f {other}.here ]; do n=$((n+1)); "
            f"[ $n -gt 2000 ] && exit 1; sleep 0.01; done; "
        )

    units: list[dict[str, Any]] = [
        {"id": "left", "title": "L", "verify": command("left", meet("left", "right"))},
        {"id": "right", "title": "R", "verify": command("right", meet("right", "left"))},
    ]
    for n in range(6):
        units.append(
            {
                "id": f"shared-{n}",
                "title": f"S{n}",
                "verify": command(f"shared-{n}"),
                "files": ["data/table.csv" if n % 2 else "data/*.csv"],
            }
        )
    units.append({"id": "first", "title": "F", "verify": command("first")})
    units.append({"id": "second", "title": "S", "verify": command("second"), "after": ["first"]})
    write_progress(repo, units)

    result = run_cli("run", "--jobs", "4", cwd=repo, env=TRUST_ALL)
    assert result.code == 0, result.stderr
    assert set(statuses(repo).values()) == {"done"}

    running: set[str] = set()
    overlaps: set[frozenset[str]] = set()
    for line in marks.read_text().splitlines():
        kind, uid = line.split()
        if kind == "start":
            overlaps |= {frozenset((uid, other)) for other in running}
            running.add(uid)
        else:
            running.discard(uid)
    assert frozenset(("left", "right")) in overlaps
    shared = {f"shared-{n}" for n in range(6)}
    assert not [pair for pair in overlaps if pair <= shared]
    assert frozenset(("first", "second")) not in overlaps


# --------------------------------------------------------------------------- budgets


def test_max_units_stops_between_units_and_says_how_to_continue(repo: Path) -> None:
    make_items(repo, 10)
    write_progress(repo, batch_units(10))
    first = run_cli("run", "--max-units", "3", cwd=repo, env=TRUST_ALL)
    assert first.code == 0, first.stderr
    done = [uid for uid, s in statuses(repo).items() if s == "done"]
    assert done == ["item-001", "item-002", "item-003"]
    assert "stopped after 3 units (--max-units)" in first.stderr
    assert "continue with: resume-kit run --max-units 3" in first.stderr
    assert "3/10 done, 7 left" in first.stderr

    again = run_cli("run", "--max-units", "3", "--jobs", "2", cwd=repo, env=TRUST_ALL)
    assert again.code == 0
    assert sum(s == "done" for s in statuses(repo).values()) == 6
    assert "continue with: resume-kit run --jobs 2 --max-units 3" in again.stderr
    assert side_lines(repo / "side.txt") == {f"item-{n:03d}": 1 for n in range(1, 7)}


def test_time_budget_lets_the_running_unit_finish_and_starts_no_other(repo: Path) -> None:
    # The first unit takes longer than the budget, so the budget is spent when it ends, on any
    # machine however slow: exactly one unit runs.
    make_items(repo, 4)
    units = batch_units(4)
    units[0]["verify"] = "sleep 0.6 && echo item-001 >> side.txt"
    write_progress(repo, units)
    result = run_cli("run", "--time-budget", "0.5s", cwd=repo, env=TRUST_ALL)
    assert result.code == 0, result.stderr
    assert statuses(repo) == {
        "item-001": "done",
        "item-002": "todo",
        "item-003": "todo",
        "item-004": "todo",
    }
    assert "time budget of 0.5s used up" in result.stderr
    assert "continue with: resume-kit run --time-budget 0.5s" in result.stderr

    roomy = run_cli("run", "--time-budget", "1h30m", cwd=repo, env=TRUST_ALL)
    assert roomy.code == 0
    assert set(statuses(repo).values()) == {"done"}


@pytest.mark.parametrize("duration", ["soon", "0s", "-5m", "5 minutes", "1m1h", ""])
def test_a_bad_duration_is_a_usage_error_and_runs_nothing(repo: Path, duration: str) -> None:
    make_items(repo, 1)
    path = write_progress(repo, batch_units(1))
    before = path.read_text()
    result = run_cli("run", "--time-budget", duration, cwd=repo, env=TRUST_ALL)
    assert result.code == 2
    assert "invalid duration" in result.stderr and "hint:" in result.stderr
    assert "Traceback" not in result.stderr
    assert path.read_text() == before


# --------------------------------------------------------------------------- failures


def _with_failures(repo: Path, failing: set[int], count: int = 6) -> None:
    make_items(repo, count)
    units = batch_units(count)
    for n in failing:
        units[n - 1]["verify"] = (
            f"echo item-{n:03d} >> tried.txt; echo 'KeyError: party_{n}' >&2; exit 1"
        )
    write_progress(repo, units)


def test_stops_at_the_first_failure_by_default(repo: Path) -> None:
    _with_failures(repo, {2})
    result = run_cli("run", cwd=repo, env=TRUST_ALL)
    assert result.code == 1
    assert statuses(repo) == {
        "item-001": "done",
        **{f"item-{n:03d}": "todo" for n in range(2, 7)},
    }
    assert "failed: item-002 (exit 1): KeyError: party_2" in result.stderr
    assert "stopped at the first failure" in result.stderr
    assert "continue with: resume-kit run\n" in result.stderr
    failure = read_units(repo)["item-002"]["last_failure"]
    assert failure.repeats == 1 and "KeyError: party_2" in failure.excerpt


def test_keep_going_continues_up_to_max_failures(repo: Path) -> None:
    _with_failures(repo, {2, 4, 5})
    result = run_cli("run", "--keep-going", "--max-failures", "2", cwd=repo, env=TRUST_ALL)
    assert result.code == 1
    assert statuses(repo) == {
        "item-001": "done",
        "item-002": "todo",
        "item-003": "done",
        "item-004": "todo",
        "item-005": "todo",
        "item-006": "todo",
    }
    assert "stopped after 2 failures (--max-failures)" in result.stderr

    unlimited = run_cli("run", "--keep-going", cwd=repo, env=TRUST_ALL)
    assert unlimited.code == 1
    assert statuses(repo)["item-006"] == "done"
    assert [s for s in statuses(repo).values()].count("in_progress") == 0
    assert [uid for uid, u in read_units(repo).items() if u["last_failure"]] == [
        "item-002",
        "item-004",
        "item-005",
    ]
    # Each failing unit ran once per run: never retried within a run.
    assert side_lines(repo / "tried.txt") == {"item-002": 2, "item-004": 2, "item-005": 1}


def test_a_stuck_unit_is_not_retried(repo: Path) -> None:
    _with_failures(repo, {1}, count=2)
    for attempt in (1, 2, 3):
        result = run_cli("run", "--keep-going", cwd=repo, env=TRUST_ALL)
        assert result.code == 1
        assert read_units(repo)["item-001"]["last_failure"].repeats == attempt
    assert side_lines(repo / "tried.txt") == {"item-001": 3}
    stuck = run_cli("run", "--keep-going", cwd=repo, env=TRUST_ALL)
    assert stuck.code == 1
    assert side_lines(repo / "tried.txt") == {"item-001": 3}  # not run a fourth time
    assert "item-001 failed the same way 3 times running (UNIT_STUCK)" in stuck.stderr
    assert "resume-kit verify-next --unit item-001" in stuck.stderr


# --------------------------------------------------------------------------- signals


def _blocking_batch(repo: Path) -> None:
    """Unit a tells the test its shell pid through a FIFO, then waits on a gate FIFO."""
    os.mkfifo(repo / "ready.fifo")
    os.mkfifo(repo / "gate.fifo")
    make_items(repo, 3)
    units = batch_units(3)
    units[0]["verify"] = "echo $$ > ready.fifo; cat gate.fifo && echo item-001 >> side.txt"
    write_progress(repo, units)


def _ready_pid(repo: Path) -> int:
    return int((repo / "ready.fifo").read_text().strip())


def test_first_ctrl_c_lets_the_running_unit_finish_then_exits_130(repo: Path) -> None:
    _blocking_batch(repo)
    proc = start_run(repo)
    errors = LineReader(proc.stderr)
    shell = _ready_pid(repo)
    try:
        proc.send_signal(signal.SIGINT)
        wait_for(lambda: errors.has("no new units will start"), "the first Ctrl-C notice")
        (repo / "gate.fifo").write_text("go\n")
        proc.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, errors.text()
    assert statuses(repo) == {"item-001": "done", "item-002": "todo", "item-003": "todo"}
    assert "continue with: resume-kit run" in errors.text()
    assert not (repo / ".resume-kit" / "progress.yaml.lock").exists()


def test_second_ctrl_c_stops_the_running_unit_and_leaves_it_not_done(repo: Path) -> None:
    _blocking_batch(repo)
    path = repo / ".resume-kit" / "progress.yaml"
    before = path.read_text()
    proc = start_run(repo)
    errors = LineReader(proc.stderr)
    shell = _ready_pid(repo)
    try:
        proc.send_signal(signal.SIGINT)
        wait_for(lambda: errors.has("no new units will start"), "the first Ctrl-C notice")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
    text = errors.text()
    assert proc.returncode == 130, text
    assert "stopped while running (not done): item-001" in text
    assert path.read_text() == before  # nothing recorded for the stopped unit
    assert statuses(repo) == {"item-001": "todo", "item-002": "todo", "item-003": "todo"}
    wait_for(lambda: not processes_in(repo), "the stopped command's group to be gone", 10)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_stops_at_once(repo: Path, signum: int) -> None:
    """SIGHUP (the terminal went away) too: the one signal guard, as in verify-next."""
    _blocking_batch(repo)
    proc = start_run(repo)
    errors = LineReader(proc.stderr)
    shell = _ready_pid(repo)
    try:
        proc.send_signal(signum)
        proc.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell, signal.SIGKILL)
    assert proc.returncode == 130, errors.text()
    assert set(statuses(repo).values()) == {"todo"}


# --------------------------------------------------------------------------- output


def test_json_lines_one_per_finished_unit_then_a_summary(repo: Path) -> None:
    _with_failures(repo, {3}, count=4)
    result = run_cli("run", "--keep-going", "--json", cwd=repo, env=TRUST_ALL)
    assert result.code == 1
    records = [json.loads(line) for line in result.stdout.splitlines()]
    units, summary = records[:-1], records[-1]["summary"]
    assert [r["unit"] for r in units] == ["item-001", "item-002", "item-003", "item-004"]
    for record in units:
        assert set(record) == {"unit", "passed", "exit_code", "duration_s", "log"}
        assert (repo / record["log"]).is_file()
    assert [r["passed"] for r in units] == [True, True, False, True]
    assert [r["exit_code"] for r in units] == [0, 0, 1, 0]
    assert summary["passed"] == ["item-001", "item-002", "item-004"]
    assert summary["failed"] == [
        {"unit": "item-003", "exit_code": 1, "excerpt": "KeyError: party_3"}
    ]
    assert summary["done"] == 3 and summary["total"] == 4 and summary["remaining"] == 1
    assert summary["exit_code"] == 1
    assert summary["continue"] == "resume-kit run --keep-going --json"


def test_plain_progress_lines_when_not_a_terminal(repo: Path) -> None:
    make_items(repo, 3)
    write_progress(repo, batch_units(3))
    result = run_cli("run", cwd=repo, env=TRUST_ALL)
    assert result.code == 0
    lines = result.stderr.splitlines()
    assert lines[0].startswith("resume-kit: warning: RESUME_KIT_TRUST=all")  # CI only (issue 12)
    assert lines[1] == "resume-kit: run: 3 units to go (0/3 done)"
    assert "3 passed, 0 failed; 3/3 done, 0 left" in result.stderr
    assert result.stdout == ""
    assert "\x1b[" not in result.stderr


def test_progress_bar_on_a_terminal(repo: Path) -> None:
    make_items(repo, 3)
    write_progress(repo, batch_units(3))
    result = run_cli_on_terminal("run", cwd=repo, env=TRUST_ALL)
    assert result.code == 0, result.shown
    assert "3/3" in result.shown  # the bar's done/total
    assert "resume-kit: run: 3 units to go" not in result.shown  # the bar replaces the plain lines
    assert "3 passed, 0 failed" in result.shown


# --------------------------------------------------------------------------- refusals


def test_untrusted_commands_are_all_listed_and_nothing_runs(repo: Path) -> None:
    make_items(repo, 12)
    write_progress(repo, batch_units(12))
    result = run_cli("run", cwd=repo)
    assert result.code == 4
    assert "12 verify commands are not approved on this machine" in result.stderr
    assert "item-001, item-002" in result.stderr and "and 4 more" in result.stderr
    assert "resume-kit trust" in result.stderr
    assert not (repo / "side.txt").exists()


def test_units_added_here_are_trusted(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    assert cli("add", "One", "--verify", "echo one >> side.txt").code == 0
    assert cli("add", "Two", "--verify", "echo two >> side.txt", "--after", "one").code == 0
    result = cli("run")
    assert result.code == 0, result.stderr
    assert (repo / "side.txt").read_text() == "one\ntwo\n"


def test_nothing_to_do_and_nothing_ready(repo: Path) -> None:
    make_items(repo, 2)
    units = batch_units(2)
    units[0]["status"] = "blocked"
    units[1]["after"] = ["item-001"]
    write_progress(repo, units)
    waiting = run_cli("run", cwd=repo, env=TRUST_ALL)
    assert waiting.code == 3
    assert "nothing verifiable" in waiting.stderr

    write_progress(repo, [{**u, "status": "done"} for u in batch_units(2)])
    done = run_cli("run", "--json", cwd=repo, env=TRUST_ALL)
    assert done.code == 3
    assert "all 2 units done" in done.stderr
    assert json.loads(done.stdout)["summary"]["exit_code"] == 3


def test_a_ready_unit_without_a_command_is_a_usage_error(repo: Path) -> None:
    write_progress(repo, [{"id": "a", "title": "A"}])
    result = run_cli("run", cwd=repo, env=TRUST_ALL)
    assert result.code == 2
    assert "no verify command on a" in result.stderr


def test_in_progress_unit_runs_first_and_blocked_are_skipped(repo: Path) -> None:
    make_items(repo, 4)
    units = batch_units(4)
    units[2]["status"] = "in_progress"
    units[1]["status"] = "blocked"
    write_progress(repo, units)
    result = run_cli("run", cwd=repo, env=TRUST_ALL)
    assert result.code == 0
    assert (repo / "side.txt").read_text().split() == ["item-003", "item-001", "item-004"]
    assert statuses(repo)["item-002"] == "blocked"
    assert "(1 blocked)" in result.stderr


def test_history_keeps_the_version_from_before_the_run(repo: Path) -> None:
    make_items(repo, 30)
    path = write_progress(repo, batch_units(30))
    git(repo, "add", "items")
    git(repo, "commit", "-q", "-m", "items")
    original = path.read_text()
    result = run_cli("run", cwd=repo, env=TRUST_ALL)
    assert result.code == 0
    history = sorted((repo / ".resume-kit" / "history").iterdir())
    assert original in [h.read_text() for h in history]
    evidence = read_units(repo)["item-030"]["evidence"]
    assert evidence.dirty is False
    assert evidence.commit == git(repo, "rev-parse", "HEAD").stdout.strip()
