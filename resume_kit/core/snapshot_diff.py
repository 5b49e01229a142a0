"""What changed between two snapshots (the `snapshot` command's comparison): pure."""

from __future__ import annotations

from resume_kit.model.facts import Commit, Snapshot
from resume_kit.model.typed_dict import TypedDict


class Move(TypedDict):
    old: str | None
    new: str | None


class UnitMove(TypedDict):
    id: str
    old: str | None
    new: str | None


class SnapshotDiff(TypedDict):
    previous: str | None  # the older snapshot's id; None: nothing to compare with
    new_commits: list[Commit]
    more_commits: bool  # more new commits than the snapshot lists
    head: Move | None
    branch: Move | None
    operation: Move | None
    files_changed: list[str]
    files_cleaned: list[str]
    files_truncated: bool
    units: list[UnitMove]
    tests_failing: list[str]
    tests_fixed: list[str]


def changed_paths(snapshot: Snapshot) -> set[str]:
    """Every path the snapshot lists as staged, unstaged or untracked."""
    changes = snapshot.get("changes") or {}
    return {
        entry["path"]
        for entries in (changes.get("staged"), changes.get("unstaged"), changes.get("untracked"))
        for entry in entries or []
        if entry.get("path")
    }


def _unit_statuses(snapshot: Snapshot) -> dict[str, str | None]:
    units = snapshot.get("units") or {}
    return {uid: entry.get("status") for uid, entry in units.items()}


def diff_snapshots(old: Snapshot | None, new: Snapshot) -> SnapshotDiff:
    """What changed from ``old`` to ``new``: commits, files, unit statuses, branch, operation."""
    new_repo = new.get("repo") or {}
    diff: SnapshotDiff = {
        "previous": None,
        "new_commits": [],
        "more_commits": False,
        "head": None,
        "branch": None,
        "operation": None,
        "files_changed": [],
        "files_cleaned": [],
        "files_truncated": False,
        "units": [],
        "tests_failing": [],
        "tests_fixed": [],
    }
    if old is None:
        return diff
    old_repo = old.get("repo") or {}
    diff["previous"] = old.get("id")
    if old_repo.get("head") != new_repo.get("head"):
        diff["head"] = {"old": old_repo.get("head"), "new": new_repo.get("head")}
        known = {c.get("sha") for c in old.get("recent_commits") or []}
        known.add(old_repo.get("head"))
        commits = list(new.get("recent_commits") or [])
        fresh: list[Commit] = []
        for commit in commits:
            if commit.get("sha") in known:
                break
            fresh.append(commit)
        else:
            diff["more_commits"] = bool(commits) and old_repo.get("head") is not None
        diff["new_commits"] = fresh
    from resume_kit.infra.redact import redact

    # a snapshot stored before branch names were redacted may still hold one in clear
    old_branch, new_branch = old_repo.get("branch"), new_repo.get("branch")
    old_branch = redact(old_branch) if old_branch is not None else None
    if old_branch != new_branch:
        diff["branch"] = {"old": old_branch, "new": new_branch}
    old_operation, new_operation = old_repo.get("operation"), new_repo.get("operation")
    old_operation = redact(old_operation) if old_operation is not None else None
    if old_operation != new_operation:
        diff["operation"] = {"old": old_operation, "new": new_operation}
    before, after = changed_paths(old), changed_paths(new)
    diff["files_changed"] = sorted(after - before)
    diff["files_cleaned"] = sorted(before - after)
    diff["files_truncated"] = bool(
        (old.get("changes") or {}).get("truncated") or (new.get("changes") or {}).get("truncated")
    )
    old_units, new_units = _unit_statuses(old), _unit_statuses(new)
    for uid, status in new_units.items():
        if old_units.get(uid) != status:
            diff["units"].append({"id": uid, "old": old_units.get(uid), "new": status})
    for uid, status in old_units.items():
        if uid not in new_units:
            diff["units"].append({"id": uid, "old": status, "new": None})
    old_failing = set((old.get("tests") or {}).get("pytest_last_failed") or [])
    new_failing = list((new.get("tests") or {}).get("pytest_last_failed") or [])
    diff["tests_failing"] = [t for t in new_failing if t not in old_failing]
    diff["tests_fixed"] = sorted(old_failing - set(new_failing))
    return diff
