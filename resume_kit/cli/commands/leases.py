"""`claim`, `release`, `leases`: unit leases on the git remote (engine: runner/leases.py)."""

from __future__ import annotations

from resume_kit.cli.ui import out, print_json, warn
from resume_kit.infra import paths
from resume_kit.infra.errors import EXIT_LEASED, EXIT_NOTHING_TO_DO, ResumeKitError


def _where(layout: paths.Layout, remote: str | None, offline: bool) -> str | None:
    from resume_kit.runner import leases as engine

    chosen = engine.choose_remote(layout, remote, offline)
    if offline:
        warn("--offline: the lease is taken in this clone's own refs only (its worktrees see it, "
             "other clones do not)")  # fmt: skip
    return chosen


def _candidates(layout: paths.Layout) -> list[str]:
    """The ready units, in verify-next's order, that nobody else leases as far as we know."""
    from resume_kit.model.progress import ready_units
    from resume_kit.progress_file import io as progress_io
    from resume_kit.runner import leases as engine

    taken = engine.held_by_others(layout)
    return [u.id for u in ready_units(progress_io.load(layout).progress) if u.id not in taken]


def claim(unit_id: str | None, remote: str | None, ttl_text: str, offline: bool) -> int:
    from resume_kit.core.leases import parse_ttl
    from resume_kit.core.timeutil import from_epoch
    from resume_kit.progress_file import io as progress_io
    from resume_kit.runner import leases as engine

    ttl = parse_ttl(ttl_text)
    layout = paths.find_layout()
    where = _where(layout, remote, offline)
    if unit_id is not None:
        progress_io.load(layout).progress.require_unit(unit_id)
        result = engine.claim(layout, unit_id, where, ttl)
    else:  # the next ready unit: each in turn until one is ours
        if where is not None:
            engine.fetch_leases(layout, where)
        for unit_id in _candidates(layout):
            result = engine.claim(layout, unit_id, where, ttl)
            if result.ok:
                break
        else:
            out("no ready unit that someone else does not lease: nothing to claim")
            return EXIT_NOTHING_TO_DO
    if not result.ok:
        raise engine.leased_error(result)
    assert result.lease is not None and unit_id is not None
    verb = {"taken": "claimed", "renewed": "renewed", "took_over": "took over the expired lease on"}
    out(f"{verb[result.outcome]} {unit_id} until {from_epoch(result.lease.expires_at)} "
        f"({result.where})")  # fmt: skip
    return 0


def release(unit_id: str, remote: str | None, offline: bool) -> int:
    from resume_kit.runner import leases as engine

    layout = paths.find_layout()
    where = _where(layout, remote, offline)
    state = engine.release(layout, unit_id, where)
    if state == "held":
        raise ResumeKitError(
            f"the lease on {unit_id} is not yours: nothing released",
            hint="`resume-kit leases` shows who holds it and until when",
            exit_code=EXIT_LEASED,
        )
    out(f"released {unit_id}" if state == "released" else f"no lease on {unit_id}: nothing to do")
    return 0


def list_leases(remote: str | None, offline: bool, json_out: bool) -> int:
    from resume_kit.core.leases import margin
    from resume_kit.core.timeutil import from_epoch
    from resume_kit.runner import leases as engine

    layout = paths.find_layout()
    where = engine.choose_remote(layout, remote, offline)
    if where is not None:
        engine.fetch_leases(layout, where)
    me = engine.this_holder(layout)
    import time

    now = time.time()
    items = [i for i in engine.known_leases(layout) if i.source in ("local", where)]
    rows = []
    for item in items:
        lease = item.lease
        rows.append(
            {
                "unit": item.unit,
                "where": item.source,
                "holder": lease.to_json()["holder"] if lease else None,
                "mine": bool(lease and lease.holder.same(me)),
                "expires_at": from_epoch(lease.expires_at) if lease else None,
                "expired": bool(lease and now >= lease.expires_at + margin(lease.ttl_s)),
            }
        )
    if json_out:
        print_json({"remote": where, "leases": rows})
        return 0
    if not rows:
        out("no leases")
        return 0
    for row, item in zip(rows, items, strict=True):
        who = item.lease.holder.label() if item.lease else "(unreadable lease)"
        state = " (expired)" if row["expired"] else ""
        mine = " (you)" if row["mine"] else ""
        out(f"{row['unit']}: {who}{mine} until {row['expires_at'] or '?'}{state} [{row['where']}]")
    return 0
