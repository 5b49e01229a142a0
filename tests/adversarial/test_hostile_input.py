"""Hostile and broken input, table-driven (issue 6, part 3).

Every case plants one hostile thing (in progress.yaml, config.yaml, the snapshot store, an agent
transcript, a hook's stdin, or the repository itself), runs the real CLI in a subprocess with a
deadline, and checks:

* the exit code the case expects, and a fragment of the one-line ``resume-kit: error:`` message
  (or of the note a hook-mode command prints);
* no traceback, and at most one ``error:`` line (plus its hint);
* no hang (every run has a deadline far above its normal duration);
* nothing was overwritten: every file that existed before (outside ``.git`` and the tool's
  cache) has the same bytes and the same mtime afterwards.

Cases that need root to mount a tiny tmpfs or a read-only bind mount are skipped, with the reason,
where mounting is not allowed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from resume_kit.infra.paths import GITIGNORE_BODY
from tests.conftest import git

STATE = ".resume-kit"
PROGRESS = f"{STATE}/progress.yaml"
CONFIG = f"{STATE}/config.yaml"
SNAPSHOTS = f"{STATE}/snapshots"
DEADLINE_S = 30.0
# tool-owned folders a command may legitimately write into even when its input is hostile
TOOL_WRITES = (f"{STATE}/cache/", f"{STATE}/snapshots/", f"{STATE}/history/", f"{STATE}/runs/")

GOOD_PROGRESS = """\
schema_version: 1
goal: Survive hostile input
units:
  - id: alpha
    title: First unit
    status: in_progress
    verify: 'true'
  - id: beta
    title: Second unit
    verify: 'true'
"""

Setup = Callable[[Path], "Callable[[], None] | None"]


@dataclass(frozen=True)
class Case:
    name: str
    setup: Setup
    argv: tuple[str, ...]
    code: int
    message: str  # fragment of stderr (the one-line error or hook note); "" for none
    stdin: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "."  # relative to the repository; see ``sh`` for stranger cases
    sh: str | None = None  # run the CLI through /bin/sh -c with this prefix instead
    stdout: str = ""  # fragment expected on stdout
    root_mount: bool = False  # needs permission to mount
    writes: str | None = None  # a path (prefix) the command may legitimately create or change


# --------------------------------------------------------------------------- building blocks


def write(rel: str, data: str | bytes) -> Setup:
    def setup(repo: Path) -> None:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.write_bytes(data.encode() if isinstance(data, str) else data)

    return setup


def progress(text: str | bytes) -> Setup:
    return write(PROGRESS, text)


def replace_with(rel: str, make: Callable[[Path], None]) -> Setup:
    def setup(repo: Path) -> None:
        path = repo / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        make(path)

    return setup


def no_state(repo: Path) -> None:
    """No .resume-kit/ yet (for init)."""
    shutil.rmtree(repo / STATE)


def nothing(repo: Path) -> None:
    """The case needs no file planted (its hostility is in stdin, env or cwd)."""


def mkdir(rel: str) -> Setup:
    def setup(repo: Path) -> None:
        (repo / rel).mkdir()

    return setup


def strange_names(repo: Path) -> None:
    for name in (b"caf\xe9.txt", b"a\nb.txt", b"<context>.md"):
        with open(os.path.join(os.fsencode(repo), name), "wb") as handle:
            handle.write(b"x")


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def fifo(rel: str) -> Setup:
    return replace_with(rel, make_fifo)


def directory(rel: str) -> Setup:
    return replace_with(rel, lambda p: p.mkdir())


def symlink(rel: str, target: str) -> Setup:
    return replace_with(rel, lambda p: p.symlink_to(target))


def both(*setups: Setup) -> Setup:
    def setup(repo: Path) -> Callable[[], None] | None:
        cleanups = [c for s in setups if (c := s(repo)) is not None]
        if not cleanups:
            return None

        def cleanup() -> None:
            for c in reversed(cleanups):
                c()

        return cleanup

    return setup


def bomb(levels: int = 9, leaf: str = "lol") -> str:
    """A billion-laughs value defined inline: ``levels`` levels of nine aliases each."""
    value = f"&l0 [{', '.join([leaf] * 9)}]"
    for n in range(1, levels):
        value = f"&l{n} [{value}, " + ", ".join([f"*l{n - 1}"] * 8) + "]"
    return value


def bomb_progress(where: str) -> str:
    """A progress file whose ``where`` (``goal``, ``notes``, ``title``, ``evidence``,
    ``verified_at``, ``description``) holds the bomb."""
    top = {
        "goal": bomb() if where == "goal" else "g",
        "notes": bomb() if where == "notes" else None,
    }
    lines = ["schema_version: 1", f"goal: {top['goal']}"]
    if top["notes"]:
        lines.append(f"notes: {top['notes']}")
    lines += ["units:", "  - id: a", "    title: " + (bomb() if where == "title" else "A")]
    if where == "evidence":
        lines.append(f"    evidence: {bomb()}")
    if where == "verified_at":
        lines += ["    status: done", "    evidence:", f"      verified_at: {bomb()}"]
    if where == "description":
        lines += ["actions:", "  - key: k", f"    description: {bomb()}"]
    return "\n".join(lines) + "\n"


def config_bomb() -> str:
    return f"logs: {bomb(leaf=repr('*.log'))}\n"


def snapshot_file(
    name: str, body: dict[str, object] | None = None, *, raw: bytes | None = None
) -> Setup:
    """A file in the snapshot store; with ``body``, a correctly checksummed snapshot of it."""

    def setup(repo: Path) -> None:
        from resume_kit.facts.snapshot_store import compute_checksum

        path = repo / SNAPSHOTS / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            path.write_bytes(raw)
            return
        data = dict(body or {})
        data["checksum"] = compute_checksum(data)
        path.write_text(json.dumps(data))

    return setup


def claude_session(lines: list[bytes]) -> Setup:
    """A Claude Code session for this work tree: one good record naming the cwd, then ``lines``."""

    def setup(repo: Path) -> None:
        from resume_kit.facts.transcripts.claude_code import config_dir, escaped_names

        folder = config_dir() / "projects" / sorted(escaped_names(repo))[0]
        folder.mkdir(parents=True, exist_ok=True)
        first = json.dumps(
            {"type": "user", "cwd": str(repo), "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
             "message": {"role": "user", "content": "resume the work"}}
        ).encode()  # fmt: skip
        (folder / "session.jsonl").write_bytes(b"\n".join([first, *lines]) + b"\n")

    return setup


def hook_json(**fields: object) -> bytes:
    return json.dumps({"session_id": "s", "hook_event_name": "SessionStart", **fields}).encode()


def outside_file(name: str, make: Callable[[Path], None]) -> Setup:
    """A thing outside the repository (in its parent folder), for a hook's transcript_path."""

    def setup(repo: Path) -> None:
        target = repo.parent / name
        if target.exists() or target.is_symlink():
            target.unlink()
        make(target)

    return setup


def _mount(args: list[str]) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def can_mount() -> str | None:
    """None when this process may mount a tmpfs; else why not (the case is then skipped)."""
    if shutil.which("mount") is None:
        return "no mount(8) on this machine"
    if os.geteuid() != 0:
        return "mounting a tmpfs or a read-only bind mount needs root"
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"resume-kit-mount-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        _mount(["-t", "tmpfs", "-o", "size=16k", "tmpfs", str(probe)])
    except (subprocess.CalledProcessError, OSError) as exc:
        return f"mount not permitted here ({exc})"
    finally:
        subprocess.run(["umount", str(probe)], capture_output=True)
        with contextlib.suppress(OSError):
            probe.rmdir()
    return None


def read_only_state(repo: Path) -> Callable[[], None]:
    """``.resume-kit/`` as a read-only bind mount: even root cannot write there."""
    state = str(repo / STATE)
    _mount(["--bind", state, state])
    _mount(["-o", "remount,ro,bind", state])
    return lambda: umount(state)


def umount(target: str) -> None:
    subprocess.run(["umount", target], check=True, capture_output=True)


def full_disk(repo: Path) -> Callable[[], None]:
    """``.resume-kit/`` on a 64 KiB tmpfs holding its current files, then filled to the brim."""
    state = repo / STATE
    saved = repo.parent / "state-before-mount"
    shutil.copytree(state, saved, symlinks=True)
    _mount(["-t", "tmpfs", "-o", "size=64k", "tmpfs", str(state)])
    for item in saved.iterdir():
        if item.is_dir():
            shutil.copytree(item, state / item.name, symlinks=True)
        else:
            shutil.copy2(item, state / item.name)
    with contextlib.suppress(OSError), open(state / "filler", "wb") as filler:
        while True:
            filler.write(b"\0" * 4096)
            filler.flush()
    # leave the filler: it is part of "the disk is full"; mtimes were copied by copy2
    return lambda: umount(str(state))


# --------------------------------------------------------------------------- the table

PY_TAG = "!!python/object/apply:os.system"
ODD_RECORDS: list[object] = [
    {"type": "assistant", "message": 12},
    {"type": "assistant", "message": {"content": {"a": 1}}},
    {"type": "user", "todos": "all done",
     "message": {"content": [{"type": "tool_result", "is_error": "yes", "content": 5}]}},
    {"type": "assistant", "usage": {"input_tokens": "many"},
     "message": {"content": [{"type": "tool_use", "name": "TodoWrite",
                              "input": {"todos": [1, None, {"content": 3}]}}]}},
    [], "text", None,
]  # fmt: skip
CASES: list[Case] = [
    # ---- progress.yaml
    Case("yaml python tag in goal",
         progress(f"schema_version: 1\ngoal: {PY_TAG} ['touch pwned']\nunits: []\n"),
         ("status",), 2, "goal must be a string"),
    Case("yaml python tag as a verify command",
         progress("schema_version: 1\ngoal: g\nunits:\n  - id: a\n    verify: !!python/name:os.system\n"),
         ("verify-next",), 2, "unit 'a': verify is"),
    Case("yaml python tag at the top level",
         progress(f"{PY_TAG} ['touch pwned']\n"),
         ("add", "x", "--verify", "true"), 2, "top level must be a mapping"),
    Case("alias bomb in a unit title", progress(bomb_progress("title")),
         ("status",), 2, "title must be a string"),
    Case("alias bomb in evidence", progress(bomb_progress("evidence")),
         ("add", "x", "--verify", "true"), 2, "evidence must be a mapping"),
    Case("alias bomb in an evidence value", progress(bomb_progress("verified_at")),
         ("brief",), 2, "evidence"),
    Case("alias bomb as the goal", progress(bomb_progress("goal")),
         ("status",), 2, "goal must be a string"),
    Case("alias bomb as the notes", progress(bomb_progress("notes")),
         ("verify-next",), 2, "notes must be a string"),
    Case("alias bomb in an action", progress(bomb_progress("description")),
         ("action", "list"), 2, "description"),
    Case("file larger than 16 MiB",
         progress("schema_version: 1\ngoal: g\nunits: []\nnotes: " + "x" * (17 * 1024 * 1024) + "\n"),
         ("status",), 2, "larger than the 16 MiB"),
    Case("units is a number", progress("schema_version: 1\ngoal: g\nunits: 12\n"),
         ("start", "alpha"), 2, "units must be a list"),
    Case("goal is a list", progress("schema_version: 1\ngoal: [1, 2]\nunits: []\n"),
         ("status",), 2, "goal must be a string"),
    Case("schema_version is a string", progress("schema_version: '1'\ngoal: g\nunits: []\n"),
         ("status",), 2, "schema_version must be an integer"),
    Case("schema_version from the future", progress("schema_version: 99\ngoal: g\nunits: []\n"),
         ("add", "x", "--verify", "true"), 2, "newer than this resume-kit"),
    Case("verify is a bare boolean",
         progress("schema_version: 1\ngoal: g\nunits:\n  - id: a\n    verify: true\n"),
         ("verify-next",), 2, "quote it"),
    Case("status is not a status",
         progress("schema_version: 1\ngoal: g\nunits:\n  - id: a\n    status: finished\n"),
         ("status",), 2, "status must be one of"),
    Case("duplicate unit ids",
         progress("schema_version: 1\ngoal: g\nunits:\n  - id: a\n  - id: a\n"),
         ("add", "x", "--verify", "true"), 2, "duplicate id"),
    Case("dependency cycle",
         progress("schema_version: 1\ngoal: g\nunits:\n  - id: a\n    after: [b]\n  - id: b\n    after: [a]\n"),
         ("verify-next",), 2, "dependency cycle"),
    Case("unknown top-level key",
         progress("schema_version: 1\ngoal: g\nunits: []\ncolour: red\n"),
         ("status",), 2, "unknown key 'colour'"),
    Case("duplicate mapping key", progress("schema_version: 1\ngoal: g\ngoal: h\nunits: []\n"),
         ("status",), 2, "not valid YAML"),
    Case("a reused anchor (ruamel warns, quoting the text)",
         progress("schema_version: 2\ngoal: &a g\nunits: &a []\nnote: [\n"),
         ("status",), 2, "not valid YAML"),
    Case("nesting 5000 deep", progress("schema_version: 1\ngoal: g\nunits: " + "[" * 5000 + "]" * 5000 + "\n"),
         ("status",), 2, "nested more than 64 levels deep"),
    Case("nesting 200 deep", progress("schema_version: 1\ngoal: g\nunits: " + "[" * 200 + "]" * 200 + "\n"),
         ("add", "x", "--verify", "true"), 2, "nested more than 64 levels deep"),
    Case("top level is a list", progress("- schema_version: 1\n- goal: g\n"),
         ("status",), 2, "top level must be a mapping"),
    Case("binary data", progress(b"schema_version: 1\n\x00\x01\x02\xff\xfe" * 50),
         ("status",), 2, "progress.yaml"),
    Case("not UTF-8", progress(b"schema_version: 1\ngoal: caf\xe9\nunits: []\n"),
         ("add", "x", "--verify", "true"), 2, "not UTF-8 text"),
    Case("empty file", progress(""), ("status",), 2, "the file is empty"),
    Case("only a comment", progress("# nothing here\n"), ("verify-next",), 2, "the file is empty"),
    Case("progress.yaml is a directory", directory(PROGRESS),
         ("status",), 2, "is a directory"),
    Case("progress.yaml is a FIFO", fifo(PROGRESS),
         ("status",), 2, "not a regular file"),
    Case("progress.yaml is a FIFO (a writer)", fifo(PROGRESS),
         ("add", "x", "--verify", "true"), 2, "not a regular file"),
    Case("progress.yaml is a symlink loop", symlink(PROGRESS, "progress.yaml"),
         ("status",), 2, "progress.yaml"),
    Case("progress.yaml points at /dev/zero", symlink(PROGRESS, "/dev/zero"),
         ("status",), 2, "progress.yaml is a symlink"),
    Case("a key with a newline in it",
         progress('schema_version: 1\ngoal: g\nunits:\n  - id: a\n    after: ["x\\n## Next"]\n"a\\nb": 1\n'),
         ("status",), 2, "unknown key 'a\\nb'"),
    Case("progress.yaml is missing", replace_with(PROGRESS, nothing),
         ("verify-next",), 2, "no progress file"),
    # ---- config.yaml
    Case("config python tag", write(CONFIG, f"logs: {PY_TAG} ['touch pwned']\n"),
         ("status",), 2, "config.yaml"),
    Case("config unknown key", write(CONFIG, "colour: red\n"),
         ("brief",), 2, "unknown key 'colour'"),
    Case("config section of the wrong type", write(CONFIG, "brief: 12\n"),
         ("brief",), 2, "brief must be a mapping"),
    Case("config negative number", write(CONFIG, "keep_snapshots: -1\n"),
         ("snapshot",), 2, "keep_snapshots must be a positive number"),
    Case("config boolean as a number", write(CONFIG, "verify:\n  timeout_s: true\n"),
         ("verify-next",), 2, "timeout_s must be a positive number"),
    Case("config alias bomb", write(CONFIG, config_bomb()),
         ("status",), 2, "logs must be a list of globs"),
    Case("config not UTF-8", write(CONFIG, b"logs: ['caf\xe9.log']\n"),
         ("status",), 2, "config.yaml"),
    Case("config is a directory", directory(CONFIG), ("status",), 2, "config.yaml"),
    Case("config is a FIFO", fifo(CONFIG), ("status",), 2, "config.yaml"),
    Case("config is a symlink loop", symlink(CONFIG, "config.yaml"), ("status",), 2, "config.yaml"),
    Case("config larger than 1 MiB", write(CONFIG, "logs: ['" + "a" * (2 << 20) + "']\n"),
         ("status",), 2, "config.yaml"),
    Case("config empty (defaults)", write(CONFIG, ""), ("status",), 0, ""),
    Case("config in hook mode", write(CONFIG, "colour: red\n"),
         ("brief", "--format", "claude-hook"), 0, "unknown key 'colour'",
         stdin=b"", stdout="hookSpecificOutput"),
    # ---- the snapshot store
    Case("truncated snapshot", snapshot_file("20990101T000000000Z-aaaaaa.json", raw=b'{"schema_version": 1, "id": '),
         ("snapshot",), 0, "not valid JSON"),
    Case("snapshot checksum mismatch",
         snapshot_file("20990101T000000000Z-aaaaaa.json", raw=b'{"schema_version": 1, "checksum": "sha256:00"}'),
         ("snapshot",), 0, "checksum does not match"),
    Case("snapshot not UTF-8", snapshot_file("20990101T000000000Z-aaaaaa.json", raw=b'{"a": "\xff"}'),
         ("snapshot",), 0, "not UTF-8"),
    Case("snapshot nested 100000 deep",
         snapshot_file("20990101T000000000Z-aaaaaa.json", raw=b"[" * 100000 + b"]" * 100000),
         ("snapshot",), 0, "not valid JSON"),
    Case("snapshot from the future",
         snapshot_file("20990101T000000000Z-aaaaaa.json", {"schema_version": 99}),
         ("snapshot",), 0, "newer than this resume-kit"),
    Case("checksummed snapshot with wrong types",
         snapshot_file("20990101T000000000Z-aaaaaa.json",
                       {"schema_version": 1, "id": 5, "repo": "x", "changes": 12, "logs": {"a": 1},
                        "transcript": [], "recent_commits": "no", "units": 3, "progress": 1}),
         ("snapshot",), 0, ""),
    Case("checksummed snapshot with wrong types (status)",
         snapshot_file("20990101T000000000Z-aaaaaa.json",
                       {"schema_version": 1, "id": None, "repo": [], "changes": {"staged": 1},
                        "units": {"alpha": 7}}),
         ("status",), 0, ""),
    Case("snapshot is a directory", directory(f"{SNAPSHOTS}/20990101T000000000Z-aaaaaa.json"),
         ("snapshot",), 0, "skipped snapshot"),
    Case("snapshot is a FIFO", fifo(f"{SNAPSHOTS}/20990101T000000000Z-aaaaaa.json"),
         ("snapshot",), 0, "skipped snapshot"),
    Case("snapshot is a symlink to /dev/zero", symlink(f"{SNAPSHOTS}/20990101T000000000Z-aaaaaa.json", "/dev/zero"),
         ("snapshot",), 0, "skipped snapshot"),
    Case("snapshots folder is a file", write(SNAPSHOTS, "not a folder\n"),
         ("snapshot",), 2, "snapshots"),
    Case("snapshots folder is a file (hook)", write(SNAPSHOTS, "not a folder\n"),
         ("snapshot", "--trigger", "post-commit"), 0, "snapshot skipped"),
    # ---- agent transcripts
    Case("transcript with binary lines", claude_session([b"\x00\xff\xfe" * 300, b"\x89PNG\r\n\x1a\n"]),
         ("snapshot", "--json"), 0, "", stdout='"agent": "claude-code"'),
    Case("transcript with wrong types",
         claude_session([json.dumps(record).encode() for record in ODD_RECORDS]),
         ("snapshot", "--json"), 0, "", stdout='"agent": "claude-code"'),
    Case("transcript line of 8 MiB", claude_session([b'{"type": "user", "message": {"content": "' + b"a" * (8 << 20) + b'"}}']),
         ("brief",), 0, "", stdout="## Next"),
    Case("transcript nested 100000 deep", claude_session([b"[" * 100000 + b"]" * 100000]),
         ("snapshot", "--json"), 0, "", stdout='"agent": "claude-code"'),
    Case("hook transcript is a FIFO", outside_file("t.jsonl", make_fifo),
         ("brief", "--format", "claude-hook"), 0, "", stdin=b"@TRANSCRIPT@", stdout="hookSpecificOutput"),
    Case("hook transcript is /dev/zero", outside_file("t.jsonl", lambda p: p.symlink_to("/dev/zero")),
         ("brief", "--format", "claude-hook"), 0, "", stdin=b"@TRANSCRIPT@", stdout="hookSpecificOutput"),
    Case("hook transcript is a directory", outside_file("t.jsonl", lambda p: p.mkdir()),
         ("snapshot", "--trigger", "pre-compact"), 0, "", stdin=b"@TRANSCRIPT@"),
    Case("hook transcript is a symlink loop", outside_file("t.jsonl", lambda p: p.symlink_to(p)),
         ("brief", "--format", "claude-hook"), 0, "", stdin=b"@TRANSCRIPT@", stdout="hookSpecificOutput"),
    # ---- hook stdin
    Case("hook stdin garbage", nothing, ("brief", "--format", "claude-hook"), 0, "",
         stdin=b"\x00\xff not json {{{", stdout="hookSpecificOutput"),
    Case("hook stdin 3 MiB", nothing, ("brief", "--format", "claude-hook"), 0, "",
         stdin=b'{"cwd": "' + b"a" * (3 << 20) + b'"}', stdout="hookSpecificOutput"),
    Case("hook stdin is an array", nothing, ("snapshot", "--trigger", "pre-compact"), 0, "",
         stdin=b"[1, 2, 3]"),
    Case("hook stdin nested 100000 deep", nothing, ("brief", "--format", "claude-hook"), 0, "",
         stdin=b'{"a": ' + b"[" * 100000 + b"]" * 100000 + b"}", stdout="hookSpecificOutput"),
    Case("hook stdin cwd does not exist", nothing, ("brief", "--format", "claude-hook"), 0, "",
         stdin=hook_json(cwd="/nonexistent/place"), stdout="hookSpecificOutput"),
    Case("hook stdin cwd outside any repository", nothing,
         ("brief", "--format", "claude-hook"), 0, "no brief", stdin=hook_json(cwd="/")),
    Case("hook stdin with NUL and wrong types", nothing,
         ("brief", "--format", "claude-hook"), 0, "",
         stdin=json.dumps({"cwd": "a\u0000b", "transcript_path": 12, "source": ["x"]}).encode(),
         stdout="hookSpecificOutput"),
    Case("hook mode with a broken progress file", progress("schema_version: 1\ngoal: [1]\n"),
         ("brief", "--format", "claude-hook"), 0, "goal must be a string", stdin=b"",
         stdout="could not build the resume brief"),
    # ---- the repository itself
    Case("not a git repository", nothing, ("status",), 2, "not inside a git work tree",
         sh="cd / &&"),
    Case("deleted working directory", mkdir("gone"),
         ("status",), 2, "no longer exists", sh="cd gone && rmdir ../gone &&"),
    Case("deleted working directory (hook)", mkdir("gone"),
         ("snapshot", "--trigger", "post-commit"), 0, "snapshot skipped",
         sh="cd gone && rmdir ../gone &&"),
    Case(".git file pointing nowhere", nothing, ("status",), 2, "not inside a git work tree",
         sh="mkdir -p ../w && printf 'gitdir: /nonexistent\\n' > ../w/.git && cd ../w &&"),
    Case(".resume-kit is a file", both(write(STATE, "x\n")),
         ("status",), 2, ".resume-kit"),
    Case("git not on PATH", nothing, ("status",), 2, "git is not installed",
         env={"PATH": "/nonexistent"}),
    Case("unborn repository", nothing, ("status",), 0, "",
         sh="rm -rf ../unborn && mkdir ../unborn && cd ../unborn && git init -q && mkdir .resume-kit && cp ../repo/.resume-kit/progress.yaml .resume-kit/ &&"),
    Case("file names that are not UTF-8, with newlines and tags",
         strange_names,
         ("snapshot", "--json"), 0, "", stdout="caf\\\\xe9.txt"),
    Case("symlink loops in the work tree (logs/**)",
         both(symlink("logs/a", "."), symlink("logs/b", "."), symlink("logs/c", ".."),
              write("logs/run.log", "error: boom\n")),
         ("snapshot", "--json"), 0, "", stdout="logs/run.log"),
    Case("pytest's cache is a FIFO", fifo(".pytest_cache/v/cache/lastfailed"),
         ("snapshot", "--json"), 0, "", stdout='"pytest_last_failed": []'),
    Case("a log that points at /dev/zero", symlink("zero.log", "/dev/zero"),
         ("snapshot", "--json"), 0, "", stdout='"logs": []'),
    Case("artifacts and unit files that are FIFOs or devices",
         both(progress("schema_version: 1\ngoal: g\nunits:\n  - id: a\n    verify: 'true'\n"
                       "    files: [pipes/*]\n    artifacts: [pipes/a, pipes/zero]\n"),
              fifo("pipes/a"), symlink("pipes/zero", "/dev/zero")),
         ("verify-next",), 0, "", env={"RESUME_KIT_TRUST": "all"}, stdout="passed: a",
         writes=PROGRESS),
    Case("a lock file that is a directory", directory(f"{PROGRESS}.lock"),
         ("add", "x", "--verify", "true"), 2, "is a directory, not a lock resume-kit made",
         env={"RESUME_KIT_LOCK_TIMEOUT": "0.2"}),
    Case("a lock file with garbage in it", write(f"{PROGRESS}.lock", b"\xff\x00garbage"),
         ("start", "beta"), 2, "locked by an unknown process", env={"RESUME_KIT_LOCK_TIMEOUT": "0.2"}),
    Case("hostile brief template", write(f"{STATE}/templates/brief.md.j2", "{{ ''.__class__.__mro__[1].__subclasses__() }}"),
         ("brief",), 2, "template", env={"RESUME_KIT_TRUST": "all"}),
    Case("broken brief template", write(f"{STATE}/templates/brief.md.j2", "{% if %}"),
         ("brief",), 2, "template", env={"RESUME_KIT_TRUST": "all"}),
    Case("unapproved brief template", write(f"{STATE}/templates/brief.md.j2", "{% if %}"),
         ("brief",), 0, "not approved on this machine", stdout="# Resume brief"),
    Case("import of a binary file", both(no_state, write("tasks.md", b"\x00\xff\xfe- [ ] x\n")),
         ("init", "--import", "tasks.md"), 2, "not UTF-8"),
    Case("import of a FIFO", both(no_state, fifo("tasks.md")),
         ("init", "--import", "tasks.md"), 2, "not a regular file"),
    Case("import of /dev/zero", both(no_state, symlink("tasks.md", "/dev/zero")),
         ("init", "--import", "tasks.md"), 2, "not a regular file"),
    Case("import of deeply nested JSON", both(no_state, write("tasks.json", "[" * 100000 + "]" * 100000)),
         ("init", "--import", "tasks.json"), 2, "nested too deeply"),
    Case("import of tasks.json with wrong types",
         both(no_state, write("tasks.json", '{"tasks": [1, "x", {"id": [], "title": 5, "subtasks": 7, "dependencies": {"a": 1}}, {"id": 2, "title": "ok"}]}')),
         ("init", "--goal", "g", "--import", "tasks.json"), 0, "with 2 units", writes=f"{STATE}/"),
    Case("read-only .resume-kit (writer)", read_only_state,
         ("add", "x", "--verify", "true"), 2, "Read-only file system", root_mount=True),
    Case("read-only .resume-kit (snapshot)", read_only_state,
         ("snapshot",), 2, "Read-only file system", root_mount=True),
    Case("read-only .resume-kit (hook snapshot)", read_only_state,
         ("snapshot", "--trigger", "post-commit"), 0, "snapshot skipped", root_mount=True),
    Case("read-only .resume-kit (brief still prints)", read_only_state,
         ("brief", "--format", "claude-hook"), 0, "", stdin=b"", stdout="hookSpecificOutput",
         root_mount=True),
    Case("full disk (writer)", full_disk, ("add", "x", "--verify", "true"), 2,
         "No space left on device", root_mount=True),
    Case("full disk (verify-next)", full_disk, ("verify-next",), 2,
         "No space left on device", root_mount=True, env={"RESUME_KIT_TRUST": "all"}),
    Case("full disk (hook snapshot)", full_disk, ("snapshot", "--trigger", "post-commit"), 0,
         "snapshot skipped", root_mount=True),
]  # fmt: skip


# --------------------------------------------------------------------------- the runner


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with a valid progress file, built once and copied for each case."""
    root = tmp_path_factory.mktemp("hostile-template") / "repo"
    root.mkdir()
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    for args in (["init", "-q", "-b", "main"], ["config", "commit.gpgsign", "false"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    (root / "README.md").write_text("hello\n")
    (root / STATE).mkdir()
    (root / PROGRESS).write_text(GOOD_PROGRESS)
    (root / f"{STATE}/.gitignore").write_text(GITIGNORE_BODY)  # the tool's own (what init writes)
    subprocess.run(["git", "add", "."], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=root, check=True, env=env)
    return root


@dataclass(frozen=True)
class FileState:
    kind: str
    mtime_ns: int
    content: bytes | None


def file_states(root: Path) -> dict[str, FileState]:
    """Every thing under ``root`` except .git and tool caches: kind, mtime and (files) bytes."""
    states: dict[str, FileState] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder == ".git" or rel_folder.startswith(".git/"):
            dirs[:] = []
            continue
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            rel = os.path.normpath(os.path.join(rel_folder, name))
            if rel.startswith(f"{STATE}/cache/"):
                continue
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    states[rel] = FileState("file", info.st_mtime_ns, handle.read())
            elif stat.S_ISLNK(info.st_mode):
                states[rel] = FileState("link", info.st_mtime_ns, os.fsencode(os.readlink(path)))
            else:
                states[rel] = FileState(stat.filemode(info.st_mode)[0], info.st_mtime_ns, None)
    return states


def changed(
    before: dict[str, FileState], after: dict[str, FileState], writes: str | None = None
) -> list[str]:
    problems = []
    for rel, state in before.items():
        now = after.get(rel)
        if now is None:
            if not rel.startswith(TOOL_WRITES) or rel.startswith(SNAPSHOTS + "/2099"):
                problems.append(f"{rel}: removed")
        elif now != state and not (writes and rel.startswith(writes)):
            what = "bytes" if now.content != state.content else "mtime"
            problems.append(f"{rel}: {what} changed")
    for rel in after.keys() - before.keys():
        if not rel.startswith(TOOL_WRITES) and not (writes and rel.startswith(writes)):
            problems.append(f"{rel}: created")
    return problems


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float


def run_case(case: Case, repo: Path) -> Outcome:
    stdin = case.stdin
    if stdin is not None and b"@TRANSCRIPT@" in stdin:
        stdin = hook_json(cwd=str(repo), transcript_path=str(repo.parent / "t.jsonl"))
    env = {**os.environ, **case.env}
    python = [sys.executable, "-m", "resume_kit", *case.argv]
    argv: list[str] = python
    if case.sh is not None:
        quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in python)
        argv = ["/bin/sh", "-c", f"{case.sh} exec {quoted}"]
    elif "PATH" in case.env:
        argv = python
    started = time.monotonic()
    proc = subprocess.run(
        argv,
        cwd=repo / case.cwd,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=DEADLINE_S,
    )
    return Outcome(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
        time.monotonic() - started,
    )


_MOUNT_PROBLEM: list[str | None] = []


def mount_problem() -> str | None:
    if not _MOUNT_PROBLEM:
        _MOUNT_PROBLEM.append(can_mount())
    return _MOUNT_PROBLEM[0]


@contextlib.contextmanager
def planted(case: Case, repo: Path) -> Iterator[None]:
    cleanup = case.setup(repo)
    try:
        yield
    finally:
        if cleanup is not None:
            cleanup()


def test_the_table_has_at_least_forty_cases() -> None:
    assert len(CASES) >= 40
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(case: Case, template_repo: Path, tmp_path: Path) -> None:
    if case.root_mount and (why := mount_problem()):
        pytest.skip(why)
    repo = tmp_path / "repo"
    shutil.copytree(template_repo, repo, symlinks=True)
    with planted(case, repo):
        before = file_states(repo)
        outcome = run_case(case, repo)
        after = file_states(repo)
    report = f"exit {outcome.code} in {outcome.seconds:.1f}s\nstdout: {outcome.stdout[-2000:]}\nstderr: {outcome.stderr[-2000:]}"
    assert "Traceback" not in outcome.stderr + outcome.stdout, report
    assert "Warning: " not in outcome.stderr, report  # a library's warning, quoting input raw
    assert outcome.code == case.code, report
    errors = [line for line in outcome.stderr.splitlines() if line.startswith("resume-kit: error:")]
    if case.code == 2:
        assert len(errors) == 1, report
        assert "this is a bug" not in outcome.stderr, report
        assert case.message in errors[0], report
    else:
        assert not errors, report
        assert case.message in outcome.stderr, report
    assert case.stdout in outcome.stdout, report
    if case.stdout == "hookSpecificOutput":
        assert json.loads(outcome.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert not (repo / "pwned").exists(), "a YAML tag ran code"
    assert not (repo.parent / "pwned").exists(), "a YAML tag ran code"
    assert changed(before, after, case.writes) == [], report


def test_a_silent_hook_stdin_never_hangs(repo: Path) -> None:
    """An agent that opens the hook's stdin and never writes or closes it: about a second."""
    (repo / STATE).mkdir()
    (repo / PROGRESS).write_text(GOOD_PROGRESS)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "resume_kit", "brief", "--format", "claude-hook"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(timeout=DEADLINE_S) if False else _read_all(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
    assert proc.returncode == 0, err
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert time.monotonic() - started < 15


def _read_all(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """stdout and stderr until the process exits, with stdin left open."""
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    proc.wait(timeout=DEADLINE_S)
    return out, err


def test_a_yaml_tag_never_runs_code(repo: Path) -> None:
    (repo / STATE).mkdir()
    marker = repo / "pwned"
    (repo / PROGRESS).write_text(
        f"schema_version: 1\ngoal: g\nunits:\n  - id: a\n    title: {PY_TAG} ['touch {marker}']\n"
    )
    (repo / CONFIG).write_text(f"logs: {PY_TAG} ['touch {marker}']\n")
    for argv in (["status"], ["brief"], ["snapshot"], ["verify-next"]):
        subprocess.run([sys.executable, "-m", "resume_kit", *argv], cwd=repo, capture_output=True,
                       timeout=DEADLINE_S, stdin=subprocess.DEVNULL)  # fmt: skip
    assert not marker.exists()
    git(repo, "status")
