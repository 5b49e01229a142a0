"""Agent transcripts (SPEC 6): what the agent's own session log says, as plain data.

``read_transcript`` finds the newest session of a supported agent for this work tree (or reads
the one a hook named) and returns the snapshot's ``transcript`` dict; it never raises.
``completed_todos_matching`` is the pure half of ``TRANSCRIPT_DISAGREES``. The readers are
imported when a transcript is read: reconcile imports this package for the pure half, and a
brief whose transcript fact is reused (facts/fact_reuse.py) reads none.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import re
from collections.abc import Sequence
from pathlib import Path

from resume_kit.core.typing_light import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resume_kit.model.facts import Transcript
    from resume_kit.model.progress import Unit

KINDS = ("claude-code", "codex")
_SPACE = re.compile(r"\s+")


# SessionStart sources whose transcript_path names a session that has only just begun
FRESH_SOURCES = ("startup", "clear", "fork")
MAX_EARLIER = 5  # sessions per agent read to find the newest other one with a conversation


def read_transcript(
    root: Path,
    kinds: Sequence[str] = KINDS,
    transcript_path: Path | None = None,
    *,
    source: str | None = None,
    session_id: str | None = None,
    since: dt.datetime | None = None,
) -> dict[str, Any] | None:
    """The ``transcript`` dict for the newest session of the agents in ``kinds`` whose cwd is
    ``root`` or inside it; ``transcript_path`` (from a hook) wins when given. On a fresh start
    (``source`` startup/clear/fork) or when the hook's transcript is missing or has no
    conversation, the newest *other* session of this tree is read and ``earlier_session``
    says why. ``tokens.since`` counts what was used after ``since`` (the last verified unit;
    None: since the session started). None when there is no session; problems become
    ``notes``."""
    from resume_kit.facts.transcripts.records import clip, empty_result

    try:
        fresh = source in FRESH_SOURCES
        given: dict[str, Any] | None = None
        if transcript_path is not None:
            given = _read_given(Path(transcript_path), since)
            if not fresh and has_conversation(given):
                return given
        elif not fresh:
            return _read_newest(Path(root), kinds, since)
        skip = {os.path.realpath(transcript_path)} if transcript_path is not None else set()
        earlier = _read_other(Path(root), kinds, skip, session_id, since)
        if earlier is None:
            return given
        if fresh:
            reason = str(source)
        elif given is not None and not Path(str(transcript_path)).is_file():
            reason = "missing"
        else:
            reason = "empty"
        earlier["earlier_session"] = {"reason": reason, "replaces": given_id(given, session_id)}
        return earlier
    except Exception as exc:  # a reader bug must never break a snapshot or a hook
        result = empty_result(kinds[0] if kinds else "claude-code", transcript_path or Path(root))
        result["notes"].append(clip(f"could not read the agent transcript: {exc!r}", 300))
        return result


def given_id(given: dict[str, Any] | None, session_id: str | None) -> str | None:
    """The id of the session the hook named (its own, else the file's)."""
    from resume_kit.facts.transcripts.records import clip

    if session_id:
        return clip(session_id, 100)
    value = given.get("session_id") if given else None
    return value if isinstance(value, str) else None


def has_conversation(result: dict[str, Any] | None) -> bool:
    """Whether a read session holds anything of a conversation (a request, a todo list, a
    tool error, token usage), not only the metadata a new session starts with."""
    if not result:
        return False
    tokens = result.get("tokens") or {}
    return bool(
        result.get("last_request")
        or result.get("todos") is not None
        or result.get("tool_errors")
        or tokens.get("total")
        or tokens.get("last_context")
    )


def _sessions(root: Path, kinds: Sequence[str]) -> list[tuple[float, str, Path]]:
    from resume_kit.facts.transcripts import claude_code, codex

    found: list[tuple[float, str, Path]] = []
    if "claude-code" in kinds:
        for mtime, path in itertools.islice(claude_code.sessions(root), MAX_EARLIER):
            found.append((mtime, "claude-code", path))
    if "codex" in kinds:
        for mtime, path in itertools.islice(codex.rollouts(root), MAX_EARLIER):
            found.append((mtime, "codex", path))
    found.sort(key=lambda item: item[0], reverse=True)
    return found


def _read_newest(
    root: Path, kinds: Sequence[str], since: dt.datetime | None
) -> dict[str, Any] | None:
    from resume_kit.facts.transcripts import claude_code, codex

    found: list[tuple[float, str, Path]] = []
    if "claude-code" in kinds:
        session = claude_code.newest_session(root)
        if session is not None:
            found.append((session[0], "claude-code", session[1]))
    if "codex" in kinds:
        rollout = codex.newest_rollout(root)
        if rollout is not None:
            found.append((rollout[0], "codex", rollout[1]))
    if not found:
        return None
    _, agent, path = max(found, key=lambda item: item[0])
    return _read_as(agent, path, since)


def _read_other(
    root: Path,
    kinds: Sequence[str],
    skip: set[str],
    session_id: str | None,
    since: dt.datetime | None,
) -> dict[str, Any] | None:
    """The newest session of this tree with a conversation that is not the hook's own."""
    for _, agent, path in _sessions(root, kinds):
        if os.path.realpath(path) in skip:
            continue
        result = _read_as(agent, path, since)
        if session_id and result.get("session_id") == session_id:
            from resume_kit.brief.fastpath import session_skipped

            session_skipped()  # another new session would not pass over it: not served then
            continue
        if has_conversation(result):
            return result
    return None


def _read_as(agent: str, path: Path, since: dt.datetime | None = None) -> dict[str, Any]:
    from resume_kit.facts.transcripts import claude_code, codex

    if agent == "codex":
        return codex.read_rollout(path, since=since)
    return claude_code.read_session(path, since=since)


def _read_given(path: Path, since: dt.datetime | None = None) -> dict[str, Any]:
    from resume_kit.facts.transcripts import claude_code
    from resume_kit.facts.transcripts.records import clip, empty_result

    if not path.is_file():
        what = "is not a regular file" if path.exists() else "does not exist"
        result = empty_result(detect_agent(path) or "claude-code", path)
        result["notes"].append(clip(f"the hook's transcript {path} {what}", 300))
        return result
    agent = detect_agent(path)
    if agent is None:
        result = claude_code.read_session(path, since=since)
        result["notes"].insert(0, "transcript format not recognised; read as Claude Code")
        return result
    return _read_as(agent, path, since)


def detect_agent(path: Path) -> str | None:
    """ "codex" or "claude-code" from the file's content (first line, then the last records);
    the file name decides when the content cannot."""
    from resume_kit.facts.transcripts import claude_code, codex, tail

    first = tail.first_record(path)
    samples = ([first] if first else []) + tail.tail_records(path)
    for record in samples:
        if codex.looks_like(record):
            return "codex"
        if claude_code.looks_like(record):
            return "claude-code"
    if path.name.startswith("rollout-"):
        return "codex"
    return None


# --------------------------------------------------------------------------- TRANSCRIPT_DISAGREES


def _normal_title(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _is_id_char(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char in "._-")


def _continues(text: str, index: int, step: int) -> bool:
    """Whether ``text`` continues an id from ``index`` on (walking by ``step``): an id
    character next to it, where a run of ``.``, ``_`` or ``-`` counts only when a letter or
    digit follows it (so "doc-001." ending a sentence still names doc-001)."""
    while 0 <= index < len(text) and _is_id_char(text[index]):
        if text[index].isalnum():
            return True
        index += step
    return False


def contains_id(text: str, unit_id: str) -> bool:
    """Whether ``text`` names ``unit_id`` as a word (never as part of a longer id)."""
    return _names_id(text.lower(), unit_id.lower())


def _names_id(haystack: str, needle: str) -> bool:
    """:func:`contains_id` of texts already lowercased."""
    if not needle:
        return False
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        if not _continues(haystack, start - 1, -1) and not _continues(haystack, end, 1):
            return True
        start = haystack.find(needle, start + 1)
    return False


def _completed_texts(transcript: Transcript | None) -> list[str]:
    if not isinstance(transcript, dict):
        return []
    todos = transcript.get("todos")
    if not isinstance(todos, list):
        return []
    return [
        todo["content"]
        for todo in todos
        if isinstance(todo, dict)
        and todo.get("status") == "completed"
        and isinstance(todo.get("content"), str)
    ]


def completed_todos_matching(
    units: Sequence[Unit], transcript: Transcript | None
) -> list[tuple[str, str]]:
    """(unit id, todo text) for each todo the agent marked completed that matches a unit not
    verified done (status done with evidence). A todo matches a unit when its text equals the
    unit's title (case and spacing ignored) or names the unit's id as a word."""
    texts = _completed_texts(transcript)
    if not texts:
        return []
    open_units = [
        (u.id, u.id.lower(), _normal_title(u.title if isinstance(u.title, str) else ""))
        for u in units
        if not (u.status == "done" and u.evidence is not None)
    ]
    pairs: list[tuple[str, str]] = []
    for text in texts:
        normal = _normal_title(text)
        haystack = text.lower()
        for unit_id, needle, title in open_units:
            matched = (bool(normal) and normal == title) or _names_id(haystack, needle)
            if matched and (unit_id, text) not in pairs:
                pairs.append((unit_id, text))
    return pairs
