"""git's merge driver for ``.resume-kit/progress.yaml``: the three files git hands over, read
as hostile (regular files, bounded, UTF-8), merged by unit (:mod:`resume_kit.core.progress_merge`)
into our side's document so its comments survive, conflicting fields left between markers.

git runs it as ``merge-driver %O %A %B %L`` from the work tree's root (``hook install`` writes
that line into ``.git/config``); the result goes to ``%A``; exit 0 merged, 1 conflicts left.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from resume_kit.core.progress_merge import Conflict, merge_progress
from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ProgressFileError

_COMMIT = re.compile(r"[0-9a-f]{7,64}\Z")


def _read(path: str) -> str:
    from resume_kit.progress_file.io import read_text

    return read_text(Path(path))


def _in_history(cwd: Path) -> Any:
    from resume_kit.infra.gitcmd import run_git_bytes

    heads = [
        h
        for h in ("HEAD", "MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD")
        if run_git_bytes(cwd, "rev-parse", "-q", "--verify", h, check=False)[0] == 0
    ]

    def check(commit: str) -> bool:
        if not _COMMIT.match(commit):
            return False
        return any(
            run_git_bytes(cwd, "merge-base", "--is-ancestor", commit, h, check=False)[0] == 0
            for h in heads
        )

    return check


def _block(key: str, value: Any, prefix: str, indent: tuple[int, int]) -> list[str]:
    """``key: value`` as YAML lines, the first after ``prefix``, the rest under it."""
    from resume_kit.progress_file.roundtrip import dump, merge_into

    lines = dump(merge_into(None, {key: value}), indent).splitlines()
    pad = " " * len(prefix)
    return [prefix + lines[0], *(pad + line for line in lines[1:])]


def render_conflicts(
    text: str, sentinels: dict[str, Conflict], size: int, indent: tuple[int, int]
) -> str:
    out: list[str] = []
    for line in text.splitlines():
        hit = next((s for s in sentinels if line.rstrip().endswith(": " + s)), None)
        if hit is None:
            out.append(line)
            continue
        conflict = sentinels[hit]
        prefix = line[: line.index(conflict.key + ":")]
        out.append("<" * size + " ours")
        out += _block(conflict.key, conflict.ours, prefix, indent)
        out.append("=" * size)
        out += _block(conflict.key, conflict.theirs, prefix, indent)
        out.append(">" * size + " theirs")
    return "\n".join(out) + "\n"


def merge_texts(
    base_text: str, ours_text: str, theirs_text: str, in_history: Any, size: int = 7
) -> tuple[str, int]:
    """(the merged text, 0 or the number of conflicts)."""
    from resume_kit.progress_file.roundtrip import detect_indent, dump, merge_into, parse_text
    from resume_kit.progress_file.validate import plain_value

    ours_raw = parse_text(ours_text, "ours")
    base = plain_value(parse_text(base_text, "base")) if base_text.strip() else None
    ours, theirs = plain_value(ours_raw), plain_value(parse_text(theirs_text, "theirs"))
    if not isinstance(ours, dict) or not isinstance(theirs, dict):
        raise ProgressFileError("a side of the merge is not a progress file (not a mapping)")
    merged, conflicts = merge_progress(
        base if isinstance(base, dict) else None, ours, theirs, in_history
    )
    tag = os.urandom(6).hex()
    sentinels: dict[str, Conflict] = {}
    for n, conflict in enumerate(conflicts):
        mark = f"RESUME-KIT-CONFLICT-{tag}-{n}"
        sentinels[mark] = conflict
        holder = merged
        if conflict.unit is not None:
            holder = next(u for u in merged["units"] if u.get("id") == conflict.unit)
        holder[conflict.key] = mark
    indent = detect_indent(ours_text)
    text = dump(merge_into(ours_raw, merged), indent)
    if sentinels:
        text = render_conflicts(text, sentinels, size, indent)
    return text, len(conflicts)


def merge_files(base: str, ours: str, theirs: str, marker_size: int = 7) -> int:
    from resume_kit.infra.messages import note
    from resume_kit.infra.store import atomic_write

    size = marker_size if 1 <= marker_size <= 100 else 7
    try:
        base_text, ours_text, theirs_text = (_read(p) for p in (base, ours, theirs))
        merged, conflicts = merge_texts(
            base_text, ours_text, theirs_text, _in_history(Path.cwd()), size
        )
    except ProgressFileError as exc:
        note(f"merge-driver: progress.yaml left for a person to merge: {exc.message}")
        return 1
    atomic_write(Path(ours), merged)
    if conflicts:
        note(
            f"merge-driver: {conflicts} conflicting field(s) in progress.yaml left between markers"
        )
        return 1
    return 0
