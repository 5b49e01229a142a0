"""Git facts for a snapshot: one ``git status --porcelain=v2``, parsed, plus the few reads it
cannot give.

Processes run, at most: ``status`` (always), ``diff --numstat`` for unstaged and for staged
changes (only when there are some and the caller wants line counts), one ``log`` for the last commits (not on an unborn
branch) and, only while a merge, rebase, cherry-pick or revert is in progress, one ``log
--no-walk`` for the subjects of the commits it names. Everything else comes from files: the
operation in progress and what it is about from the git dir, the stash messages from the
stash reflog (only when there is a stash), submodules from ``.gitmodules``. All through :mod:`resume_kit.infra.gitcmd` (no optional locks).

Paths are parsed from bytes. Inside this module they are ``str`` decoded with
``surrogateescape`` (lossless, and what ``subprocess`` turns back into the same bytes); what
leaves :func:`read_git_facts` is a display string in which undecodable bytes are escaped
(``caf\\xe9.txt``), so every value is JSON-safe.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from resume_kit.core.lazy_regex import lazy
from resume_kit.core.timeutil import from_epoch
from resume_kit.core.typing_light import Any

STATE_DIR = ".resume-kit"
RECENT_COMMITS = 10
TRAILER_KEY = "Resume-Unit"
_SEP = "\x1f"


# ---- porcelain v2 -------------------------------------------------------------------------------


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def display_path(path: str) -> str:
    """A path safe to store and show: bytes that are not UTF-8 become ``\\xNN`` escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def parse_status_v2(data: bytes) -> dict[str, Any]:
    """Parse ``git status --porcelain=v2 -z --branch --show-stash`` output.

    Returns ``{"oid", "head", "upstream", "ahead", "behind", "stash", "entries"}``: ``oid`` is
    None for ``(initial)``, ``head`` None for ``(detached)``, ``ahead``/``behind`` None without
    a ``branch.ab`` header. Each entry is ``{"kind": "1"|"2"|"u"|"?"|"!", "path", ...}``; changed
    and unmerged entries also carry ``xy``, ``sub``, ``modes``, ``hashes``; renames and copies
    (``2``) ``score`` and ``orig_path``. Malformed records are skipped, never an error.
    """
    result: dict[str, Any] = {
        "oid": None,
        "head": None,
        "upstream": None,
        "ahead": None,
        "behind": None,
        "stash": 0,
        "entries": [],
    }
    result["entries"] = list(iter_status_v2(data, result))
    return result


def iter_status_v2(data: bytes, headers: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The entries of :func:`parse_status_v2`, one at a time (a caller may stop at the first it
    needs); each ``# ...`` header is parsed into ``headers`` as it is passed (git writes them
    all before the first entry). The output is decoded once, then split: NUL and space are
    single bytes that no UTF-8 sequence holds, so each field decodes as it would alone."""
    tokens = _text(data).split("\0")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token:
            continue
        kind = token[0]
        if kind == "#":
            _parse_header(token, headers)
        elif (kind == "?" or kind == "!") and token[1:2] == " ":
            yield {"kind": kind, "path": token[2:]}
        elif kind == "1":
            fields = token.split(" ", 8)
            if len(fields) == 9:
                yield _changed(fields, modes=3, hashes=2)
        elif kind == "2":
            fields = token.split(" ", 9)
            if len(fields) == 10 and i < len(tokens):
                entry = _changed(fields, modes=3, hashes=2)
                entry["score"] = fields[8]
                entry["orig_path"] = tokens[i]
                i += 1
                yield entry
        elif kind == "u":
            fields = token.split(" ", 10)
            if len(fields) == 11:
                yield _changed(fields, modes=4, hashes=3)


def _changed(fields: list[str], *, modes: int, hashes: int) -> dict[str, Any]:
    return {
        "kind": fields[0],
        "xy": fields[1],
        "sub": fields[2],
        "modes": fields[3 : 3 + modes],
        "hashes": fields[3 + modes : 3 + modes + hashes],
        "path": fields[-1],
    }


_AB = lazy(r"\+(\d+) -(\d+)")


def _parse_header(line: str, result: dict[str, Any]) -> None:
    parts = line.split(" ", 2)
    if len(parts) < 3:
        return
    name, value = parts[1], parts[2]
    if name == "branch.oid":
        result["oid"] = None if value == "(initial)" else value
    elif name == "branch.head":
        result["head"] = None if value == "(detached)" else value
    elif name == "branch.upstream":
        result["upstream"] = value
    elif name == "branch.ab":
        match = _AB.fullmatch(value)
        if match:
            result["ahead"], result["behind"] = int(match[1]), int(match[2])
    elif name == "stash" and value.isdigit():
        result["stash"] = int(value)


def parse_numstat_z(data: bytes) -> dict[str, tuple[int | None, int | None]]:
    """``git diff --numstat -z`` as {path: (added, deleted)}; None for binary; renames by new path."""
    counts: dict[str, tuple[int | None, int | None]] = {}
    tokens = data.split(b"\0")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        fields = token.split(b"\t", 2)
        if len(fields) != 3:
            continue
        added, deleted, path = fields
        if not path:  # a rename: the old and the new path follow as their own tokens
            if i + 1 >= len(tokens):
                break
            path = tokens[i + 1]
            i += 2
        counts[_text(path)] = (_count(added), _count(deleted))
    return counts


def _count(raw: bytes) -> int | None:
    return int(raw) if raw.isdigit() else None


# ---- the few reads status cannot give -----------------------------------------------------------


def operation_in_progress(git_dir: Path) -> str | None:
    """merge, rebase (either backend), am, cherry-pick, revert or bisect, from files in git_dir."""
    if (git_dir / "rebase-merge").is_dir():
        return "rebase"
    if (git_dir / "rebase-apply").is_dir():
        return "am" if (git_dir / "rebase-apply" / "applying").exists() else "rebase"
    if (git_dir / "MERGE_HEAD").is_file():
        return "merge"
    if (git_dir / "CHERRY_PICK_HEAD").is_file():
        return "cherry-pick"
    if (git_dir / "REVERT_HEAD").is_file():
        return "revert"
    sequencer = _sequencer_operation(git_dir)
    if sequencer is not None:
        return sequencer
    if (git_dir / "BISECT_LOG").is_file():
        return "bisect"
    return None


def _sequencer_operation(git_dir: Path) -> str | None:
    """A multi-commit cherry-pick or revert paused between commits (no *_HEAD file then)."""
    try:
        todo = (git_dir / "sequencer" / "todo").read_text("utf-8", "replace")
    except OSError:
        return None
    for line in todo.splitlines():
        word = line.split(" ", 1)[0]
        if word in ("pick", "p"):
            return "cherry-pick"
        if word == "revert":
            return "revert"
    return None


# ---- what the operation in progress is about (only read while one is) -------------------------

MAX_STATE_FILE_BYTES = 64 * 1024
MAX_STASHES = 5
OBJECT_ID = lazy(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # a full SHA-1 or SHA-256 object id
_MERGE_SOURCE = lazy(r"^Merge (?:remote-tracking )?(?:branch|branches|tag|commit) '([^']{1,200})'")


def _state_text(path: Path) -> str:
    """A small file of the git dir as text ('' when absent, too big, a symlink or special)."""
    from resume_kit.infra.safefs import read_regular

    try:
        return read_regular(path, MAX_STATE_FILE_BYTES).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _oid(text: str) -> str | None:
    first = text.split(maxsplit=1)[0] if text.split() else ""
    return first if OBJECT_ID.fullmatch(first) else None


def _step(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) < 10 else None


def operation_detail(git_dir: Path, operation: str | None) -> dict[str, Any] | None:
    """What the operation is about, from the git dir's own files (no process): a merge's
    source (``MERGE_MSG``'s first line names the branch) and commit; a rebase's branch, the
    commit it is onto, its step ``n``/``m`` and the commit that failed to apply; a cherry-pick's
    or revert's commit. Subjects are filled in by :func:`_subjects` (one git process)."""
    if operation is None:
        return None
    detail: dict[str, Any] = {
        "kind": operation,
        "source": None,
        "commit": None,
        "subject": None,
        "onto": None,
        "onto_subject": None,
        "step": None,
        "steps": None,
    }
    if operation == "merge":
        detail["commit"] = _oid(_state_text(git_dir / "MERGE_HEAD"))
        first = _state_text(git_dir / "MERGE_MSG").split("\n", 1)[0]
        match = _MERGE_SOURCE.match(first)
        detail["source"] = match[1] if match else None
    elif operation in ("rebase", "am"):
        state = git_dir / "rebase-merge"
        if state.is_dir():
            step, steps = _state_text(state / "msgnum"), _state_text(state / "end")
            stopped = _state_text(state / "stopped-sha")
        else:
            state = git_dir / "rebase-apply"
            step, steps = _state_text(state / "next"), _state_text(state / "last")
            stopped = _state_text(state / "original-commit")
        head_name = _state_text(state / "head-name")
        detail["source"] = head_name.removeprefix("refs/heads/") if head_name else None
        detail["onto"] = _oid(_state_text(state / "onto"))
        detail["commit"] = _oid(stopped)
        detail["step"], detail["steps"] = _step(step), _step(steps)
    elif operation in ("cherry-pick", "revert"):
        name = "CHERRY_PICK_HEAD" if operation == "cherry-pick" else "REVERT_HEAD"
        detail["commit"] = _oid(_state_text(git_dir / name))
    return detail


def _subjects(root: Path, oids: list[str]) -> dict[str, str]:
    """Commit subjects by id, from one ``git log --no-walk`` (ids are checked hex)."""
    from resume_kit.infra.gitcmd import run_git_bytes

    if not oids:
        return {}
    status, out, _ = run_git_bytes(
        root,
        "log",
        "--no-walk=unsorted",
        "-z",
        "--no-color",
        f"--format=%H{_SEP}%s",
        *dict.fromkeys(oids),
        "--",
        check=False,
    )
    subjects: dict[str, str] = {}
    for record in out.split(b"\0") if status == 0 else []:
        fields = record.decode("utf-8", "replace").split(_SEP, 1)
        if len(fields) == 2:
            subjects[fields[0].strip()] = fields[1].strip()
    return subjects


def stash_entries(common_dir: Path, limit: int = MAX_STASHES) -> list[dict[str, str]]:
    """The newest ``limit`` stash entries with their messages, from the stash reflog (a file:
    no process; its last ``MAX_STATE_FILE_BYTES`` only). ``stash@{0}`` is the newest."""
    from resume_kit.facts.logs import read_tail

    try:
        data = read_tail(common_dir / "logs" / "refs" / "stash", MAX_STATE_FILE_BYTES)
    except OSError:
        return []
    if not data:
        return []
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if "\t" in line]
    return [
        {"ref": f"stash@{{{index}}}", "message": line.split("\t", 1)[1].strip()}
        for index, line in enumerate(reversed(lines[-limit:]))
    ]


_GITMODULES_PATH = lazy(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)
MAX_GITMODULES_BYTES = 1024 * 1024


def submodule_paths(root: Path) -> list[str]:
    """Paths declared in ``.gitmodules`` (read as a file: no process, no descent; a regular
    file only, never through a symlink)."""
    from resume_kit.infra.safefs import read_regular

    try:
        text = read_regular(root / ".gitmodules", MAX_GITMODULES_BYTES).decode(
            "utf-8", "surrogateescape"
        )
    except OSError:
        return []
    paths = []
    for raw in _GITMODULES_PATH.findall(text):
        value = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == '"' else raw
        paths.append(value.rstrip("/"))
    return paths


def _submodule_status(root: Path, path: str, sub: str | None) -> str:
    states = []
    if sub and sub.startswith("S"):
        if sub[1:2] == "C":
            states.append("new-commits")
        if sub[2:3] == "M":
            states.append("modified")
        if sub[3:4] == "U":
            states.append("untracked")
    if not states and not (root / path / ".git").exists():
        states.append("uninitialized")
    return ",".join(states) or "clean"


# ---- assembly -----------------------------------------------------------------------------------


def in_state_dir(path: str) -> bool:
    """Whether ``path`` (relative to the work tree's root) is ``.resume-kit/`` or inside it."""
    return path == STATE_DIR or path.startswith(STATE_DIR + "/")


STATUS_ARGS = ("status", "--porcelain=v2", "-z", "--branch", "--show-stash", "-unormal")


def _status(root: Path) -> tuple[bytes, bool]:
    """The status output, and whether it carries the stash count."""
    from resume_kit.infra.gitcmd import GitFailed

    args = list(STATUS_ARGS)
    try:
        return _noted_status(root, args), True
    except GitFailed as exc:
        if "show-stash" not in exc.stderr:
            raise
    # git older than 2.35 does not know --show-stash: count the stash reflog instead.
    args.remove("--show-stash")
    return _noted_status(root, args), False


class EarlyStatus:
    """``git status`` started in a thread before the caller's other work (the progress model,
    the fingerprints' plan), so the tree walk overlaps it; :func:`read_git_facts` takes it
    instead of starting its own. When the served brief already started the same status and
    could not use it (:func:`resume_kit.infra.deps.take_status`), that one is taken: one tree
    walk per brief. ``started_ns``: ``time.time_ns()`` before the process began."""

    __slots__ = ("_later", "started_ns")

    def __init__(self, root: Path) -> None:
        import time

        from resume_kit.infra.background import Threads
        from resume_kit.infra.deps import take_status

        handed = take_status()
        # the earlier start when one was handed over (used or not): the racy-git limit
        # only gets stricter
        self.started_ns = handed[2] if handed is not None else time.time_ns()
        # not waited for here (no ``with``): the thread ends when git does
        self._later = Threads(1, "resume-kit-status").submit(_early_status, root, handed)

    def result(self) -> tuple[bytes, bool]:
        """What :func:`_status` returned, or the exception it raised."""
        return self._later.result()


def _early_status(root: Path, handed: tuple[str, list[str], int, Any] | None) -> tuple[bytes, bool]:
    """The handed-over status when it ran exactly the argv :func:`_status` runs here and
    succeeded; else (the handle abandoned) :func:`_status`."""
    if handed is not None:
        from resume_kit.infra.deps import note_git_status
        from resume_kit.infra.gitcmd import git_argv

        cwd, argv, _, handle = handed
        if cwd == str(root) and argv == git_argv(root, STATUS_ARGS):
            output, ok = handle.collect()
            if ok:
                note_git_status(cwd, argv, output)
                return output, True
        else:
            handle.abandon()
    return _status(root)


def _noted_status(root: Path, args: list[str]) -> bytes:
    """``git status ARGS`` output, noted for a brief being recorded for serving
    (:mod:`resume_kit.brief.fastpath` runs the same argv to see whether anything changed)."""
    from resume_kit.infra.deps import note_git_status
    from resume_kit.infra.gitcmd import git_argv, run_git_bytes

    output = run_git_bytes(root, *args)[1]
    note_git_status(str(root), git_argv(root, tuple(args)), output)
    return output


def _stash_from_reflog(common_dir: Path) -> int:
    try:
        return sum(1 for _ in (common_dir / "logs" / "refs" / "stash").open("rb"))
    except OSError:
        return 0


def _numstat(root: Path, staged: bool, paths: list[str] | None) -> dict[str, Any]:
    """Line counts; ``paths`` limits the diff to the listed paths when the list was capped."""
    from resume_kit.infra.gitcmd import run_git_bytes

    args = ["--literal-pathspecs", "diff", "--numstat", "-z", "--no-ext-diff", "--no-textconv"]
    if staged:
        args.append("--cached")
    args.append("--")
    if paths is not None:
        args.extend(paths)
    status, out, _ = run_git_bytes(root, *args, check=False)
    return parse_numstat_z(out) if status == 0 else {}


def _recent_commits(root: Path) -> list[dict[str, Any]]:
    from resume_kit.infra.gitcmd import run_git_bytes
    from resume_kit.infra.redact import redact

    fmt = f"%H{_SEP}%ct{_SEP}%(trailers:key={TRAILER_KEY},valueonly,separator=%x1e){_SEP}%s"
    status, out, _ = run_git_bytes(
        root,
        "log",
        "-z",
        f"--max-count={RECENT_COMMITS}",
        "--no-show-signature",
        "--no-color",
        f"--format={fmt}",
        "HEAD",
        "--",
        check=False,
    )
    if status != 0:
        return []
    commits = []
    for record in out.split(b"\0"):
        fields = record.decode("utf-8", "replace").split(_SEP, 3)
        if len(fields) != 4:
            continue
        sha, ctime, trailers, subject = fields
        units = [u.strip() for u in trailers.split("\x1e") if u.strip()]
        commits.append(
            {
                "sha": sha.strip(),
                "subject": redact(subject.strip()),
                "time": _iso(ctime),
                "unit": redact(units[-1]) if units else None,
            }
        )
    return commits


def _iso(epoch: str) -> str | None:
    try:
        seconds = int(epoch)
    except ValueError:
        return None
    return from_epoch(seconds)


def _records(parsed: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for entry in parsed["entries"]:
        if not in_state_dir(entry["path"]):
            yield entry


def read_git_facts(
    root: Path,
    git_dir: Path,
    common_dir: Path,
    *,
    max_paths: int = 200,
    line_counts: bool = True,
    entries: list[dict[str, Any]] | None = None,
    status: EarlyStatus | None = None,
) -> dict[str, Any]:
    """``{"repo", "changes", "recent_commits"}`` for the snapshot (shapes in the snapshot schema).

    ``git status`` failing (not a repository, git missing) raises ``GitFailed``; the optional
    reads (line counts, commits) degrade to null counts and an empty list instead. The log and
    the line counts run alongside status and each other: they are independent processes.
    ``line_counts=False`` skips ``diff --numstat``: every count is null. ``entries`` receives
    every parsed status entry, uncapped and with raw paths (for the fingerprints' reuse).
    ``status``: the ``git status`` already started for this ``root``.
    """
    from resume_kit.infra.background import Threads

    with Threads(2) as pool:
        commits_later = pool.submit(_recent_commits, root)  # fails harmlessly when unborn
        output, has_stash_count = _status(root) if status is None else status.result()
        parsed = parse_status_v2(output)
        if entries is not None:
            entries.extend(parsed["entries"])
        if not has_stash_count:
            parsed["stash"] = _stash_from_reflog(common_dir)
        changes, conflicts, sub_flags = changes_from_status(parsed, max_paths)
        counted = [
            (
                items,
                pool.submit(_numstat, root, is_staged, [i["path"] for i in items] if cut else None),
            )
            for items, is_staged, cut in (
                (changes["staged"], True, changes["counts"]["staged"] > max_paths),
                (changes["unstaged"], False, changes["counts"]["unstaged"] > max_paths),
            )
            if items and line_counts
        ]
        for items, lines_later in counted:
            lines = lines_later.result()
            for item in items:
                item["added"], item["deleted"] = lines.get(item["path"], (None, None))
        commits = commits_later.result() if parsed["oid"] is not None else []
    operation = operation_in_progress(git_dir)
    detail = operation_detail(git_dir, operation)
    if detail is not None:
        wanted = [oid for oid in (detail["commit"], detail["onto"]) if oid]
        subjects = _subjects(root, wanted)
        detail["subject"] = subjects.get(detail["commit"] or "")
        detail["onto_subject"] = subjects.get(detail["onto"] or "")
    stashes = stash_entries(common_dir) if parsed["stash"] else []

    from resume_kit.infra.redact import redact, redact_all

    # File names are data like any other text: a name can carry a credential (stored,
    # shown and sent redacted; the line counts above were matched on the real names).
    submodules = [
        {"path": redact(display_path(p)), "status": _submodule_status(root, p, sub_flags.get(p))}
        for p in dict.fromkeys([*submodule_paths(root), *sub_flags])
    ]
    named = [
        (item, key)
        for items in (changes["staged"], changes["unstaged"], changes["untracked"], conflicts)
        for item in items
        for key in ("path", "from")
        if key in item
    ]
    for (item, key), shown in zip(
        named, redact_all([display_path(item[key]) for item, key in named]), strict=True
    ):
        item[key] = shown

    # Branch names, merge messages and subjects are text from the repository: redacted.
    if detail is not None:
        for key in ("source", "subject", "onto_subject"):
            if detail[key] is not None:
                detail[key] = redact(detail[key])
    for stash in stashes:
        stash["message"] = redact(stash["message"])

    repo = {
        "root": str(root),
        "head": parsed["oid"],
        # branch names are text from the repository like commit subjects
        "branch": redact(parsed["head"]) if parsed["head"] else parsed["head"],
        "unborn": parsed["oid"] is None,
        "upstream": redact(parsed["upstream"]) if parsed["upstream"] else parsed["upstream"],
        "ahead": parsed["ahead"],
        "behind": parsed["behind"],
        "operation": operation,
        "conflicts": conflicts,
        "stash_count": parsed["stash"],
        # a `git clone --depth N`: commits older than its boundary are not there to check
        "shallow": (common_dir / "shallow").is_file(),
        "worktree": {
            "linked": _resolved(git_dir) != _resolved(common_dir),
            "git_dir": str(git_dir),
            "common_dir": str(common_dir),
        },
        "submodules": submodules,
    }
    # Only when there is something to say, so other snapshots keep their shape.
    if detail is not None:
        repo["operation_detail"] = detail
    if stashes:
        repo["stashes"] = stashes
    return {"repo": repo, "changes": changes, "recent_commits": commits}


def changes_from_status(
    parsed: dict[str, Any], max_paths: int
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]:
    """Split parsed status into the snapshot's ``changes`` (capped, line counts still null),
    the conflicted paths (capped) and the submodule flags by path. ``.resume-kit/`` is left out."""
    staged: list[dict[str, Any]] = []
    unstaged: list[dict[str, Any]] = []
    untracked: list[dict[str, Any]] = []
    conflicts: list[dict[str, Any]] = []
    sub_flags: dict[str, str] = {}
    for entry in _records(parsed):
        kind, path = entry["kind"], entry["path"]
        if kind == "?":
            untracked.append({"path": path, "status": "?", "added": None, "deleted": None})
            continue
        if kind == "!":
            continue
        if entry["sub"].startswith("S"):
            sub_flags[path] = entry["sub"]
        if kind == "u":
            conflicts.append({"path": path, "status": entry["xy"]})
            continue
        x, y = entry["xy"][:1], entry["xy"][1:2]
        if x not in (".", ""):
            item = {"path": path, "status": x, "added": None, "deleted": None}
            if kind == "2":
                item["from"] = entry["orig_path"]
            staged.append(item)
        if y not in (".", ""):
            unstaged.append({"path": path, "status": y, "added": None, "deleted": None})

    counts = {"staged": len(staged), "unstaged": len(unstaged), "untracked": len(untracked)}
    if conflicts:  # only then, so a clean or plainly changed tree's counts keep their shape
        counts["conflicted"] = len(conflicts)
    truncated = any(len(items) > max_paths for items in (staged, unstaged, untracked, conflicts))
    changes = {
        "staged": staged[:max_paths],
        "unstaged": unstaged[:max_paths],
        "untracked": untracked[:max_paths],
        "counts": counts,
        "truncated": truncated,
    }
    return changes, conflicts[:max_paths], sub_flags


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path
