"""Many processes at once (issue 6, part 2): no lost update, no half-written file seen, and
contention ends in a clear one-line message, never a hang.

The workers are real processes that call the CLI's entry point (``resume_kit.cli.app.main``) in a
loop, so hundreds of commands interleave on two cores without paying an interpreter start for
each; readers are separate processes that parse every file they can see, as fast as they can,
until the writers are done (they watch for a stop file: no sleeping).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from resume_kit.infra.paths import find_layout
from resume_kit.progress_file import io as progress_io
from tests.conftest import git

pytestmark = pytest.mark.slow

WORKERS = 4
UNITS_PER_WORKER = 6

WORKER = r"""
import json, os, sys
from resume_kit.cli.app import main

def cli(*argv, ok=(0,)):
    try:
        main(list(argv))
    except SystemExit as exc:
        code = exc.code or 0
        if code not in ok:
            sys.stderr.write(f"worker {w}: {argv} exited {code}\n")
            sys.exit(1)

w, units = int(sys.argv[1]), int(sys.argv[2])
for k in range(units):
    uid = f"w{w}-{k}"
    cli("add", f"Unit {k} of worker {w}", "--id", uid,
        "--verify", f"mkdir -p markers && touch markers/{uid}")
    cli("start", uid)
    cli("snapshot", "--quiet")
    # exit 2 only when a `run` is verifying this very unit right now (it then records it)
    cli("verify-next", "--unit", uid, ok=(0, 2))
    cli("brief", "--max-tokens", "400", *(["--format", "json"] if k % 2 else []))
    cli("action", "record", f"{uid}-notified", "--description", f"told the reviewer about {uid}")
    cli("status", "--json")
"""

RUNNER = r"""
import sys
from resume_kit.cli.app import main

codes = []
for _ in range(int(sys.argv[1])):
    try:
        main(["run", "--keep-going", "--jobs", "2"])
    except SystemExit as exc:
        codes.append(exc.code or 0)
# 0: ran units; 3: nothing left when it looked; 2: a unit it chose was being verified elsewhere
bad = [c for c in codes if c not in (0, 2, 3)]
if bad:
    sys.exit(f"run exited {bad}")
print(codes.count(0))
"""

READER = r"""
import json, os, sys
from pathlib import Path
import yaml
from resume_kit.progress_file import io as progress_io
from resume_kit.facts.snapshot_store import read_snapshot

state = Path(sys.argv[1]) / ".resume-kit"
stop = Path(sys.argv[2])
loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
reads = snapshot_reads = 0
failures = []
while not stop.exists() or reads == 0:
    try:
        text = (state / "progress.yaml").read_text()
    except FileNotFoundError:
        failures.append("progress.yaml missing")
        break
    try:
        yaml.load(text, Loader=loader)
        progress_io.parse_and_validate(text)
    except Exception as exc:
        failures.append(f"progress.yaml: {type(exc).__name__}: {exc}"[:300])
    reads += 1
    for path in sorted((state / "snapshots").glob("*.json"))[-2:]:
        data, problem = read_snapshot(path)
        if problem is not None and not problem.startswith("unreadable"):  # pruned meanwhile
            failures.append(f"{path.name}: {problem}")
        snapshot_reads += data is not None
print(json.dumps({"reads": reads, "snapshot_reads": snapshot_reads, "failures": failures[:5],
                  "failure_count": len(failures)}))
"""


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "RESUME_KIT_TRUST": "all", **extra}


def start_python(
    script: str, *args: str, cwd: Path, stdin: int = subprocess.DEVNULL, **extra: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env(**extra),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def init_project(repo: Path) -> None:
    (repo / ".gitignore").write_text("markers/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore markers")
    subprocess.run(
        [sys.executable, "-m", "resume_kit", "init", "--goal", "Many hands at once"],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    (repo / ".resume-kit" / "config.yaml").write_text("keep_snapshots: 5\n")


def test_many_processes_lose_no_update_and_readers_never_see_half_a_file(repo: Path) -> None:
    init_project(repo)
    stop = repo.parent / "stop-readers"
    started = time.monotonic()
    readers = [start_python(READER, str(repo), str(stop), cwd=repo) for _ in range(2)]
    workers = [
        start_python(WORKER, str(w), str(UNITS_PER_WORKER), cwd=repo, RESUME_KIT_LOCK_TIMEOUT="120")
        for w in range(WORKERS)
    ]
    # `run` picks the same units too, again and again; claims keep two off one unit
    batch = start_python(RUNNER, "12", cwd=repo, RESUME_KIT_LOCK_TIMEOUT="120")
    try:
        for proc in workers:
            _, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err[-3000:]
        runs_that_worked, err = batch.communicate(timeout=600)
        assert batch.returncode == 0, err[-3000:]
    finally:
        stop.write_text("stop\n")
        results = [json.loads(r.communicate(timeout=120)[0]) for r in readers]
    seconds = time.monotonic() - started

    for result in results:
        assert result["failure_count"] == 0, result["failures"]
        assert result["reads"] > 0
    model = progress_io.load(find_layout(repo)).progress
    expected = {f"w{w}-{k}" for w in range(WORKERS) for k in range(UNITS_PER_WORKER)}
    units = {u.id: u for u in model.units}
    assert set(units) == expected, "a unit was lost"
    assert all(u.status == "done" and u.evidence is not None for u in units.values())
    assert {p.name for p in (repo / "markers").iterdir()} == expected
    actions = {a.key for a in model.actions}
    assert actions == {f"{uid}-notified" for uid in expected}, "an action was lost"
    state = repo / ".resume-kit"
    assert not list(state.glob("*.lock")), "a lock outlived its command"
    assert not list(state.glob("running/*.lock")), "a unit claim outlived its command"
    assert len(list((state / "snapshots").glob("*.json"))) <= 5
    commands = WORKERS * UNITS_PER_WORKER * 7
    reads = sum(r["reads"] for r in results)
    print(f"{commands} commands in {WORKERS} processes + 12 runs ({runs_that_worked.strip()} "
          f"verified something), {reads} progress reads "
          f"and {sum(r['snapshot_reads'] for r in results)} snapshot reads by 2 readers, "
          f"0 torn, {seconds:.1f}s")  # fmt: skip


def test_readers_of_a_large_file_never_see_it_half_written(repo: Path) -> None:
    """A 600-unit file (about 60 KiB) rewritten in a tight loop while two readers parse it."""
    init_project(repo)
    path = repo / ".resume-kit" / "progress.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["units"] = [
        {"id": f"doc-{n:04d}", "title": f"Extract document {n} " + "x" * 40, "verify": "true"}
        for n in range(600)
    ]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    writer_script = (
        "import sys\nfrom resume_kit.cli.app import main\n"
        "for n in range(40):\n"
        "    for argv in (['start', f'doc-{n:04d}'], ['reset', f'doc-{n:04d}']):\n"
        "        try:\n            main(argv)\n"
        "        except SystemExit as exc:\n            assert not exc.code, (argv, exc.code)\n"
    )
    stop = repo.parent / "stop-readers"
    readers = [start_python(READER, str(repo), str(stop), cwd=repo) for _ in range(2)]
    writer = start_python(writer_script, cwd=repo, RESUME_KIT_LOCK_TIMEOUT="120")
    try:
        _, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err[-3000:]
    finally:
        stop.write_text("stop\n")
        results = [json.loads(r.communicate(timeout=120)[0]) for r in readers]
    assert all(r["failure_count"] == 0 for r in results), results
    assert sum(r["reads"] for r in results) >= 10
    history = list((repo / ".resume-kit" / "history").glob("progress-*.yaml"))
    assert len(history) == 20  # the ring is full and bounded


HOLDER = r"""
import sys
from pathlib import Path
from resume_kit.infra.store import FileLock
with FileLock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["add", "Another", "--verify", "true"],
        ["start", "a"],
        ["reset", "a"],
        ["block", "a", "--reason", "waiting"],
        ["verify-next"],
        ["run"],
        ["action", "record", "k", "--description", "d"],
        ["plan", "--each", "*.md", "--title", "Check {name}", "--verify", "test -f {path}"],
    ],
    ids=lambda argv: argv[0],
)
def test_contention_is_a_one_line_message_not_a_hang(repo: Path, argv: list[str]) -> None:
    subprocess.run([sys.executable, "-m", "resume_kit", "init", "--goal", "g"], cwd=repo,
                   check=True, capture_output=True)  # fmt: skip
    subprocess.run([sys.executable, "-m", "resume_kit", "add", "A", "--id", "a", "--verify",
                    "true"], cwd=repo, check=True, capture_output=True)  # fmt: skip
    progress_file = repo / ".resume-kit" / "progress.yaml"
    before = progress_file.read_bytes()
    holder = start_python(HOLDER, str(progress_file), cwd=repo, stdin=subprocess.PIPE)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"  # the event: the lock is taken
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "resume_kit", *argv],
            cwd=repo,
            env=env(RESUME_KIT_LOCK_TIMEOUT="0.3"),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        elapsed = time.monotonic() - started
    finally:
        holder.kill()
        holder.communicate()
    lines = result.stderr.splitlines()
    errors = [line for line in lines if line.startswith("resume-kit: error:")]
    assert result.returncode == 2, result.stderr
    assert errors == [
        f"resume-kit: error: progress.yaml is locked by pid {holder.pid} on "
        f"{socket.gethostname()} (alive): {progress_file.with_name('progress.yaml.lock')}"
    ], result.stderr
    assert lines[lines.index(errors[0]) + 1].startswith("hint: wait for that command to finish")
    assert "Traceback" not in result.stderr
    assert elapsed < 10, f"took {elapsed:.1f}s with a 0.3 s lock timeout"
    print(f"{argv[0]}: exit 2 after {elapsed:.2f}s with a 0.3 s lock timeout")
    assert progress_file.read_bytes() == before
    # The holder is gone now (killed): its lock is stale and the same command goes through.
    again = subprocess.run([sys.executable, "-m", "resume_kit", *argv], cwd=repo, env=env(),
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr


def test_readers_do_not_wait_for_a_held_lock(repo: Path) -> None:
    """status, brief and snapshot read progress.yaml without its lock: a long writer elsewhere
    never delays a session start."""
    subprocess.run([sys.executable, "-m", "resume_kit", "init", "--goal", "g"], cwd=repo,
                   check=True, capture_output=True)  # fmt: skip
    progress_file = repo / ".resume-kit" / "progress.yaml"
    holder = start_python(HOLDER, str(progress_file), cwd=repo, stdin=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        for argv in (["status"], ["brief"], ["brief", "--format", "claude-hook"], ["snapshot"]):
            result = subprocess.run([sys.executable, "-m", "resume_kit", *argv], cwd=repo,
                                    env=env(RESUME_KIT_LOCK_TIMEOUT="0.3"), capture_output=True,
                                    text=True, stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip
            assert result.returncode == 0, (argv, result.stderr)
            assert "locked" not in result.stderr
    finally:
        holder.kill()
        holder.communicate()
