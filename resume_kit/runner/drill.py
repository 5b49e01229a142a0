"""The engine of ``resume-kit drill``: rehearse a resume where it cannot touch live data.

A throwaway ``git worktree add --detach`` of HEAD gets a copy of the live progress file; there
``resume-kit run`` runs as a real subprocess and is SIGKILLed at seeded moments chosen in terms
of the run's own progress events (the k-th unit started: its log appeared in ``runs/``; or it
printed its first output), then resumed. After every kill the invariants are checked; at the
end every unit the drill saw done is verified once more, and the live work tree must be as it
was. Units whose verify command is a side effect (core/side_effects) are not run.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from resume_kit.infra.paths import Layout, find_layout

INVARIANTS = (
    ("progress_valid", "progress.yaml valid after every kill"),
    ("done_passes", "no unit marked done whose command does not pass"),
    ("no_passed_rerun", "no unit that had passed runs again"),
    ("one_rerun", "at most the interrupted unit reruns"),
    ("ledger_once", "no side effect in the ledger repeated"),
    ("brief_next", "the brief after a kill names the interrupted (or next ready) unit"),
    ("released", "the lock and the unit claims are released"),
    ("contained", "artifacts live inside the work tree"),
    ("live_untouched", "the live work tree is untouched"),
)
EVENTS = ("started", "output")  # the k-th unit's log appeared / got its first bytes
POLL_S = 0.005  # how often the run's runs/ folder is looked at while waiting for an event
GROUP_GONE_S = 10.0  # how long the killed run's verify commands may take to stop
RECHECK_TIMEOUT_S = 120.0


@dataclass
class Kill:
    n: int
    after_start: int
    event: str
    unit: str | None = None
    lost_s: float = 0.0
    resume_s: float | None = None
    interrupted: list[str] = field(default_factory=list)


@dataclass
class Receipt:
    trace: str
    seed: int
    kills_requested: int
    root: str
    kills: list[Kill] = field(default_factory=list)
    broken: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    rerun: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    worktree: str | None = None

    def breaks(self, name: str, kill: int | None, unit: str | None, detail: str) -> None:
        self.broken.setdefault(name, []).append({"kill": kill, "unit": unit, "detail": detail})

    @property
    def ok(self) -> bool:
        return not self.broken

    def to_json(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "ok": self.ok,
            "seed": self.seed,
            "root": self.root,
            "kills_requested": self.kills_requested,
            "kills": [vars(k) for k in self.kills],
            "invariants": [
                {
                    "name": name,
                    "text": text,
                    "held": name not in self.broken,
                    "broken": self.broken.get(name, []),
                }
                for name, text in INVARIANTS
            ],
            "skipped": self.skipped,
            "ran": self.ran,
            "rerun": self.rerun,
            "duration_s": round(self.duration_s, 3),
            "worktree": self.worktree,
        }


def live_fingerprint(root: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of every file of the live work tree outside ``.git`` (a drill must
    change none of them; ``.resume-kit/drills`` is where a receipt may be asked to go)."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if d != ".git"]
        if rel == ".resume-kit":
            dirs[:] = [d for d in dirs if d != "drills"]
        for name in files:
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                found[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return found


def _unit_of_log(name: str, ids: list[str]) -> str | None:
    """The unit a ``runs/<unit>-<stamp>.log`` belongs to (the longest id that prefixes it)."""
    best = None
    for uid in ids:
        if name.startswith(uid + "-") and (best is None or len(uid) > len(best)):
            best = uid
    return best


def _released(layout: Layout) -> list[str]:
    """Locks still held after the kill: the progress lock and every unit claim (the per-unit
    lock of ``verify``). Leases (issue 19) are to be checked in :func:`_leases_held`."""
    from resume_kit.infra.errors import ResumeKitError
    from resume_kit.infra.store import FileLock

    held: list[str] = []
    targets = [layout.progress]
    if layout.running.is_dir():
        targets += [
            layout.running / p.name[: -len(".lock")]
            for p in layout.running.iterdir()
            if p.name.endswith(".lock")
        ]
    for target in targets:
        lock = FileLock(target, timeout=0)
        try:
            lock.__enter__()
        except (ResumeKitError, OSError):
            held.append(target.name)
            continue
        lock.__exit__(None, None, None)
    return held + _leases_held(layout)


def _leases_held(layout: Layout) -> list[str]:
    """HOOK POINT for issue 19: the leases a killed run still holds. No lease API exists on
    main yet, so there is nothing to check; the per-unit lock is checked in :func:`_released`."""
    return []


class Drill:
    def __init__(self, layout: Layout, kills: int, seed: int, units: int | None, keep: bool):
        self.live = layout
        self.kills = kills
        self.seed = seed
        self.max_units = units
        self.keep = keep
        self.receipt = Receipt(uuid.uuid4().hex[:12], seed, kills, str(layout.root))
        self.tmp: Path | None = None
        self.wt: Path | None = None
        self.layout: Layout | None = None
        self.seen: dict[str, float] = {}  # log name -> when the drill saw it
        self.ids: list[str] = []

    # ---- set-up

    def _git(self, *args: str, cwd: Path | None = None) -> str:
        from resume_kit.infra.gitcmd import run_git

        return run_git(cwd or self.live.root, *args)

    def prepare(self) -> list[str]:
        """Make the throwaway work tree and its progress file; the units the drill will run."""
        from resume_kit.core.side_effects import classify
        from resume_kit.progress_file import config as config_mod
        from resume_kit.progress_file import io as progress_io

        text = progress_io.read_text(self.live.progress)
        patterns = config_mod.load(self.live).side_effect_patterns
        self.tmp = Path(tempfile.mkdtemp(prefix="resume-kit-drill-"))
        self.wt = self.tmp / "wt"
        self._git("worktree", "add", "--detach", "--quiet", str(self.wt), "HEAD")
        state = self.wt / ".resume-kit"
        state.mkdir(exist_ok=True)
        (state / "progress.yaml").write_text(text, encoding="utf-8")
        self.layout = find_layout(self.wt)
        chosen: list[str] = []
        with progress_io.transaction(self.layout) as doc:
            progress = doc.progress
            self.ids = [u.id for u in progress.units]
            for unit in progress.units:
                if unit.status == "done" or unit.verify is None or unit.status == "blocked":
                    continue
                matches = classify(unit.verify, patterns)
                if matches:
                    reason = f"side effect ({matches[0].rule})"
                elif self.max_units is not None and len(chosen) >= self.max_units:
                    reason = "beyond --units"
                else:
                    chosen.append(unit.id)
                    continue
                self.receipt.skipped.append({"unit": unit.id, "reason": reason})
                unit.status, unit.blocked_reason = "blocked", f"drill: {reason}"
        return chosen

    def cleanup(self) -> None:
        if self.wt is None or self.tmp is None:
            return
        if self.keep:
            self.receipt.worktree = str(self.wt)
            return
        with contextlib.suppress(Exception):
            self._git("worktree", "remove", "--force", str(self.wt))
        shutil.rmtree(self.tmp, ignore_errors=True)
        with contextlib.suppress(Exception):
            self._git("worktree", "prune")

    # ---- running

    def _logs(self) -> list[str]:
        assert self.layout is not None
        runs = self.wt / ".resume-kit" / "runs" if self.wt else None
        if runs is None or not runs.is_dir():
            return []
        return sorted(p.name for p in runs.iterdir() if p.name.endswith(".log"))

    def _env(self) -> dict[str, str]:
        from resume_kit.facts.history_db import OFF_ENV, TRACE_ENV
        from resume_kit.infra.trust import TRUST_ENV

        env = dict(os.environ)
        # the live tree's approvals were checked before the drill; the copy is keyed elsewhere
        env[TRUST_ENV] = "all"
        env[TRACE_ENV] = self.receipt.trace
        env[OFF_ENV] = "off"  # a throwaway tree's history would only litter --all-repos
        return env

    def _segment(
        self, target: int | None, event: str
    ) -> tuple[bool, str | None, float, float | None]:
        """Run (or resume) until the ``target``-th unit start overall (``started``) or its
        first output or the next start (``output``), then SIGKILL; without a target, to the
        end. (killed, the unit killed, seconds it had run, seconds to the first start)."""
        assert self.wt is not None
        began = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-I", "-m", "resume_kit", "run", "--keep-going"],
            cwd=self.wt,
            env=self._env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        first: float | None = None
        runs = self.wt / ".resume-kit" / "runs"
        order: list[str] = []
        while True:
            for name in self._logs():
                if name not in self.seen:
                    self.seen[name] = time.monotonic()
                    order.append(name)
                    if first is None:
                        first = self.seen[name] - began
            total = len(self.seen)
            if target is not None and total >= target and order and proc.poll() is None:
                index = len(order) - 1 - (total - target)  # the target-th start of all
                name = order[max(index, 0)]
                ready = event == "started" or total > target
                with contextlib.suppress(OSError):
                    ready = ready or (runs / name).stat().st_size > 0
                if ready:
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    self._wait_groups()
                    newest = order[-1]  # the unit running when killed (one job)
                    lost = time.monotonic() - self.seen[newest]
                    return True, _unit_of_log(newest, self.ids), lost, first
            if proc.poll() is not None:
                return False, None, 0.0, first
            time.sleep(POLL_S)

    def _wait_groups(self) -> None:
        """Wait for the killed run's verify commands (their supervisors stop them)."""
        from resume_kit.infra.store import group_alive

        assert self.wt is not None
        running = self.wt / ".resume-kit" / "running"
        deadline = time.monotonic() + GROUP_GONE_S
        for path in running.glob("*.lock") if running.is_dir() else []:
            with contextlib.suppress(OSError, ValueError):
                pgid = json.loads(path.read_text()).get("pgid")
                while isinstance(pgid, int) and group_alive(pgid) and time.monotonic() < deadline:
                    time.sleep(POLL_S)

    # ---- checking

    def _brief_next(self) -> str | None:
        assert self.wt is not None
        out = subprocess.run(
            [sys.executable, "-I", "-m", "resume_kit", "brief", "--format", "json"],
            cwd=self.wt,
            env=self._env(),
            capture_output=True,
            text=True,
            check=False,
        )
        try:
            data = json.loads(out.stdout)
        except json.JSONDecodeError:
            return None
        nxt = data.get("next") if isinstance(data, dict) else None
        return nxt.get("id") if isinstance(nxt, dict) else None

    def _check_kill(
        self, kill: Kill, started: list[str], done_before: set[str], ledger: dict[str, int]
    ) -> set[str]:
        from resume_kit.infra.errors import ResumeKitError
        from resume_kit.model.progress import pick_next
        from resume_kit.progress_file import io as progress_io

        assert self.layout is not None
        r = self.receipt
        try:
            progress = progress_io.load(self.layout).progress
        except ResumeKitError as exc:
            r.breaks("progress_valid", kill.n, None, str(exc))
            return done_before
        held = _released(self.layout)
        if held:
            r.breaks("released", kill.n, kill.unit, "still held: " + ", ".join(held))
        done = {u.id for u in progress.units if u.status == "done"}
        # interrupted: started since the last kill and not done (with a pass still being
        # written when the next unit started, that is two units)
        kill.interrupted = [u for u in started if u not in done]
        nxt = pick_next(progress)
        expected = set(kill.interrupted) | ({nxt.id} if nxt is not None else set())
        named = self._brief_next()
        if named not in expected and not (named is None and not expected):
            want = ", ".join(sorted(expected)) or "none"
            r.breaks("brief_next", kill.n, kill.unit, f"brief names {named}, expected {want}")
        self._check_ledger(progress, ledger, kill.n)
        return done

    def _check_ledger(self, progress: Any, ledger: dict[str, int], kill: int | None) -> None:
        for action in progress.actions:
            wins = sum(1 for a in action.history() if a.status == "success")
            if wins > 1 and wins > ledger.get(action.key, 0):
                self.receipt.breaks("ledger_once", kill, None, f"{action.key} succeeded {wins}x")

    def _check_runs(
        self,
        logs: list[str],
        done_before: set[str],
        allowed: list[str],
        ran_before: set[str],
        kill: int | None,
    ) -> None:
        r = self.receipt
        for uid in [u for u in (_unit_of_log(n, self.ids) for n in logs) if u]:
            if uid in done_before:
                r.breaks("no_passed_rerun", kill, uid, "passed before, ran again")
            elif uid in ran_before:
                r.rerun.append(uid)
                if uid not in allowed:
                    was = ", ".join(allowed) or "none"
                    r.breaks("one_rerun", kill, uid, f"reran, interrupted: {was}")
            if uid not in r.ran:
                r.ran.append(uid)

    def _final(self, done_at_start: set[str]) -> None:
        from resume_kit.progress_file import io as progress_io

        assert self.layout is not None and self.wt is not None
        progress = progress_io.load(self.layout).progress
        for unit in progress.units:
            for art in unit.artifacts:  # the file validates; a symlink on the way may not
                inside = (self.wt / art).resolve()
                if not inside.is_relative_to(self.wt.resolve()):
                    self.receipt.breaks("contained", None, unit.id, f"artifact {art} is outside")
            live = str(self.live.root)
            if unit.verify and unit.id in self.receipt.ran and live in unit.verify:
                detail = "the verify command names a path in the live tree"
                self.receipt.breaks("contained", None, unit.id, detail)
            if unit.status != "done" or unit.id in done_at_start or unit.verify is None:
                continue
            try:
                code = subprocess.run(
                    ["/bin/sh", "-c", unit.verify],
                    cwd=self.wt,
                    env=self._env(),
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=RECHECK_TIMEOUT_S,
                    check=False,
                ).returncode
            except subprocess.TimeoutExpired:
                code = 124
            if code != 0:
                self.receipt.breaks("done_passes", None, unit.id, f"marked done, exits {code} now")

    # ---- the drill

    def run(self) -> Receipt:
        from resume_kit.progress_file import io as progress_io

        started = time.monotonic()
        before = live_fingerprint(self.live.root)
        try:
            chosen = self.prepare()
            assert self.layout is not None
            progress = progress_io.load(self.layout).progress
            done = {u.id for u in progress.units if u.status == "done"}
            done_at_start = set(done)
            ledger = {
                a.key: sum(1 for t in a.history() if t.status == "success")
                for a in progress.actions
            }
            rng = random.Random(self.seed)
            n = min(self.kills, len(chosen))
            targets = sorted(rng.sample(range(1, len(chosen) + 1), n)) if n else []
            events = [rng.choice(EVENTS) for _ in targets]
            allowed: list[str] = []
            for i, (target, event) in enumerate([*zip(targets, events, strict=True), (None, "")]):
                logs_before = set(self.seen)
                ran_before = {u for u in (_unit_of_log(x, self.ids) for x in logs_before) if u}
                killed, unit, lost, first = self._segment(target, event)
                new_logs = sorted(set(self.seen) - logs_before)
                self._check_runs(new_logs, done, allowed, ran_before, i or None)
                if self.receipt.kills and first is not None:
                    self.receipt.kills[-1].resume_s = round(first, 3)
                if target is None or not killed:
                    break
                kill = Kill(i + 1, target, event, unit, round(lost, 3))
                self.receipt.kills.append(kill)
                ran_now = [u for u in (_unit_of_log(x, self.ids) for x in new_logs) if u]
                done = self._check_kill(kill, ran_now, done, ledger)
                # every unit a kill interrupted that has not passed since may run again
                allowed = [u for u in [*allowed, *kill.interrupted] if u not in done]
                if self._live_changed(before, kill.n):
                    before = live_fingerprint(self.live.root)
            self._final(done_at_start)
            self._live_changed(before, None)
        finally:
            self.cleanup()
            self.receipt.duration_s = time.monotonic() - started
        return self.receipt

    def _live_changed(self, before: dict[str, tuple[int, int]], kill: int | None) -> bool:
        after = live_fingerprint(self.live.root)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        for path in changed[:10]:
            self.receipt.breaks("live_untouched", kill, None, f"{path} changed in the live tree")
        return bool(changed)
