"""The leases this clone knows without the network: its own ``refs/resume-kit/leases/*`` (the
local lock that linked worktrees share) and ``refs/resume-kit/remotes/<remote>/leases/*``, what
the last ``claim``/``release``/``leases`` stored from the remote. Two git processes that only
read; never a fetch (the brief, status and verify-next's choice read this)."""

from __future__ import annotations

import os

from resume_kit.core.leases import (
    LEASE_REF_PREFIX,
    MAX_LEASE_BYTES,
    TRACKING_PREFIX,
    Holder,
    Lease,
)
from resume_kit.core.leases import decode as decode_lease
from resume_kit.core.light_dataclass import dataclass
from resume_kit.model.progress import ID_PATTERN

_ZERO = "0" * 40


@dataclass(frozen=True)
class LeaseRef:
    unit: str
    source: str  # "local" or the remote's name
    ref: str
    oid: str
    lease: Lease | None  # None: the ref holds something resume-kit cannot read


def _split(refname: str) -> tuple[str, str] | None:
    """(source, unit) of a lease ref, or None for any other ref."""
    if refname.startswith(LEASE_REF_PREFIX):
        source, unit = "local", refname[len(LEASE_REF_PREFIX) :]
    elif refname.startswith(TRACKING_PREFIX):
        remote, sep, unit = refname[len(TRACKING_PREFIX) :].partition("/leases/")
        if not sep or not remote or "/" in remote:
            return None
        source = remote
    else:
        return None
    return (source, unit) if ID_PATTERN.match(unit) else None


def read_blobs(cwd: os.PathLike[str], oids: list[str]) -> dict[str, bytes]:
    """The contents of blobs ``oids`` (each at most MAX_LEASE_BYTES) in one cat-file."""
    import subprocess

    from resume_kit.infra.gitcmd import clean_git_env, git_argv

    if not oids:
        return {}
    proc = subprocess.run(
        git_argv(cwd, ("cat-file", "--batch")),
        cwd=cwd,
        env=clean_git_env(),
        input=("\n".join(oids) + "\n").encode("ascii"),
        capture_output=True,
        check=False,
    )
    out: dict[str, bytes] = {}
    data, pos = proc.stdout, 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3:
            continue
        size = int(header[2])
        out[header[0].decode("ascii", "replace")] = data[pos : pos + size]
        pos += size + 1
    return out


PREFIX = "refs/resume-kit/"


def surely_no_leases(common_dir: os.PathLike[str]) -> bool:
    """Whether the clone whose shared git dir is ``common_dir`` holds no ref under
    :data:`PREFIX`, seen without starting git (most clones never lease): no loose ref folder,
    no reftable, and a ``packed-refs`` (read without following a link or blocking) that names
    no such ref. Anything else, or any doubt, is False: then git is asked."""
    from resume_kit.facts.head_ref import read_packed_refs

    base = os.fspath(common_dir)
    for name in (PREFIX.rstrip("/"), "reftable"):
        try:
            os.lstat(os.path.join(base, name))
        except FileNotFoundError:
            continue
        except OSError:
            pass
        return False
    try:
        data = read_packed_refs(base)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    # each line is "<oid> <refname>": a ref under the prefix shows as " refs/resume-kit/"
    return b" " + PREFIX.encode("ascii") not in data


def read_leases(
    cwd: os.PathLike[str], prefix: str = PREFIX, common_dir: os.PathLike[str] | None = None
) -> list[LeaseRef]:
    """Every lease ref under ``prefix`` with its lease; [] when git cannot say. With the clone's
    ``common_dir``, a clone that surely holds none (:func:`surely_no_leases`) starts no git."""
    from resume_kit.infra.gitcmd import run_git_bytes

    if common_dir is not None and prefix == PREFIX and surely_no_leases(common_dir):
        return []
    try:
        status, out, _ = run_git_bytes(
            cwd,
            "for-each-ref",
            "--format=%(refname)%00%(objectname)%00%(objecttype)%00%(objectsize)",
            prefix,
            check=False,
        )
    except OSError:
        return []
    if status != 0:
        return []
    rows: list[tuple[str, str, str, str]] = []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        parts = line.split("\0")
        if len(parts) != 4 or (where := _split(parts[0])) is None:
            continue
        size = int(parts[3]) if parts[3].isdigit() else MAX_LEASE_BYTES + 1
        readable = parts[2] == "blob" and size <= MAX_LEASE_BYTES
        rows.append((*where, parts[0], parts[1] if readable else "!" + parts[1]))
    blobs = read_blobs(cwd, [oid for *_, oid in rows if not oid.startswith("!")])
    result: list[LeaseRef] = []
    for source, unit, ref, oid in rows:
        data = blobs.get(oid)
        lease = decode_lease(data, unit) if data is not None else None
        result.append(LeaseRef(unit, source, ref, oid.lstrip("!"), lease))
    return result


def zero_oid() -> str:
    return _ZERO


def this_holder(root: os.PathLike[str]) -> Holder:
    """Who this process is, as a lease names its holder: user, host, work tree, and the agent
    session when the environment says (``RESUME_KIT_SESSION``, ``CLAUDE_SESSION_ID``)."""
    import getpass

    from resume_kit.infra.store import hostname

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    session = os.environ.get("RESUME_KIT_SESSION") or os.environ.get("CLAUDE_SESSION_ID")
    return Holder(
        user=user[:200] or "unknown",
        host=hostname()[:200] or "unknown",
        worktree=os.fspath(root)[:200],
        session=session[:200] if session else None,
    )


def held_by_others(leases: dict[str, str] | None) -> set[str]:
    """The units of :func:`who_holds_what` that someone other than this holder leases."""
    return {
        unit for unit, who in (leases or {}).items() if who != "you" and not who.startswith("you ")
    }


def who_holds_what(
    root: os.PathLike[str], now: float | None = None, common_dir: os.PathLike[str] | None = None
) -> dict[str, str]:
    """unit → "HOLDER until TIME" for every live lease this clone knows, "you" for this
    holder's; judged by the written expiry and its margin (status and the brief: no network,
    no state written)."""
    from resume_kit.core.clock import clock_ns
    from resume_kit.core.leases import margin
    from resume_kit.core.timeutil import from_epoch, steady_until

    me: Holder | None = None  # looked up only for a live lease (socket and getpass cost)
    moment = clock_ns() / 1e9 if now is None else now
    out: dict[str, str] = {}
    for item in read_leases(root, common_dir=common_dir):
        lease = item.lease
        if lease is None:
            out.setdefault(item.unit, f"someone (an unreadable lease, {item.source})")
        elif moment < lease.expires_at + margin(lease.ttl_s):
            steady_until(lease.expires_at + margin(lease.ttl_s))
            me = me or this_holder(root)
            who = "you" if lease.holder.same(me) else lease.holder.label()
            out[item.unit] = f"{who} until {from_epoch(lease.expires_at)}"
    return out
