"""Unit leases, the pure part: the record a lease ref holds, read as hostile input, and the one
rule that decides whether a lease is free, ours, expired or held by someone else.

A lease is ``refs/resume-kit/leases/<id>`` pointing at a small JSON blob. Its content arrives
from the shared remote, so it is bounded (:data:`MAX_LEASE_BYTES`), every field is checked and
a record that cannot be read is "held by someone unknown" until it is judged expired.

Expiry is judged with a margin and with this observer's own clock only: a lease object this
machine first saw at ``first_seen`` (its clock) is live until both its written expiry plus the
margin and ``first_seen`` plus its ttl plus the margin have passed. The holder renews by writing
a new object, which restarts the second clock everywhere; so a machine whose clock is far ahead
cannot take over a live lease (docs/many-agents.md).
"""

from __future__ import annotations

import json

from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import Literal

LEASE_REF_PREFIX = "refs/resume-kit/leases/"
TRACKING_PREFIX = "refs/resume-kit/remotes/"  # + <remote>/leases/<id>: what the last fetch saw
MAX_LEASE_BYTES = 4096
DEFAULT_TTL_S = 900.0
MIN_TTL_S = 1.0
MAX_TTL_S = 7 * 86400.0
_MAX_TEXT = 200

Verdict = Literal["free", "ours", "expired", "held"]


@dataclass(frozen=True)
class Holder:
    user: str
    host: str
    worktree: str
    session: str | None = None

    def same(self, other: Holder) -> bool:
        """The same holder: one user on one host in one work tree (the session may change)."""
        return (self.user, self.host, self.worktree) == (other.user, other.host, other.worktree)

    def label(self) -> str:
        from resume_kit.core.escape import escape_controls

        text = f"{self.user}@{self.host}:{self.worktree}"
        if self.session:
            text += f" (session {self.session})"
        return escape_controls(text)


@dataclass(frozen=True)
class Lease:
    unit: str
    holder: Holder
    taken_at: float
    renewed_at: float
    expires_at: float
    ttl_s: float
    nonce: str = ""

    def to_json(self) -> dict[str, object]:
        from resume_kit.core.timeutil import from_epoch

        return {
            "unit": self.unit,
            "holder": {
                "user": self.holder.user,
                "host": self.holder.host,
                "worktree": self.holder.worktree,
                "session": self.holder.session,
            },
            "taken_at": from_epoch(self.taken_at),
            "renewed_at": from_epoch(self.renewed_at),
            "expires_at": from_epoch(self.expires_at),
            "ttl_s": self.ttl_s,
        }


def margin(ttl_s: float) -> float:
    """How long past its expiry a lease is still respected: a quarter of its ttl, 5 s to 10 min."""
    return min(max(ttl_s / 4, 5.0), 600.0)


def encode(lease: Lease) -> bytes:
    body = lease.to_json()
    body["v"] = 1
    body["nonce"] = lease.nonce
    return (json.dumps(body, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii")


def _text(value: object) -> str | None:
    if not isinstance(value, str) or not value or len(value) > _MAX_TEXT:
        return None
    return value


def _epoch(value: object) -> float | None:
    from resume_kit.core.timeutil import parse_utc

    moment = parse_utc(value) if isinstance(value, str) and len(value) <= 40 else None
    return None if moment is None else moment.timestamp()


def decode(data: bytes, unit: str) -> Lease | None:
    """The lease in ``data``, or None when it is not a lease of ``unit`` resume-kit wrote."""
    if len(data) > MAX_LEASE_BYTES:
        return None
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(raw, dict) or raw.get("v") != 1 or raw.get("unit") != unit:
        return None
    who = raw.get("holder")
    if not isinstance(who, dict):
        return None
    user, host, tree = _text(who.get("user")), _text(who.get("host")), _text(who.get("worktree"))
    session = who.get("session")
    taken, renewed = _epoch(raw.get("taken_at")), _epoch(raw.get("renewed_at"))
    expires, ttl = _epoch(raw.get("expires_at")), raw.get("ttl_s")
    if user is None or host is None or tree is None or taken is None or renewed is None:
        return None
    if expires is None or isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        return None
    if not MIN_TTL_S <= ttl <= MAX_TTL_S:
        return None
    nonce = raw.get("nonce")
    return Lease(
        unit=unit,
        holder=Holder(user, host, tree, _text(session)),
        taken_at=taken,
        renewed_at=renewed,
        expires_at=expires,
        ttl_s=float(ttl),
        nonce=nonce if isinstance(nonce, str) and len(nonce) <= 64 else "",
    )


def is_expired(lease: Lease | None, now: float, first_seen: float) -> bool:
    """Whether a lease may be taken over, judged at ``now`` by a machine that first saw this
    lease object at ``first_seen`` (both on its own clock). An unreadable lease (None) counts
    as one of the default ttl."""
    ttl = lease.ttl_s if lease is not None else DEFAULT_TTL_S
    slack = margin(ttl)
    if now < first_seen + ttl + slack:
        return False
    return lease is None or now >= lease.expires_at + slack


def verdict(
    present: bool, lease: Lease | None, me: Holder, now: float, first_seen: float
) -> Verdict:
    """The one rule: may ``me`` take or keep the lease of a unit whose ref is ``present``?"""
    if not present:
        return "free"
    if lease is not None and lease.holder.same(me):
        return "ours"
    if is_expired(lease, now, first_seen):
        return "expired"
    return "held"


def parse_ttl(text: str) -> float:
    """``--ttl``: ``90s``, ``15m``, ``2h`` (batch's duration syntax), within 1 s and 7 days."""
    from resume_kit.core.batch import parse_duration
    from resume_kit.infra.errors import ResumeKitError

    seconds = parse_duration(text)
    if not MIN_TTL_S <= seconds <= MAX_TTL_S:
        raise ResumeKitError(
            f"--ttl {text!r} is outside 1s..7d", hint="e.g. --ttl 15m (the default)"
        )
    return seconds
