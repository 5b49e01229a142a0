"""Snapshot assembly (SPEC 2): the readers' facts now, as one typed :class:`Snapshot`.

``take_snapshot`` runs each reader behind a guard: a reader that fails becomes a line in
``notes``, never a failed snapshot. It also records a small ``units`` summary (status, and for
done units the current fingerprint, missing artifacts and whether the evidence commit is an
ancestor of HEAD) so that :func:`resume_kit.core.reconcile.reconcile` stays pure. The result
passes the same shape check as a stored snapshot (a section that fails it is left out with a
note), so consumers never re-validate. Storing is :mod:`resume_kit.facts.snapshot_store`.
This module sits on the post-commit hook path: stdlib and gitcmd only, readers imported lazily.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from resume_kit.core.clock import clock_ns
from resume_kit.core.timeutil import from_epoch, steady_base
from resume_kit.core.typing_light import TYPE_CHECKING, Any, TypeVar, cast
from resume_kit.facts.ancestry import (
    evidence_ancestry,
    known_ancestors_file,
    load_known_ancestors,
    save_known_ancestors,
)
from resume_kit.facts.snapshot_store import (
    SCHEMA_VERSION,
    Encoded,
    canonical_text,
    new_snapshot_id,
)
from resume_kit.infra.paths import Layout, as_posix
from resume_kit.model.facts import (
    Changes,
    RepoFacts,
    Snapshot,
    UnitFacts,
    admit,
    parse_snapshot,
    section_problem,
)
from resume_kit.model.progress import Progress, latest_pass
from resume_kit.progress_file.config import Config

if TYPE_CHECKING:
    from resume_kit.facts.fact_reuse import FactCache
    from resume_kit.facts.fingerprint_reuse import Plan, Reuse
    from resume_kit.facts.git import EarlyStatus
    from resume_kit.facts.hashcache import HashCache

MAX_ARTIFACTS = 2000  # declared artifacts listed in a snapshot; the rest counted in a note

T = TypeVar("T")


def _iso_from_ns(ns: int) -> str:
    return from_epoch(ns // 1_000_000_000)


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
    try:  # the common case, in C: plain data whose strings all encode (3x faster than the walk)
        text = json.dumps(value, ensure_ascii=False)
        text.encode("utf-8")
        return json.loads(text)
    except (TypeError, ValueError, UnicodeEncodeError):
        return _json_safe(value)


def _plain(value: T, key: str, encoded: Encoded | None) -> T:
    """``value`` as :func:`json_safe` would give it, without its copy, for the sections built
    here and by the artifact reader of fresh dicts and lists, strings, numbers, booleans and
    None (the units' and artifacts' facts: most of a big plan's snapshot): when every string
    encodes they are already plain. Their canonical text, made to check that, is kept in
    ``encoded`` for the store."""
    try:
        text = canonical_text(value)
        text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError):
        return cast(T, json_safe(value))
    if encoded is not None:
        encoded.keep(key, value, text)
    return value


def _json_safe(value: Any) -> Any:
    if isinstance(value, str):
        return _escape_text(value)
    if isinstance(value, Mapping):
        return {_escape_text(str(key)): _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
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


def empty_repo(layout: Layout) -> RepoFacts:
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


def empty_changes() -> Changes:
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


def unit_fingerprints(
    layout: Layout,
    progress: Progress,
    notes: list[str],
    hashes: HashCache | None = None,
    reuse: Reuse | None = None,
) -> dict[str, UnitFacts]:
    """Per unit: status, and for done units the current fingerprint (None without evidence)
    and missing artifacts (``evidence_in_history`` comes from :func:`add_evidence_history`).
    With ``reuse``, a unit whose files git proves unchanged keeps its recorded fingerprint
    (its artifacts are tracked and clean, so none is missing); the others are computed."""
    from resume_kit.facts.fingerprint import fingerprint
    from resume_kit.infra.safefs import inside

    root = layout.root
    base = str(root)
    memo: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}
    folders: dict[str, bool] = {}  # folder prefixes checked for symlinks, shared by all units

    def present(artifact: str) -> bool:
        full = inside(base, as_posix(artifact), folders)
        return full is not None and os.path.lexists(full)

    summary: dict[str, UnitFacts] = {}
    for unit in progress.units:
        entry: UnitFacts = {"status": unit.status}
        if unit.status == "done":
            kept = reuse.reusable(unit) if reuse is not None and unit.evidence else None
            if kept is not None:
                entry["missing_artifacts"] = []
                entry["fingerprint"] = kept
                entry["evidence_in_history"] = None
                summary[unit.id] = entry
                continue
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
                if reuse is not None:
                    reuse.computed(unit, current)
            entry["fingerprint"] = current
            entry["evidence_in_history"] = None
        summary[unit.id] = entry
    return summary


def add_evidence_history(
    layout: Layout,
    progress: Progress,
    summary: dict[str, UnitFacts],
    head: str | None,
    notes: list[str],
) -> dict[str, UnitFacts]:
    """``evidence_in_history`` for done units: is their evidence commit an ancestor of HEAD?"""

    evidence_commits = {
        unit.id: unit.evidence.commit
        for unit in progress.units
        if unit.status == "done" and unit.evidence is not None and unit.evidence.commit
    }
    if evidence_commits:
        unchecked: tuple[dict[str, bool | None], list[str]] = ({}, [])
        known_file = known_ancestors_file(layout)
        known, for_earlier_head = load_known_ancestors(known_file, head, layout.root)
        checked = _guarded(
            notes,
            "evidence history check",
            unchecked,
            lambda: evidence_ancestry(layout.root, head, evidence_commits.values(), known),
        )
        ancestry, ancestry_notes = checked
        save_known_ancestors(known_file, head, ancestry, known, for_earlier_head)
        notes.extend(ancestry_notes)
        for unit_id, commit in evidence_commits.items():
            summary[unit_id]["evidence_in_history"] = ancestry.get(commit.strip().lower())
    return summary


# Nothing the brief shows reads the changes' line counts: its snapshots leave them null
# (the schema allows it) and skip two `git diff --numstat` runs.
TRIGGERS_WITHOUT_LINE_COUNTS = frozenset({"brief"})


def take_snapshot(
    layout: Layout,
    config: Config,
    trigger: str,
    *,
    progress: Progress | None = None,
    transcript_path: Path | None = None,
    hook: dict[str, Any] | None = None,
    status: EarlyStatus | None = None,
    encoded: Encoded | None = None,
) -> Snapshot:
    """The workspace facts now, typed (no checksum until saved). ``hook`` is the agent hook's
    input: its ``source`` and ``session_id`` tell the transcript reader about a fresh start.
    ``status``: the work tree's ``git status``, started before the progress model was read.
    ``encoded``: receives the big sections' stored form, for :func:`save_snapshot`."""
    now_ns = clock_ns()
    steady_base(now_ns // 1_000_000_000)
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

    reuse_plan = _reuse_plan(layout, progress)
    facts_cache = _facts_cache(layout)
    status_entries: list[dict[str, Any]] = []
    changed_since: list[set[str] | None] = [None]

    def read_git() -> dict[str, Any]:
        from resume_kit.facts.git import read_git_facts

        facts: dict[str, Any] = read_git_facts(
            root,
            layout.git_dir,
            layout.git_common_dir,
            max_paths=200,
            line_counts=trigger not in TRIGGERS_WITHOUT_LINE_COUNTS,
            entries=status_entries if reuse_plan is not None else None,
            status=status,
        )
        changed_since[0] = _changed_since(root, reuse_plan, facts)
        return facts

    # git runs in a thread while this one reads the logs, the transcript and the artifacts:
    # the two take about as long on a big tree. Notes keep the order of a sequential run.
    # The units' fingerprints wait for git's status, which says whose files could have changed.
    from resume_kit.infra.background import Threads

    git_notes: list[str] = []
    later: list[str] = []
    status_ns = time.time_ns() if status is None else status.started_ns
    with Threads(2, "resume-kit-git") as pool:
        git_later = pool.submit(_guarded, git_notes, "git facts unavailable", {}, read_git)
        listing_later = (
            pool.submit(_list_index, root, reuse_plan)
            if reuse_plan is not None and reuse_plan.wants_listing
            else None
        )

        def read_logs() -> list[dict[str, Any]]:
            return _reused_logs(facts_cache, root, config, later)

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
        deferred = _deferred_artifacts(reuse_plan, artifact_paths)
        refused: list[str] = []  # the artifacts left out, read now or after git's status

        def read_artifacts() -> list[dict[str, Any]]:
            paths = [p for p in artifact_paths if p not in deferred] if deferred else artifact_paths
            if not paths:
                return []
            from resume_kit.facts.artifacts import read_artifact_facts

            found, left_out = read_artifact_facts(root, paths, hashes)
            refused.extend(left_out)
            return found

        def read_transcript() -> dict[str, Any] | None:
            if not config.transcripts and transcript_path is None:
                return None
            passed = latest_pass(progress) if progress is not None else None
            since = passed[0] if passed else None

            def compute(_: list[str]) -> dict[str, Any] | None:
                from resume_kit.facts.transcripts import read_transcript as reader

                return reader(
                    root,
                    config.transcripts,
                    transcript_path,
                    source=(hook or {}).get("source"),
                    session_id=(hook or {}).get("session_id"),
                    since=since,
                )

            if transcript_path is not None or hook is not None:
                return compute(later)  # a hook's session: read as it names it, never reused
            return _reused_transcript(facts_cache, root, config, since, compute, later)

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
        refused_note_at = len(later)  # where one read of them all here would put its note
        transcript: dict[str, Any] | None = _guarded(
            later, "transcript unreadable", None, read_transcript
        )
        git_facts: dict[str, Any] = git_later.result()
        reuse = _reuse(
            layout,
            reuse_plan,
            git_facts,
            status_entries,
            changed_since[0],
            listing_later.result() if listing_later is not None else None,
            status_ns,
        )
        fingerprinted: dict[str, UnitFacts] | None = None
        if progress is not None:
            fingerprinted = _guarded(
                later,
                "unit fingerprints",
                None,
                lambda: unit_fingerprints(layout, progress, later, hashes, reuse),
            )
        if deferred or reuse is not None:
            read_early = artifacts
            artifacts = _guarded(
                later,
                "artifacts unreadable",
                read_early,
                lambda: _after_status(
                    root, artifact_paths, read_early, deferred, reuse, hashes, refused
                ),
            )
        if refused:
            from resume_kit.facts.artifacts import refused_note

            later.insert(refused_note_at, refused_note(refused))
        if reuse is not None:
            with contextlib.suppress(Exception):
                reuse.save(layout.git_dir)
    repo = {**empty_repo(layout), **(git_facts.get("repo") or {})}
    changes = {**empty_changes(), **(git_facts.get("changes") or {})}
    recent_commits = list(git_facts.get("recent_commits") or [])
    units: dict[str, UnitFacts] = {}
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
    if facts_cache is not None:
        facts_cache.save()
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
        "artifacts": [],
        "transcript": transcript,
        "progress": progress_state,
        "units": {},
        "notes": notes,
    }
    safe = json_safe(snapshot)
    safe["artifacts"] = _plain(artifacts, "artifacts", encoded)
    safe["units"] = _plain(units, "units", encoded)
    return _admitted(safe, layout)


def _facts_cache(layout: Layout) -> FactCache | None:
    """The log and transcript facts' record (facts/fact_reuse.py); None: no reuse."""
    from resume_kit.facts.fact_reuse import FILE_NAME, FactCache, enabled

    if not enabled() or not layout.state_dir.is_dir():
        return None
    try:
        return FactCache(layout.user_cache / FILE_NAME)
    except Exception:
        return None


def _reused_logs(
    cache: FactCache | None, root: Path, config: Config, notes: list[str]
) -> list[dict[str, Any]]:
    from resume_kit import __version__
    from resume_kit.facts.fact_reuse import LOG_SOURCES, log_inputs, reuse_or_compute, sources_key

    globs = list(config.logs)

    def compute(own_notes: list[str]) -> list[dict[str, Any]]:
        from resume_kit.facts.logs import read_logs as reader

        return list(reader(root, globs, notes=own_notes))

    def inputs(_: list[dict[str, Any]]) -> list[tuple[str, str]]:
        from resume_kit.facts.fingerprint import expand_globs

        return log_inputs(root, globs, expand_globs(root, globs))

    options = {"root": str(root), "globs": globs, "version": __version__}
    if cache is not None:
        options["sources"] = sources_key(LOG_SOURCES)
    return reuse_or_compute(cache, "logs", options, compute, inputs, notes)


def _reused_transcript(
    cache: FactCache | None,
    root: Path,
    config: Config,
    since: Any,
    compute: Callable[[list[str]], dict[str, Any] | None],
    notes: list[str],
) -> dict[str, Any] | None:
    from resume_kit import __version__
    from resume_kit.facts.fact_reuse import (
        AGENT_ENV,
        TRANSCRIPT_SOURCES,
        reuse_or_compute,
        sources_key,
    )

    options: dict[str, Any] = {}
    if cache is not None:
        options = {
            "root": str(root),
            "real_root": os.path.realpath(root),
            "kinds": list(config.transcripts),
            "since": since.isoformat() if since is not None else None,
            "env": {name: os.environ.get(name) for name in AGENT_ENV},
            "sources": sources_key(TRANSCRIPT_SOURCES),
            "version": __version__,
        }
    return reuse_or_compute(cache, "transcript", options, compute, None, notes)


def _reuse_plan(layout: Layout, progress: Progress | None) -> Plan | None:
    """What the fingerprints' reuse needs from git beyond the status; None: no reuse (no
    progress, no state folder, or anything odd: computing every fingerprint is always right)."""
    if progress is None or not layout.state_dir.is_dir():
        return None
    from resume_kit.facts.fingerprint_reuse import FILE_NAME, plan

    try:
        return plan(layout.user_cache / FILE_NAME, layout.git_dir, progress.units)
    except Exception:
        return None


def _deferred_artifacts(reuse_plan: Plan | None, paths: list[str]) -> set[str]:
    if reuse_plan is None:
        return set()
    from resume_kit.facts.fingerprint_reuse import deferred_artifacts

    try:
        return deferred_artifacts(reuse_plan, paths)
    except Exception:
        return set()


def _after_status(
    root: Path,
    paths: list[str],
    read_early: list[dict[str, Any]],
    deferred: set[str],
    reuse: Reuse | None,
    hashes: HashCache,
    refused: list[str],
) -> list[dict[str, Any]]:
    """The artifacts' facts in declared order, once git's status is known: those read while
    git ran, the deferred ones whose recorded facts git proves still hold, and the rest of
    the deferred read now (``refused`` gains those left out, kept in declared order). Every
    fact read is offered to the record for the next snapshot."""
    found: dict[str, dict[str, Any]] = {}
    late: list[str] = []
    for path in paths:
        if path in deferred:
            facts = reuse.artifact(path) if reuse is not None else None
            if facts is None:
                late.append(path)
            else:
                found[path] = {"path": path, "exists": True, "size": facts[0], "sha256": facts[1]}
    read = read_early
    if late:
        from resume_kit.facts.artifacts import read_artifact_facts

        read_late, left_out = read_artifact_facts(root, late, hashes)
        read = [*read_early, *read_late]
        if left_out:
            order = {path: index for index, path in enumerate(paths)}
            refused[:] = sorted([*refused, *left_out], key=lambda p: order.get(p, len(order)))
    for entry in read:
        found[entry["path"]] = entry
        if reuse is not None:
            reuse.artifact_read(entry["path"], entry["size"], entry["sha256"])
    return [found[path] for path in paths if path in found]


def _list_index(root: Path, reuse_plan: Plan) -> tuple[dict[str, bool], set[str]] | None:
    from resume_kit.facts.fingerprint_reuse import list_index

    try:
        if reuse_plan.list_all:
            return list_index(root, None, reuse_plan.needed)
        return list_index(root, reuse_plan.listing)
    except Exception:
        return None


def _changed_since(root: Path, reuse_plan: Plan | None, facts: dict[str, Any]) -> set[str] | None:
    """Paths changed between the record's HEAD and this one (None: unknown or not needed)."""
    head = (facts.get("repo") or {}).get("head")
    if reuse_plan is None or reuse_plan.record is None or not head:
        return None
    if reuse_plan.record.head == head:
        return set()
    from resume_kit.facts.fingerprint_reuse import changed_between

    try:
        return changed_between(root, reuse_plan.record.head, head)
    except Exception:
        return None


def _reuse(
    layout: Layout,
    reuse_plan: Plan | None,
    git_facts: dict[str, Any],
    entries: list[dict[str, Any]],
    changed: set[str] | None,
    listed: tuple[dict[str, bool], set[str]] | None,
    status_ns: int,
) -> Reuse | None:
    head = (git_facts.get("repo") or {}).get("head")
    if reuse_plan is None or not git_facts or not isinstance(head, str):
        return None
    from resume_kit.facts.fingerprint_reuse import Reuse, conversion_free, status_paths

    try:
        return Reuse(
            root=layout.root,
            plan=reuse_plan,
            head=head,
            dirty=status_paths(entries),
            changed=changed,
            listed=listed,
            safe=conversion_free(layout.root, layout.git_common_dir),
            status_ns=status_ns,
        )
    except Exception:
        return None


def _admitted(data: dict[str, Any], layout: Layout) -> Snapshot:
    """``data`` through the shape check: a section a reader got wrong is replaced by its empty
    form with a note, so a reader's slip can never reach reconcile or the brief."""
    snapshot, _ = parse_snapshot(data)
    if snapshot is not None:  # the usual case: every section checked once
        return snapshot
    empty: dict[str, object] = {
        "repo": json_safe(empty_repo(layout)),
        "changes": empty_changes(),
        "tests": {"pytest_last_failed": [], "source": None},
        "transcript": None,
        "units": {},
    }
    for key, value in data.items():
        problem = section_problem(key, value)
        if problem is not None:
            data[key] = empty.get(key, [])
            data["notes"].append(f"{problem}: left out of this snapshot")
    return admit(data)
