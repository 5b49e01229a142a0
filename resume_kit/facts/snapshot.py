"""Workspace snapshots (SPEC 2): assemble the readers' facts, store them, load, compare.

``take_snapshot`` runs each reader behind a guard: a reader that fails becomes a line in
``notes``, never a failed snapshot. It also records a small ``units`` summary (status, and for
done units the current fingerprint, missing artifacts and whether the evidence commit is an
ancestor of HEAD) so that :func:`resume_kit.core.reconcile.reconcile` stays pure.

Storage: ``snapshots/<id>.json`` where ids sort by creation time; the ``checksum`` is a SHA-256
over the canonical JSON of everything else; loading skips a damaged file and uses the previous.
This module sits on the post-commit hook path: stdlib and gitcmd only, readers imported lazily.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from resume_kit.infra.paths import Layout, as_posix
from resume_kit.infra.store import atomic_write, ensure_gitignore, prune
from resume_kit.model.progress import Progress
from resume_kit.progress_file.config import Config

if TYPE_CHECKING:
    from resume_kit.facts.hashcache import HashCache

SCHEMA_VERSION = 1
MAX_ARTIFACTS = 2000  # declared artifacts listed in a snapshot; the rest counted in a note
MAX_ANCESTRY_PROBES = 12  # `git merge-base --is-ancestor` runs per snapshot
REV_LIST_WINDOW = 20000  # commits read at once when many distinct evidence commits exist
_HEX = re.compile(r"[0-9a-f]{4,64}")
_FULL_SHA_LENGTHS = (40, 64)

T = TypeVar("T")


# --------------------------------------------------------------------------- ids and checksums


def new_snapshot_id(now_ns: int | None = None) -> str:
    """``20261129T080000123Z-a1b2c3``: UTC time to the millisecond, then a random suffix."""
    ns = time.time_ns() if now_ns is None else now_ns
    seconds, millis = divmod(ns // 1_000_000, 1000)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds))
    return f"{stamp}{millis:03d}Z-{secrets.token_hex(3)}"


def _iso_from_ns(ns: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ns // 1_000_000_000))


def canonical_bytes(snapshot: Mapping[str, Any]) -> bytes:
    """The canonical form the checksum covers: every key but ``checksum``, sorted, compact."""
    body = {key: value for key, value in snapshot.items() if key != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def compute_checksum(snapshot: Mapping[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(snapshot)).hexdigest()


def _escape_text(text: str) -> str:
    """A string that encodes as UTF-8: undecodable bytes (surrogate escapes) become ``\\xNN``."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return "".join(f"\\u{ord(ch):04x}" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data whose strings all encode as UTF-8 (never a crash on names)."""
    if isinstance(value, str):
        return _escape_text(value)
    if isinstance(value, Mapping):
        return {_escape_text(str(key)): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Path):
        return _escape_text(str(value))
    return _escape_text(str(value))


# --------------------------------------------------------------------------- assembling


def _redact(text: str) -> str:
    from resume_kit.infra.redact import redact

    return redact(text)


def _note_for(label: str, exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{label}: {type(exc).__name__}" + (f": {detail}" if detail else "")
    return _redact(text[:300])


def _guarded(notes: list[str], label: str, default: T, read: Callable[[], T]) -> T:
    """``read()``, or ``default`` with a note when it raises (a reader never fails a snapshot)."""
    try:
        return read()
    except Exception as exc:
        notes.append(_note_for(label, exc))
        return default


def empty_repo(layout: Layout) -> dict[str, Any]:
    return {
        "root": str(layout.root),
        "head": None,
        "branch": None,
        "unborn": False,
        "upstream": None,
        "ahead": None,
        "behind": None,
        "operation": None,
        "conflicts": [],
        "stash_count": 0,
        "worktree": {
            "linked": layout.git_dir != layout.git_common_dir,
            "git_dir": str(layout.git_dir),
            "common_dir": str(layout.git_common_dir),
        },
        "submodules": [],
    }


def empty_changes() -> dict[str, Any]:
    return {
        "staged": [],
        "unstaged": [],
        "untracked": [],
        "counts": {"staged": 0, "unstaged": 0, "untracked": 0},
        "truncated": False,
    }


def _load_progress(layout: Layout) -> tuple[Progress | None, str | None]:
    from resume_kit.infra.errors import ResumeKitError
    from resume_kit.progress_file.io import load

    try:
        return load(layout).progress, None
    except ResumeKitError as exc:
        return None, exc.message
    except Exception as exc:
        return None, _note_for("progress.yaml could not be read", exc)


def declared_artifacts(
    root: Path, progress: Progress | None, config: Config
) -> tuple[list[str], int]:
    """Artifact paths declared by units, then config globs expanded; (paths, how many left out)."""
    from resume_kit.facts.fingerprint import expand_globs

    seen: dict[str, None] = {}
    if progress is not None:
        for unit in progress.units:
            for artifact in unit.artifacts:
                seen[as_posix(artifact)] = None
    if config.artifacts:
        for path in expand_globs(root, config.artifacts):
            seen[path] = None
    paths = list(seen)
    return paths[:MAX_ARTIFACTS], max(0, len(paths) - MAX_ARTIFACTS)


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


def _known_ancestors_file(layout: Layout) -> Path | None:
    return layout.user_cache / "ancestry.json" if layout.state_dir.is_dir() else None


def load_known_ancestors(file: Path | None, head: str | None) -> list[str]:
    """Commits an earlier snapshot found to be ancestors of ``head`` (none for another head)."""
    if file is None or head is None:
        return []
    from resume_kit.infra.safefs import read_regular

    try:
        data = json.loads(read_regular(file, MAX_ANCESTRY_BYTES))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("head") != head:
        return []
    found = data.get("ancestors")
    return [c for c in found if isinstance(c, str)] if isinstance(found, list) else []


def save_known_ancestors(
    file: Path | None, head: str | None, ancestry: Mapping[str, bool | None], known: list[str]
) -> None:
    """Remember the full commit ids found to be ancestors of ``head``: that never changes. A
    "no" is not remembered (a shallow clone or a later fetch can turn it into a "yes")."""
    if file is None or head is None:
        return
    found = sorted(
        c for c, is_ancestor in ancestry.items() if is_ancestor and len(c) in _FULL_SHA_LENGTHS
    )
    if found and found != sorted(known):
        with contextlib.suppress(OSError):
            atomic_write(file, json.dumps({"head": head, "ancestors": found}))


def unit_fingerprints(
    layout: Layout, progress: Progress, notes: list[str], hashes: HashCache | None = None
) -> dict[str, dict[str, Any]]:
    """Per unit, what needs no git: status, and for done units the current fingerprint (None
    without evidence) and missing artifacts. Reconcile compares these with the claims."""
    from resume_kit.facts.fingerprint import fingerprint
    from resume_kit.infra.safefs import inside

    root = layout.root
    base = str(root)
    memo: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}
    folders: dict[str, bool] = {}  # folder prefixes checked for symlinks, shared by all units

    def present(artifact: str) -> bool:
        full = inside(base, as_posix(artifact), folders)
        return full is not None and os.path.lexists(full)

    summary: dict[str, dict[str, Any]] = {}
    for unit in progress.units:
        entry: dict[str, Any] = {"status": unit.status}
        if unit.status == "done":
            entry["missing_artifacts"] = [a for a in unit.artifacts if not present(a)]
            current: str | None = None
            if unit.evidence is not None:
                key = (tuple(unit.files), tuple(unit.artifacts))
                if key not in memo:
                    try:
                        memo[key] = fingerprint(root, unit.files, unit.artifacts, hashes, folders)
                    except Exception as exc:
                        notes.append(_note_for(f"fingerprint of {unit.id}", exc))
                        memo[key] = ""
                current = memo[key] or None
            entry["fingerprint"] = current
            entry["evidence_in_history"] = None
        summary[unit.id] = entry
    return summary


def add_evidence_history(
    layout: Layout,
    progress: Progress,
    summary: dict[str, dict[str, Any]],
    head: str | None,
    notes: list[str],
) -> dict[str, dict[str, Any]]:
    """``evidence_in_history`` for the done units of :func:`unit_fingerprints`'s summary."""
    evidence_commits = {
        unit.id: unit.evidence.commit
        for unit in progress.units
        if unit.status == "done" and unit.evidence is not None and unit.evidence.commit
    }
    if evidence_commits:
        unchecked: tuple[dict[str, bool | None], list[str]] = ({}, [])
        known_file = _known_ancestors_file(layout)
        known = load_known_ancestors(known_file, head)
        checked = _guarded(
            notes,
            "evidence history check",
            unchecked,
            lambda: evidence_ancestry(layout.root, head, evidence_commits.values(), known),
        )
        ancestry, ancestry_notes = checked
        save_known_ancestors(known_file, head, ancestry, known)
        notes.extend(ancestry_notes)
        for unit_id, commit in evidence_commits.items():
            summary[unit_id]["evidence_in_history"] = ancestry.get(commit.strip().lower())
    return summary


def take_snapshot(
    layout: Layout,
    config: Config,
    trigger: str,
    *,
    progress: Progress | None = None,
    transcript_path: Path | None = None,
) -> dict[str, Any]:
    """The workspace facts now, as a plain JSON-able dict (no checksum until saved)."""
    now_ns = time.time_ns()
    notes: list[str] = []
    progress_state: dict[str, Any] = {"valid": True, "error": None}
    if progress is None:
        progress, error = _load_progress(layout)
        if progress is None:
            progress_state = {"valid": False, "error": error}
            notes.append(f"progress.yaml is not usable: {error}")
    root = layout.root
    from resume_kit.facts.hashcache import HashCache

    # file hashes by stat data: done units' files and artifacts rarely change between snapshots
    hashes = HashCache(layout.user_cache / "hashes.json" if layout.state_dir.is_dir() else None)

    def read_git() -> dict[str, Any]:
        from resume_kit.facts.git import read_git_facts

        facts: dict[str, Any] = read_git_facts(
            root, layout.git_dir, layout.git_common_dir, max_paths=200
        )
        return facts

    # git runs in a thread while this one reads the logs, the transcript and the units' files:
    # the two take about as long on a big tree. Notes keep the order of a sequential run.
    from concurrent.futures import ThreadPoolExecutor

    git_notes: list[str] = []
    later: list[str] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="resume-kit-git") as pool:
        git_later = pool.submit(_guarded, git_notes, "git facts unavailable", {}, read_git)

        def read_logs() -> list[dict[str, Any]]:
            from resume_kit.facts.logs import read_logs as reader

            return list(reader(root, list(config.logs), notes=later))

        def read_tests() -> dict[str, Any]:
            from resume_kit.facts.pytest_cache import read_test_facts

            return dict(read_test_facts(root))

        nothing_listed: tuple[list[str], int] = ([], 0)
        listed = _guarded(
            later,
            "artifact list",
            nothing_listed,
            lambda: declared_artifacts(root, progress, config),
        )
        artifact_paths, left_out = listed
        if left_out:
            later.append(f"{left_out} declared artifacts not listed (more than {MAX_ARTIFACTS})")

        def read_artifacts() -> list[dict[str, Any]]:
            if not artifact_paths:
                return []
            from resume_kit.facts.artifacts import read_artifacts as reader

            return list(reader(root, artifact_paths, hashes, notes=later))

        def read_transcript() -> dict[str, Any] | None:
            if not config.transcripts and transcript_path is None:
                return None
            from resume_kit.facts.transcripts import read_transcript as reader

            return reader(root, config.transcripts, transcript_path)

        logs: list[dict[str, Any]] = _guarded(later, "logs unreadable", [], read_logs)
        tests: dict[str, Any] = _guarded(
            later,
            "test results unreadable",
            {"pytest_last_failed": [], "source": None},
            read_tests,
        )
        artifacts: list[dict[str, Any]] = _guarded(
            later, "artifacts unreadable", [], read_artifacts
        )
        transcript: dict[str, Any] | None = _guarded(
            later, "transcript unreadable", None, read_transcript
        )
        fingerprinted: dict[str, dict[str, Any]] | None = None
        if progress is not None:
            fingerprinted = _guarded(
                later,
                "unit fingerprints",
                None,
                lambda: unit_fingerprints(layout, progress, later, hashes),
            )
        git_facts: dict[str, Any] = git_later.result()
    repo = {**empty_repo(layout), **(git_facts.get("repo") or {})}
    changes = {**empty_changes(), **(git_facts.get("changes") or {})}
    recent_commits = list(git_facts.get("recent_commits") or [])
    units: dict[str, dict[str, Any]] = {}
    if progress is not None and fingerprinted is not None:
        summary = fingerprinted
        units = _guarded(
            later,
            "unit fingerprints",
            {},
            lambda: add_evidence_history(layout, progress, summary, repo.get("head"), later),
        )
    notes.extend(git_notes + later)
    hashes.save()
    snapshot: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": new_snapshot_id(now_ns),
        "created_at": _iso_from_ns(now_ns),
        "trigger": trigger,
        "repo": repo,
        "changes": changes,
        "recent_commits": recent_commits,
        "logs": logs,
        "tests": tests,
        "artifacts": artifacts,
        "transcript": transcript,
        "progress": progress_state,
        "units": units,
        "notes": notes,
    }
    return dict(json_safe(snapshot))


# --------------------------------------------------------------------------- storage


# The names new_snapshot_id gives snapshot files: pruning removes these and nothing else.
SNAPSHOT_NAME = re.compile(r"[0-9]{8}T[0-9]{9}Z-[0-9a-f]{6}\.json")


def _top_level_lines(snapshot: Mapping[str, Any]) -> str:
    """JSON with one top-level key per line, each value compact: readable enough, and written
    by json's C encoder (``indent`` makes it use the pure-Python one, ~4x slower)."""
    lines = [
        f" {json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in snapshot.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def save_snapshot(layout: Layout, snapshot: dict[str, Any], keep: int) -> Path:
    """Add the checksum, write ``snapshots/<id>.json`` atomically, keep the newest ``keep``."""
    snapshot.pop("checksum", None)
    snapshot["checksum"] = compute_checksum(snapshot)
    ensure_gitignore(layout)  # snapshots never show up as untracked work, even before `init`
    if layout.snapshots.exists() and not layout.snapshots.is_dir():
        from resume_kit.infra.errors import ResumeKitError

        raise ResumeKitError(
            f"{layout.rel(layout.snapshots)} is not a folder: cannot store snapshots there",
            hint="move that file away; resume-kit keeps its snapshots in that folder",
        )
    path = layout.snapshots / f"{snapshot['id']}.json"
    atomic_write(path, _top_level_lines(snapshot))
    prune(layout.snapshots, SNAPSHOT_NAME, max(1, keep))
    return path


def snapshot_problem(data: Any) -> str | None:
    """Why ``data`` is not an intact snapshot, or None."""
    if not isinstance(data, dict):
        return "not a JSON object"
    checksum = data.get("checksum")
    if not isinstance(checksum, str):
        return "no checksum"
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        return "no schema_version"
    if version > SCHEMA_VERSION:
        return f"schema_version {version} is newer than this resume-kit understands"
    try:
        actual = compute_checksum(data)
    except (TypeError, ValueError, UnicodeEncodeError):
        return "content cannot be checked"
    if actual != checksum:
        return "checksum does not match its content"
    return _shape_problem(data)


# The containers a snapshot's readers index into: a file whose checksum matches but whose
# content was not written by resume-kit must be skipped, not crash the comparison.
_SHAPE: dict[str, tuple[type, ...]] = {
    "id": (str,),
    "created_at": (str,),
    "repo": (dict,),
    "changes": (dict,),
    "recent_commits": (list,),
    "logs": (list,),
    "tests": (dict,),
    "artifacts": (list,),
    "transcript": (dict, type(None)),
    "progress": (dict,),
    "notes": (list,),
    "units": (dict,),
}
_LISTS_OF_OBJECTS = ("recent_commits", "logs", "artifacts")


def _shape_problem(data: dict[str, Any]) -> str | None:
    for key, kinds in _SHAPE.items():
        if key in data and not isinstance(data[key], kinds):
            return f"'{key}' is not what a snapshot holds"
    for key in _LISTS_OF_OBJECTS:
        if not all(isinstance(item, dict) for item in data.get(key) or []):
            return f"'{key}' is not what a snapshot holds"
    changes = data.get("changes") or {}
    for kind in ("staged", "unstaged", "untracked"):
        entries = changes.get(kind) or []
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            return f"'changes.{kind}' is not what a snapshot holds"
    if not all(isinstance(entry, dict) for entry in (data.get("units") or {}).values()):
        return "'units' is not what a snapshot holds"
    tests = data.get("tests") or {}
    if not isinstance(tests.get("pytest_last_failed") or [], list):
        return "'tests.pytest_last_failed' is not what a snapshot holds"
    return None


MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024


def read_snapshot(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(snapshot, None) for an intact file, else (None, reason)."""
    from resume_kit.infra.store import FileTooLarge, NotARegularFile, read_regular

    try:
        data = json.loads(read_regular(path, MAX_SNAPSHOT_BYTES).decode("utf-8"))
    except NotARegularFile as exc:
        return None, f"not a regular file ({exc.kind})"
    except FileTooLarge:
        return None, f"larger than {MAX_SNAPSHOT_BYTES // (1024 * 1024)} MiB"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or type(exc).__name__})"
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except (ValueError, RecursionError):
        return None, "not valid JSON (truncated or corrupt)"
    problem = snapshot_problem(data)
    return (None, problem) if problem else (data, None)


def load_latest(layout: Layout) -> tuple[dict[str, Any] | None, list[str]]:
    """The newest intact snapshot, skipping damaged ones with a warning each."""
    warnings: list[str] = []
    try:
        paths = sorted(layout.snapshots.glob("*.json"), reverse=True)
    except OSError:
        return None, warnings
    for path in paths:
        data, problem = read_snapshot(path)
        if data is not None:
            return data, warnings
        warnings.append(f"skipped snapshot {path.name}: {problem}; using the one before it")
    return None, warnings


# --------------------------------------------------------------------------- comparing


def _changed_paths(snapshot: Mapping[str, Any]) -> set[str]:
    changes = snapshot.get("changes") or {}
    return {
        str(entry.get("path"))
        for kind in ("staged", "unstaged", "untracked")
        for entry in changes.get(kind) or []
        if isinstance(entry, Mapping) and entry.get("path")
    }


def _unit_statuses(snapshot: Mapping[str, Any]) -> dict[str, str | None]:
    units = snapshot.get("units") or {}
    return {
        str(uid): (entry.get("status") if isinstance(entry, Mapping) else None)
        for uid, entry in units.items()
    }


def diff_snapshots(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """What changed from ``old`` to ``new``: commits, files, unit statuses, branch, operation."""
    new_repo = new.get("repo") or {}
    diff: dict[str, Any] = {
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
        fresh = []
        for commit in commits:
            if commit.get("sha") in known:
                break
            fresh.append(commit)
        else:
            diff["more_commits"] = bool(commits) and old_repo.get("head") is not None
        diff["new_commits"] = fresh
    from resume_kit.infra.redact import redact

    for key in ("branch", "operation"):
        # a snapshot stored before branch names were redacted may still hold one in clear
        previous = old_repo.get(key)
        previous = redact(previous) if isinstance(previous, str) else previous
        if previous != new_repo.get(key):
            diff[key] = {"old": previous, "new": new_repo.get(key)}
    before, after = _changed_paths(old), _changed_paths(new)
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


# --------------------------------------------------------------------------- plain text


def terminal_line(text: str) -> str:
    """``text`` as one printable line: newlines, escape sequences and bidi controls from file
    names, commit subjects or logs are shown escaped, so they cannot forge lines of output."""
    from resume_kit.core.escape import escape_controls

    return escape_controls(text)


def short_sha(sha: Any) -> str:
    return str(sha)[:7] if sha else "none"


def _some(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" … (+{len(items) - limit} more)" if len(items) > limit else "")


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def describe_workspace(snapshot: Mapping[str, Any]) -> list[str]:
    """The workspace facts as short plain lines (branch, operation, changes, tests, logs)."""
    repo = snapshot.get("repo") or {}
    lines: list[str] = []
    head = repo.get("head")
    if repo.get("unborn"):
        where = f"branch {repo.get('branch') or '?'} (no commits yet)"
    elif repo.get("branch"):
        where = f"branch {repo['branch']} @ {short_sha(head)}"
    elif head is None:
        where = "HEAD unknown (no git facts)"
    else:
        where = f"detached HEAD @ {short_sha(head)}"
    if repo.get("upstream"):
        where += (
            f" (upstream {repo['upstream']}: ahead {repo.get('ahead', '?')},"
            f" behind {repo.get('behind', '?')})"
        )
    lines.append(where)
    if repo.get("operation"):
        lines.append(f"{repo['operation']} in progress")
    conflicts = [str(c.get("path")) for c in repo.get("conflicts") or []]
    if conflicts:
        lines.append(f"{len(conflicts)} conflicted: {_some(conflicts)}")
    changes = snapshot.get("changes") or {}
    counts = changes.get("counts") or {}
    staged, unstaged, untracked = (
        int(counts.get(k) or 0) for k in ("staged", "unstaged", "untracked")
    )
    if staged or unstaged or untracked:
        paths = sorted(_changed_paths(snapshot))
        lines.append(
            f"uncommitted changes: {staged} staged, {unstaged} unstaged, {untracked} untracked"
            + (f" ({_some(paths, 4)})" if paths else "")
        )
    else:
        lines.append("working tree clean")
    if repo.get("stash_count"):
        lines.append(_count(int(repo["stash_count"]), "stash entry", "stash entries"))
    failing = list((snapshot.get("tests") or {}).get("pytest_last_failed") or [])
    if failing:
        lines.append(
            f"{_count(len(failing), 'failing test')} (pytest last run): {_some(failing, 3)}"
        )
    for log in snapshot.get("logs") or []:
        errors = log.get("error_lines") or []
        if errors:
            last = str(errors[-1]).replace("\n", " ")[:160]
            lines.append(f"{log.get('path')}: {_count(len(errors), 'error line')}, last: {last}")
    state = snapshot.get("progress") or {}
    if state and not state.get("valid", True):
        lines.append(f"progress.yaml not usable: {state.get('error')}")
    return [terminal_line(line) for line in lines]


def render_diff(diff: Mapping[str, Any], snapshot: Mapping[str, Any]) -> str:
    """The `snapshot` command's plain-text report."""
    out = [f"snapshot {snapshot.get('id')} ({snapshot.get('trigger')})"]
    out.extend(f"  {line}" for line in describe_workspace(snapshot))
    if diff.get("previous") is None:
        out.append("first snapshot: nothing to compare with")
    else:
        changes: list[str] = []
        commits = diff.get("new_commits") or []
        if commits:
            more = "+" if diff.get("more_commits") else ""
            changes.append(f"{len(commits)}{more} new commit{'s' if len(commits) != 1 else ''}:")
            changes.extend(
                f"    {short_sha(c.get('sha'))} {str(c.get('subject') or '')[:72]}"
                + (f"  [{c['unit']}]" if c.get("unit") else "")
                for c in commits
            )
        elif diff.get("head"):
            head = diff["head"]
            changes.append(f"HEAD moved: {short_sha(head['old'])} -> {short_sha(head['new'])}")
        for key in ("branch", "operation"):
            if diff.get(key):
                old, new = diff[key]["old"], diff[key]["new"]
                changes.append(f"{key}: {old or 'none'} -> {new or 'none'}")
        if diff.get("files_changed"):
            changes.append(f"newly changed: {_some(list(diff['files_changed']), 8)}")
        if diff.get("files_cleaned"):
            changes.append(f"no longer changed: {_some(list(diff['files_cleaned']), 8)}")
        for unit in (diff.get("units") or [])[:20]:
            changes.append(f"unit {unit['id']}: {unit['old'] or 'new'} -> {unit['new'] or 'gone'}")
        if len(diff.get("units") or []) > 20:
            changes.append(f"… and {len(diff['units']) - 20} more unit changes")
        if diff.get("tests_failing"):
            changes.append(f"newly failing tests: {_some(list(diff['tests_failing']), 5)}")
        if diff.get("tests_fixed"):
            changes.append(f"no longer failing: {_some(list(diff['tests_fixed']), 5)}")
        out.append(f"since {diff['previous']}:")
        out.extend(f"  {line}" for line in changes or ["nothing changed"])
    for note in snapshot.get("notes") or []:
        out.append(f"note: {note}")
    return "\n".join(terminal_line(line) for line in out)
