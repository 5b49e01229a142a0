"""Unit leases on the shared git remote (or, with no remote, in the clone's own refs).

``claim`` is a compare-and-swap: ``git push --force-with-lease=REF:EXPECTED`` (EXPECTED empty:
the ref must be absent) of a new lease blob, so of several claims that read the same old value
exactly one is applied by the remote; the others are rejected and read the winner. Without a
remote (``--offline``, or a clone with none), ``git update-ref REF NEW OLD`` is the same CAS on
the refs that every linked worktree of the clone shares. The rule of who may take a lease is
:func:`resume_kit.core.leases.verdict`; what this machine first saw, and when, is kept in the
user's cache folder so that expiry is judged by this machine's clock alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from resume_kit.core.lazy_regex import lazy
from resume_kit.core.leases import (
    DEFAULT_TTL_S,
    LEASE_REF_PREFIX,
    TRACKING_PREFIX,
    Holder,
    Lease,
    encode,
    verdict,
)
from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import TYPE_CHECKING, Any, Literal
from resume_kit.facts.leases import LeaseRef, read_leases, zero_oid
from resume_kit.infra.errors import EXIT_LEASED, ResumeKitError
from resume_kit.infra.gitcmd import run_git_bytes
from resume_kit.infra.gitremote import local_args, run_remote
from resume_kit.infra.paths import Layout
from resume_kit.model.progress import Progress, Unit

if TYPE_CHECKING:
    from resume_kit.runner.verify import Outcome

ClaimOutcome = Literal["taken", "renewed", "took_over", "held"]
_ATTEMPTS = 5


@dataclass(frozen=True)
class ClaimResult:
    outcome: ClaimOutcome
    unit: str
    where: str  # "local" or the remote's name
    lease: Lease | None  # ours when taken/renewed/took_over; the other holder's when held

    @property
    def ok(self) -> bool:
        return self.outcome != "held"


def this_holder(layout: Layout) -> Holder:
    from resume_kit.facts.leases import this_holder as holder

    return holder(layout.root)


def _remote_exists(layout: Layout, name: str) -> bool:
    status, _, _ = run_git_bytes(layout.root, "config", "--get", f"remote.{name}.url", check=False)
    return status == 0


def choose_remote(layout: Layout, remote: str | None, offline: bool) -> str | None:
    """The remote leases live on: ``remote``; else ``origin`` when there is one; None (the
    clone's own refs) with ``offline`` or no remote."""
    from resume_kit.infra.gitremote import check_remote_name

    if offline:
        return None
    if remote is not None:
        check_remote_name(remote)
        if not _remote_exists(layout, remote):
            raise ResumeKitError(
                f"no remote named {remote!r} in this clone",
                hint="see `git remote -v`, or use --offline for the local lock",
            )
        return remote
    return "origin" if _remote_exists(layout, "origin") else None


# ----------------------------------------------------------------- what this machine saw


def _seen_file(layout: Layout) -> Path:
    return layout.user_cache / "leases-seen.json"


def first_seen(layout: Layout, ref: str, oid: str, now: float) -> float:
    """When this machine first saw ``ref`` at ``oid`` (now, the first time); kept in the
    user's cache folder, only for refs that still hold that object."""
    from resume_kit.infra.store import atomic_write

    path = _seen_file(layout)
    try:
        seen = json.loads(path.read_bytes()[:1_000_000])
    except (OSError, ValueError):
        seen = {}
    if not isinstance(seen, dict):
        seen = {}
    entry = seen.get(ref)
    if (
        isinstance(entry, list)
        and len(entry) == 2
        and entry[0] == oid
        and isinstance(entry[1], (int, float))
        and entry[1] <= now
    ):
        return float(entry[1])
    seen[ref] = [oid, now]
    if len(seen) > 2000:
        seen = dict(list(seen.items())[-2000:])
    with contextlib.suppress(OSError):
        atomic_write(path, json.dumps(seen))
    return now


# ----------------------------------------------------------------- git plumbing


def _tracking_ref(remote: str, unit: str) -> str:
    return f"{TRACKING_PREFIX}{remote}/leases/{unit}"


def _lease_ref(unit: str) -> str:
    return LEASE_REF_PREFIX + unit


def _fail(remote: str, stderr: bytes, what: str) -> ResumeKitError:
    lines = [ln for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    lines = [ln for ln in lines if ln.startswith(("fatal:", "error:"))][:1] or lines[-1:]
    from resume_kit.core.escape import escape_controls

    detail = escape_controls(lines[-1].strip())[:200] if lines else "git failed"
    return ResumeKitError(
        f"cannot {what} on remote {remote!r}: {detail}",
        hint="check the network and `git remote -v`; `--offline` takes the local lock instead",
    )


def fetch_leases(layout: Layout, remote: str) -> None:
    """Store the remote's lease refs as ``refs/resume-kit/remotes/<remote>/leases/*``.

    The fetches into one refs folder (a clone and its linked worktrees) take turns (an
    ``flock`` in the user's cache, released by the kernel when a holder dies), so a
    ``<ref>.lock`` left in that namespace while one is held can only be a killed fetch's: git
    would refuse every later fetch of that ref ("cannot lock ref"), so it is removed first."""
    import fcntl

    from resume_kit.infra.cachedir import open_lock

    fd = open_lock(_fetch_lock_path(layout))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _remove_stale_ref_locks(Path(layout.git_common_dir), remote)
        status, _, err = run_remote(
            layout.root,
            remote,
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            "--no-auto-gc",
            "--prune",
            remote,
            f"+{LEASE_REF_PREFIX}*:{TRACKING_PREFIX}{remote}/leases/*",
        )
    finally:
        os.close(fd)
    if status != 0:
        raise _fail(remote, err, "read the leases")


def _fetch_lock_path(layout: Layout) -> str:
    """The turn-taking lock of the fetches into ``layout``'s git common dir."""
    from resume_kit.core.digest import sha256_hex
    from resume_kit.infra.cachedir import ensure_private, user_cache_root

    folder = ensure_private(os.path.join(user_cache_root(), "lease-fetch"))
    key = sha256_hex(str(layout.git_common_dir).encode("utf-8", "surrogateescape"))[:32]
    return os.path.join(folder, key + ".lock")


_PLAIN_REMOTE = lazy(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def _remove_stale_ref_locks(common_dir: Path, remote: str) -> None:
    """Delete the ``*.lock`` files in ``refs/resume-kit/remotes/<remote>/leases/`` (regular
    files only, no symlink on the way: nothing else is touched)."""
    import stat

    from resume_kit.infra.safefs import UnsafePath, contained_lstat

    if not _PLAIN_REMOTE.fullmatch(remote):
        return
    try:
        folder, info = contained_lstat(common_dir, f"{TRACKING_PREFIX}{remote}/leases")
    except (OSError, UnsafePath):
        return
    if not stat.S_ISDIR(info.st_mode):
        return
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".lock") and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _current(layout: Layout, ref: str, unit: str) -> tuple[str | None, Lease | None]:
    """(object id or None when absent, its lease) of ``ref`` in this clone."""
    for item in read_leases(layout.root, ref):
        if item.ref == ref:
            return item.oid, item.lease
    return None, None


def _write_blob(layout: Layout, data: bytes) -> str:
    import subprocess

    from resume_kit.infra.gitcmd import clean_git_env, git_argv

    proc = subprocess.run(
        git_argv(layout.root, ("hash-object", "-w", "--no-filters", "--stdin")),
        cwd=layout.root,
        env=clean_git_env(),
        input=data,
        capture_output=True,
        check=True,
    )
    return proc.stdout.decode("ascii").strip()


def _cas_local(layout: Layout, ref: str, new: str | None, old: str | None) -> bool:
    """``git update-ref`` REF NEW OLD (delete when ``new`` is None): True when applied."""
    args = ["update-ref", "-d", ref, old or zero_oid()] if new is None else [
        "update-ref", ref, new, old or zero_oid()
    ]  # fmt: skip
    status, _, _ = run_git_bytes(layout.root, *local_args(), *args, check=False)
    return status == 0


def _cas_remote(layout: Layout, remote: str, ref: str, new: str | None, old: str | None) -> bool:
    """``git push --force-with-lease=REF:OLD`` of NEW (delete when None): True when the remote
    applied it, False when it refused (someone else moved the ref first)."""
    spec = f"{new}:{ref}" if new is not None else f":{ref}"
    _, out, err = run_remote(
        layout.root,
        remote,
        "push",
        "--porcelain",
        "--no-verify",
        "--no-signed",
        f"--force-with-lease={ref}:{old or ''}",
        remote,
        spec,
    )
    for line in out.decode("utf-8", "replace").splitlines():
        fields = line.split("\t")
        if len(fields) < 2 or not fields[1].endswith(f":{ref}"):
            continue
        if fields[0] == "!":
            return False
        tracking = _tracking_ref(remote, ref[len(LEASE_REF_PREFIX) :])
        update = ["-d", tracking] if new is None else [tracking, new]
        run_git_bytes(layout.root, *local_args(), "update-ref", *update, check=False)
        return True
    raise _fail(remote, err, "update the lease")


# ----------------------------------------------------------------- the commands' engine


def _check_id(unit: str) -> None:
    """A unit id is part of a ref name and a push refspec: only the id rule's characters."""
    from resume_kit.model.progress import ID_PATTERN, ID_PATTERN_TEXT

    if not ID_PATTERN.match(unit):
        raise ResumeKitError(f"{unit!r} is not a unit id", hint=f"unit ids match {ID_PATTERN_TEXT}")


def claim(
    layout: Layout,
    unit: str,
    remote: str | None,
    ttl: float = DEFAULT_TTL_S,
    clock: float | None = None,
) -> ClaimResult:
    """Take, renew or take over the lease on ``unit``; ``held`` when someone else has it."""
    _check_id(unit)
    me = this_holder(layout)
    where = remote or "local"
    for _ in range(_ATTEMPTS):
        now = time.time() if clock is None else clock
        seen_ref = _tracking_ref(remote, unit) if remote is not None else _lease_ref(unit)
        oid, current = _observe(layout, remote, unit)
        since = first_seen(layout, seen_ref, oid, now) if oid else now
        rule = verdict(oid is not None, current, me, now, since)
        if rule == "held":
            return ClaimResult("held", unit, where, current)
        taken_at = current.taken_at if rule == "ours" and current is not None else now
        lease = Lease(
            unit=unit,
            holder=me,
            taken_at=taken_at,
            renewed_at=now,
            expires_at=now + ttl,
            ttl_s=ttl,
            nonce=os.urandom(8).hex(),
        )
        new = _write_blob(layout, encode(lease))
        if _swap(layout, remote, unit, new, oid):
            outcomes: dict[str, ClaimOutcome] = {
                "free": "taken",
                "ours": "renewed",
                "expired": "took_over",
            }
            outcome = outcomes[rule]
            return ClaimResult(outcome, unit, where, lease)
    oid, current = _current(
        layout, _tracking_ref(remote, unit) if remote else _lease_ref(unit), unit
    )
    return ClaimResult("held", unit, where, current)


def _observe(layout: Layout, remote: str | None, unit: str) -> tuple[str | None, Lease | None]:
    """The lease on ``unit`` as it stands now: fetched from ``remote`` first, else local."""
    if remote is not None:
        fetch_leases(layout, remote)
        return _current(layout, _tracking_ref(remote, unit), unit)
    return _current(layout, _lease_ref(unit), unit)


def _swap(layout: Layout, remote: str | None, unit: str, new: str | None, old: str | None) -> bool:
    """Compare-and-swap the lease ref of ``unit`` from ``old`` to ``new`` (None: absent)."""
    if remote is not None:
        return _cas_remote(layout, remote, _lease_ref(unit), new, old)
    return _cas_local(layout, _lease_ref(unit), new, old)


def release(layout: Layout, unit: str, remote: str | None) -> Literal["released", "absent", "held"]:
    """Drop our lease on ``unit``: ``held`` (and nothing changed) when it is someone else's."""
    _check_id(unit)
    me = this_holder(layout)
    for _ in range(_ATTEMPTS):
        oid, current = _observe(layout, remote, unit)
        if oid is None:
            return "absent"
        if current is None or not current.holder.same(me):
            return "held"
        if _swap(layout, remote, unit, None, oid):
            return "released"
    return "held"


def known_leases(layout: Layout) -> list[LeaseRef]:
    """Every lease this clone knows without the network (local refs, last fetched ones)."""
    return read_leases(layout.root, common_dir=layout.git_common_dir)


def held_by_others(
    layout: Layout, clock: float | None = None, known: list[LeaseRef] | None = None
) -> dict[str, Lease | None]:
    """Units whose lease, as this clone knows it (``known``: :func:`known_leases` read just
    now), someone else holds and has not let expire."""
    items = known_leases(layout) if known is None else known
    if not items:
        return {}  # no lease: who this process is (getpass, the host name) is never asked
    me = this_holder(layout)
    now = time.time() if clock is None else clock
    out: dict[str, Lease | None] = {}
    for item in items:
        since = first_seen(layout, item.ref, item.oid, now)
        if verdict(True, item.lease, me, now, since) == "held":
            out[item.unit] = item.lease
    return out


def ours(layout: Layout) -> dict[str, str]:
    """Units this holder leases, as this clone knows it: unit → where ("local" or a remote)."""
    me = this_holder(layout)
    return {
        item.unit: item.source
        for item in known_leases(layout)
        if item.lease is not None and item.lease.holder.same(me)
    }


def held_message(result: ClaimResult) -> str:
    from resume_kit.core.timeutil import from_epoch

    lease = result.lease
    if lease is None:
        return f"unit {result.unit} is leased by someone resume-kit cannot name (an unreadable lease on {result.where})"
    return (
        f"unit {result.unit} is leased by {lease.holder.label()} until "
        f"{from_epoch(lease.expires_at)} ({result.where})"
    )


def leased_error(result: ClaimResult) -> ResumeKitError:
    return ResumeKitError(
        held_message(result),
        hint="pick another unit (`resume-kit leases`), or wait for the lease to expire",
        exit_code=EXIT_LEASED,
    )


# ----------------------------------------------------------------- while a unit is verified


@contextlib.contextmanager
def renewing(layout: Layout, unit: str, known: list[LeaseRef] | None = None) -> Iterator[None]:
    """While verify-next or run works on ``unit``: when this holder leases it (``known``: as
    :func:`known_leases` read just now), renew the lease now and every third of its ttl, in a
    daemon thread; nothing when it holds no lease. Fail-open: a renewal that cannot reach the
    remote is retried at the next tick."""
    import threading

    if known is None:
        known = known_leases(layout)
    mine = [i for i in known if i.unit == unit and i.lease is not None]
    mine = [i for i in mine if i.lease is not None and i.lease.holder.same(this_holder(layout))]
    if not mine:
        yield
        return
    item = mine[0]
    assert item.lease is not None
    ttl, remote = item.lease.ttl_s, None if item.source == "local" else item.source
    stop = threading.Event()

    def renew() -> None:
        while True:
            with contextlib.suppress(Exception):
                claim(layout, unit, remote, ttl)
            if stop.wait(max(ttl / 3, 0.5)):
                return

    thread = threading.Thread(target=renew, name=f"lease-{unit}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=NETWORK_JOIN_S)


NETWORK_JOIN_S = 5.0


def release_after_pass(layout: Layout, unit: str) -> str | None:
    """Release this holder's lease on ``unit`` once its evidence is recorded; the note to print
    (None when it held no lease). Fail-open: the lease then simply expires."""
    where = ours(layout).get(unit)
    if where is None:
        return None
    try:
        state = release(layout, unit, None if where == "local" else where)
    except ResumeKitError as exc:
        return f"the lease on {unit} stays until it expires: {exc.message}"
    return f"released the lease on {unit}" if state == "released" else None


def release_done(layout: Layout, done: set[str]) -> list[str]:
    """Release this holder's leases on units that are already done; the notes to print.

    A run SIGKILLed after recording a pass but before releasing its lease leaves the lease on
    a done unit, which no later run would touch (it never runs a done unit again): so every
    run starts by releasing those. One read of the refs when this holder leases nothing."""
    mine = ours(layout)
    return [note for uid in sorted(done & mine.keys()) if (note := release_after_pass(layout, uid))]


def pick_unleased(
    layout: Layout,
    progress: Progress,
    unit_id: str | None,
    report: Callable[[str], None],
    known: list[LeaseRef] | None = None,
) -> Unit | None:
    """``pick_next`` past the units someone else leases (``known``: as :func:`known_leases`
    read just now), each skipped one reported; exit 5 when ``unit_id`` names a unit someone
    else leases."""
    from resume_kit.model.progress import iter_ready, pick_next

    leased = held_by_others(layout, known=known)
    if unit_id is not None:
        if unit_id in leased:
            progress.require_unit(unit_id)
            raise leased_error(ClaimResult("held", unit_id, "a lease", leased[unit_id]))
        return pick_next(progress, unit_id)
    for unit in iter_ready(progress):  # the first of 10,000 without listing the rest
        if unit.id not in leased:
            return unit
        report("skipped " + held_message(ClaimResult("held", unit.id, "a lease", leased[unit.id])))
    return None


def verify_leased(
    layout: Layout,
    unit: Unit,
    timeout_s: float,
    report: Callable[[str], None],
    stop: Any,
    on_tick: Any,
    txn: Any = None,
    known: list[LeaseRef] | None = None,
) -> Outcome:
    """``verify_unit`` with this holder's lease on the unit renewed meanwhile and released
    once the pass is recorded (the line saying so goes to ``report``). ``txn``: the progress
    transaction to record with (default :func:`resume_kit.progress_file.io.transaction`);
    ``known``: :func:`known_leases` read just now. When no lease on the unit was known at the
    start, none is looked for at the end (a lease this holder took meanwhile expires)."""
    from resume_kit.runner.verify import verify_unit

    if known is None:
        known = known_leases(layout)
    with renewing(layout, unit.id, known):
        if txn is None:
            outcome = verify_unit(layout, unit, timeout_s, stop=stop, on_tick=on_tick)
        else:
            outcome = verify_unit(layout, unit, timeout_s, stop=stop, on_tick=on_tick, txn=txn)
    if (
        outcome.recorded
        and outcome.result.passed
        and any(item.unit == unit.id for item in known)
        and (freed := release_after_pass(layout, unit.id))
    ):
        report(freed)
    return outcome
