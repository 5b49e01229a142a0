"""The workspace facts as plain terminal lines (`status`, and the `snapshot` command's report)."""

from __future__ import annotations

from collections.abc import Callable

from resume_kit.core.inert import short_sha
from resume_kit.core.snapshot_diff import SnapshotDiff, changed_paths
from resume_kit.model.facts import OperationDetail, RepoFacts, Snapshot


def terminal_line(text: str) -> str:
    """``text`` as one printable line: newlines, escape sequences and bidi controls from file
    names, commit subjects or logs are shown escaped, so they cannot forge lines of output."""
    from resume_kit.core.escape import escape_controls

    return escape_controls(text)


def short_commit(sha: str | None) -> str:
    return short_sha(sha) or "none"


def _some(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" … (+{len(items) - limit} more)" if len(items) > limit else "")


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _commit(sha: object, subject: object, quote: Callable[[str], str]) -> str:
    short = short_sha(sha if isinstance(sha, str) else None)
    if short is None:
        return ""
    return f"{short}" + (f" {quote(subject)}" if isinstance(subject, str) and subject else "")


def operation_words(detail: OperationDetail | None, quote: Callable[[str], str]) -> str:
    """What the operation in progress is about, as words after "a merge is in progress":
    ``merging topic (commit 1a2b3c4 "topic change")``, ``rebasing topic onto 5d6e7f8 "main
    change", stopped at step 2/3 on 9a8b7c6 "topic two"``; "" when nothing is known.
    ``quote`` makes repository text (branch names, subjects) inert for the medium."""
    if not detail:
        return ""
    kind = detail.get("kind")
    source = detail.get("source")
    named = quote(source) if isinstance(source, str) and source else ""
    commit = _commit(detail.get("commit"), detail.get("subject"), quote)
    if kind == "merge":
        words = f"merging {named}" if named else "merging"
        return words + (f" (commit {commit})" if commit else "") if (named or commit) else ""
    if kind in ("rebase", "am"):
        parts = [f"rebasing {named}" if named else "rebasing"]
        onto = _commit(detail.get("onto"), detail.get("onto_subject"), quote)
        if onto:
            parts[0] += f" onto {onto}"
        step, steps = detail.get("step"), detail.get("steps")
        stop = f"stopped at step {step}/{steps}" if isinstance(step, int) and steps else ""
        if commit:
            stop = (stop or "stopped") + f" on {commit}"
        words = ", ".join(p for p in (parts[0], stop) if p)
        return "" if words == "rebasing" else words
    if kind in ("cherry-pick", "revert") and commit:
        return f"{kind} of {commit}"
    return ""


def stash_words(repo: RepoFacts, quote: Callable[[str], str], limit: int = 3) -> str:
    """The newest stash entries with their messages: ``stash@{0} "On main: try b"``, …"""
    entries = [str(e.get("message")) for e in repo.get("stashes") or []][:limit]
    # the refs are rebuilt from the order: a stored snapshot's own text is never shown unquoted
    return ", ".join(f"stash@{{{i}}} {quote(message)}" for i, message in enumerate(entries))


def repo_position(repo: RepoFacts) -> dict[str, object]:
    """Where the work tree stands (branch, HEAD, upstream, ahead/behind), as the JSON views of
    the brief and of ``status`` both give it."""
    return {
        "branch": repo.get("branch"),
        "head": repo.get("head"),
        "unborn": bool(repo.get("unborn")),
        "upstream": repo.get("upstream"),
        "ahead": repo.get("ahead"),
        "behind": repo.get("behind"),
    }


def describe_workspace(snapshot: Snapshot) -> list[str]:
    """The workspace facts as short plain lines (branch, operation, changes, tests, logs)."""
    repo = snapshot.get("repo") or {}
    lines: list[str] = []
    head = repo.get("head")
    if repo.get("unborn"):
        where = f"branch {repo.get('branch') or '?'} (no commits yet)"
    elif repo.get("branch"):
        where = f"branch {repo.get('branch')} @ {short_commit(head)}"
    elif head is None:
        where = "HEAD unknown (no git facts)"
    else:
        where = f"detached HEAD @ {short_commit(head)}"
    if repo.get("upstream"):
        ahead, behind = repo.get("ahead"), repo.get("behind")
        if ahead is None and behind is None:  # git names an upstream whose ref is not there
            where += f" (upstream {repo.get('upstream')}: not fetched)"
        else:
            where += f" (upstream {repo.get('upstream')}: ahead {ahead or 0}, behind {behind or 0})"
    lines.append(where)
    if repo.get("operation"):
        about = operation_words(repo.get("operation_detail"), lambda t: f'"{t}"')
        lines.append(f"{repo.get('operation')} in progress" + (f": {about}" if about else ""))
    conflicts = [str(c.get("path")) for c in repo.get("conflicts") or []]
    if conflicts:
        lines.append(f"{len(conflicts)} conflicted: {_some(conflicts)}")
    counts = (snapshot.get("changes") or {}).get("counts") or {}
    staged, unstaged, untracked = (
        counts.get("staged") or 0,
        counts.get("unstaged") or 0,
        counts.get("untracked") or 0,
    )
    conflicted = counts.get("conflicted") or 0
    if staged or unstaged or untracked or conflicted:  # a conflicted tree is not clean
        paths = sorted(changed_paths(snapshot))
        lines.append(
            f"uncommitted changes: {staged} staged, {unstaged} unstaged, {untracked} untracked"
            + (f", {conflicted} conflicted" if conflicted else "")
            + (f" ({_some(paths, 4)})" if paths else "")
        )
    else:
        lines.append("working tree clean")
    stashes = repo.get("stash_count")
    if stashes:
        listed = stash_words(repo, lambda t: f'"{t}"')
        lines.append(
            _count(stashes, "stash entry", "stash entries") + (f": {listed}" if listed else "")
        )
    failing = list((snapshot.get("tests") or {}).get("pytest_last_failed") or [])
    if failing:
        lines.append(
            f"{_count(len(failing), 'failing test')} (pytest last run): {_some(failing, 3)}"
        )
    for log in snapshot.get("logs") or []:
        errors = log.get("error_lines") or []
        if errors:
            last = errors[-1].replace("\n", " ")[:160]
            lines.append(f"{log.get('path')}: {_count(len(errors), 'error line')}, last: {last}")
    state = snapshot.get("progress") or {}
    if state and not state.get("valid", True):
        lines.append(f"progress.yaml not usable: {state.get('error')}")
    return [terminal_line(line) for line in lines]


def render_diff(diff: SnapshotDiff, snapshot: Snapshot) -> str:
    """The `snapshot` command's plain-text report."""
    out = [f"snapshot {snapshot.get('id')} ({snapshot.get('trigger')})"]
    out.extend(f"  {line}" for line in describe_workspace(snapshot))
    if diff["previous"] is None:
        out.append("first snapshot: nothing to compare with")
    else:
        changes: list[str] = []
        commits = diff["new_commits"]
        head = diff["head"]
        if commits:
            more = "+" if diff["more_commits"] else ""
            changes.append(f"{len(commits)}{more} new commit{'s' if len(commits) != 1 else ''}:")
            changes.extend(
                f"    {short_commit(c.get('sha'))} {(c.get('subject') or '')[:72]}"
                + (f"  [{c.get('unit')}]" if c.get("unit") else "")
                for c in commits
            )
        elif head:
            changes.append(
                f"HEAD moved: {short_commit(head['old'])} -> {short_commit(head['new'])}"
            )
        for key, move in (("branch", diff["branch"]), ("operation", diff["operation"])):
            if move:
                changes.append(f"{key}: {move['old'] or 'none'} -> {move['new'] or 'none'}")
        if diff["files_changed"]:
            changes.append(f"newly changed: {_some(diff['files_changed'], 8)}")
        if diff["files_cleaned"]:
            changes.append(f"no longer changed: {_some(diff['files_cleaned'], 8)}")
        for unit in diff["units"][:20]:
            changes.append(f"unit {unit['id']}: {unit['old'] or 'new'} -> {unit['new'] or 'gone'}")
        if len(diff["units"]) > 20:
            changes.append(f"… and {len(diff['units']) - 20} more unit changes")
        if diff["tests_failing"]:
            changes.append(f"newly failing tests: {_some(diff['tests_failing'], 5)}")
        if diff["tests_fixed"]:
            changes.append(f"no longer failing: {_some(diff['tests_fixed'], 5)}")
        out.append(f"since {diff['previous']}:")
        out.extend(f"  {line}" for line in changes or ["nothing changed"])
    for note in snapshot.get("notes") or []:
        out.append(f"note: {note}")
    return "\n".join(terminal_line(line) for line in out)
