"""Done units' fingerprints carried over from the previous snapshot when git proves that none
of their files changed (issue 18), so a snapshot hashes only the units that could have; and
with the same proof, their artifacts' facts (size and SHA-256), so a snapshot does not even
``lstat`` the artifacts that could not have changed.

A record in the user cache (``fingerprints.json``, never in the repository: what arrives with
a repository is hostile) keeps, for the HEAD and the index it was made with, each eligible
unit's fingerprint and which of the units' paths the index tracks *settled*: stage 0, flagged
neither assume-unchanged nor skip-worktree (``git ls-files -s -v`` tag ``H``), a regular file
or a symlink. A unit's fingerprint is reused only when all of this holds, else it is computed:

* every entry of ``files`` and ``artifacts`` is a plain normal path (no glob, no ``..``, not
  under ``.git/`` or ``.resume-kit/``), so the paths hashed are exactly these;
* the unit's files and artifacts are the ones recorded, and each path is settled in the index
  of now (the record's knowledge while the index file is unchanged, else a fresh listing);
* ``git status`` names neither the path nor a folder above it; HEAD is the recorded one, or
  ``git diff --name-only`` between the two commits does not name the path;
* nothing can make git call a changed file clean: no ``core.autocrlf``, ``core.checkStat``,
  ``core.trustCtime=false`` or ``core.ignoreStat``; no attributes file (global, system,
  ``info/attributes``, or a ``.gitattributes`` in the work tree or index in a folder on the
  path): line-ending conversion and filters compare converted text, the fingerprint raw bytes.

A fingerprint is recorded only for a path clean in this status whose ``ctime`` and ``mtime``,
read after hashing, are older than the status by :data:`RACY_NS`: the bytes hashed are then
those git compared. An artifact's facts are recorded the same way (a regular file, read
after the status too), and reused under the same conditions as a fingerprint. Anything
missing, unreadable or odd means computing, never a guess.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from resume_kit.core.light_dataclass import dataclass, field
from resume_kit.core.typing_light import Any
from resume_kit.model.globs import WILDCARD

FORMAT = 2  # 2: the done units' artifacts' facts
FILE_NAME = "fingerprints.json"
MAX_RECORD_BYTES = 64 * 1024 * 1024
RACY_NS = 2_000_000_000  # a write this close to the status may share its timestamp tick
LISTED_PATHS_MAX = 256  # more unknown paths than this: list the whole index instead
_SETTLED_MODES = frozenset({b"100644", b"100755", b"120000"})
_EXCLUDED_TOP = frozenset({".git", ".resume-kit"})
_ATTRIBUTES = ".gitattributes"
_ATTRIBUTES_BYTES = _ATTRIBUTES.encode()
_FALSE = frozenset({"false", "no", "off", "0", ""})


def plain_paths(files: Iterable[str], artifacts: Iterable[str]) -> list[str] | None:
    """The paths a unit's fingerprint covers when each entry is a plain normal relative path
    git would name the same way; None when any is not (a glob, ``..``, ``./x``, ...)."""
    paths = [*files, *artifacts]
    for path in paths:
        if not path or path[0] == "/" or WILDCARD.search(path):
            return None  # a glob
        parts = path.split("/")
        if parts[0] in _EXCLUDED_TOP or "" in parts or "." in parts or ".." in parts:
            return None
    return paths


def index_key(git_dir: Path) -> list[int] | None:
    """The index file's stat data: git replaces the file on every change."""
    try:
        info = os.lstat(git_dir / "index")
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]


@dataclass
class Record:
    head: str
    index: list[int]
    settled: dict[str, bool]  # path -> settled in that index (only the units' paths)
    attribute_dirs: set[str]  # folders ("" for the root) whose .gitattributes the index holds
    units: dict[str, tuple[str, list[str], list[str]]]  # id -> (fingerprint, files, artifacts)
    artifacts: dict[str, tuple[int, str]]  # path -> (size, sha256) of a done unit's artifact


def load_record(file: Path) -> Record | None:
    from resume_kit.infra.safefs import read_regular

    try:
        data = json.loads(read_regular(file, MAX_RECORD_BYTES))
        if data.get("format") != FORMAT:
            return None
        units = {
            str(uid): (str(fp), [str(p) for p in files], [str(p) for p in artifacts])
            for uid, (fp, files, artifacts) in data["units"].items()
        }
        artifacts = {
            str(path): (size, sha256)
            for path, (size, sha256) in data["artifacts"].items()
            if type(size) is int and isinstance(sha256, str)
        }
        settled = {str(p): True for p in data["settled"]}
        settled.update({str(p): False for p in data["unsettled"]})
        return Record(
            head=str(data["head"]),
            index=[int(n) for n in data["index"]],
            settled=settled,
            attribute_dirs={str(p) for p in data["attribute_dirs"]},
            units=units,
            artifacts=artifacts,
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def save_record(file: Path, record: Record) -> None:
    from resume_kit.infra.store import atomic_write

    payload = {
        "format": FORMAT,
        "head": record.head,
        "index": record.index,
        "settled": sorted(p for p, ok in record.settled.items() if ok),
        "unsettled": sorted(p for p, ok in record.settled.items() if not ok),
        "attribute_dirs": sorted(record.attribute_dirs),
        "units": {uid: list(entry) for uid, entry in record.units.items()},
        "artifacts": {path: list(facts) for path, facts in record.artifacts.items()},
    }
    with contextlib.suppress(OSError):
        atomic_write(
            file, json.dumps(payload, separators=(",", ":"), ensure_ascii=False), durable=False
        )


# --------------------------------------------------------------------------- git reads


def parse_ls_files(out: bytes, only: set[str] | None = None) -> tuple[dict[str, bool], set[str]]:
    """``git ls-files -z -s -v`` as ({path: settled}, folders holding a .gitattributes);
    ``only``: the paths to say it of (every .gitattributes is still found): the whole index
    of a large tree is 20,000 entries, the done units' paths a few thousand."""
    settled: dict[str, bool] = {}
    attribute_dirs: set[str] = set()
    wanted = None if only is None else _encoded(only)
    for record in out.split(b"\0"):
        meta, tab, raw = record.partition(b"\t")
        if not tab:
            continue
        if wanted is not None and raw not in wanted and not raw.endswith(_ATTRIBUTES_BYTES):
            continue
        fields = meta.split(b" ")
        path = raw.decode("utf-8", "surrogateescape")
        ok = len(fields) == 4 and fields[0] == b"H" and fields[1] in _SETTLED_MODES
        ok = ok and fields[3] == b"0"
        settled[path] = settled.get(path, True) and ok
        folder, _, name = path.rpartition("/")
        if name == _ATTRIBUTES:
            attribute_dirs.add(folder)
    return settled, attribute_dirs


def _encoded(paths: Iterable[str]) -> set[bytes]:
    """``paths`` as git writes them (what ``parse_ls_files`` decodes); a name no git path
    decodes to is left out (it is then not settled)."""
    found: set[bytes] = set()
    for path in paths:
        with contextlib.suppress(UnicodeEncodeError):
            found.add(path.encode("utf-8", "surrogateescape"))
    return found


def list_index(
    root: Path, paths: list[str] | None, needed: set[str] | None = None
) -> tuple[dict[str, bool], set[str]] | None:
    """What the index says of ``paths`` (None: of every path, or of the ``needed`` ones when
    given), and every index .gitattributes; None when git fails. Paths asked for and not
    listed are not settled."""
    from resume_kit.infra.gitcmd import run_git_bytes

    args = ["ls-files", "-z", "-s", "-v"]
    if paths is not None:
        args += ["--", ":(glob)**/.gitattributes", *(":(literal)" + p for p in paths)]
    status, out, _ = run_git_bytes(root, *args, check=False)
    if status != 0:
        return None
    settled, attribute_dirs = parse_ls_files(out, needed if paths is None else None)
    for path in paths or ():
        settled.setdefault(path, False)
    return settled, attribute_dirs


def changed_between(root: Path, old: str, new: str) -> set[str] | None:
    """Paths whose entry differs between two commits' trees (both sides of a rename), or None."""
    from resume_kit.infra.gitcmd import run_git_bytes

    status, out, _ = run_git_bytes(
        root, "diff", "--name-only", "-z", "--no-renames", old, new, "--", check=False
    )
    if status != 0:
        return None
    return {raw.decode("utf-8", "surrogateescape") for raw in out.split(b"\0") if raw}


def status_paths(entries: Iterable[dict[str, Any]]) -> set[str]:
    """Every path a parsed ``git status`` names (renames' sources too), no trailing slash."""
    named: set[str] = set()
    for entry in entries:
        named.add(str(entry["path"]).rstrip("/"))
        if entry.get("orig_path"):
            named.add(str(entry["orig_path"]).rstrip("/"))
    return named


def conversion_free(root: Path, common_dir: Path) -> bool:
    """Whether git's configuration and attribute files leave a clean status meaning unchanged
    bytes (see the module docstring); the per-folder ``.gitattributes`` are checked per path."""
    from resume_kit.infra.gitcmd import core_settings

    core = core_settings(root)
    if core.get("core.autocrlf", "false").lower() in ("true", "input", "yes", "on", "1"):
        return False
    if core.get("core.checkstat", "default").lower() != "default":
        return False
    if core.get("core.trustctime", "true").lower() in _FALSE:
        return False
    if core.get("core.ignorestat", "false").lower() not in _FALSE:
        return False
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    candidates = [
        common_dir / "info" / "attributes",
        Path(xdg) / "git" / "attributes",
        Path(os.path.expanduser(core.get("core.attributesfile", "") or "/nonexistent")),
    ]
    if not os.environ.get("GIT_ATTR_NOSYSTEM"):
        candidates += [Path("/etc/gitattributes"), Path("/usr/local/etc/gitattributes")]
    return not any(os.path.lexists(path) for path in candidates)


# --------------------------------------------------------------------------- the decision


@dataclass
class Plan:
    """Decided before git runs: the record, the index it is checked against, what to list."""

    file: Path
    record: Record | None
    index: list[int] | None
    needed: set[str]  # the plain paths of the done units with evidence
    listing: list[str] | None = None  # ls-files of these paths; None with list_all
    list_all: bool = False
    wants_listing: bool = False


def plan(file: Path, git_dir: Path, units: Iterable[Any]) -> Plan:
    """What this snapshot must ask git beyond its status (``units``: the progress file's)."""
    needed: set[str] = set()
    for unit in units:
        if unit.status == "done" and unit.evidence is not None:
            paths = plain_paths(unit.files, unit.artifacts)
            if paths:
                needed.update(paths)
    result = Plan(file=file, record=load_record(file), index=index_key(git_dir), needed=needed)
    if not needed or result.index is None:
        return result
    record = result.record
    if record is None or record.index != result.index:
        result.list_all = result.wants_listing = True
        return result
    unknown = sorted(p for p in needed if p not in record.settled)
    if len(unknown) > LISTED_PATHS_MAX:
        result.list_all = result.wants_listing = True
    elif unknown:
        result.listing = unknown
        result.wants_listing = True
    return result


def deferred_artifacts(plan: Plan, paths: Iterable[str]) -> set[str]:
    """The artifacts to read only once git's status has said whether the record's facts still
    hold: those it has facts for. Also after a change to the index (a commit, a ``git add``),
    as the fingerprints are: the index is then listed while git's status runs, and what it
    says decides (reading them all again instead hashed every artifact anew, since the hash
    cache keeps only the entries a run used: 1,500 files, ~300 ms when out of the page cache)."""
    record = plan.record
    if record is None or not record.artifacts:
        return set()
    return {path for path in paths if path in record.artifacts and path in plan.needed}


@dataclass
class Reuse:
    """Per unit: the recorded fingerprint when it provably still holds; then the new record."""

    root: Path
    plan: Plan
    head: str | None
    dirty: set[str]  # every path git status named
    changed: set[str] | None  # paths changed between the record's HEAD and this one
    listed: tuple[dict[str, bool], set[str]] | None  # a fresh ls-files, when one ran
    safe: bool  # conversion_free
    status_ns: int  # time.time_ns() before git status started
    _settled: dict[str, bool] = field(default_factory=dict)
    _attribute_dirs: set[str] = field(default_factory=set)
    _known: bool = False  # whether _settled covers every needed path
    _attrs_memo: dict[str, bool] = field(default_factory=dict)
    _unnamed_memo: dict[str, bool] = field(default_factory=dict)
    _new_units: dict[str, tuple[str, list[str], list[str]]] = field(default_factory=dict)
    _new_artifacts: dict[str, tuple[int, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        record = self.plan.record
        same_index = record is not None and record.index == self.plan.index
        if same_index and record is not None:
            # only the units' plain paths: being settled then also means being plain
            needed = self.plan.needed
            self._settled = {p: ok for p, ok in record.settled.items() if p in needed}
            self._attribute_dirs = set(record.attribute_dirs)
        if self.listed is not None:
            settled, attribute_dirs = self.listed
            if self.plan.list_all:
                self._settled = {p: settled.get(p, False) for p in self.plan.needed}
                self._attribute_dirs = attribute_dirs
            else:
                self._settled.update(settled)
                self._attribute_dirs |= attribute_dirs
            self._known = True
        else:
            self._known = same_index and not self.plan.wants_listing

    def _usable(self) -> bool:
        return self.safe and self._known and self.head is not None

    def _no_attributes(self, folder: str) -> bool:
        """No .gitattributes in ``folder`` or above it, in the work tree or the index."""
        memo = self._attrs_memo
        if folder in memo:
            return memo[folder]
        parent = folder.rpartition("/")[0] if folder else None
        here = folder not in self._attribute_dirs and not os.path.lexists(
            os.path.join(str(self.root), folder, _ATTRIBUTES)
        )
        ok = here and (parent is None or self._no_attributes(parent))
        memo[folder] = ok
        return ok

    def _clean(self, path: str) -> bool:
        """Settled in the index, named by neither status (nor a folder above) nor the diff."""
        if not self._settled.get(path) or path in self.dirty:
            return False
        if self.changed is not None and path in self.changed:
            return False
        parent = path.rpartition("/")[0]
        return self._unnamed(parent) and self._no_attributes(parent)

    def _unnamed(self, folder: str) -> bool:
        """Neither ``folder`` nor a folder above it is a path git status named (memoised:
        thousands of units' paths share a few folders)."""
        memo = self._unnamed_memo
        ok = memo.get(folder)
        if ok is None:
            ok = not folder or (
                folder not in self.dirty and self._unnamed(folder.rpartition("/")[0])
            )
            memo[folder] = ok
        return ok

    def _trusted_record(self) -> Record | None:
        """The record, when this status can vouch for its entries: usable, and at the same HEAD
        or with the paths changed between the two known."""
        record = self.plan.record
        if record is None or not self._usable():
            return None
        if record.head != self.head and self.changed is None:
            return None
        return record

    def _lstat_untouched(self, path: str) -> os.stat_result | None:
        """``path``'s lstat when its ``mtime`` and ``ctime``, read now, are older than the
        status by :data:`RACY_NS` (the bytes read are those git compared), else None."""
        try:
            info = os.lstat(os.path.join(str(self.root), path))
        except OSError:
            return None
        if max(info.st_mtime_ns, info.st_ctime_ns) >= self.status_ns - RACY_NS:
            return None
        return info

    def reusable(self, unit: Any) -> str | None:
        """The recorded fingerprint of ``unit`` if it still holds, else None (compute it)."""
        record = self._trusted_record()
        if record is None:
            return None
        entry = record.units.get(unit.id)
        if entry is None or entry[1] != unit.files or entry[2] != unit.artifacts:
            return None
        if not entry[1] and not entry[2]:
            return None
        for path in (*entry[1], *entry[2]):
            if not self._clean(path):  # settled: one of the units' plain paths
                return None
        self._new_units[unit.id] = entry
        return entry[0]

    def artifact(self, path: str) -> tuple[int, str] | None:
        """The recorded (size, SHA-256) of the artifact ``path`` if it provably still holds
        (as :meth:`reusable` decides for a unit's paths), else None (read it)."""
        record = self._trusted_record()
        if record is None:
            return None
        facts = record.artifacts.get(path)
        if facts is None or not self._clean(path):
            return None
        self._new_artifacts[path] = facts
        return facts

    def artifact_read(self, path: str, size: int | None, sha256: str | None) -> None:
        """Note an artifact's facts read this run: recorded as :meth:`computed` records a
        fingerprint (a done unit's plain path, settled and clean in this status, a regular
        file of that size untouched from well before the status until now)."""
        if size is None or sha256 is None or not self._usable() or not self._clean(path):
            return
        info = self._lstat_untouched(path)
        if info is None or not stat.S_ISREG(info.st_mode) or info.st_size != size:
            return
        self._new_artifacts[path] = (size, sha256)

    def computed(self, unit: Any, fingerprint: str | None) -> None:
        """Note a fingerprint computed this run: recorded if its files were settled and clean
        in this status and untouched from well before it until after they were hashed."""
        if fingerprint is None or not self._usable():
            return
        paths = plain_paths(unit.files, unit.artifacts)
        if not paths or not all(self._clean(p) for p in paths):
            return
        for path in paths:
            info = self._lstat_untouched(path)
            if info is None or not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                return
        self._new_units[unit.id] = (fingerprint, list(unit.files), list(unit.artifacts))

    def save(self, git_dir: Path) -> None:
        """Write the new record, unless the index changed while this snapshot read it."""
        if not self._usable() or self.head is None or self.plan.index is None:
            return
        if index_key(git_dir) != self.plan.index:
            return
        record = Record(
            head=self.head,
            index=self.plan.index,
            settled={p: ok for p, ok in self._settled.items() if p in self.plan.needed},
            attribute_dirs=self._attribute_dirs,
            units=self._new_units,
            artifacts=self._new_artifacts,
        )
        if record != self.plan.record:  # the common brief: nothing to write
            save_record(self.plan.file, record)
