"""Render a brief as Markdown, JSON or a Claude Code / Codex SessionStart hook answer, fitted to a
token budget (SPEC 4).

Fitting never re-renders per unit: detail is cut in a fixed ladder of levels (docs/brief.md:
repetitive material first, the done ids last), each level a little smaller than the one before,
and a binary search over the ladder finds the first level that fits, so a brief over 10,000
units costs a handful of renders. The last levels are the floor, within 300 tokens: goal, done
ranges, one workspace line, the most severe warnings, the next unit with its cause line and
verify command, and one line naming what was left out.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from resume_kit.brief import shipped_brief
from resume_kit.brief.build import (
    BRIEF_SIZE,
    DATA_LABEL,
    NEEDS_APPROVAL,
    OPERATION_ADVICE,
    SCHEMA_VERSION,
    Brief,
    LedgerItem,
    NextPart,
    WarningGroup,
    WorkspacePart,
    collapse_ids,
    ranges_md,
)
from resume_kit.brief.cause import failed_ids
from resume_kit.core.inert import blockquote, code, fence, plain
from resume_kit.core.lazy_regex import lazy
from resume_kit.core.light_dataclass import dataclass, replace
from resume_kit.core.typing_light import TYPE_CHECKING, Any, TypeVar
from resume_kit.infra import tokens as tok
from resume_kit.model.findings import STUCK_REPEATS

if TYPE_CHECKING:
    from resume_kit.brief.repo_template import RepoTemplate
    from resume_kit.model.progress import LastFailure

FORMATS = ("markdown", "json", "claude-hook")
TEMPLATE_NAME = "brief.md.j2"
_T = TypeVar("_T")
# The hook answer fits both agents' caps: Claude Code 2.1.332 injects at most 10,000 characters
# of additionalContext (a longer one becomes a 2 KB preview); Codex 0.171.0 counts a context as
# ceil(UTF-8 bytes / 4) tokens and spills one over its additionalContextLimit (2,500, which
# `integrate codex` writes) to a file. So the cap is 10,000 UTF-8 bytes, which is also at most
# 10,000 characters (tests/e2e/agents/test_codex.py::test_the_biggest_brief_arrives_whole).
HOOK_MAX_CHARS = 10_000
HOOK_MAX_TOKENS = 2_500
TESTS_WARNING = "TESTS_FAILING"
FLOOR_GOAL_CHARS = 240  # the goal at the floor: about 60 tokens


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


@dataclass(frozen=True)
class Limits:
    """How much of each detail list a level shows (None: all)."""

    done_ranges: int | None = None
    done_evidence: bool = True
    paths: int = 25
    summary: bool = True
    log_lines: int = 30
    transcript: int | None = None
    tests: int = 3
    ledger: int | None = 20
    warning_ranges: int | None = 12
    warning_text: bool = True
    failure_lines: int = 20
    next_details: bool = True
    facts: tuple[str, ...] = ("branch", "operation", "changes", "stash")
    meter: bool = True
    notes: bool = True
    goal_chars: int | None = None  # None: the whole goal (blockquote's own cap)
    terse: bool = False  # the short wording of the floor (docs/brief.md, "The floor")
    warnings: int | None = None  # warning lines shown (the first: the most important)


def _ladder() -> list[tuple[str, Limits]]:
    """Levels from everything to the minimum, each named after the detail it cuts.

    The priority order (docs/brief.md): repetitive material goes first (over 40 runs of done
    ids, log lines, long id lists), then detail that a command shows in full, and the done ids
    (collapsed into ranges) last of all: they say what not to redo.
    """
    steps: list[tuple[str, dict[str, Any]]] = [
        ("done ids", {"done_ranges": 40}),
        ("log lines", {"log_lines": 12}),
        ("log lines", {"log_lines": 5}),
        ("log lines", {"log_lines": 2}),
        ("log lines", {"log_lines": 0}),
        ("warning ids", {"warning_ranges": 4}),
        ("warning ids", {"warning_ranges": 1}),
        ("tests", {"tests": 1}),
        ("paths", {"paths": 12}),
        ("paths", {"paths": 5}),
        ("paths", {"paths": 2}),
        ("paths", {"paths": 0}),
        ("summary", {"summary": False}),
        ("transcript", {"transcript": 3}),
        ("transcript", {"transcript": 1}),
        ("transcript", {"transcript": 0}),
        ("done evidence", {"done_evidence": False}),
        ("tests", {"tests": 0}),
        ("ledger", {"ledger": 8}),
        ("ledger", {"ledger": 3}),
        ("ledger", {"ledger": 0}),
        ("failure excerpt", {"failure_lines": 8}),
        ("failure excerpt", {"failure_lines": 3}),
        ("failure excerpt", {"failure_lines": 1}),
        ("workspace facts", {"facts": ("operation", "changes")}),
        ("warning text", {"warning_text": False}),
        ("next unit details", {"next_details": False}),
        ("meter", {"meter": False}),
        ("notes", {"notes": False}),
        ("goal text", {"goal_chars": FLOOR_GOAL_CHARS}),
        ("workspace facts", {"terse": True, "facts": ("operation",)}),
        ("warnings", {"warnings": 1}),
        ("done ids", {"done_ranges": 12}),
        ("done ids", {"done_ranges": 4}),
        ("done ids", {"done_ranges": 1}),
    ]
    levels = [("", Limits())]
    current = Limits()
    for name, change in steps:
        current = replace(current, **change)
        levels.append((name, current))
    return levels


LADDER = _ladder()


@dataclass
class RenderedBrief:
    text: str
    tokens: int
    dropped: list[str]
    fits: bool = True  # False: even the minimum is over the budget (the command warns)
    tokens_exact: bool = True  # False: ``tokens`` is the UTF-8 upper bound, not a count
    level: int = 0


# --------------------------------------------------------------------------- the view


def _take(items: list[Any], limit: int | None) -> tuple[list[Any], int]:
    # Hiding a single item behind a "1 more" line saves nothing: show it (unless none is wanted).
    if limit is None or limit >= len(items) or (limit > 0 and limit == len(items) - 1):
        return items, 0
    return items[: max(limit, 0)], len(items) - max(limit, 0)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _own_message(group: WarningGroup) -> str:
    """The first finding's message without its unit's id in front (the line names it)."""
    unit = group.units[0] if group.units else None
    for head in (f"{unit} ", f"{unit}: "):
        if group.count == 1 and unit and group.message.startswith(head):
            return group.message[len(head) :]
    return group.message


def _warning_md(
    group: WarningGroup, ranges: int | None, text: bool = True, message: str | None = None
) -> str:
    head = f"**{group.severity}** `{group.code}`"
    body = (message if message is not None else _own_message(group)) if text else None
    if group.count == 1:
        where = f" ({code(group.units[0])})" if group.units else ""
        return f"{head}{where}" + (f": {body}" if body else "")
    where = f" in {ranges_md(group.units, ranges)}" if group.units else ""
    return f"{head} ×{group.count}{where}" + (f"; the first: {body}" if body else "")


def _progress_line(brief: Brief, terse: bool = False) -> str:
    part = brief.progress
    rest = [
        f"{part.counts[key]} {label}"
        for key, label in (
            ("in_progress", "in progress"),
            ("todo", "to do"),
            ("blocked", "blocked"),
        )
        if part.counts.get(key)
    ]
    claimed = len(part.claimed_ids)
    return (
        f"**{part.done}/{part.total} units done**"
        + (f" ({claimed} of them only claimed, not verified)" if claimed and not terse else "")
        + (" · " + " · ".join(rest) if rest else "")
        + "."
    )


def _note(hidden: dict[str, int], kind: str, n: int) -> None:
    """Count ``n`` left-out items of ``kind`` (the "dropped" list names each kind once)."""
    if n:
        hidden[kind] = hidden.get(kind, 0) + n


def _at_least_one(ranges: int | None) -> int | None:
    """A range limit that keeps one run at the least (None: no limit)."""
    return None if ranges is None else max(1, ranges)


def _done_view(brief: Brief, limits: Limits, hidden: dict[str, int]) -> dict[str, Any]:
    part = brief.progress
    groups, _ = _take(part.done_groups, limits.done_ranges)
    more_done = sum(len(g.ids) for g in part.done_groups[len(groups) :])
    _note(hidden, "done ids", more_done)
    done_md = None
    if groups:
        rendered = [
            f"{g.ids_md} ({g.evidence_md})" if limits.done_evidence and g.evidence_md else g.ids_md
            for g in groups
        ]
        if not limits.done_evidence and any(g.evidence_md for g in groups):
            _note(hidden, "done evidence", 1)
        done_md = ", ".join(rendered) + (f" … and {more_done} more" if more_done else "")
    blocked_md = None
    if part.blocked_ids:
        blocked_md = ranges_md(part.blocked_ids, _at_least_one(limits.done_ranges))
    claimed_md = None
    if part.claimed_ids:
        claimed_md = ranges_md(part.claimed_ids, _at_least_one(limits.done_ranges))
    return {
        "line": _progress_line(brief, limits.terse),
        "done_md": done_md,
        "blocked_md": blocked_md,
        "claimed_md": claimed_md,
    }


def _paths_view(
    ws: WorkspacePart, limits: Limits, hidden: dict[str, int]
) -> tuple[list[str], str | None]:
    paths, more_lines = _take(ws.paths, limits.paths)
    _note(hidden, "paths", more_lines)
    more = sum(p.count for p in ws.paths[len(paths) :])
    more += max(0, ws.paths_total - sum(p.count for p in ws.paths))  # beyond the snapshot's list
    paths_more = None
    changes = any(kind == "changes" for kind, _ in ws.facts)
    if more and not limits.terse and (limits.paths or not changes):
        paths_more = f"… {more} more path{'s' if more != 1 else ''} (`git status` lists them)"
    return [p.md for p in paths], paths_more


def _tests_view(ws: WorkspacePart, limits: Limits, hidden: dict[str, int]) -> str | None:
    tests, more_tests = _take(ws.tests, limits.tests)
    _note(hidden, "tests", more_tests)
    if not tests:
        return f"{_plural(more_tests, 'failing test')} (not listed)" if more_tests else None
    return ", ".join(code(t) for t in tests) + (f" and {more_tests} more" if more_tests else "")


def _left_out(lines: list[str], limit: int, kind: str, hidden: dict[str, int]) -> list[str]:
    """The last ``limit`` lines, after a line saying how many earlier ones were left out."""
    kept, cut = _take(lines[::-1], limit)
    _note(hidden, kind, cut)
    body = kept[::-1]
    if cut and len(body) > 1:
        body = [f"[{_plural(cut, 'earlier line')} left out]", *body]
    return body


def _log_view(brief: Brief, limits: Limits, hidden: dict[str, int]) -> dict[str, Any] | None:
    log = brief.workspace.log
    if log is None:
        return None
    body = _left_out(log.lines, limits.log_lines, "log lines", hidden)
    if not body:
        return None
    view = {"path": log.path_md, "age": log.age, "fence": fence(body), "same": False}
    shown = brief.next.failure_lines if brief.next is not None else []
    if limits.failure_lines >= len(shown) and set(log.lines) <= set(shown):
        view["same"] = True  # said once: in the Next section
    return view


def _said_by_warning(brief: Brief, limits: Limits, code_name: str, words: str = "") -> bool:
    """Whether a warning with ``code_name`` is shown with its message (one saying ``words``)."""
    shown = limits.warning_text and limits.warnings is None
    return shown and any(g.code == code_name and words in g.message for g in brief.warnings)


def _transcript_view(
    ws: WorkspacePart, limits: Limits, hidden: dict[str, int]
) -> dict[str, Any] | None:
    if ws.transcript is None or not ws.transcript.items:
        return None
    items, more_items = _take(ws.transcript.items, limits.transcript)
    _note(hidden, "transcript", more_items)
    if not items:
        return None
    return {
        "agent": ws.transcript.agent,
        "updated": ws.transcript.updated,
        "items": [i.md for i in items],
    }


def _summary_view(
    ws: WorkspacePart, limits: Limits, hidden: dict[str, int]
) -> list[tuple[str, str]] | None:
    if ws.summary is None:
        return None
    if not limits.summary:
        _note(hidden, "summary", 1)
        return None
    return [(label, "; ".join(spans)) for label, spans in ws.summary.fields]


def _tests_warned(brief: Brief) -> bool:
    """The failing tests are listed once: in their warning when there is one."""
    return any(g.code == TESTS_WARNING for g in brief.warnings)


def _workspace_view(brief: Brief, limits: Limits, hidden: dict[str, int]) -> dict[str, Any]:
    ws = brief.workspace
    kinds = limits.facts
    if limits.terse and not any(kind in kinds for kind, _ in ws.facts):
        kinds = (*kinds, "changes")  # the floor's one line: the operation, else the changes
    _note(hidden, "workspace facts", sum(1 for kind, _ in ws.facts if kind not in kinds))
    paths, paths_more = _paths_view(ws, limits, hidden)
    advised = _said_by_warning(brief, limits, "OPERATION_IN_PROGRESS", "abort")
    return {
        "facts": [
            md[: -len(OPERATION_ADVICE)] + "." if advised and md.endswith(OPERATION_ADVICE) else md
            for kind, md in ws.facts
            if kind in kinds
        ],
        "paths": paths,
        "paths_more": paths_more,
        "tests": None if _tests_warned(brief) else _tests_view(ws, limits, hidden),
        "tests_source": ws.tests_source,
        "log": _log_view(brief, limits, hidden),
        "transcript": _transcript_view(ws, limits, hidden),
        "summary": _summary_view(ws, limits, hidden),
        "notes": f"{_plural(ws.other_logs, 'older log')} with error lines not shown."
        if ws.other_logs
        else None,
    }


def _ledger_view(brief: Brief, limits: Limits, hidden: dict[str, int]) -> list[str]:
    ledger, more_ledger = _take(brief.ledger, limits.ledger)
    _note(hidden, "ledger", more_ledger)
    ledger_md = [item.md for item in ledger]
    if more_ledger:
        unknown = _unknown(brief.ledger[len(ledger) :])
        if limits.terse and not ledger:
            return [
                f"{_plural(more_ledger, 'side effect')} recorded{unknown}: see `resume-kit action list`."
            ]
        ledger_md.append(
            (f"… {more_ledger} more recorded" if ledger else _plural(more_ledger, "side effect"))
            + unknown
            + ": run `resume-kit action list` before any side effect."
        )
    return ledger_md


def _unknown(items: list[LedgerItem]) -> str:
    unknown = sum(1 for item in items if item.status == "unknown")
    return f" ({unknown} with unknown outcome)" if unknown else ""


def _warnings_view(brief: Brief, limits: Limits, hidden: dict[str, int]) -> list[str]:
    if limits.warnings is not None and len(brief.warnings) > limits.warnings:
        return _first_warnings(brief, limits, hidden)
    if limits.warning_ranges is not None and any(
        len(collapse_ids(g.units)) > limits.warning_ranges for g in brief.warnings
    ):
        _note(hidden, "warning ids", 1)
    if not limits.warning_text and brief.warnings:
        _note(hidden, "warning text", len(brief.warnings))
        if _tests_warned(brief):
            _tests_view(brief.workspace, limits, hidden)  # counts the ids it leaves out
        by_severity: dict[str, list[str]] = {}
        for group in brief.warnings:
            line = _warning_md(group, limits.warning_ranges, False)
            by_severity.setdefault(group.severity, []).append(line.split(" ", 1)[1])
        return [f"**{sev}**: {', '.join(codes)}" for sev, codes in by_severity.items()]
    lines = []
    for group in brief.warnings:
        message = None
        if group.code == TESTS_WARNING:
            message = _tests_message(brief, limits, hidden)
        lines.append(_warning_md(group, limits.warning_ranges, limits.warning_text, message))
    return lines


def _first_warnings(brief: Brief, limits: Limits, hidden: dict[str, int]) -> list[str]:
    """The floor's warnings: the codes of the most severe ones in one line, the rest counted;
    a warning that another line of the floor says is not repeated."""
    groups = [g for g in brief.warnings if not _said_elsewhere(brief, limits, g)] or brief.warnings
    severity = groups[0].severity
    top = [g for g in groups if g.severity == severity]
    _note(hidden, "warnings", len(groups) - len(top))
    _note(hidden, "warning text", len(brief.warnings))
    _note(hidden, "warning ids", int(any(len(collapse_ids(g.units)) > 1 for g in top)))
    if _tests_warned(brief):
        _tests_view(brief.workspace, limits, hidden)  # counts the ids it leaves out
    line = ", ".join(_warning_md(g, 1, False).split(" ", 1)[1] for g in top)
    rest = len(groups) - len(top)
    return [f"**{severity}**: {line}" + (f" (+{rest} more)" if rest else "")]


def _said_elsewhere(brief: Brief, limits: Limits, group: WarningGroup) -> bool:
    """Whether another line of the floor already says what this warning says."""
    if group.code in ("OPERATION_IN_PROGRESS", "CONFLICTS"):  # the operation line
        operation = any(kind == "operation" for kind, _ in brief.workspace.facts)
        return operation and "operation" in limits.facts
    if group.code == "DONE_UNVERIFIED":  # the claimed line
        return set(group.units) <= set(brief.progress.claimed_ids)
    if group.code == "SIDE_EFFECT_UNKNOWN":  # the Do not repeat line
        return bool(brief.ledger)
    if group.code in ("UNIT_STUCK", NEEDS_APPROVAL):  # the Next section
        return brief.next is not None and group.units == [brief.next.unit.id]
    return False


def _tests_message(brief: Brief, limits: Limits, hidden: dict[str, int]) -> str | None:
    """The failing tests, said once, inside the tests warning: their count, at most one id with
    its reason (unless the Next section's output shows it), and how to see the rest."""
    ws = brief.workspace
    if not ws.tests:
        return None
    source = f" ({ws.tests_source})" if ws.tests_source else ""
    count = f"{_plural(len(ws.tests), 'failing test')}{source}"
    run = _run_tests(brief)
    if not limits.tests:
        _note(hidden, "tests", len(ws.tests))
        return f"{count}: {run}"
    first = ws.tests[0]
    shown = brief.next.failure_lines if brief.next is not None else []
    reason = None if first in failed_ids(shown) else _reason(first, brief)
    text = f"{count}: {code(first)}" + (f" ({code(reason, 200)})" if reason else "")
    if len(ws.tests) > 1:
        text += f"; {len(ws.tests) - 1} more failing: {run}"
    return text


def _reason(test_id: str, brief: Brief) -> str | None:
    """Why ``test_id`` failed, from a short-summary line of the newest log."""
    log = brief.workspace.log
    for line in log.lines if log is not None else []:
        head = f"FAILED {test_id} - "
        if line.strip().startswith(head):
            return line.strip()[len(head) :]
    return None


def _run_tests(brief: Brief) -> str:
    """How to see every failing test: the next unit's verify command, else the JSON brief."""
    verify = brief.next.unit.verify if brief.next is not None else None
    if verify and brief.next is not None and brief.next.approved:
        return f"run {code(verify, 120)}"
    return "`resume-kit brief --format json` lists them"


def _excerpt(n: NextPart, limit: int, hidden: dict[str, int]) -> list[str]:
    """The failure output's last ``limit`` lines, the cause line always among them."""
    body = _left_out(n.failure_lines, limit, "failure excerpt", hidden)
    cause = n.cause
    if cause is None or limit < 1 or any(line.strip() == cause for line in body):
        return body
    tail = n.failure_lines[len(n.failure_lines) - limit + 1 :] if limit > 1 else []
    at = next(i for i, line in enumerate(n.failure_lines) if line.strip() == cause)
    gap = len(n.failure_lines) - len(tail) - at - 1
    between = [f"[{_plural(gap, 'line')} left out]"] if gap and tail else []
    return [cause, *between, *tail]


def _next_view(brief: Brief, limits: Limits, hidden: dict[str, int]) -> dict[str, Any] | None:
    if brief.next is None:
        return None
    n = brief.next
    body = _excerpt(n, limits.failure_lines, hidden)
    failure = n.unit.last_failure
    details = limits.next_details
    if not details and (n.files_md or n.artifacts_md):
        _note(hidden, "next unit details", 1)
    return {
        "id": code(n.unit.id),
        "title": n.title_md,
        "why": plain(n.why_md or n.why, 400) if details else None,  # one line
        "files": ", ".join(n.files_md) if details else "",
        "artifacts": ", ".join(n.artifacts_md) if details else "",
        "failure": n.failure_md,
        "failure_fence": fence(body) if body else fence(["(no output captured)"]),
        "verify_fence": fence(n.verify_lines, "sh") if n.verify_lines else None,
        "stuck": n.stuck,
        "approved": n.approved,
        "failure_short": _failure_short(failure),
        "cause": code(n.cause or body[-1]) if body else "(none captured)",
        "repeats": max(failure.repeats if failure else 0, STUCK_REPEATS),
    }


def _failure_short(failure: LastFailure | None) -> str:
    """The floor's account of how often the last failure repeated (" 3x in a row")."""
    return f" {failure.repeats}x in a row" if failure and failure.repeats > 1 else ""


def _view(brief: Brief, limits: Limits, hidden: dict[str, int]) -> dict[str, Any]:
    """The template's context at one level; counts what it leaves out into ``hidden``."""
    if brief.notes_md and not limits.notes:
        _note(hidden, "notes", 1)
    if brief.meter_md and not limits.meter:
        _note(hidden, "meter", 1)
    workspace = _workspace_view(brief, limits, hidden)
    view: dict[str, Any] = {
        "data_label": DATA_LABEL,
        "terse": limits.terse,
        "goal_md": _goal_md(brief, limits, hidden),
        "notes_md": brief.notes_md if limits.notes else None,
        "progress": _done_view(brief, limits, hidden),
        "claimed_hint": not _said_by_warning(brief, limits, "DONE_UNVERIFIED", "--stale"),
        "workspace": workspace,
        "warnings": _warnings_view(brief, limits, hidden),
        "ledger": _ledger_view(brief, limits, hidden),
        "ledger_listed": bool(brief.ledger) and limits.ledger != 0,
        "next": _next_view(brief, limits, hidden),
        "no_next_md": brief.no_next_md,
        "no_next_heading": brief.no_next_heading,
        "meter": brief.meter_md if limits.meter else None,
    }
    view["left_out"] = left_out_line(hidden, brief, limits.terse)
    return view


def _goal_md(brief: Brief, limits: Limits, hidden: dict[str, int]) -> str:
    cap = limits.goal_chars
    if cap is None or len(brief.goal.strip()) <= cap:
        return brief.goal_md
    _note(hidden, "goal text", 1)
    return blockquote(brief.goal, cap)


def left_out_line(hidden: dict[str, int], brief: Brief, terse: bool = False) -> str | None:
    """One line naming every kind of detail this level left out, and where to find it."""
    kinds = [name for name in _DETAIL_ORDER if hidden.get(name)]
    if not kinds:
        return None
    if terse:  # the floor: the two commands that show all of it
        return f"Left out to fit (`resume-kit status`, {WIDER}): {', '.join(kinds)}."
    log_path = brief.workspace.log.path_md if brief.workspace.log else None
    where = {**_FIND_IT, "log lines": log_path or WIDER}
    if len(kinds) > 3:  # one place for all of them keeps the line short
        also = "; all done ids: `resume-kit status`" if "done ids" in kinds else ""
        return f"Left out to fit (see {WIDER}): {', '.join(kinds)}{also}."
    by_place: dict[str, list[str]] = {}
    for name in kinds:
        by_place.setdefault(where.get(name, WIDER), []).append(name)
    named = "; ".join(f"{', '.join(names)} ({place})" for place, names in by_place.items())
    return f"Left out to fit the size limit: {named}."


# --------------------------------------------------------------------------- templates


def shipped_templates_dir() -> Path:
    """The templates shipped inside the package, ``resume_kit/brief/templates``."""
    return Path(__file__).resolve().parent / "templates"


# Limits for a repository template (a person approved its text, not what it computes): all
# renders of one brief together, the text of one render, and the memory it may add.
RENDER_SECONDS = 3.0
MAX_OUTPUT_CHARS = 1_000_000
MEMORY_HEADROOM = 512 * 1024 * 1024


class _LimitHit(BaseException):
    """Raised into a repository template's render; a BaseException so no ``except`` inside
    Jinja or a filter can swallow it."""


def _template(repo: RepoTemplate | None, deadline: float | None = None) -> Any:
    """The brief template compiled by Jinja2: the repository's approved one, else the shipped
    one (a brief renders that through shipped_brief instead; this compile of it is what the
    tests hold the generated code to, byte for byte).

    ``include``/``import``/``extends`` resolve only to the shipped templates: a repository
    template is one approved file and never reaches another file of the repository. It is
    compiled within the limits too, with Jinja's constant folding off (``'x' * 10**10`` would
    otherwise be computed at compile time), and ``*``, ``**`` and ``%`` are checked at run time.
    """
    from jinja2 import BaseLoader, FileSystemLoader, StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    shipped = FileSystemLoader(str(shipped_templates_dir()))

    class Loader(BaseLoader):
        def get_source(self, environment: Any, template: str) -> Any:
            if repo is not None and template == repo.rel_path:
                return repo.source, repo.rel_path, lambda: True
            return shipped.get_source(environment, template)

    class Sandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset(("*", "**", "%"))

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

    # Sandboxed: an override template arrives with the repository, like a verify command.
    env = Sandbox(
        loader=Loader(),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=StrictUndefined,
        optimized=repo is None,
    )
    if repo is None:
        return env.get_template(TEMPLATE_NAME)
    if deadline is None:
        deadline = time.monotonic() + RENDER_SECONDS
    return _guarded(repo, deadline, lambda: env.get_template(repo.rel_path))


_FORMAT_WIDTH = lazy(r"%[^a-zA-Z%]*?(\d{5,})")


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse an operation whose result alone would be over the output limit."""
    from jinja2.exceptions import SecurityError

    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if (
                isinstance(seq, str | list | tuple)
                and isinstance(times, int)
                and len(seq) * times > MAX_OUTPUT_CHARS
            ):
                raise SecurityError(f"a repetition longer than {MAX_OUTPUT_CHARS:,} items")
    elif operator == "**":
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and abs(left) > 1
            and right * abs(left).bit_length() > 65_536
        ):
            raise SecurityError("a power over 65,536 bits")
    elif operator == "%" and isinstance(left, str) and _FORMAT_WIDTH.search(left):
        raise SecurityError("a format width of 10,000 or more")


def _guarded(repo: RepoTemplate, deadline: float, work: Callable[[], _T]) -> _T:
    """``work()`` on the repository's template within the limits; any failure becomes the
    template's one-line error (the view is plain strings and numbers: the fault is its)."""
    try:
        with _limited(deadline):
            return work()
    except _LimitHit as exc:
        raise _template_error(_LimitExceeded(str(exc)), repo) from None
    except MemoryError:
        raise _template_error(
            _LimitExceeded(f"needed more than {MEMORY_HEADROOM >> 20} MiB of memory"), repo
        ) from None
    except RecursionError:
        raise _template_error(RecursionError("nested too deeply"), repo) from None
    except Exception as exc:
        raise _template_error(exc, repo) from None


def _template_error(exc: BaseException, repo: RepoTemplate) -> Exception:
    """The one-line error for a failure of the repository's template (exit 2, never 70)."""
    from resume_kit.infra.errors import ResumeKitError

    line = getattr(exc, "lineno", None)
    name = getattr(exc, "filename", None) or getattr(exc, "name", None) or repo.rel_path
    if name != repo.rel_path and not str(name).startswith(repo.rel_path):
        name = f"{repo.rel_path} (via {Path(str(name)).name})"
    where = f"{name}:{line}" if line else name
    detail = " ".join(str(exc).split())[:200] or type(exc).__name__
    return ResumeKitError(
        f"brief template {where}: {type(exc).__name__}: {detail}",
        hint="fix the template or remove it to use the shipped one",
    )


@contextlib.contextmanager
def _limited(deadline: float) -> Iterator[None]:
    """Stop a repository template's render at ``deadline`` (``time.monotonic``) and keep it
    under :data:`MEMORY_HEADROOM` of new memory, where the OS allows it."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _LimitHit(f"took longer than {RENDER_SECONDS:g} s")
    import signal  # only for a repository template: the shipped one needs no limit

    on_main = threading.current_thread() is threading.main_thread()
    use_alarm = on_main and hasattr(signal, "setitimer")
    previous: Any = None
    outer_timer = (0.0, 0.0)
    previous_profile = sys.getprofile()
    started = time.monotonic()
    if use_alarm:

        def on_alarm(signum: int, frame: Any) -> None:
            raise _LimitHit(f"took longer than {RENDER_SECONDS:g} s")

        previous = signal.signal(signal.SIGALRM, on_alarm)
        outer_timer = signal.setitimer(signal.ITIMER_REAL, remaining)
    else:  # not the main thread (no signals): check the clock on every call the render makes
        calls = [0]

        def profile(frame: Any, event: str, arg: Any) -> None:
            calls[0] += 1
            if calls[0] % 256 == 0 and time.monotonic() > deadline:
                sys.setprofile(None)
                raise _LimitHit(f"took longer than {RENDER_SECONDS:g} s")

        sys.setprofile(profile)
    memory = _lower_memory_limit()
    try:
        yield
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if previous is not None:
                signal.signal(signal.SIGALRM, previous)
            if outer_timer[0] > 0:  # someone else's alarm (a test runner's timeout): re-arm it
                left = max(outer_timer[0] - (time.monotonic() - started), 0.001)
                signal.setitimer(signal.ITIMER_REAL, left, outer_timer[1])
        else:
            sys.setprofile(previous_profile)
        if memory is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, memory)


def _lower_memory_limit() -> tuple[int, int] | None:
    """Lower the soft address-space limit to what the process uses now plus the headroom
    (Linux); the previous limits, to restore, or None when nothing was changed."""
    try:
        import resource

        with open("/proc/self/statm", "rb") as handle:
            used = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = used + MEMORY_HEADROOM
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        if soft != resource.RLIM_INFINITY and soft <= want:
            return None
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
        return soft, hard
    except (ImportError, OSError, ValueError, IndexError):
        return None


def _markdown(
    template: Any,
    brief: Brief,
    limits: Limits,
    repo: RepoTemplate | None = None,
    deadline: float = 0.0,
) -> tuple[str, dict[str, int]]:
    """The Markdown at one level: through ``template`` (Jinja2's, from :func:`_template`), or
    with None through the shipped template's generated Python."""
    hidden: dict[str, int] = {}
    view = _view(brief, limits, hidden)
    if template is None:
        text = shipped_brief.render(view)
    elif repo is None:
        text = template.render(**view)
    else:
        text = _render_repo(template, view, repo, deadline)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip() + "\n", hidden


def _render_repo(template: Any, view: dict[str, Any], repo: RepoTemplate, deadline: float) -> str:
    """A repository template's text: within the limits, and redacted as a whole (it may print
    anything, not only the view's already redacted values)."""

    def work() -> str:
        chunks: list[str] = []
        size = 0
        for chunk in template.generate(**view):
            size += len(chunk)
            if size > MAX_OUTPUT_CHARS:
                raise _LimitHit(f"printed more than {MAX_OUTPUT_CHARS:,} characters")
            chunks.append(chunk)
        return "".join(chunks)

    from resume_kit.infra.redact import redact

    return redact(_guarded(repo, deadline, work))


class _LimitExceeded(Exception):
    """How a limit hit is named in the one-line error."""


# --------------------------------------------------------------------------- JSON


def _json_data(
    brief: Brief, limits: Limits, tokens: int, budget: int, dropped: list[str], fits: bool
) -> dict[str, Any]:
    part = brief.progress
    groups, _ = _take(part.done_groups, limits.done_ranges)
    ws = dict(brief.workspace.data)
    changes = dict(ws["changes"])
    changes["paths"], _ = _take(changes["paths"], limits.paths)
    ws["changes"] = changes
    ws["failing_tests"], _ = _take(ws["failing_tests"], limits.tests)
    if ws["log"] is not None:
        log = dict(ws["log"])
        lines = log["error_lines"]
        log["error_lines"] = (
            lines[max(0, len(lines) - limits.log_lines) :] if limits.log_lines else []
        )
        ws["log"] = log
    if ws["transcript"] is not None:
        transcript = dict(ws["transcript"])
        transcript["items"], _ = _take(transcript["items"], limits.transcript)
        ws["transcript"] = transcript
    ledger, _ = _take(brief.ledger, limits.ledger)
    return {
        "schema_version": SCHEMA_VERSION,
        "goal": brief.goal,
        "generated_at": brief.generated_at,
        "snapshot": brief.snapshot_id,
        "progress": {
            "done": part.done,
            "total": part.total,
            "counts": part.counts,
            "done_ranges": [[g.ids[0], g.ids[-1], len(g.ids)] for g in groups],
            "blocked": part.blocked_ids,
            "claimed": part.claimed_ids,
        },
        "workspace": ws,
        "findings": [
            {"code": f.code, "severity": f.severity, "unit": f.unit, "message": _redact(f.message)}
            for f in brief.findings
        ],
        "do_not_repeat": [item.data for item in ledger],
        "next": None if brief.next is None else brief.next.data,
        "next_note": None if brief.next is not None else _plain(brief.no_next_md or ""),
        "summary": (
            brief.workspace.summary.data
            if brief.workspace.summary is not None and limits.summary
            else None
        ),
        "meter": {**brief.extra.get("meter", {}), "brief_tokens": tokens},
        "tokens": tokens,
        "budget": budget,
        "fits": fits,
        "dropped": dropped,
    }


def _redact(text: str) -> str:
    from resume_kit.core.inert import redacted

    return redacted(text)


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")


# --------------------------------------------------------------------------- fitting


def render(
    brief: Brief,
    fmt: str = "markdown",
    budget: int = 1500,
    repo_template: RepoTemplate | None = None,
    *,
    exact_tokens: bool | None = None,
) -> RenderedBrief:
    """Render ``brief`` in ``fmt`` with its Markdown form fitted to ``budget`` tokens, with the
    repository's template when given (the caller checked that a person approved it).

    ``exact_tokens`` (default: only for JSON, which reports the count) forces an exact count
    even when the text is so short that the byte bound already proves it fits.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown brief format {fmt!r}")
    exact = fmt == "json" if exact_tokens is None else exact_tokens
    if repo_template is not None:
        # The render's memory limit must not meet the tokenizer still loading in its thread.
        tok.encoding()
    deadline = time.monotonic() + RENDER_SECONDS
    # The shipped template renders through its generated Python (shipped_brief): no Jinja2.
    template = None if repo_template is None else _template(repo_template, deadline)
    max_chars = HOOK_MAX_CHARS if fmt == "claude-hook" else None
    if fmt == "claude-hook":
        budget = min(budget, HOOK_MAX_TOKENS)
    cache: dict[int, tuple[str, dict[str, int], int, bool]] = {}

    def attempt(level: int) -> tuple[str, dict[str, int], int, bool]:
        if level not in cache:
            text, hidden = _markdown(template, brief, LADDER[level][1], repo_template, deadline)
            if max_chars is not None and _utf8_size(text) > max_chars:
                cache[level] = (text, hidden, tok.upper_bound(text), False)
            else:
                count, _counted = tok.count_if_needed(text, budget)
                cache[level] = (text, hidden, count, count <= budget)
        return cache[level]

    last = len(LADDER) - 1
    if attempt(0)[3]:
        level = 0
    elif not attempt(last)[3]:
        level = last
    else:  # the first level that fits, by binary search (sizes shrink level by level)
        low, high = 1, last
        while low < high:
            mid = (low + high) // 2
            if attempt(mid)[3]:
                high = mid
            else:
                low = mid + 1
        level = low
    text, hidden, count, fits = attempt(level)
    counted = tok.upper_bound(text) > budget
    if exact and not counted:
        count, counted = tok.count_tokens(text), True
    if BRIEF_SIZE in text:  # the meter states the brief's own size (a digit or two less)
        size = count if counted else tok.count_tokens(text)
        text = text.replace(BRIEF_SIZE, f"{size:,}")
    dropped = [name for name in _DETAIL_ORDER if hidden.get(name)]
    if max_chars is not None and _utf8_size(text) > max_chars:
        head = text.encode("utf-8")[: max_chars - 200].decode("utf-8", "ignore")
        cut = head.rsplit("\n", 1)[0]
        text = (
            cut + "\n\n[brief cut at the hook's size limit: run `resume-kit brief` to read all]\n"
        )
        dropped.append("text over the hook size limit")
        count, counted = tok.count_if_needed(text, budget)
    limits = LADDER[level][1]
    if fmt == "markdown":
        out = text
    elif fmt == "claude-hook":
        out = (
            json.dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": "SessionStart",
                        "additionalContext": text,
                    }
                },
                ensure_ascii=False,
            )
            + "\n"
        )
    else:
        out = (
            json.dumps(
                _json_data(brief, limits, count, budget, dropped, fits),
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    return RenderedBrief(
        text=out, tokens=count, dropped=dropped, fits=fits, tokens_exact=counted, level=level
    )


_DETAIL_ORDER = tuple(dict.fromkeys(name for name, _ in LADDER[1:]))

# Where the agent finds what a smaller brief left out (one line names each kind once).
_FIND_IT = {
    "done ids": "`resume-kit status`",
    "done evidence": "`resume-kit status`",
    "paths": "`git status`",
    "tests": "`resume-kit status`",
    "ledger": "`resume-kit action list`",
    "warning ids": "`resume-kit status`",
    "warning text": "`resume-kit status`",
    "workspace facts": "`git status`",
}
WIDER = "`resume-kit brief --max-tokens 5000`"
