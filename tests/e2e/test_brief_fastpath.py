"""The served brief (resume_kit.brief.fastpath) against fresh builds, input by input (issue 18).

A real workspace: a git repository with a done, an in-progress and a todo unit, a log matching
the configured glob, a declared artifact, a Claude Code transcript found by the snapshot's
discovery, a modified and an untracked file. ``resume-kit brief`` runs as a subprocess; each
input changes in turn, and every time the brief the fast path prints equals a fresh build
(``RESUME_KIT_NO_FASTPATH=1``), it was a miss when an input changed, and the receipt stored by
that miss serves the next, unchanged, brief. The clock is ``RESUME_KIT_NOW``: no sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import git

SERVED = "resume-kit: fastpath: served the stored brief"
DEBUG_PREFIX = "resume-kit: fastpath: "
# A build that starts within fastpath.RACY_NS of an input's change stores no receipt: the
# input's stat cannot prove it unchanged yet. How soon a build starts is the machine's speed.
RACY = "changed while the brief was built"


RECORDS = ("fingerprints.json", "facts.json", "hashes.json")  # ours, in the user cache
SETTLE_SECONDS = 60.0


def settling() -> Iterator[None]:
    """One step per run while our records may still be settling after a change (they keep
    changing for 2 s after an input did). Bounded by time, not by a count of runs: how many
    runs fit in 2 s is the machine's speed, and a fast machine fits more than a slow one."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        yield


class Workspace:
    def __init__(self, root: Path, now: int) -> None:
        self.root = root
        self.now = now

    def run(self, *, fast: bool = True) -> tuple[int, str, str, bool, str]:
        """(exit code, stdout, stderr without the debug lines, whether it was served, the
        debug lines: why not)."""
        env = dict(os.environ, RESUME_KIT_NOW=str(self.now), RESUME_KIT_DEBUG_FASTPATH="1")
        if not fast:
            env["RESUME_KIT_NO_FASTPATH"] = "1"
        proc = subprocess.run(
            [sys.executable, "-m", "resume_kit", "brief"],
            cwd=self.root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = proc.stderr.splitlines(keepends=True)
        debug = [line for line in lines if line.startswith(DEBUG_PREFIX)]
        rest = "".join(line for line in lines if not line.startswith(DEBUG_PREFIX))
        served = any(line.startswith(SERVED) for line in debug)
        return proc.returncode, proc.stdout, rest, served, "".join(debug)

    def stored(self, built: tuple[int, str, str, bool, str]) -> None:
        """Make sure a receipt is stored after the build ``built``: when that build refused to
        store one because an input had only just changed, build again (each time unserved and
        equal to ``built``) until one stores."""
        for _ in settling():
            if RACY not in built[4]:
                return
            again = self.run()
            assert not again[3] and again[:3] == built[:3], again[4]
            built = again
        raise AssertionError(f"no receipt stored: {built[4]}")

    def outlast_fresh_inputs(self) -> None:
        """Build until a build starts 2 s after the newest input changed. Our records in the
        user cache (fingerprints, facts, hashes) leave out whatever changed less than 2 s
        before the build that writes them, and a served brief writes none: only a build after
        that moment completes them, and then they stop changing. Each step is a real build,
        not a sleep; how many fit in 2 s is the machine's speed."""
        from resume_kit.facts.fact_reuse import RACY_NS as FACTS_RACY_NS
        from resume_kit.facts.fingerprint_reuse import RACY_NS as FINGERPRINTS_RACY_NS
        from resume_kit.facts.hashcache import RACY_S as HASHES_RACY_S

        window = max(FACTS_RACY_NS, FINGERPRINTS_RACY_NS, int(HASHES_RACY_S * 1e9))
        settled_ns = newest_input_ns(self.root) + window
        for _ in settling():
            started_ns = time.time_ns()
            self.run(fast=False)
            if started_ns > settled_ns:
                return
        raise AssertionError("the inputs never became 2 s old")

    def served_again(self, fresh: tuple[int, str, str, bool, str]) -> None:
        """The next runs serve ``fresh``'s brief. Our records in the user cache (fingerprints,
        facts, hashes) leave out what changed less than 2 s before they were written, and take
        it in once it is older: the run that does so rewrites a file the receipt depends on,
        so it and the next (which finds no receipt) are built, unserved and equal."""
        for _ in settling():
            again = self.run()
            assert again[:3] == fresh[:3], again[4]
            if again[3]:
                return
            because = (RACY, "no stored brief", *(f"/{name}" for name in RECORDS))
            assert any(reason in again[4] for reason in because), again[4]
        raise AssertionError(f"the receipt did not serve: {again[4]}")


# What our own builds write in the work tree: not inputs.
OWN_OUTPUTS = (".resume-kit/snapshots", ".resume-kit/history", ".git/objects", ".git/logs")


def newest_input_ns(root: Path) -> int:
    """The latest change time (mtime or ctime) of the work tree's files, git's index among
    them, of the agent transcripts and of the user's config."""
    folders = [root, Path(os.environ["CLAUDE_CONFIG_DIR"]), Path(os.environ["XDG_CONFIG_HOME"])]
    newest = 0
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            rel = Path(dirpath).relative_to(folder).as_posix()
            if folder == root:
                dirnames[:] = [
                    d for d in dirnames if (d if rel == "." else f"{rel}/{d}") not in OWN_OUTPUTS
                ]
            for name in filenames:
                info = os.lstat(os.path.join(dirpath, name))
                newest = max(newest, info.st_mtime_ns, info.st_ctime_ns)
    return newest


def session_record(repo: Path, text: str, stamp: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": f"u-{stamp}",
            "sessionId": "s1",
            "timestamp": stamp,
            "cwd": str(repo),
            "message": {"role": "user", "content": text},
        }
    )


@pytest.fixture
def workspace(repo: Path, cli) -> Workspace:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "Ship the served brief").code == 0
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("A = 1\n")
    (repo / "out").mkdir()
    (repo / "out" / "a.json").write_text('{"a": 1}\n')
    add = ("add", "Alpha", "--verify", "true", "--id", "alpha", "--files", "src/a.py")
    assert cli(*add, "--artifact", "out/a.json").code == 0
    assert cli("add", "Beta", "--verify", "false", "--id", "beta").code == 0
    assert cli("add", "Gamma", "--verify", "true", "--id", "gamma").code == 0
    (repo / ".resume-kit" / "config.yaml").write_text("logs: ['logs/*.log']\n")
    (repo / ".gitignore").write_text("logs/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "units")
    assert cli("verify-next").code == 0  # alpha done, with evidence
    assert cli("verify-next").code == 1  # beta fails: in progress, with a last failure
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "progress")
    (repo / "logs").mkdir()
    (repo / "logs" / "run.log").write_text("compiling\nerror: something broke\n")
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects"
    folder /= "".join(c if c.isalnum() else "-" for c in str(repo))
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text(
        session_record(repo, "please fix beta", "2026-11-29T08:00:00Z") + "\n"
    )
    (repo / "README.md").write_text("changed\n")
    (repo / "notes.txt").write_text("untracked\n")
    return Workspace(repo, int(time.time()) + 5)


def transcript(ws: Workspace) -> Path:
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects"
    return folder / "".join(c if c.isalnum() else "-" for c in str(ws.root)) / "s1.jsonl"


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def edit_progress(ws: Workspace) -> None:
    progress = ws.root / ".resume-kit" / "progress.yaml"
    progress.write_text(progress.read_text().replace("Ship the served brief", "Ship it faster"))


def commit(ws: Workspace) -> None:
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-q", "-m", "a commit the brief lists")


def write_template(ws: Workspace) -> None:
    folder = ws.root / ".resume-kit" / "templates"
    folder.mkdir(exist_ok=True)
    (folder / "brief.md.j2").write_text("# {{ goal_md }}\n")


def tick(ws: Workspace) -> None:
    ws.now += 61


CHANGES: list[tuple[str, Callable[[Workspace], None]]] = [
    ("progress file", edit_progress),
    ("tracked file edited again", lambda ws: append(ws.root / "README.md", "again\n")),
    ("untracked file", lambda ws: (ws.root / "other.txt").write_text("new\n")),
    ("index", lambda ws: git(ws.root, "add", "README.md")),
    ("HEAD", commit),
    ("log", lambda ws: append(ws.root / "logs" / "run.log", "error: it broke again\n")),
    ("artifact", lambda ws: (ws.root / "out" / "a.json").write_text('{"a": 2}\n')),
    ("owned file", lambda ws: (ws.root / "src" / "a.py").write_text("A = 2\n")),
    (
        "transcript",
        lambda ws: append(
            transcript(ws), session_record(ws.root, "now beta", "2026-11-30T08:00:00Z") + "\n"
        ),
    ),
    ("new log file", lambda ws: (ws.root / "logs" / "new.log").write_text("error: new\n")),
    ("untracked repository template", write_template),
]


def test_served_brief_equals_a_fresh_one_and_misses_on_every_change(
    workspace: Workspace,
) -> None:
    ws = workspace
    first = ws.run()
    assert first[0] == 0 and not first[3]  # nothing stored yet: built (and stored)
    ws.stored(first)
    served = ws.run()
    assert served[3], served[4] + first[4]
    fresh = ws.run(fast=False)
    assert served[:3] == fresh[:3] == first[:3]
    previous = fresh
    for name, change in CHANGES:
        change(ws)
        after = ws.run()
        assert not after[3], f"{name}: served a brief after the change"
        ws.stored(after)
        fresh = ws.run(fast=False)
        assert after[:3] == fresh[:3], name
        ws.served_again(fresh)
        previous = fresh
    assert "is not approved on this machine" in previous[2]  # the template's warning, served
    merged = [
        subprocess.run(
            [sys.executable, "-m", "resume_kit", "brief"],
            cwd=ws.root,
            env=dict(
                os.environ, RESUME_KIT_NOW=str(ws.now), RESUME_KIT_DEBUG_FASTPATH="1", **extra
            ),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        ).stdout
        for extra in ({}, {"RESUME_KIT_NO_FASTPATH": "1"})
    ]
    assert SERVED in merged[0]
    lines = [[ln for ln in m.splitlines() if not ln.startswith(DEBUG_PREFIX)] for m in merged]
    assert lines[0] == lines[1]  # the warning comes before the brief in both (2>&1)


def test_the_clock_misses_exactly_when_the_brief_would_change(workspace: Workspace) -> None:
    ws = workspace
    ws.stored(ws.run())
    before = ws.run()
    assert before[3], before[4]
    changed = 0
    for _ in range(4):
        ws.now += 25
        served = ws.run()
        fresh = ws.run(fast=False)
        assert served[:3] == fresh[:3]
        if fresh[:3] != before[:3]:
            assert not served[3], "served a brief whose ages had moved on"
            changed += 1
        before = fresh
        ws.stored(ws.run())  # store a receipt at this time again
    assert changed  # the log's "just now" became "1 min ago" at least once


def test_a_plain_brief_stores_its_receipt_after_its_answer(workspace: Workspace) -> None:
    """Without the debug line (as the agent's hook runs it) the receipt is written by a
    detached child once the brief is printed and the process has exited; waiting for that
    child (infra.detach) is enough for the next brief to be served, byte for byte."""
    import shutil

    from resume_kit.infra.cachedir import user_cache_root
    from resume_kit.infra.detach import wait_for_detached

    ws = workspace
    ws.outlast_fresh_inputs()  # a build now stores its receipt: no input is racily new
    shutil.rmtree(Path(user_cache_root()) / "served-briefs", ignore_errors=True)
    plain = subprocess.run(
        [sys.executable, "-m", "resume_kit", "brief"],
        cwd=ws.root,
        env=dict(os.environ, RESUME_KIT_NOW=str(ws.now)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plain.returncode == 0 and DEBUG_PREFIX not in plain.stderr, plain.stderr
    wait_for_detached()
    served = ws.run()
    assert served[3], served[4]
    assert served[1] == plain.stdout


def test_approved_template_and_json_are_never_served(workspace: Workspace, cli) -> None:  # type: ignore[no-untyped-def]
    ws = workspace
    write_template(ws)
    env = dict(os.environ, RESUME_KIT_TRUST="all")
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-m", "resume_kit", "brief"],
            cwd=ws.root,
            env=dict(env, RESUME_KIT_DEBUG_FASTPATH="1"),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert SERVED not in proc.stderr
        assert "not stored: an approved repository template renders it" in proc.stderr
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-m", "resume_kit", "brief", "--format", "json"],
            cwd=ws.root,
            env=dict(os.environ, RESUME_KIT_DEBUG_FASTPATH="1"),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert "building: not a brief this path serves" in proc.stderr
