"""The engine of ``resume-kit drill``: rehearse a resume where it cannot touch live data.

A throwaway ``git worktree add --detach`` of HEAD gets a copy of the live progress file; there
``resume-kit run`` runs as a real subprocess and is SIGKILLed at seeded moments chosen in terms
of the run's own progress events (the k-th unit started: its log appeared in ``runs/``; or it
printed its first output), then resumed. After every kill the invariants are checked; at the
end every unit the drill saw done is verified once more, and the live work tree must be as it
was. Units whose verify command is a side effect (core/side_effects, or the unit's
``side_effects: true``) and units someone leases are not run.

Leases: the drill claims the units it runs in the clone's own refs (never on a remote), as the
throwaway work tree's holder, so ``run`` renews and releases them as it would an agent's; at
the end it releases whatever is left and checks that none of its leases outlived it.

Which unit a kill interrupted is read from the run's own claims: ``running/<id>.lock`` is held
from just before a unit's command starts until it ends, so the claim the killed run left names
the unit whose command was running. ``run`` starts the next unit while a pass is still being
written (batch_engine's overlap), so a kill can also cut off one unit's pass after its command
ended: that unit is a *lost pass*, allowed one rerun, which must pass (see :func:`in_flight`).
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
from pathlib import Path

from resume_kit.core.light_dataclass import dataclass, field
from resume_kit.core.typing_light import TYPE_CHECKING, Any
from resume_kit.infra.paths import Layout, find_layout

if TYPE_CHECKING:
    from resume_kit.model.progress import Progress, Unit

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
LEASE_TTL_S = 300.0  # the drill's own leases; `run` renews the one it works on meanwhile


@dataclass
class Kill:
    n: int
    after_start: int
    event: str
    unit: str | None = None  # the interrupted unit (its command was running), else the newest
    lost_s: float = 0.0
    resume_s: float | None = None
    interrupted: str | None = None
    lost_pass: list[str] = field(default_factory=list)
    leases_left: list[str] = field(default_factory=list)  # the drill's leases after the kill


@dataclass(frozen=True)
class SegmentEnd:
    killed: bool
    newest: str | None  # the unit of the newest log when killed
    lost_s: float  # how long that unit had run
    first_s: float | None  # from the segment's start to its first unit start
    claims: frozenset[str] = frozenset()  # running/<id>.lock files the killed run left


def in_flight(
    started: list[str], done: set[str], failed: set[str], claims: frozenset[str]
) -> tuple[str | None, list[str]]:
    """(the interrupted unit, the lost passes) of one kill.

    ``started``: the units whose logs appeared in the killed segment, in order; ``done`` and
    ``failed`` (a failure recorded during the segment) as the progress file says after it;
    ``claims``: the unit claims the killed run left. The interrupted unit is the one whose
    command was running (its claim is left; with one job there is at most one); with no claim
    left, the newest started unit with no outcome recorded (the kill cut off its outcome while
    it was written). Every other started unit with no outcome recorded had passed: ``run``
    starts the next unit before a pass is written, and only after a pass. Those are lost
    passes.
    """
    pending = [u for u in started if u not in done and u not in failed]
    running = [u for u in started if u in claims] or sorted(claims)
    interrupted = running[-1] if running else (pending[-1] if pending else None)
    return interrupted, [u for u in pending if u != interrupted]


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

    leases: list[str] = field(default_factory=list)  # the units the drill leased

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
            "leased": self.leases,
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


def _failure_key(unit: Unit) -> tuple[str, str, int, int] | None:
    """What changes whenever a failure of ``unit`` is recorded."""
    lf = unit.last_failure
    return None if lf is None else (lf.at, lf.signature, lf.repeats, lf.reruns)


def _claims(layout: Layout) -> frozenset[str]:
    """The units whose claim file (``running/<id>.lock``) is there, read before anything
    breaks a stale one."""
    running = layout.running
    if not running.is_dir():
        return frozenset()
    return frozenset(p.name[: -len(".lock")] for p in running.iterdir() if p.name.endswith(".lock"))


def _released(layout: Layout) -> list[str]:
    """Locks still held after the kill: the progress lock and every unit claim (the per-unit
    lock of ``verify``); the drill's leases are checked at the end (:func:`_leases_held`)."""
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
    return held


def _leases_held(layout: Layout) -> list[str]:
    """The units this work tree's holder (the drill's, in the throwaway tree) leases, as the
    clone's refs say: the local lock, which every worktree of the clone shares."""
    from resume_kit.runner.leases import ours

    return sorted(ours(layout))


def _release_all(layout: Layout) -> None:
    """Release every lease of this work tree's holder (local refs only); fail-open."""
    from resume_kit.runner.leases import ours, release

    for unit, where in ours(layout).items():
        if where == "local":
            with contextlib.suppress(Exception):
                release(layout, unit, None)


def _leased_in_live(live: Layout) -> dict[str, str]:
    """unit → who, for the units someone leases as the live work tree knows it (its local refs
    and the last fetched remote ones; no network): someone else's, and the live tree's own
    (the throwaway tree is another holder, whose `run` would skip them)."""
    from resume_kit.core.timeutil import from_epoch
    from resume_kit.runner.leases import held_by_others, ours

    found = {
        unit: f"{lease.holder.label()} until {from_epoch(lease.expires_at)}" if lease else "someone"
        for unit, lease in held_by_others(live).items()
    }
    for unit in ours(live):
        found.setdefault(unit, "you in the live work tree")
    return found


def skip_reason(unit: Unit, patterns: Any, leased: dict[str, str]) -> tuple[str, str] | None:
    """(kind, reason) when the drill must not run ``unit``: ``field`` (it is marked
    ``side_effects: true``), ``rule`` (its verify matches a side-effect rule) or ``leased``;
    None when it may run."""
    from resume_kit.core.side_effects import classify

    if unit.side_effects:
        return "field", "marked side_effects: true"
    matches = classify(unit.verify or "", patterns)
    if matches:
        return "rule", f"side effect ({matches[0].rule})"
    if unit.id in leased:
        return "leased", f"leased by {leased[unit.id]}"
    return None


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
        self.failures: dict[str, tuple[str, str, int, int] | None] = {}  # as last checked
        self.lost: dict[str, int] = {}  # unit -> the kill that cut off its pass being written

    # ---- set-up

    def _git(self, *args: str, cwd: Path | None = None) -> str:
        from resume_kit.infra.gitcmd import run_git

        return run_git(cwd or self.live.root, *args)

    def prepare(self) -> list[str]:
        """Make the throwaway work tree and its progress file; the units the drill will run,
        each leased by the drill (local refs)."""
        from resume_kit.progress_file import config as config_mod
        from resume_kit.progress_file import io as progress_io
        from resume_kit.runner.leases import claim

        text = progress_io.read_text(self.live.progress)
        patterns = config_mod.load(self.live).side_effect_patterns
        leased = _leased_in_live(self.live)
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
                skip = skip_reason(unit, patterns, leased)
                if skip is None and self.max_units is not None and len(chosen) >= self.max_units:
                    skip = ("units", "beyond --units")
                if skip is None:
                    chosen.append(unit.id)
                    continue
                kind, reason = skip
                self.receipt.skipped.append({"unit": unit.id, "reason": reason, "kind": kind})
                unit.status, unit.blocked_reason = "blocked", f"drill: {reason}"
        for uid in chosen:  # as an agent would before `run`; `run` renews and releases them
            with contextlib.suppress(Exception):
                if claim(self.layout, uid, None, LEASE_TTL_S).ok:
                    self.receipt.leases.append(uid)
        return chosen

    def cleanup(self) -> None:
        if self.wt is None or self.tmp is None:
            return
        if self.layout is not None:
            _release_all(self.layout)  # with --keep too: the refs are the live clone's
        if self.keep:
            self.receipt.worktree = str(self.wt)
            return
        with contextlib.suppress(Exception):
            self._git("worktree", "remove", "--force", str(self.wt))
        shutil.rmtree(self.tmp, ignore_errors=True)
        with contextlib.suppress(Exception):
            self._git("worktree", "prune")
        if self.layout is not None:  # the throwaway tree's own cache folder, keyed by its path
            from resume_kit.infra.cachedir import worktree_cache

            folder = worktree_cache(str(self.layout.root), str(self.layout.git_common_dir))
            shutil.rmtree(folder, ignore_errors=True)

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

    def _segment(self, target: int | None, event: str) -> SegmentEnd:
        """Run (or resume) until the ``target``-th unit start overall (``started``) or its
        first output or the next start (``output``), then SIGKILL; without a target, to the
        end."""
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
                    assert self.layout is not None
                    claims = _claims(self.layout)
                    self._wait_groups()
                    newest = order[-1]
                    lost = time.monotonic() - self.seen[newest]
                    return SegmentEnd(True, _unit_of_log(newest, self.ids), lost, first, claims)
            if proc.poll() is not None:
                return SegmentEnd(False, None, 0.0, first)
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
        self,
        kill: Kill,
        end: SegmentEnd,
        started: list[str],
        done_before: set[str],
        ledger: dict[str, int],
    ) -> tuple[set[str], list[str]]:
        """Check the invariants after a kill; (the units done now, the units whose failure
        was recorded in the killed segment)."""
        from resume_kit.infra.errors import ResumeKitError
        from resume_kit.model.progress import pick_next
        from resume_kit.progress_file import io as progress_io

        assert self.layout is not None
        r = self.receipt
        try:
            progress = progress_io.load(self.layout).progress
        except ResumeKitError as exc:
            r.breaks("progress_valid", kill.n, None, str(exc))
            return done_before, []
        held = _released(self.layout)
        if held:
            r.breaks("released", kill.n, kill.unit, "still held: " + ", ".join(held))
        done = {u.id for u in progress.units if u.status == "done"}
        failed = [u.id for u in progress.units if _failure_key(u) != self.failures.get(u.id)]
        self.failures = {u.id: _failure_key(u) for u in progress.units}
        kill.interrupted, kill.lost_pass = in_flight(started, done, set(failed), end.claims)
        kill.unit = kill.interrupted or end.newest
        kill.leases_left = _leases_held(self.layout)
        # a lease a kill left on a done unit is released as the next run starts, before any
        # unit does: one on a unit done before this segment began is a leak
        for uid in sorted(set(kill.leases_left) & done_before):
            detail = "the drill's lease on it outlived a resume (done before it)"
            r.breaks("released", kill.n, uid, detail)
        nxt = pick_next(progress)
        expected = set(kill.lost_pass) | {u for u in (kill.interrupted,) if u is not None}
        expected |= {nxt.id} if nxt is not None else set()
        named = self._brief_next()
        if named not in expected and not (named is None and not expected):
            want = ", ".join(sorted(expected)) or "none"
            r.breaks("brief_next", kill.n, kill.unit, f"brief names {named}, expected {want}")
        self._check_ledger(progress, ledger, kill.n)
        return done, failed

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
        for uid, kill in self.lost.items():  # a pass cut off while written, then rerun
            if (lost := progress.unit(uid)) is not None and lost.status != "done":
                detail = f"its pass was cut off by kill {kill} while written; run again it fails"
                self.receipt.breaks("done_passes", kill, uid, detail)

    def _check_leases(self, progress: Progress) -> None:
        """No lease of the drill's on a done unit once the run ended by itself (a pass releases
        it; the next run releases one a kill left), and none at all once the drill released
        what was left: the throwaway tree shares the live clone's refs."""
        assert self.layout is not None
        held = set(_leases_held(self.layout))
        for unit in progress.units:
            if unit.status == "done" and unit.id in held:
                detail = "the drill's lease on it is still held after it passed"
                self.receipt.breaks("released", None, unit.id, detail)
        _release_all(self.layout)
        for uid in _leases_held(self.layout):
            self.receipt.breaks("released", None, uid, "the drill's lease outlived the drill")

    # ---- the drill

    def run(self) -> Receipt:
        from resume_kit.progress_file import io as progress_io

        started = time.monotonic()
        before = live_fingerprint(self.live.root)
        try:
            chosen = self.prepare()
            assert self.layout is not None
            progress = progress_io.load(self.layout).progress
            self.failures = {u.id: _failure_key(u) for u in progress.units}
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
                end = self._segment(target, event)
                new_logs = sorted(set(self.seen) - logs_before)
                self._check_runs(new_logs, done, allowed, ran_before, i or None)
                if self.receipt.kills and end.first_s is not None:
                    self.receipt.kills[-1].resume_s = round(end.first_s, 3)
                if target is None or not end.killed:
                    break
                kill = Kill(i + 1, target, event, end.newest, round(end.lost_s, 3))
                self.receipt.kills.append(kill)
                ran_now = [u for u in (_unit_of_log(x, self.ids) for x in new_logs) if u]
                done, retry = self._check_kill(kill, end, ran_now, done, ledger)
                self.lost.update({uid: kill.n for uid in kill.lost_pass})
                # may run again until they pass: the interrupted unit, a pass the kill cut off
                # while it was written, and a unit whose failure was recorded (a retry)
                new = [u for u in (kill.interrupted, *kill.lost_pass, *retry) if u is not None]
                allowed = [u for u in dict.fromkeys([*allowed, *new]) if u not in done]
                if self._live_changed(before, kill.n):
                    before = live_fingerprint(self.live.root)
            self._final(done_at_start)
            self._check_leases(progress_io.load(self.layout).progress)
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
