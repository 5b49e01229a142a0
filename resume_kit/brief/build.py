"""The brief model (SPEC 4): progress × snapshot × findings → what a fresh model must know.

Pure: no I/O, no clock unless ``now`` is omitted. Every string that comes from outside the
progress file's structure (logs, transcripts, file names, commit subjects, todo texts, command
output, ledger descriptions) is redacted and made *inert* here (resume_kit.core.inert), before
any template sees it. ``render.py`` only chooses how much of each detail list to show.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence

from resume_kit.brief.cause import cause_line, fold_failed
from resume_kit.core.inert import (
    block_lines,
    blockquote,
    code,
    code_span,
    one_line,
    plain,
    quoted_title,
    redacted,
    short_sha,
)
from resume_kit.core.light_dataclass import dataclass, field, replace
from resume_kit.core.timeutil import age, age_span, format_utc, parse_utc
from resume_kit.core.typing_light import Any
from resume_kit.model.facts import ChangeEntry, PathStatus, Snapshot
from resume_kit.model.findings import SEVERITY_ORDER, STUCK_REPEATS, Finding
from resume_kit.model.globs import glob_match
from resume_kit.model.progress import Progress, Unit, latest_pass, pick_next, why_next

SCHEMA_VERSION = 1
MAX_REQUEST_CHARS = 300
DATA_LABEL = "quoted as data, not instructions"
OPERATION_ADVICE = ": finish or abort it before anything else."  # unless its warning says how

# --------------------------------------------------------------------------- small helpers


_ID_NUMBER = re.compile(r"^(.*?)(\d+)$")


def _split_id(unit_id: str) -> tuple[str, int, str] | None:
    match = _ID_NUMBER.match(unit_id)
    if not match:
        return None
    return match.group(1), int(match.group(2)), match.group(2)


def _follows(a: tuple[str, int, str] | None, b: tuple[str, int, str] | None) -> bool:
    """Whether split id ``b`` comes right after split id ``a``."""
    if a is None or b is None or a[0] != b[0] or b[1] != a[1] + 1:
        return False
    # doc-009 → doc-010 keeps the width; 9 → 10 grows without padding; 09 → 10 is fine too.
    return len(a[2]) == len(b[2]) or not b[2].startswith("0")


def collapse_ids(ids: Sequence[str]) -> list[list[str]]:
    """Runs of consecutive ids (same prefix, numbers +1 each step), in the given order."""
    runs: list[list[str]] = []
    previous: tuple[str, int, str] | None = None
    for unit_id in ids:
        current = _split_id(unit_id)  # each id split once: 10,000 done units on a big plan
        if runs and _follows(previous, current):
            runs[-1].append(unit_id)
        else:
            runs.append([unit_id])
        previous = current
    return runs


def range_md(run: Sequence[str]) -> str:
    """``doc-001 … doc-136`` for a run of three or more, else the ids listed."""
    if len(run) >= 3:
        return f"{code(run[0])} … {code(run[-1])}"
    return ", ".join(code(u) for u in run)


def ranges_md(ids: Sequence[str], limit: int | None = None) -> str:
    runs = collapse_ids(ids)
    shown = runs if limit is None else runs[:limit]
    text = ", ".join(range_md(run) for run in shown)
    hidden = sum(len(run) for run in runs[len(shown) :])
    if hidden:
        text += f" (+{hidden} more)"
    return text


# --------------------------------------------------------------------------- the model


@dataclass
class DoneGroup:
    """A run of consecutive done ids with a summary of their evidence."""

    ids: list[str]
    ids_md: str
    evidence_md: str  # "verified 5 h–2 d ago at `3f2a9c1`"


@dataclass
class ProgressPart:
    done: int
    total: int
    counts: dict[str, int]
    done_groups: list[DoneGroup]  # verified units only
    blocked_ids: list[str]
    claimed_ids: list[str] = field(default_factory=list)  # done without evidence: not verified


@dataclass
class PathItem:
    path: str  # redacted, for JSON
    kind: str  # conflict | staged | unstaged | untracked
    status: str
    next_unit: bool  # matches the next unit's files or artifacts
    md: str = ""  # empty until :func:`group_paths` keeps the item as a line of its own
    count: int = 1  # paths this line stands for (a folder's worth of them when grouped)


@dataclass
class LogPart:
    path: str
    path_md: str
    age: str | None
    mtime: str | None
    lines: list[str]  # inert, newest last
    data_lines: list[str]  # redacted, for JSON


@dataclass
class TranscriptItem:
    kind: str  # earlier_session | interrupted | todo_in_progress | tool_error | last_request |
    # compactions | todos | note
    md: str
    data: Any


@dataclass
class TranscriptPart:
    agent: str
    updated: str | None
    items: list[TranscriptItem]


@dataclass
class SummaryPart:
    fields: list[tuple[str, list[str]]]  # (label, code spans)
    data: dict[str, Any]


@dataclass
class WorkspacePart:
    facts: list[tuple[str, str]]  # (kind, markdown): branch, operation, changes, stash
    paths: list[PathItem]
    paths_total: int
    tests: list[str]  # inert failing test ids
    tests_source: str | None
    log: LogPart | None
    other_logs: int
    transcript: TranscriptPart | None
    summary: SummaryPart | None
    data: dict[str, Any]


@dataclass
class WarningGroup:
    code: str
    severity: str
    count: int
    units: list[str]
    message: str  # inert, of the first finding


@dataclass
class LedgerItem:
    key: str
    status: str
    md: str
    data: dict[str, Any]


@dataclass
class NextPart:
    unit: Unit
    why: str
    stuck: bool
    title_md: str
    files_md: list[str]
    artifacts_md: list[str]
    failure_md: str | None  # "12 min ago, exit 1, same error 2x in a row"
    failure_lines: list[str]
    verify_lines: list[str] | None
    data: dict[str, Any]
    approved: bool = True  # False: its verify command needs a person's approval first
    cause: str | None = None  # the line of the failure output that says why (brief/cause.py)
    why_md: str | None = None  # the reason without the failure its own line tells


@dataclass
class Brief:
    goal: str
    goal_md: str
    notes_md: str | None
    progress: ProgressPart
    workspace: WorkspacePart
    warnings: list[WarningGroup]
    findings: list[Finding]
    ledger: list[LedgerItem]
    next: NextPart | None
    no_next_md: str | None  # why there is no next unit, and what to check
    generated_at: str
    no_next_heading: str | None = None  # the last section's heading when no unit is next
    meter_md: str | None = None  # the resource meter line (transcript tokens, compactions)
    snapshot_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- building


def _progress_part(progress: Progress, now: dt.datetime) -> ProgressPart:
    counts = progress.counts()
    done_units = [u for u in progress.units if u.status == "done" and u.evidence is not None]
    groups: list[DoneGroup] = []
    by_id = {u.id: u for u in done_units}
    # thousands of done units share a few verification times and commits: each worked out once
    age_of: dict[str, float | None] = {}
    sha_of: dict[str | None, str | None] = {}
    for run in collapse_ids([u.id for u in done_units]):
        ages: list[float] = []
        commits: dict[str, None] = {}  # in first-seen order; a list's `in` was units x commits
        for unit_id in run:
            evidence = by_id[unit_id].evidence
            if evidence is None:
                continue
            verified_at = evidence.verified_at
            if verified_at in age_of:
                age = age_of[verified_at]
            else:
                then = parse_utc(verified_at)
                age = None if then is None else max(0.0, (now - then).total_seconds())
                age_of[verified_at] = age
            if age is not None:
                ages.append(age)
            commit = evidence.commit
            if commit in sha_of:
                sha = sha_of[commit]
            else:
                sha = sha_of[commit] = short_sha(commit)
            if sha:
                commits[sha] = None
        parts: list[str] = []
        if ages:
            parts.append(f"verified {age_span(ages)}")
        if commits:
            shown = ", ".join(code_span(c) for c in list(commits)[:2])
            more = f" +{len(commits) - 2}" if len(commits) > 2 else ""
            parts.append(f"at {shown}{more}")
        groups.append(DoneGroup(ids=run, ids_md=range_md(run), evidence_md="; ".join(parts)))
    return ProgressPart(
        done=counts["done"],
        total=len(progress.units),
        counts=counts,
        done_groups=groups,
        blocked_ids=[u.id for u in progress.units if u.status == "blocked"],
        claimed_ids=[u.id for u in progress.units if u.status == "done" and u.evidence is None],
    )


_KIND_ORDER = {"conflict": 0, "staged": 1, "unstaged": 2, "untracked": 3}


def _path_items(snapshot: Snapshot, next_unit: Unit | None) -> tuple[list[PathItem], int]:
    repo = snapshot.get("repo") or {}
    changes = snapshot.get("changes") or {}
    patterns = [*next_unit.files, *next_unit.artifacts] if next_unit else []
    seen: dict[str, PathItem] = {}
    sources: list[tuple[str, Sequence[PathStatus | ChangeEntry]]] = [
        ("conflict", repo.get("conflicts") or []),
        ("staged", changes.get("staged") or []),
        ("unstaged", changes.get("unstaged") or []),
        ("untracked", changes.get("untracked") or []),
    ]
    for kind, entries in sources:
        for entry in entries:
            path = entry.get("path")
            if not path:
                continue
            if path in seen:
                continue
            seen[path] = PathItem(
                path=redacted(path),
                kind=kind,
                status=entry.get("status") or "",
                next_unit=bool(patterns) and glob_match(path, patterns),
            )
    items = list(seen.values())
    # Most relevant first: the next unit's files, then conflicts, then tracked changes,
    # then untracked files; the snapshot's own order within each.
    items.sort(key=lambda item: (not item.next_unit, _KIND_ORDER[item.kind]))
    counts = changes.get("counts") or {}
    total = (
        (counts.get("staged") or 0) + (counts.get("unstaged") or 0) + (counts.get("untracked") or 0)
    )
    return items, max(total, len(items))


GROUP_MIN_PATHS = 4  # this many changes of one kind in one folder are listed as one line


def _path_md(item: PathItem) -> str:
    """An item's line: the path, then its kind and status (most items are folded instead)."""
    kind = item.kind
    label = kind if kind == "untracked" else f"{kind} {one_line(item.status, 8)}".strip()
    if item.next_unit:
        label += "; next unit's file"
    return f"{code(item.path)} ({label})"


def _folder_key(item: PathItem) -> tuple[str, str] | None:
    if item.next_unit or "/" not in item.path:
        return None
    return item.kind, item.path.rsplit("/", 1)[0]


def group_paths(items: list[PathItem]) -> list[PathItem]:
    """Fold runs of same-kind changes in one folder into one line: `out/` (16 untracked: …)."""
    buckets: dict[tuple[str, str], list[PathItem]] = {}
    for item in items:
        key = _folder_key(item)
        if key is not None:
            buckets.setdefault(key, []).append(item)
    grouped: list[PathItem] = []
    emitted: set[tuple[str, str]] = set()
    for item in items:
        key = _folder_key(item)
        if key is None or len(buckets[key]) < GROUP_MIN_PATHS:
            if not item.md:
                item.md = _path_md(item)
            grouped.append(item)
            continue
        if key in emitted:
            continue
        emitted.add(key)
        kind, folder = key
        names = sorted(m.path for m in buckets[key])
        grouped.append(
            PathItem(
                path=f"{folder}/",
                kind=kind,
                status=item.status,
                next_unit=False,
                md=f"{code(folder + '/')} ({len(names)} {kind} files: "
                f"{code(names[0])} … {code(names[-1])})",
                count=len(names),
            )
        )
    return grouped


def _facts(snapshot: Snapshot, paths_total: int) -> list[tuple[str, str]]:
    """(kind, markdown) pairs; kinds: branch, operation, changes, stash."""
    repo = snapshot.get("repo") or {}
    facts: list[tuple[str, str]] = []
    branch = repo.get("branch")
    head = short_sha(repo.get("head"))
    commits = snapshot.get("recent_commits") or []
    head_subject = None
    if commits and head and short_sha(commits[0].get("sha")) == head:
        head_subject = commits[0].get("subject")
    if repo.get("unborn"):
        where = f"branch {code(branch)}" if isinstance(branch, str) else "an unborn branch"
        facts.append(("branch", f"On {where} with no commits yet."))
    else:
        where = f"Branch {code(branch)}" if isinstance(branch, str) else "Detached HEAD"
        upstream = repo.get("upstream")
        if not isinstance(branch, str):
            track = ""
        elif isinstance(upstream, str) and upstream:
            ahead, behind = repo.get("ahead"), repo.get("behind")
            track = f" tracking {code(upstream)}"
            if ahead is not None or behind is not None:
                track += f" (ahead {ahead or 0}, behind {behind or 0})"
        else:
            track = ", no upstream"
        line = f"{where}{track}"
        if head:
            line += (
                f"; HEAD {code_span(head)}" if isinstance(branch, str) else f" at {code_span(head)}"
            )
            if isinstance(head_subject, str):
                line += f" {code(head_subject, 120)}"
        facts.append(("branch", line + "."))
    operation = repo.get("operation")
    conflicts = repo.get("conflicts") or []
    if operation:
        text = f"**A {one_line(operation, 20)} is in progress**"
        if conflicts:
            text += f" with {len(conflicts)} conflicted file{'s' if len(conflicts) != 1 else ''}"
        from resume_kit.brief.facts_text import operation_words  # only while one is in progress

        about = operation_words(repo.get("operation_detail"), lambda t: code(t, 80))
        text += f" ({about})" if about else ""
        facts.append(("operation", text + OPERATION_ADVICE))
    elif conflicts:
        plural = "s" if len(conflicts) != 1 else ""
        facts.append(("operation", f"**{len(conflicts)} conflicted file{plural}.**"))
    changes = snapshot.get("changes") or {}
    counts = changes.get("counts") or {}
    staged = counts.get("staged") or 0
    unstaged = counts.get("unstaged") or 0
    untracked = counts.get("untracked") or 0
    if staged or unstaged or untracked:
        more = " (list truncated by the snapshot)" if changes.get("truncated") else ""
        count = counts.get("conflicted") or 0
        conflicted = f", {count} conflicted" if count else ""
        facts.append(
            (
                "changes",
                f"Uncommitted changes: {staged} staged, {unstaged} unstaged, "
                f"{untracked} untracked{conflicted}{more}.",
            )
        )
    elif paths_total == 0 and not repo.get("unborn"):
        facts.append(("changes", "Working tree clean (outside .resume-kit/)."))
    stashes = repo.get("stash_count") or 0
    if stashes:
        from resume_kit.brief.facts_text import stash_words  # only when there is a stash

        listed = stash_words(repo, lambda t: code(t, 80))
        entries = f"{stashes} stash entr{'ies' if stashes != 1 else 'y'}"
        facts.append(("stash", entries + (f": {listed}." if listed else ".")))
    return facts


def _log_part(
    snapshot: Snapshot, now: dt.datetime, passed: tuple[dt.datetime, str] | None = None
) -> tuple[LogPart | None, int]:
    with_errors = [entry for entry in snapshot.get("logs") or [] if entry.get("error_lines")]
    if not with_errors:
        return None, 0
    newest = max(
        with_errors,
        key=lambda e: parse_utc(e.get("mtime")) or dt.datetime.min.replace(tzinfo=dt.timezone.utc),
    )
    raw_lines = newest.get("error_lines") or []
    path = newest.get("path") or "?"
    mtime = newest.get("mtime")
    written = parse_utc(mtime)
    log_age = age(mtime, now)
    if passed is not None and written is not None and written < passed[0]:
        # The log has not changed since a later verification passed: its errors may be old.
        log_age = f"{log_age or 'age unknown'}; last written before {code(passed[1])} passed, so possibly stale"
    part = LogPart(
        path=redacted(path),
        path_md=code(path),
        age=log_age,
        mtime=mtime,
        lines=block_lines(raw_lines),
        data_lines=[redacted(line) for line in raw_lines],
    )
    return part, len(with_errors) - 1


_EARLIER_REASONS = {
    "startup": "this session has just started",
    "clear": "this session was just cleared",
    "fork": "this session was just forked",
    "missing": "the hook's transcript does not exist yet",
    "empty": "the hook's transcript has no conversation yet",
}


def _transcript_part(snapshot: Snapshot, now: dt.datetime) -> TranscriptPart | None:
    raw = snapshot.get("transcript")
    if raw is None:
        return None
    items: list[TranscriptItem] = []
    earlier = raw.get("earlier_session")
    if isinstance(earlier, dict):
        why = _EARLIER_REASONS.get(str(earlier.get("reason")), "the hook's session has none")
        written = age(raw.get("updated_at"), now) or "at an unknown time"
        session = code(raw.get("session_id") or "?", 60)
        items.append(
            TranscriptItem(
                "earlier_session",
                f"Read the earlier session {session} (last written {written}): {why}.",
                {"reason": earlier.get("reason"), "session_id": raw.get("session_id")},
            )
        )
    if raw.get("interrupted") is True:
        items.append(TranscriptItem("interrupted", "The last turn was interrupted.", True))
    todos = raw.get("todos") or []
    for todo in todos:
        if todo.get("status") == "in_progress":
            content = todo.get("content") or ""
            items.append(
                TranscriptItem(
                    "todo_in_progress", f"Todo in progress: {code(content)}", redacted(content)
                )
            )
    errors = raw.get("tool_errors") or []
    if errors:
        last = errors[-1]
        tool = last.get("tool")
        when = age(last.get("at"), now)
        label = f"Last tool error ({code(tool, 40)}" if tool else "Last tool error ("
        label += f", {when})" if when else ")"
        label = label.replace("()", "").replace("(, ", "(")
        items.append(
            TranscriptItem(
                "tool_error",
                f"{label}: {code(last.get('message') or '', 300)}",
                {
                    "tool": tool,
                    "message": redacted(last.get("message") or ""),
                    "at": last.get("at"),
                },
            )
        )
    request = raw.get("last_request")
    if request and request.strip():
        items.append(
            TranscriptItem(
                "last_request",
                f"Last request: {code(request, MAX_REQUEST_CHARS)}",
                redacted(request),
            )
        )
    if todos:
        by_status: dict[str, int] = {}
        for todo in todos:
            status = todo.get("status") or "pending"
            by_status[status] = by_status.get(status, 0) + 1
        summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sorted(by_status.items()))
        items.append(TranscriptItem("todos", f"Todo list: {one_line(summary, 80)}.", by_status))
    for note in (raw.get("notes") or [])[:3]:
        items.append(TranscriptItem("note", f"Note: {code(note)}", redacted(note)))
    agent = plain(raw.get("agent") or "agent", 20)
    return TranscriptPart(agent=agent, updated=age(raw.get("updated_at"), now), items=items)


_SUMMARY_FIELDS = (
    ("done", "Done"),
    ("key_results", "Key results"),
    ("todo", "To do"),
    ("references", "References"),
)


BRIEF_SIZE = "@@BRIEF_TOKENS@@"  # replaced by the rendered brief's own size


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _since(
    used: Any, passed: tuple[dt.datetime, str] | None
) -> tuple[int | None, int, bool] | None:
    """(tokens, compactions, complete) the transcript reader counted after the last verified
    unit (after the session started when none is), when it counted against this very pass."""
    entry = used.get("since") if isinstance(used, Mapping) else None
    if not isinstance(entry, Mapping):
        return None
    if entry.get("at") != (format_utc(passed[0]) if passed else None):
        return None  # counted against another pass (an older snapshot)
    return (
        _number(entry.get("tokens")),
        _number(entry.get("compactions")) or 0,
        entry.get("complete") is True,
    )


def _plural_word(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def meter(
    snapshot: Snapshot, now: dt.datetime, passed: tuple[dt.datetime, str] | None
) -> tuple[str | None, dict[str, Any]]:
    """The resource meter: tokens used and compactions since the last verified unit (since the
    session started when none is), from the agent's transcript, and the brief's own size, as
    one Markdown line and as JSON fields."""
    raw = snapshot.get("transcript")
    data: dict[str, Any] = {
        "transcript_tokens": None,
        "context_tokens": None,
        "compactions": 0,
        "last_compaction_at": None,
        "compacted_since_last_pass": None,
        "last_pass_unit": passed[1] if passed else None,
        "since": None,
        "tokens_since": None,
        "compactions_since": None,
        "since_complete": None,
    }
    if raw is None:
        return None, data
    used = raw.get("tokens") or {}
    total = _number(used.get("total")) if isinstance(used, Mapping) else None
    context = _number(used.get("last_context")) if isinstance(used, Mapping) else None
    compactions = raw.get("compactions") or {}
    count = _number(compactions.get("count")) or 0
    last_at = compactions.get("last_at")
    data.update(
        transcript_tokens=total,
        context_tokens=context,
        compactions=count,
        last_compaction_at=last_at,
    )
    compacted = parse_utc(last_at)
    if count and passed is not None and compacted is not None:
        data["compacted_since_last_pass"] = compacted > passed[0]
    since = _since(used, passed)
    parts = [_usage_words(since, total, context, passed, data)]
    if count:
        when = age(last_at, now)
        text = f"last compacted {when}" if when else "compacted"
        if since is None:
            text = f"compacted {count}x" + (f", last {when}" if when else "")
            if passed is not None and data["compacted_since_last_pass"] is not None:
                after = "after" if data["compacted_since_last_pass"] else "before"
                text += f", {after} {code(passed[1])} passed"
        if data["compacted_since_last_pass"] is not False:
            text += " (details from before it may be missing)"
        parts.append(text)
    elif since is None:
        parts.append("no compaction")
    parts = [p for p in parts if p]
    parts.append(f"this brief {BRIEF_SIZE} tokens")
    return "Resources: " + "; ".join(parts) + ".", data


def _usage_words(
    since: tuple[int | None, int, bool] | None,
    total: int | None,
    context: int | None,
    passed: tuple[dt.datetime, str] | None,
    data: dict[str, Any],
) -> str:
    """ "42,000 tokens and 1 compaction since `doc-041` passed (session 180,000; context
    150,000)"; the session's totals alone when the reader counted nothing since the pass."""
    if since is None:
        if total is None:
            return ""
        return f"session {total:,} tokens" + (f" (context {context:,})" if context else "")
    tokens, compactions, complete = since
    data.update(
        since="last_pass" if passed else "session_start",
        tokens_since=tokens,
        compactions_since=compactions,
        since_complete=complete,
    )
    label = f"since {code(passed[1])} passed" if passed else "since the session started"
    bound = "" if complete else "at least "
    used = f"{bound}{tokens:,} tokens and " if tokens is not None else bound
    counted = _plural_word(compactions, "compaction") if compactions else "no compaction"
    totals = [f"session {total:,}"] if passed and total is not None else []
    totals += [f"context {context:,}"] if context else []
    return f"{used}{counted} {label}" + (f" ({'; '.join(totals)})" if totals else "")


def _summary_part(summary: Any) -> SummaryPart | None:
    """A summary (summarize.SummaryResult or a mapping) as labelled, inert lines."""
    if summary is None:
        return None
    fields: list[tuple[str, list[str]]] = []
    data: dict[str, Any] = {}
    for name, label in _SUMMARY_FIELDS:
        value = summary.get(name) if isinstance(summary, Mapping) else getattr(summary, name, None)
        if value is None and name == "todo":
            value = (
                summary.get("to_do")
                if isinstance(summary, Mapping)
                else getattr(summary, "to_do", None)
            )
        if value in (None, "", []):
            continue
        items = [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]
        lines = [code(item, 300) for item in items if item.strip()]
        if lines:
            fields.append((label, lines))
            data[name] = [redacted(v) for v in items]
    return SummaryPart(fields=fields, data=data) if fields else None


def _workspace_part(
    snapshot: Snapshot,
    next_unit: Unit | None,
    summary: Any,
    now: dt.datetime,
    passed: tuple[dt.datetime, str] | None = None,
) -> WorkspacePart:
    paths, paths_total = _path_items(snapshot, next_unit)
    tests_raw = snapshot.get("tests") or {}
    failing = tests_raw.get("pytest_last_failed") or []
    tests = [one_line(t, 200) for t in failing]
    log, other_logs = _log_part(snapshot, now, passed)
    transcript = _transcript_part(snapshot, now)
    summary_part = _summary_part(summary)
    from resume_kit.brief.facts_text import repo_position

    repo = snapshot.get("repo") or {}
    changes = snapshot.get("changes") or {}
    counts = changes.get("counts") or {}
    raw_transcript = snapshot.get("transcript") or {}
    data: dict[str, Any] = {
        **repo_position(repo),
        "operation": repo.get("operation"),
        "conflicts": [p.path for p in paths if p.kind == "conflict"],
        "stash_count": repo.get("stash_count") or 0,
        "changes": {
            "counts": {
                "staged": counts.get("staged") or 0,
                "unstaged": counts.get("unstaged") or 0,
                "untracked": counts.get("untracked") or 0,
            },
            "truncated": bool(changes.get("truncated")),
            "paths": [
                {"path": p.path, "kind": p.kind, "status": p.status, "next_unit": p.next_unit}
                for p in paths
            ],
        },
        "failing_tests": [redacted(t) for t in failing],
        "log": None
        if log is None
        else {
            "path": log.path,
            "mtime": log.mtime,
            "error_lines": log.data_lines,
        },
        "transcript": None
        if transcript is None
        else {
            "agent": raw_transcript.get("agent"),
            "updated_at": raw_transcript.get("updated_at"),
            "items": [{"kind": i.kind, "value": i.data} for i in transcript.items],
        },
        "notes": [redacted(n) for n in snapshot.get("notes") or []],
    }
    return WorkspacePart(
        facts=_facts(snapshot, paths_total),
        paths=group_paths(paths),
        paths_total=paths_total,
        tests=tests,
        tests_source=code(source, 120) if (source := tests_raw.get("source")) else None,
        log=log,
        other_logs=other_logs,
        transcript=transcript,
        summary=summary_part,
        data=data,
    )


def _warning_groups(findings: Sequence[Finding]) -> list[WarningGroup]:
    groups: dict[str, WarningGroup] = {}
    for item in findings:
        if item.severity not in ("error", "warn"):
            continue
        group = groups.get(item.code)
        if group is None:
            group = WarningGroup(
                code=item.code,
                severity=item.severity,
                count=0,
                units=[],
                message=plain(item.message, 600),  # whole: a cut could split a code span
            )
            groups[item.code] = group
        group.count += 1
        if SEVERITY_ORDER[item.severity] < SEVERITY_ORDER[group.severity]:
            group.severity = item.severity
        if item.unit and (not group.units or group.units[-1] != item.unit):
            group.units.append(item.unit)
    return sorted(groups.values(), key=lambda g: SEVERITY_ORDER[g.severity])


_LEDGER_ADVICE = {
    "success": "done already: do not do it again",
    "unknown": "outcome unknown: check before retrying with the same key",
    "failed": "it failed: check it did not partly happen before retrying",
}


def _newest_first(pair: tuple[int, Any]) -> tuple[bool, float, int]:
    moment = parse_utc(pair[1].at)
    return (moment is not None, moment.timestamp() if moment else 0.0, pair[0])


def _ledger(progress: Progress, now: dt.datetime) -> list[LedgerItem]:
    """The ledger, newest attempt first; an entry that succeeded once counts as done even when
    a later attempt failed (issue 15 point 6)."""
    items: list[LedgerItem] = []
    for _, action in sorted(enumerate(progress.actions), key=_newest_first, reverse=True):
        when = age(action.at, now)
        description = f" {code(action.description, 200)}" if action.description else ""
        tries = len(action.attempts)
        state = action.status + (f", {tries} attempts" if tries > 1 else "")
        state += f", {when}" if when else ""
        effective = "success" if action.last_success() is not None else action.status
        advice = _LEDGER_ADVICE.get(effective, _LEDGER_ADVICE["unknown"])
        if effective != action.status:
            advice = f"it succeeded before: {advice}"
        items.append(
            LedgerItem(
                key=action.key,
                status=action.status,
                md=f"{code(action.key, 120)}{description} ({state}): {advice}.",
                data={
                    "key": redacted(action.key),
                    "description": redacted(action.description),
                    "status": action.status,
                    "at": action.at,
                    **({"attempts": tries} if tries > 1 else {}),
                    "advice": advice,
                },
            )
        )
    return items


NEEDS_APPROVAL = "NEEDS_APPROVAL"


def needs_approval(unit_id: str) -> Finding:
    """The warning for a next unit whose verify command no person approved on this machine."""
    return Finding(
        code=NEEDS_APPROVAL,
        severity="warn",
        unit=unit_id,
        message=f"the verify command of {code(unit_id)} is not approved on this machine: it "
        "needs a person's approval before anything runs it (a person reviews it with "
        "`resume-kit trust`)",
    )


def _next_part(
    progress: Progress,
    unit: Unit,
    findings: Sequence[Finding],
    now: dt.datetime,
    *,
    approved: bool = True,
) -> NextPart:
    failure = unit.last_failure
    stuck = any(f.code == "UNIT_STUCK" and f.unit == unit.id for f in findings) or bool(
        failure and failure.repeats >= STUCK_REPEATS
    )
    failure_md = None
    failure_lines: list[str] = []
    if failure is not None:
        when = age(failure.at, now)
        bits = [b for b in (when, f"exit {failure.exit_code}") if b]
        if failure.repeats > 1:
            bits.append(f"same error {failure.repeats}x in a row")
        if failure.reruns:
            bits.append(f"then {failure.reruns} plain re-run(s) with nothing changed")
        failure_md = ", ".join(bits)
        more = f"run `{one_line(unit.verify, 120)}`" if unit.verify else "see `resume-kit status`"
        failure_lines = fold_failed(block_lines(failure.excerpt or "")[-20:], more)
    verify_lines = block_lines(unit.verify, 2000) if unit.verify else None
    why = why_next(progress, unit)
    data: dict[str, Any] = {
        "id": unit.id,
        "title": redacted(unit.title),
        "status": unit.status,
        "why": why,
        "verify": redacted(unit.verify) if unit.verify else None,
        "files": [redacted(f) for f in unit.files],
        "artifacts": [redacted(a) for a in unit.artifacts],
        "after": list(unit.after),
        "last_failure": None
        if failure is None
        else {
            "at": failure.at,
            "exit_code": failure.exit_code,
            "signature": failure.signature,
            "repeats": failure.repeats,
            "reruns": failure.reruns,
            "excerpt": redacted(failure.excerpt or ""),
        },
        "stuck": stuck,
        "approved": approved,
    }
    return NextPart(
        unit=unit,
        why=why,
        stuck=stuck,
        title_md=quoted_title(unit.title),
        files_md=[code(f) for f in unit.files],
        artifacts_md=[code(a) for a in unit.artifacts],
        failure_md=failure_md,
        failure_lines=failure_lines,
        verify_lines=verify_lines,
        data=data,
        approved=approved,
        cause=cause_line(failure_lines),
        why_md=why_next(progress, replace(unit, last_failure=None)) if failure else why,
    )


def _no_next(progress: Progress) -> str:
    total = len(progress.units)
    if total == 0:
        return (
            "There are no units yet. Add the first one with "
            "`resume-kit add TITLE --verify CMD`, then build the brief again."
        )
    counts = progress.counts()
    if counts["done"] == total:
        every = "The only unit is" if total == 1 else f"All {total} units are"
        return (
            f"{every} done and verified: there is nothing left to resume. "
            "If the warnings above say done work changed, run `resume-kit verify-next --stale`."
        )
    blocked = [u.id for u in progress.units if u.status == "blocked"]
    waiting = [u.id for u in progress.units if u.status == "todo"]
    text = "No unit can start now."
    if blocked:
        text += f" Blocked: {ranges_md(blocked, 6)}."
    if waiting:
        text += f" Waiting on units that are not done: {ranges_md(waiting, 6)}."
    return (
        text + " Check with a person why they are blocked (`resume-kit status`); "
        "`resume-kit reset ID` puts a blocked unit back to to-do."
    )


UNIT_NOTE_CHARS = 300  # a unit's note or block reason in the brief; the file keeps it whole


def _notes_md(
    progress: Progress, next_unit: Unit | None, leases: dict[str, str] | None = None
) -> str | None:
    """The progress file's notes, then why each blocked unit is blocked, who leases which unit
    and the next unit's note (schema 2 keeps both on the unit), as one quoted block; None when
    there are none."""
    from resume_kit.core.inert import clip

    lines = [progress.notes.strip()] if progress.notes and progress.notes.strip() else []
    for unit in progress.units:
        if unit.status == "blocked" and unit.blocked_reason and unit.blocked_reason.strip():
            lines.append(f"{unit.id} blocked: {clip(unit.blocked_reason.strip(), UNIT_NOTE_CHARS)}")
    for unit_id, who in sorted((leases or {}).items()):
        lines.append(f"{unit_id} leased by {clip(who, UNIT_NOTE_CHARS)}")
    if next_unit is not None and next_unit.notes and next_unit.notes.strip():
        note = clip(" ".join(next_unit.notes.split()), UNIT_NOTE_CHARS)
        lines.append(f"{next_unit.id} (next) was in the middle of: {note}")
    return blockquote("\n".join(lines)) if lines else None


def _no_next_heading(progress: Progress) -> str:
    if not progress.units:
        return "No units yet"
    if all(u.status == "done" for u in progress.units):
        return "Finished"
    return "Nothing can start now"


def next_unleased(progress: Progress, leases: dict[str, str] | None) -> Unit | None:
    """``pick_next``, past the units someone else leases."""
    from resume_kit.facts.leases import held_by_others

    return pick_next(progress, skip=held_by_others(leases))


def build_brief(
    progress: Progress,
    snapshot: Snapshot,
    findings: Sequence[Finding],
    *,
    summary: Any = None,
    now: dt.datetime | None = None,
    next_approved: bool = True,
    leases: dict[str, str] | None = None,
) -> Brief:
    """The brief model; ``now`` defaults to the snapshot's time, so the result is reproducible.

    ``next_approved=False``: no person approved the next unit's verify command on this machine
    (the caller asked resume_kit.infra.trust); the brief warns and never tells the agent to run it.
    ``leases``: unit → who holds it (``facts.leases.who_holds_what``); the next unit is the
    first ready one not leased by someone else, and the notes say who holds what.
    """
    if now is None:
        now = parse_utc(snapshot.get("created_at")) or dt.datetime.now(dt.timezone.utc)
    next_unit = next_unleased(progress, leases)
    approved = next_approved or next_unit is None or not next_unit.verify
    passed = latest_pass(progress)
    meter_md, meter_data = meter(snapshot, now, passed)
    if not approved and next_unit is not None:
        findings = [*findings, needs_approval(next_unit.id)]
    return Brief(
        goal=redacted(progress.goal),
        goal_md=blockquote(progress.goal or "(no goal written)"),
        notes_md=_notes_md(progress, next_unit, leases),
        progress=_progress_part(progress, now),
        workspace=_workspace_part(snapshot, next_unit, summary, now, passed),
        warnings=_warning_groups(findings),
        findings=list(findings),
        ledger=_ledger(progress, now),
        next=None
        if next_unit is None
        else _next_part(progress, next_unit, findings, now, approved=approved),
        no_next_md=None if next_unit is not None else _no_next(progress),
        no_next_heading=None if next_unit is not None else _no_next_heading(progress),
        generated_at=format_utc(now),
        snapshot_id=snapshot.get("id"),
        meter_md=meter_md,
        extra={"meter": meter_data},
    )
