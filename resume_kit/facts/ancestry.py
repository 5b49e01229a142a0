"""Is each done unit's evidence commit in the history of HEAD? (a snapshot's ``units`` facts)

A few distinct commits cost one ``git merge-base --is-ancestor`` each, many one bounded
``rev-list``; full commit ids found to be ancestors of a head are remembered in the user's
cache (``ancestry.json``), since that answer never changes, and hold for every later head
that descends from that one.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from resume_kit.infra.paths import Layout
from resume_kit.infra.store import atomic_write

MAX_ANCESTRY_PROBES = 12  # `git merge-base --is-ancestor` runs per snapshot
REV_LIST_WINDOW = 20000  # commits read at once when many distinct evidence commits exist
_HEX = re.compile(r"[0-9a-f]{4,64}")
_FULL_SHA_LENGTHS = (40, 64)


def evidence_ancestry(
    root: Path, head: str | None, commits: Iterable[str], known: Iterable[str] = ()
) -> tuple[dict[str, bool | None], list[str]]:
    """For each evidence commit: is it an ancestor of ``head``? (True/False, None when unknown).

    A few distinct commits cost one ``merge-base --is-ancestor`` each; many cost one bounded
    ``rev-list`` plus a few probes; ``known`` ancestors of ``head`` (an earlier answer) cost
    nothing. Commits that are not hex never reach git (they cannot be in the history, and a
    string from progress.yaml must never become a git option).
    """
    from resume_kit.infra.gitcmd import run_git, run_git_bytes

    notes: list[str] = []
    distinct = sorted({c.strip().lower() for c in commits if c and c.strip()})
    result: dict[str, bool | None] = {}
    probe: list[str] = []
    ancestors = set(known)
    for commit in distinct:
        if head is None or not _HEX.fullmatch(commit):
            result[commit] = False
        elif commit in ancestors:
            result[commit] = True
        else:
            probe.append(commit)
    if len(probe) > MAX_ANCESTRY_PROBES and head is not None:
        listed = run_git(root, "rev-list", f"--max-count={REV_LIST_WINDOW}", head).split()
        reachable = set(listed)
        whole_history = len(listed) < REV_LIST_WINDOW
        rest: list[str] = []
        for commit in probe:
            if commit in reachable:
                result[commit] = True
            elif whole_history and len(commit) in _FULL_SHA_LENGTHS:
                result[commit] = False
            else:
                rest.append(commit)
        probe = rest
    for commit in probe[:MAX_ANCESTRY_PROBES]:
        assert head is not None
        status, _, _ = run_git_bytes(root, "merge-base", "--is-ancestor", commit, head, check=False)
        # 0: ancestor; 1: not; 128: unknown object (gc'd after a rebase): not in history either
        result[commit] = status == 0
    unknown = probe[MAX_ANCESTRY_PROBES:]
    for commit in unknown:
        result[commit] = None
    if unknown:
        notes.append(
            f"history check skipped for {len(unknown)} evidence commits (too many to check quickly)"
        )
    return result, notes


MAX_ANCESTRY_BYTES = 16 * 1024 * 1024


def known_ancestors_file(layout: Layout) -> Path | None:
    return layout.user_cache / "ancestry.json" if layout.state_dir.is_dir() else None


def load_known_ancestors(
    file: Path | None, head: str | None, root: Path | None = None
) -> tuple[list[str], bool]:
    """Commits an earlier snapshot found to be ancestors of ``head``, and whether they were
    found for an earlier head (to be remembered again for this one): those of an earlier
    head still are when that head is an ancestor of ``head``, which one ``git merge-base
    --is-ancestor`` in ``root`` answers (the first snapshot after a commit asked git about
    every evidence commit again: 10 commits, ~58 ms on the large benchmark). Nothing for a
    head that is not a descendant (a branch switch, a rewrite)."""
    if file is None or head is None:
        return [], False
    from resume_kit.infra.safefs import read_regular

    try:
        data = json.loads(read_regular(file, MAX_ANCESTRY_BYTES))
    except (OSError, ValueError):
        return [], False
    found = data.get("ancestors") if isinstance(data, dict) else None
    if not isinstance(found, list):
        return [], False
    known = [c for c in found if isinstance(c, str)]
    recorded = data.get("head")
    if recorded == head:
        return known, False
    from resume_kit.facts.git import OBJECT_ID

    if root is None or not isinstance(recorded, str) or not OBJECT_ID.fullmatch(recorded):
        return [], False
    from resume_kit.infra.gitcmd import run_git_bytes

    try:
        status = run_git_bytes(root, "merge-base", "--is-ancestor", recorded, head, check=False)[0]
    except OSError:  # git could not start: nothing carried over
        return [], False
    return (known, True) if status == 0 else ([], False)


def save_known_ancestors(
    file: Path | None,
    head: str | None,
    ancestry: Mapping[str, bool | None],
    known: list[str],
    for_earlier_head: bool = False,
) -> None:
    """Remember the full commit ids found to be ancestors of ``head``: that never changes. A
    "no" is not remembered (a shallow clone or a later fetch can turn it into a "yes").
    ``for_earlier_head``: ``known`` was remembered for another head, so the record is
    written for this one even when nothing new was found."""
    if file is None or head is None:
        return
    found = sorted(
        c for c, is_ancestor in ancestry.items() if is_ancestor and len(c) in _FULL_SHA_LENGTHS
    )
    if found and (for_earlier_head or found != sorted(known)):
        with contextlib.suppress(OSError):
            atomic_write(file, json.dumps({"head": head, "ancestors": found}), durable=False)
