"""Reconcile (SPEC 5): what the workspace facts say about the progress file's claims.

``reconcile(progress, snapshot)`` is pure: it reads only its arguments (the snapshot carries the
current fingerprint, missing artifacts and history check of every done unit) and returns
findings sorted by severity, then by the units' order in the progress file (workspace-wide
findings first within a severity).
"""

from __future__ import annotations

from collections.abc import Mapping

from resume_kit.core.activity import Activity
from resume_kit.core.inert import code_span, short_sha, squash
from resume_kit.core.light_dataclass import replace
from resume_kit.core.timeutil import age
from resume_kit.core.typing_light import Any
from resume_kit.model.facts import Changes, RepoFacts, Snapshot, UnitFacts
from resume_kit.model.findings import SEVERITY_ORDER, STUCK_REPEATS, Finding, finding
from resume_kit.model.globs import Ownership
from resume_kit.model.progress import Progress, Unit

# Findings that are only "info" when nothing else is wrong (SPEC 5).
QUIET_WHEN_ALONE = ("UNACCOUNTED_CHANGES", "LOG_ERRORS")
_NOT_WRONG = (*QUIET_WHEN_ALONE, "SNAPSHOT_NOTE")
MAX_NOTES = 5

_OPERATION_FIX = {
    "merge": "conclude it with `git commit` or undo it with `git merge --abort`",
    "rebase": "finish it with `git rebase --continue` or undo it with `git rebase --abort`",
    "cherry-pick": "finish it with `git cherry-pick --continue` or `git cherry-pick --abort`",
    "revert": "finish it with `git revert --continue` or `git revert --abort`",
    "bisect": "end it with `git bisect reset`",
    "am": "finish it with `git am --continue` or `git am --abort`",
}


# --------------------------------------------------------------------------- small helpers


def _data(text: Any, limit: int = 80) -> str:
    """An untrusted value (a file name, a log line, a test id, an agent's text) on one line, as
    an inline code span that no backtick inside it can close: in the brief it stays quoted data
    and never reads as an instruction."""
    # A backslash before a backtick would make the brief's line check distrust every span on
    # the line (outside a span it escapes the backtick); inside a span it means nothing.
    return code_span(squash(text, limit).replace("\\`", "\\ `"))


def _some(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _some_data(items: list[Any], limit: int = 3) -> str:
    """:func:`_some` of untrusted values, quoted by :func:`_data`: only the ones shown (a
    change list holds thousands of paths)."""
    return _some([_data(item) for item in items[:limit]] + items[limit:], limit)


def _short(sha: str | None) -> str:
    return short_sha(sha) or "no commit"


# --------------------------------------------------------------------------- the checks


def _workspace_findings(repo: RepoFacts) -> list[Finding]:
    found: list[Finding] = []
    operation = repo.get("operation")
    if operation:
        fix = _OPERATION_FIX.get(operation, f"finish or abort the {operation}")
        found.append(
            finding(
                "OPERATION_IN_PROGRESS",
                f"a {operation} is in progress (HEAD {_short(repo.get('head'))}); "
                f"{fix} before resuming work",
            )
        )
    conflicts = [str(c.get("path")) for c in repo.get("conflicts") or []]
    if conflicts:
        found.append(
            finding(
                "CONFLICTS",
                f"{len(conflicts)} conflicted file{'s' if len(conflicts) != 1 else ''}: "
                f"{_some_data(conflicts)}; resolve the markers, then `git add` "
                "each file",
            )
        )
    return found


def _done_unit_findings(
    unit: Unit,
    facts: UnitFacts,
    now: str | None,
    shallow: bool = False,
    changed: _ChangedIndex | None = None,
) -> list[Finding]:
    evidence = unit.evidence
    if evidence is None:
        return [
            finding(
                "DONE_UNVERIFIED",
                f"{unit.id}: claimed done (not verified): resume-kit never saw its check pass; "
                "run `resume-kit verify-next --stale`",
                unit.id,
            )
        ]
    found: list[Finding] = []
    missing = facts.get("missing_artifacts") or []
    current = facts.get("fingerprint")
    if missing:
        found.append(
            finding(
                "DONE_ARTIFACT_MISSING",
                f"{unit.id}: done, but its artifact{'s' if len(missing) != 1 else ''} "
                f"{_some_data(missing)} {'are' if len(missing) != 1 else 'is'} "
                "missing; "
                "re-run `resume-kit verify-next --stale`",
                unit.id,
            )
        )
    elif current and evidence.fingerprint and current != evidence.fingerprint:
        # only a unit whose fingerprint moved needs its changed files (matched per unit)
        uncommitted = _uncommitted_in(unit, changed) if changed is not None else []
        if uncommitted:  # named, so the agent knows which edits undo the verification
            plural = len(uncommitted) != 1
            what = f"; {_some_data(uncommitted)} {'are' if plural else 'is'} uncommitted"
            rerun = f"re-verify it with `resume-kit verify-next --unit {unit.id}`"
        else:
            what, rerun = "", "re-run `resume-kit verify-next --stale`"
        when = age(evidence.verified_at, now) or evidence.verified_at or "at an unknown time"
        found.append(
            finding(
                "DONE_BUT_CHANGED",
                f"{unit.id}: its files changed since it was verified ({when}, at "
                f"{_short(evidence.commit)}){what}; {rerun}",
                unit.id,
            )
        )
    if facts.get("evidence_in_history") is False and shallow:
        found.append(
            finding(
                "EVIDENCE_NOT_IN_SHALLOW_HISTORY",
                f"{unit.id}: verified at commit {_short(evidence.commit)}, which is not in this "
                "shallow history (a `git clone --depth`); `git fetch --unshallow` lets it be "
                "checked",
                unit.id,
            )
        )
    elif facts.get("evidence_in_history") is False:
        found.append(
            finding(
                "EVIDENCE_NOT_IN_HISTORY",
                f"{unit.id}: verified at commit {_short(evidence.commit)}, which is not in the "
                "history of HEAD (rebased, reset or another branch); "
                f"re-run `resume-kit verify-next --unit {unit.id}`",
                unit.id,
            )
        )
    return found


def _done_unit_conflicts(unit: Unit, conflicted: list[str]) -> Finding | None:
    """A conflict in a done unit's files: its verification no longer holds once resolved."""
    if not conflicted:  # the usual case: no unit's globs to compile
        return None
    owned = Ownership([*unit.files, *unit.artifacts])
    hit = [path for path in conflicted if owned.owns(path)]
    if not hit:
        return None
    plural = len(hit) != 1
    return finding(
        "DONE_UNIT_CONFLICT",
        f"{unit.id}: done, but its file{'s' if plural else ''} {_some_data(hit)} "
        f"{'are' if plural else 'is'} conflicted; after resolving, re-verify it with "
        f"`resume-kit verify-next --unit {unit.id}`",
        unit.id,
    )


class _ChangedIndex:
    """The changed paths by each folder and file name leading to them, so each done unit's
    literal files are looked up instead of matched against every path (units x paths)."""

    def __init__(self, changed: list[str]):
        self.changed = changed
        self.by_prefix: dict[str, list[int]] = {}
        self.folders: list[int] = []  # untracked folders shown collapsed ("dir/")
        for index, path in enumerate(changed):
            if path.endswith("/"):
                self.folders.append(index)
                continue
            parts = path.split("/")
            for k in range(1, len(parts) + 1):
                self.by_prefix.setdefault("/".join(parts[:k]), []).append(index)

    def owned_by(self, owned: Ownership) -> list[str]:
        """``[path for path in changed if owned.owns(path)]``, in the same order."""
        hits: set[int] = set()
        for literal in owned.literals:
            hits.update(self.by_prefix.get(literal, ()))
        if owned.regex is not None:
            regex = owned.regex
            hits.update(
                i
                for i, path in enumerate(self.changed)
                if i not in hits and not path.endswith("/") and regex.match(path)
            )
        hits.update(i for i in self.folders if owned.owns(self.changed[i]))
        return [self.changed[i] for i in sorted(hits)]


def _uncommitted_in(unit: Unit, changed: _ChangedIndex) -> list[str]:
    return changed.owned_by(Ownership(unit.files)) if unit.files else []


def _stuck(unit: Unit) -> Finding | None:
    failure = unit.last_failure
    if unit.status == "done" or failure is None or failure.repeats < STUCK_REPEATS:
        return None
    excerpt = _data(failure.excerpt.splitlines()[-1], 100) if failure.excerpt.strip() else ""
    return finding(
        "UNIT_STUCK",
        f"{unit.id}: failed {failure.repeats} times in a row with the same error, with changes "
        "between the attempts"
        + (f" ({excerpt})" if excerpt else f" (exit {failure.exit_code})")
        + "; change the approach instead of re-running it",
        unit.id,
    )


def _changed_paths(changes: Changes) -> list[str]:
    seen: dict[str, None] = {}
    for entries in (changes.get("staged"), changes.get("unstaged"), changes.get("untracked")):
        for entry in entries or []:
            path = entry.get("path") or ""
            if path and path != ".resume-kit/" and not path.startswith(".resume-kit/"):
                seen[path] = None
    return list(seen)


def _unaccounted(progress: Progress, snapshot: Snapshot) -> Finding | None:
    if not any(unit.files for unit in progress.units):
        return None
    owned = Ownership(  # each once: the snapshot's artifacts are mostly the units' own
        dict.fromkeys(
            [glob for unit in progress.units for glob in (*unit.files, *unit.artifacts)]
            + [str(a.get("path")) for a in snapshot.get("artifacts") or []]
        )
    )
    changes = snapshot.get("changes") or {}
    operation = (snapshot.get("repo") or {}).get("operation")
    # What a merge, rebase, cherry-pick or revert staged is its own result, not stray work.
    staged_by_operation = (
        {str(e.get("path")) for e in changes.get("staged") or []}
        if operation and operation != "bisect"
        else set()
    )
    stray = [
        path
        for path in _changed_paths(changes)
        if not owned.owns(path) and path not in staged_by_operation
    ]
    if not stray:
        return None
    more = " (the change list was truncated)" if changes.get("truncated") else ""
    working = [unit.id for unit in progress.units if unit.status == "in_progress"]
    if working:  # they may be half-done work: reverting them would throw it away
        advice = (
            f"if they are {_some(working, 2)}'s work in progress, add them to its `files`; "
            "otherwise to another unit's `files`, or commit them"
        )
    else:
        advice = "add them to a unit's `files`, or commit or revert them"
    return finding(
        "UNACCOUNTED_CHANGES",
        f"{len(stray)} changed file{'s' if len(stray) != 1 else ''} no unit owns{more}: "
        f"{_some_data(stray)}; {advice}",
    )


def _tests(snapshot: Snapshot) -> Finding | None:
    failing = (snapshot.get("tests") or {}).get("pytest_last_failed") or []
    if not failing:
        return None
    return finding(
        "TESTS_FAILING",
        f"pytest's last run left {len(failing)} failing test{'s' if len(failing) != 1 else ''}: "
        f"{_some_data(failing)}; re-run them with `pytest --lf`",
    )


def _log_errors(snapshot: Snapshot) -> Finding | None:
    with_errors = [log for log in snapshot.get("logs") or [] if log.get("error_lines")]
    if not with_errors:
        return None
    newest = max(with_errors, key=lambda log: log.get("mtime") or "")
    lines = newest.get("error_lines") or []
    others = len(with_errors) - 1
    return finding(
        "LOG_ERRORS",
        f"{_data(newest.get('path'))} has {len(lines)} error line{'s' if len(lines) != 1 else ''}, "
        f"last: {_data(lines[-1], 100)}"
        + (f" (+{others} more log{'s' if others != 1 else ''} with errors)" if others else "")
        + "; check whether they still apply",
    )


def _side_effects(progress: Progress) -> list[Finding]:
    unknown = [action for action in progress.actions if action.status == "unknown"]
    if not unknown:  # the usual case: no shlex import on the brief's path
        return []
    import shlex

    return [
        finding(
            "SIDE_EFFECT_UNKNOWN",
            f"side effect {_data(action.key)} ({_data(action.description)}) has an unknown "
            "outcome; check it before retrying with the same key, then "
            + _data(
                f"resume-kit action record {shlex.quote(action.key)} --status success|failed", 200
            ),
        )
        for action in unknown
    ]


def _transcript(progress: Progress, snapshot: Snapshot) -> list[Finding]:
    transcript = snapshot.get("transcript")
    if not transcript:
        return []
    try:
        from resume_kit.facts.transcripts import completed_todos_matching
    except ImportError:  # the transcript readers are optional at this layer
        return []
    found: list[Finding] = []
    reported: set[str] = set()
    for unit_id, todo in completed_todos_matching(progress.units, transcript):
        unit = progress.unit(unit_id)
        if unit is None or unit.id in reported or unit.status == "done":
            continue  # done without evidence is DONE_UNVERIFIED already
        reported.add(unit.id)
        found.append(
            finding(
                "TRANSCRIPT_DISAGREES",
                f"{unit.id}: the agent's todo list marks {_data(todo)} completed, "
                f"but the unit is {unit.status}, not verified; "
                f"run `resume-kit verify-next --unit {unit.id}`",
                unit.id,
            )
        )
    return found


def _finalise(found: list[Finding], order: Mapping[str, int]) -> list[Finding]:
    if all(f.code in _NOT_WRONG for f in found):
        found = [replace(f, severity="info") if f.code in QUIET_WHEN_ALONE else f for f in found]
    indexed = list(enumerate(found))
    indexed.sort(
        key=lambda item: (
            SEVERITY_ORDER[item[1].severity],
            -1 if item[1].unit is None else order.get(item[1].unit, len(order)),
            item[0],
        )
    )
    return [f for _, f in indexed]


def last_verified(progress: Progress) -> str | None:
    """When a unit was last verified (the meter counts from there)."""
    verified = [u.evidence.verified_at for u in progress.units if u.evidence is not None]
    return max(verified, default=None)


def _activity(progress: Progress, activity: Activity) -> list[Finding]:
    """REPEATED_CALLS and NO_PROGRESS from what the agent's hooks recorded (issue 15)."""
    from resume_kit.core.activity import describe_no_progress, judge

    found: list[Finding] = []
    loop, stalled = judge(activity, last_verified(progress))
    if loop:
        found.append(
            finding(
                "REPEATED_CALLS",
                f"the same call failed {len(loop)} times in a row with the same result: "
                f"{_data(loop[-1].shown, 160)} -> {_data(loop[-1].error or 'failed', 160)} "
                f"(last at {_data(loop[-1].at, 30)}); do not try it a fourth time: change the "
                "approach, or stop and report what blocks you",
            )
        )
    if stalled is not None:
        found.append(
            finding(
                "NO_PROGRESS",
                f"{describe_no_progress(stalled)}: stop working on the task and report to the "
                "person what was done, what keeps failing and what you need; do not start "
                "another attempt",
            )
        )
    return found


def reconcile(
    progress: Progress | None, snapshot: Snapshot, activity: Activity | None = None
) -> list[Finding]:
    """Findings about ``progress`` given the ``snapshot`` facts (and the agent's recorded
    ``activity``, when given), most severe first."""
    found: list[Finding] = []
    if progress is not None and activity is not None:
        found.extend(_activity(progress, activity))
    order: dict[str, int] = {}
    if progress is None:
        state = snapshot.get("progress") or {}
        found.append(
            finding(
                "PROGRESS_INVALID",
                f"progress.yaml is not usable: {_data(state.get('error') or 'not loaded', 200)}"
                "; fix it by hand (resume-kit never overwrites it)",
            )
        )
    found.extend(_workspace_findings(snapshot.get("repo") or {}))
    if progress is not None:
        order = {unit.id: index for index, unit in enumerate(progress.units)}
        units_facts = snapshot.get("units") or {}
        now = snapshot.get("created_at")
        repo = snapshot.get("repo") or {}
        shallow = repo.get("shallow") is True
        conflicted = [str(c.get("path")) for c in repo.get("conflicts") or []]
        changed = _ChangedIndex(_changed_paths(snapshot.get("changes") or {}))
        for unit in progress.units:
            if unit.status == "done":
                facts = units_facts.get(unit.id)
                if facts is not None:
                    found.extend(_done_unit_findings(unit, facts, now, shallow, changed))
                elif unit.evidence is None:
                    found.extend(_done_unit_findings(unit, {}, now))
                conflict = _done_unit_conflicts(unit, conflicted)
                if conflict is not None:
                    found.append(conflict)
            stuck = _stuck(unit)
            if stuck is not None:
                found.append(stuck)
        unaccounted = _unaccounted(progress, snapshot)
        if unaccounted is not None:
            found.append(unaccounted)
        found.extend(_side_effects(progress))
        found.extend(_transcript(progress, snapshot))
    for extra in (_tests(snapshot), _log_errors(snapshot)):
        if extra is not None:
            found.append(extra)
    notes = snapshot.get("notes") or []
    if progress is None:
        notes = [n for n in notes if not n.startswith("progress.yaml")]
    for note in notes[:MAX_NOTES]:
        found.append(finding("SNAPSHOT_NOTE", f"snapshot note: {_data(note, 200)}"))
    return _finalise(found, order)
