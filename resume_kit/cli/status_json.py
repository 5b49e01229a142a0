"""`status --json`: everything the text shows, as data (the units, the counts, the next unit
and why, blocked reasons and notes, the workspace, the operation in progress, the findings)."""

from __future__ import annotations

from resume_kit.core.typing_light import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resume_kit.infra.paths import Layout
    from resume_kit.model.facts import Snapshot
    from resume_kit.model.findings import Finding
    from resume_kit.model.progress import Progress


def _counts(progress: Progress) -> dict[str, int]:
    counts = progress.counts()
    done = [u for u in progress.units if u.status == "done"]
    verified = sum(1 for u in done if u.evidence is not None)
    return {
        "total": len(progress.units),
        **counts,
        "verified": verified,
        "claimed_done": len(done) - verified,
    }


def next_data(
    layout: Layout, progress: Progress, leases: dict[str, str] | None = None
) -> dict[str, Any] | None:
    from resume_kit.facts.leases import held_by_others
    from resume_kit.infra.trust import is_trusted
    from resume_kit.model.progress import pick_next, why_next

    unit = pick_next(progress, skip=held_by_others(leases))
    if unit is None:
        return None
    return {
        "id": unit.id,
        "title": unit.title,
        "why": why_next(progress, unit),
        "verify": unit.verify,
        "approved": unit.verify is None or is_trusted(layout.root, unit.id, unit.verify),
        "notes": unit.notes,
    }


def _workspace(snapshot: Snapshot) -> dict[str, Any]:
    from resume_kit.brief.facts_text import describe_workspace, repo_position

    repo = snapshot.get("repo") or {}
    counts = (snapshot.get("changes") or {}).get("counts") or {}
    changes = {key: counts.get(key) or 0 for key in ("staged", "unstaged", "untracked")}
    conflicted = counts.get("conflicted") or 0
    return {
        **repo_position(repo),
        "clean": not (any(changes.values()) or conflicted),
        "changes": {**changes, "conflicted": conflicted},
        "conflicts": [str(c.get("path")) for c in repo.get("conflicts") or []],
        "stash_count": repo.get("stash_count") or 0,
        "failing_tests": list((snapshot.get("tests") or {}).get("pytest_last_failed") or []),
        "lines": describe_workspace(snapshot),  # what the text shows, line by line
    }


def _operation(snapshot: Snapshot) -> dict[str, Any] | None:
    from resume_kit.brief.facts_text import operation_words

    repo = snapshot.get("repo") or {}
    kind = repo.get("operation")
    if not kind:
        return None
    detail = repo.get("operation_detail") or {}
    return {
        "kind": kind,
        "about": operation_words(detail, lambda text: f'"{text}"') or None,
        "detail": dict(detail),
    }


def status_data(
    layout: Layout,
    progress: Progress,
    snapshot: Snapshot,
    findings: list[Finding],
    leases: dict[str, str] | None = None,
) -> dict[str, Any]:
    from resume_kit.cli.commands.status import summary_line
    from resume_kit.model.progress import SCHEMA_VERSION
    from resume_kit.progress_file.roundtrip import to_data

    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "goal": progress.goal,
        "units": to_data(progress)["units"],  # a done unit without evidence: claimed done
        "findings": [f.to_dict() for f in findings],
        "counts": _counts(progress),
        "next": next_data(layout, progress, leases),
        "blocked": [
            {"id": u.id, "reason": u.blocked_reason}
            for u in progress.units
            if u.status == "blocked"
        ],
        "workspace": _workspace(snapshot),
        "operation": _operation(snapshot),
        "summary": summary_line(progress, findings, leases),
    }
    if leases:  # only when there are any: a clone that never claims sees no new key
        data["leases"] = leases
    return data
