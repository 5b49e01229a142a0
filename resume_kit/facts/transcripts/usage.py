"""Token use over time from an agent's session file, for tokens per verified unit (the
timeline): Claude Code's ``message.usage`` once per response (message id), Codex's growth of
``token_count``'s running total. Read tail-first within the same byte cap as the meter; when
the cap stops a read, ``covered_from`` says from when on the figures are whole."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import Any
from resume_kit.facts.transcripts import tail
from resume_kit.facts.transcripts.records import utc_moment


@dataclass(frozen=True)
class Usage:
    points: list[tuple[dt.datetime, int]]  # oldest first: tokens used at that moment
    covered_from: dt.datetime | None  # None: the whole file was read; else the oldest moment read


class _Collector:
    """Records newest first; stops once a record at or before ``back_to`` was read."""

    def __init__(self, agent: str, back_to: dt.datetime | None) -> None:
        self.agent = agent
        self.back_to = back_to
        self.oldest: dt.datetime | None = None
        self.keys: set[str] = set()
        self.points: list[tuple[dt.datetime, int]] = []  # Claude: tokens; Codex: running total

    def satisfied(self) -> bool:
        return self.back_to is not None and self.oldest is not None and self.oldest <= self.back_to

    def take(self, record: dict[str, Any]) -> None:
        moment = utc_moment(record.get("timestamp"))
        if moment is None:
            return
        if self.oldest is None or moment < self.oldest:
            self.oldest = moment
        if self.agent == "codex":
            self._codex(record, moment)
        else:
            self._claude(record, moment)

    def _claude(self, record: dict[str, Any], moment: dt.datetime) -> None:
        from resume_kit.facts.transcripts.claude_code import response_key, response_tokens

        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict):
            return
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return
        key = response_key(record, message)
        if key is not None:
            if key in self.keys:
                return
            self.keys.add(key)
        self.points.append((moment, response_tokens(usage)[1]))

    def _codex(self, record: dict[str, Any], moment: dt.datetime) -> None:
        from resume_kit.facts.transcripts.codex import running_total

        payload = record.get("payload")
        if record.get("type") != "event_msg" or not isinstance(payload, dict):
            return
        info = payload.get("info")
        if payload.get("type") != "token_count" or not isinstance(info, dict):
            return
        usage = info.get("total_token_usage")
        if isinstance(usage, dict):
            self.points.append((moment, running_total(usage)))


def read_usage(
    path: Path, agent: str, *, back_to: dt.datetime | None = None, cap: int = tail.DEFAULT_CAP
) -> Usage | None:
    """The token use recorded in one session file (``agent`` "claude-code" or "codex"), read
    back to ``back_to`` (None: as far as the cap allows); None when it cannot be read."""
    collector = _Collector(agent, back_to)
    try:
        stats = tail.read_backward(path, collector, cap=cap, min_bytes=0)
    except OSError:
        return None
    whole = stats.reached_start
    oldest_first = sorted(collector.points, key=lambda p: p[0])
    if agent != "codex":
        return Usage(oldest_first, None if whole else collector.oldest)
    # running totals: what each token_count added (a repeated one adds nothing); the oldest one
    # read counts from 0 only when the file's start was read, else it is the baseline
    points: list[tuple[dt.datetime, int]] = []
    before = 0 if whole else None
    for moment, total in oldest_first:
        if before is not None and total > before:
            points.append((moment, total - before))
        before = total if before is None else max(before, total)
    covered = None if whole else (oldest_first[0][0] if oldest_first else collector.oldest)
    return Usage(points, covered)


MAX_SESSIONS = 20  # session files per agent read for one timeline


def tree_usage(root: Path, since: dt.datetime | None) -> tuple[list[Usage], bool]:
    """The token use of every session of this work tree (Claude Code and Codex) that was still
    written to after ``since``, and whether all such sessions were read (False when there were
    more than :data:`MAX_SESSIONS` per agent)."""
    import itertools

    from resume_kit.facts.transcripts import claude_code, codex

    found: list[Usage] = []
    every = True
    cutoff = since.timestamp() if since is not None else None
    for agent, files in (("claude-code", claude_code.sessions), ("codex", codex.rollouts)):
        wanted = itertools.takewhile(lambda f: cutoff is None or f[0] >= cutoff, files(root))
        picked = list(itertools.islice(wanted, MAX_SESSIONS + 1))
        if len(picked) > MAX_SESSIONS:
            every, picked = False, picked[:MAX_SESSIONS]
        for _, path in picked:
            usage = read_usage(path, agent, back_to=since)
            if usage is not None:
                found.append(usage)
    return found, every
