"""Run a unit's verify command and record the outcome (SPEC 5).

The command runs with ``/bin/sh -c`` from the repo root in its own process group (so a
timeout or Ctrl-C stops everything it started), stdin from /dev/null, and the leaked
``GIT_DIR``/``GIT_INDEX_FILE``/``GIT_WORK_TREE`` removed from its environment. Its merged
output streams into ``.resume-kit/runs/<unit>-<stamp>.log`` (the first 1 MiB and the last
4 MiB are kept, with a marker between them).

Only an exit status of 0 marks a unit done, and that write happens after the command has
exited, under the progress lock, through an atomic replace: a kill at any moment leaves the
file as it was or with the finished result, never a unit done that did not pass.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from resume_kit.core.digest import sha256
from resume_kit.core.escape import ANSI_SEQUENCE
from resume_kit.core.lazy_regex import lazy
from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import IO, TYPE_CHECKING, Any, BinaryIO
from resume_kit.infra.errors import LockError
from resume_kit.infra.paths import STATE_DIR, Layout
from resume_kit.infra.store import FileLock, ensure_gitignore, group_alive
from resume_kit.model.globs import WILDCARD
from resume_kit.model.progress import (
    ID_PATTERN_TEXT,
    Evidence,
    LastFailure,
    Progress,
    Unit,
    now_iso,
)
from resume_kit.progress_file.io import ProgressDoc, transaction

if TYPE_CHECKING:
    from resume_kit.infra.gitcmd import Child

# How a run's outcome is written: progress_io.transaction by default; `resume-kit run` passes its
# BatchStore.transaction (same contract, cheap for many checkpoints, thread-serialised).
Transaction = Callable[[Layout], contextlib.AbstractContextManager[ProgressDoc]]

HEAD_CAP = 1 << 20  # bytes of output kept from the start of a run
TAIL_CAP = 4 << 20  # bytes kept from the end
RECENT_CAP = 256 << 10  # bytes of the tail searched for error lines
KEEP_RUN_LOGS = 200
KILL_GRACE_S = 3.0  # between SIGTERM and SIGKILL of the command's process group
DRAIN_S = 2.0  # how long output is still read after the shell exited (background writers)
TICK_S = 0.1
READ_BURST = 1 << 20
EXCERPT_MAX_LINES = 20
FALLBACK_LINES = 5
SHELL = "/bin/sh"

# --------------------------------------------------------------------------- environment


def command_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a user's verify command: ours, minus leaked repository variables.

    Unlike :func:`resume_kit.infra.gitcmd.clean_git_env` it forces nothing else (no ``LC_ALL``, no
    ``GIT_OPTIONAL_LOCKS``): the user's command sees the user's environment.
    """
    from resume_kit.infra.gitcmd import LEAKED_GIT_VARS

    env = dict(os.environ if base is None else base)
    for name in LEAKED_GIT_VARS:
        env.pop(name, None)
    return env


# --------------------------------------------------------------------------- output capture


class OutputSink:
    """Streams output to the log file: the head as it arrives, the tail when the run ends."""

    def __init__(self, handle: IO[bytes], header: bytes = b""):
        self._handle = handle
        # written with the first output (or at the end): an empty log still means "no output
        # yet" to whoever watches its size (the drill's kill-at-first-output moment)
        self._header = header
        self._head_written = 0
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.dropped = 0
        self.total = 0
        self._recent = bytearray()
        self._partial = b""
        self.last_line = ""
        self._key_seen = False

    def _write_header(self) -> None:
        if self._header:
            self._handle.write(self._header)
            self._header = b""

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self._write_header()
        room = HEAD_CAP - self._head_written
        if room > 0:
            head, data = data[:room], data[room:]
            self._handle.write(head)
            self._handle.flush()
            self._head_written += len(head)
        if data:
            self._tail.append(data)
            self._tail_size += len(data)
            while self._tail_size > TAIL_CAP:
                excess = self._tail_size - TAIL_CAP
                first = self._tail[0]
                if len(first) <= excess:
                    self._tail.popleft()
                    self._tail_size -= len(first)
                    self.dropped += len(first)
                else:
                    self._tail[0] = first[excess:]
                    self._tail_size -= excess
                    self.dropped += excess

    def observe(self, data: bytes) -> None:
        """Track the recent output (for error lines) and the last complete non-empty line."""
        self._recent += data
        if len(self._recent) > 2 * RECENT_CAP:
            del self._recent[: len(self._recent) - RECENT_CAP]
        text = self._partial + data
        lines = text.split(b"\n")
        self._partial = lines.pop()[-4096:]
        # A progress bar redraws one line with \r and no newline: show what it shows now.
        for raw in [self._partial, *reversed(lines)]:
            line = raw.rsplit(b"\r", 1)[-1].decode("utf-8", "replace").strip()
            if line:
                self.last_line = line
                break
        self._key_seen = self._key_seen or b"PRIVATE KEY" in self._recent[-len(data) - 16 :]
        if self._key_seen:
            # a key block's body lines say nothing on their own: the last line is taken from
            # the recent output with the blocks already redacted (shown live while running)
            from resume_kit.infra.redact import split_lines

            shown = [ln.strip() for ln in split_lines(self.recent_text()) if ln.strip()]
            self.last_line = shown[-1].rsplit("\r", 1)[-1] if shown else ""

    def close(self, trailer: str = "") -> None:
        self._write_header()
        if self.dropped:
            self._handle.write(
                f"\n[resume-kit: {self.dropped} bytes of output omitted here]\n".encode()
            )
        for chunk in self._tail:
            self._handle.write(chunk)
        if trailer:
            self._handle.write(f"\n[resume-kit: {trailer}]\n".encode())
        self._handle.flush()

    def recent_text(self) -> str:
        data = bytes(self._recent[-RECENT_CAP:])
        return data.decode("utf-8", "replace")


# --------------------------------------------------------------------------- running


@dataclass
class RunResult:
    exit_code: int | None  # None when the run was stopped (timeout or interrupt)
    timed_out: bool
    interrupted: bool
    duration_s: float
    output_tail: str  # the last RECENT_CAP bytes of output, decoded, not yet redacted
    output_bytes: int

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.interrupted


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _wait_group_gone(proc: subprocess.Popen[bytes], pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        proc.poll()  # reap the shell so it does not linger as a zombie group member
        if not group_alive(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def stop_group(proc: subprocess.Popen[bytes], pgid: int, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the whole process group, then SIGKILL what is left after ``grace_s``."""
    _signal_group(pgid, signal.SIGTERM)
    if _wait_group_gone(proc, pgid, grace_s):
        return
    _signal_group(pgid, signal.SIGKILL)
    _wait_group_gone(proc, pgid, 2.0)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)


def _read_available(fd: int, sink: OutputSink, on_output: Callable[[bytes], None] | None) -> bool:
    """Read what the pipe holds right now (at most READ_BURST bytes, so a flood of output
    never starves the timeout check); False at end of file."""
    taken = 0
    while taken < READ_BURST:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not data:
            return False
        taken += len(data)
        sink.feed(data)
        sink.observe(data)
        if on_output is not None:
            on_output(data)
    return True


def supervised(argv: list[str]) -> list[str]:
    """``argv`` under :mod:`resume_kit.runner.supervisor` (isolated, no site-packages), which stops
    the command's process group when this process dies, even by SIGKILL; as is off POSIX."""
    import sys

    if os.name != "posix" or not sys.executable:
        return argv
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervisor.py")
    return [sys.executable, "-I", "-S", script, str(os.getpid()), *argv]


# The supervisor started ahead of the next verify command (:func:`spare_supervisor`), with the
# folder it was started in.
_SPARE: list[tuple[Path, subprocess.Popen[bytes]]] = []


def _start_supervisor(
    argv: list[str], cwd: Path, env: dict[str, str], stdin: int
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        supervised(argv),
        cwd=cwd,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
    )


@contextlib.contextmanager
def spare_supervisor(cwd: Path) -> Iterator[None]:
    """Start the supervisor of the next verify command in ``cwd`` (with :func:`command_env`)
    now, before the command is known: its Python start-up (~30 ms) overlaps the work that
    picks, checks and claims the unit; :func:`run_command` hands it the command. One not used
    is told there is none when the block ends (and exits on its own if we die first)."""
    if not _SPARE and supervised([]):  # a supervisor runs here (POSIX, a known interpreter)
        with contextlib.suppress(OSError):  # none started: the command starts the usual way
            _SPARE.append((cwd, _start_supervisor(["-"], cwd, command_env(), subprocess.PIPE)))
    try:
        yield
    finally:
        while _SPARE:
            _discard(_SPARE.pop()[1])


def _discard(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    proc.wait()


def _handed_command(argv: list[str], cwd: Path) -> subprocess.Popen[bytes] | None:
    """The spare supervisor, when it was started in ``cwd`` and took ``argv``."""
    if not _SPARE or _SPARE[0][0] != cwd or any("\0" in arg for arg in argv):
        return None
    proc = _SPARE.pop()[1]
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"\0".join(os.fsencode(arg) for arg in argv))
        proc.stdin.close()
    except OSError:  # it died: start the usual way
        _discard(proc)
        return None
    return proc


def run_command(
    command: str,
    *,
    cwd: Path,
    log_path: Path,
    timeout_s: float,
    stop: threading.Event | None = None,
    on_tick: Callable[[float, str], None] | None = None,
    on_output: Callable[[bytes], None] | None = None,
    env: dict[str, str] | None = None,
    on_start: Callable[[int], None] | None = None,
    header: str | None = None,
) -> RunResult:
    """Run ``command`` with ``/bin/sh -c`` in ``cwd`` and stream its output to ``log_path``
    (after the one ``header`` line, when given: see :func:`log_header`).

    ``stop`` being set (by a signal handler) stops the process group; ``on_tick(elapsed,
    last_line)`` is called about every TICK_S for live progress. Leftover background
    processes are stopped once the shell has exited and its output is drained.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with _create_log(log_path) as handle:
        sink = OutputSink(
            handle, b"" if header is None else header.encode("utf-8", "replace") + b"\n"
        )
        argv = [SHELL, "-c", command]
        proc = None if env is not None else _handed_command(argv, cwd)
        if proc is None:
            proc = _start_supervisor(
                argv, cwd, command_env() if env is None else env, subprocess.DEVNULL
            )
        pgid = proc.pid  # start_new_session: the supervisor leads the command's group
        if on_start is not None:
            on_start(pgid)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        selector = selectors.DefaultSelector()
        selector.register(fd, selectors.EVENT_READ)
        eof = False
        exited_at: float | None = None
        timed_out = interrupted = False
        try:
            while True:
                now = time.monotonic()
                if stop is not None and stop.is_set():
                    interrupted = True
                    break
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and (eof or now - exited_at >= DRAIN_S):
                    break
                if exited_at is None and now - started >= timeout_s:
                    timed_out = True
                    break
                wait = (
                    TICK_S
                    if exited_at is not None
                    else min(TICK_S, max(0.0, timeout_s - (now - started)))
                )
                if eof:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=wait)
                elif selector.select(wait):
                    eof = not _read_available(fd, sink, on_output)
                if on_tick is not None:
                    on_tick(time.monotonic() - started, sink.last_line)
        finally:
            selector.close()
            if proc.poll() is None or group_alive(pgid):
                stop_group(proc, pgid)
            if not eof:
                _read_available(fd, sink, on_output)
            proc.stdout.close()
            proc.wait()
            duration = time.monotonic() - started
            trailer = ""
            if timed_out:
                trailer = f"timed out after {timeout_s:g}s; process group stopped"
            elif interrupted:
                trailer = "interrupted; process group stopped"
            sink.close(trailer)
    code = proc.returncode
    if code is not None and code < 0:
        code = 128 - code  # killed by a signal: report it the way a shell does
    return RunResult(
        exit_code=None if (timed_out or interrupted) else code,
        timed_out=timed_out,
        interrupted=interrupted,
        duration_s=round(duration, 3),
        output_tail=sink.recent_text(),
        output_bytes=sink.total,
    )


# --------------------------------------------------------------------------- run logs


def _stamp() -> str:
    now = time.time()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1000) % 1000:03d}Z"


# The names new_log_path gives run logs: pruning removes these and nothing else.
RUN_LOG_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*-[0-9]{8}T[0-9]{9}Z(?:-[0-9]+)?\.log")


def _create_log(path: Path) -> BinaryIO:
    """A new run log, readable by its owner only (commands print secrets), created with
    ``O_EXCL|O_NOFOLLOW``: never an existing file, never through a symlink."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


# A kept log may have come with a clone: its unit and time are printed by `history show`, so
# they must have the shape resume-kit writes (an id, a UTC time), never a terminal escape.
LOG_HEADER = lazy(
    rf"# resume-kit run: unit (?P<unit>{ID_PATTERN_TEXT}), trace (?P<trace>\S+), "
    r"started (?P<at>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z)"
)


def log_header(unit_id: str) -> str:
    """A run log's first line: which unit, which run or agent session (the trace id), when."""
    from resume_kit.facts.history_db import trace_id

    return f"# resume-kit run: unit {unit_id}, trace {trace_id()}, started {now_iso()}"


def logs_of_trace(layout: Layout, trace: str) -> list[tuple[str, str, str]]:
    """(log path relative to the root, unit, started) of every kept run log whose header names
    ``trace``, oldest first. Only regular files named as run logs are read (never through a
    symlink), and only their first line; a log with no header (older ones) names no trace."""
    from resume_kit.infra.safefs import UnsafePath, open_regular

    found: list[tuple[str, str, str]] = []
    try:
        runs = layout.runs  # a symlinked .resume-kit/ or runs/ is refused here
        entries = [e for e in os.scandir(runs) if RUN_LOG_NAME.fullmatch(e.name)]
    except (OSError, UnsafePath):
        return found
    for entry in entries:
        try:
            with open_regular(runs / entry.name) as handle:
                first = handle.read(512).split(b"\n", 1)[0].decode("utf-8", "replace")
        except OSError:
            continue
        match = LOG_HEADER.fullmatch(first)
        if match is not None and match["trace"] == trace:
            found.append((layout.rel(runs / entry.name), match["unit"], match["at"]))
    return sorted(found, key=lambda item: item[2])


def new_log_path(layout: Layout, unit_id: str) -> Path:
    """A fresh ``runs/<unit>-<UTC stamp>.log`` path (never an existing file); the
    ``.gitignore`` that keeps it out of commits is made sure of first."""
    ensure_gitignore(layout)
    base = f"{unit_id}-{_stamp()}"
    path = layout.runs / f"{base}.log"
    n = 1
    while path.exists():
        n += 1
        path = layout.runs / f"{base}-{n}.log"
    return path


def prune_runs(runs_dir: Path, keep: int = KEEP_RUN_LOGS) -> None:
    """Keep the newest ``keep`` run logs (by modification time; names start with unit ids).
    Only regular files named as :func:`new_log_path` names them are counted or removed."""
    entries = []
    try:
        for entry in os.scandir(runs_dir):
            if RUN_LOG_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                entries.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
    except OSError:
        return
    entries.sort()
    for _, name in entries[: max(0, len(entries) - keep)]:
        with contextlib.suppress(OSError):
            os.unlink(runs_dir / name)


# --------------------------------------------------------------------------- failure signature

# The signature of a failure is the sha256 of its exit status ("exit N" or "timeout") and its
# excerpt lines after normalising. Normalising replaces what varies between two runs of the
# same failure with a fixed token: temporary paths (/tmp, /var/tmp, /var/folders) whole;
# date-times, dates and clock times; 0x addresses; UUIDs and long hex ids; durations (0.12s,
# 340ms, 2 minutes); numbers after "pid"/"process"; loopback ports. Kept: file:line locations, messages, values, counts (so a different line or value is
# a different failure). Whitespace runs collapse. Order matters: whole temporary paths go
# before the numbers inside them are touched.
_NORMALISE_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # temporary paths: /tmp/..., /var/tmp/..., macOS /var/folders/..., /private/var/folders/...
    (lazy(r"(?:/private)?/(?:tmp|var/tmp|var/folders)(?:/[^\s'\":,;()\[\]]*)?"), "<tmp>"),
    # ISO-8601 and similar date-times, dates, clock times
    (
        lazy(
            r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
        ),
        "<time>",
    ),
    (lazy(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    # memory addresses and long hex ids (hashes, uuids, object ids)
    (lazy(r"\b0x[0-9a-fA-F]+\b"), "0x<addr>"),
    (
        lazy(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
        "<uuid>",
    ),
    (lazy(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{12,}\b"), "<hex>"),
    # durations: 0.12s, 340ms, 1.5 seconds, 2m3s
    (
        lazy(
            r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h)\b"
            r"(?:\s?\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds?))?"
        ),
        "<duration>",
    ),
    # process ids and ephemeral ports
    (lazy(r"\b(pid|process|PID|Process)([\s=:#]+)\d+"), r"\1\2<pid>"),
    (lazy(r"\b(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]):\d+"), r"\1:<port>"),
)


def normalise_line(line: str) -> str:
    """``line`` with run-to-run noise replaced by fixed tokens; ``file.py:88`` is kept."""
    text = line.strip()
    for pattern, token in _NORMALISE_RULES:
        text = pattern.sub(token, text)
    return " ".join(text.split())


def failure_signature(lines: list[str], exit_code: int | None, timed_out: bool = False) -> str:
    """sha256 (hex) of the exit status and the normalised error lines."""
    status = "timeout" if timed_out else f"exit {exit_code}"
    material = "\n".join([status, *(normalise_line(line) for line in lines)])
    return sha256(material.encode("utf-8", "surrogateescape")).hexdigest()


MAX_LINE_CHARS = 300


def _printable(line: str) -> str:
    """No terminal escapes or control characters (they cannot live in YAML or a terminal)."""
    from resume_kit.core.escape import escape_controls
    from resume_kit.core.inert import clip

    line = ANSI_SEQUENCE.sub("", line)
    if "\r" in line:  # a progress bar redrawn with \r: the visible text is the last part
        line = line.rstrip("\r").rsplit("\r", 1)[-1]
    line = escape_controls(line, keep="\t").rstrip()
    return clip(line, MAX_LINE_CHARS)


def error_excerpt(output_tail: str, command: str | None = None) -> list[str]:
    """The error-relevant lines of the output tail, redacted, at most 20; the last few
    non-empty lines when no error marker is found; for an ``A && B`` command that printed
    nothing, which part failed when that can be known (:mod:`resume_kit.runner.chain`)."""
    from resume_kit.facts.logs import error_lines
    from resume_kit.infra.redact import redact, redact_blocks

    output_tail = redact_blocks(output_tail)  # a key block before any line is picked
    lines = error_lines(output_tail, max_lines=EXCERPT_MAX_LINES)
    if not lines:
        lines = [line for line in output_tail.splitlines() if _printable(line).strip()]
        lines = [redact(line) for line in lines[-FALLBACK_LINES:]]
    if not lines and command:
        from resume_kit.runner.chain import silent_failure

        which = silent_failure(command)
        lines = [redact(which)] if which else []
    return [_printable(line) for line in lines][-EXCERPT_MAX_LINES:]


# --------------------------------------------------------------------------- evidence


# An index larger than this (about 10,000 files) is asked in steps that can stop early.
SPLIT_INDEX_BYTES = 1 << 20
# At most this many of the unit's own paths are asked about alone (any subset answers right).
MAX_OWNED_PATHSPECS = 32


def head_and_dirty(
    root: Path,
    git_dir: Path | None = None,
    common_dir: Path | None = None,
    split_above: int = SPLIT_INDEX_BYTES,
    files: Sequence[str] = (),
    artifacts: Sequence[str] = (),
) -> tuple[str | None, bool]:
    """HEAD's commit and whether tracked files outside ``.resume-kit/`` differ from HEAD (index
    or work tree). A small repository is asked in one git process (``# branch.oid`` of
    ``status --branch``): one spawn less per checkpoint, which is much of what ``resume-kit
    run`` adds per unit. When ``git_dir``'s index is over ``split_above`` bytes, in steps
    (:func:`_dirty_in_steps`) that stop early when the index already differs, or when one of
    the unit's own paths (its ``files`` and ``artifacts``) does.
    ``git_dir`` and ``common_dir``: this work tree's git dir and the shared one."""
    index = _stat(git_dir / "index") if git_dir is not None else None
    if git_dir is not None and index is not None and split_above < index.st_size:
        owned = owned_pathspecs(files, artifacts)
        first = bool(owned) and _changed_since(str(root), files, index.st_mtime_ns)
        stepped = _dirty_in_steps(root, git_dir, common_dir or git_dir, owned, first)
        if stepped is not None:
            return stepped
    from resume_kit.infra.gitcmd import run_git_bytes

    _, out, _ = run_git_bytes(
        root, "status", "--porcelain=v2", "-z", "-uno", "--branch", check=False
    )
    headers: dict[str, Any] = {"oid": None}
    dirty = _changes_outside_state(out, headers)
    return headers["oid"], dirty


def _changes_outside_state(status: bytes, headers: dict[str, Any]) -> bool:
    """Whether ``git status --porcelain=v2 -z`` output lists a tracked change outside
    ``.resume-kit/`` (either side of a rename). The first one settles it: a tree with 100,000
    changed files is not parsed whole (the headers, so HEAD's oid, come before every entry and
    land in ``headers``)."""
    from resume_kit.facts.git import in_state_dir, iter_status_v2

    def outside(path: str | None) -> bool:
        return path is not None and not in_state_dir(path)

    return any(
        outside(entry.get("path")) or outside(entry.get("orig_path"))
        for entry in iter_status_v2(status, headers)
        if entry["kind"] in ("1", "2", "u")
    )


def _stat(path: str | Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def owned_pathspecs(files: Sequence[str], artifacts: Sequence[str]) -> list[str]:
    """A unit's ``files`` that name one path and its ``artifacts`` as git pathspecs, each behind
    its own magic (``:(top,literal)``), so no text from progress.yaml is read as magic, a
    wildcard or an option; text no argument can hold (a NUL, a surrogate no file name has) is
    left out. A glob is left out too: it may match most of the tree, and its diff then costs
    what the whole one does, beside it (``**`` on 100,000 clean files: 191 ms against 110 ms
    without). At most :data:`MAX_OWNED_PATHSPECS`."""
    paths = [*_one_path_each(files), *filter(_argument, artifacts)]
    return [f":(top,literal){path}" for path in paths][:MAX_OWNED_PATHSPECS]


def _one_path_each(files: Sequence[str]) -> list[str]:
    """Those of a unit's ``files`` globs that name one path (no wildcard) and fit in an
    argument: the ones git is asked about alone."""
    return [path for path in files if not WILDCARD.search(path) and _argument(path)]


def _argument(text: str) -> bool:
    try:
        return bool(text) and b"\0" not in os.fsencode(text)
    except UnicodeEncodeError:
        return False


def _changed_since(root: str, files: Sequence[str], since_ns: int) -> bool:
    """Whether one of a unit's ``files`` that name one path, inside the work tree through no
    symlinked folder, had its inode changed at or after ``since_ns`` (``st_ctime``, which no
    program sets back): edited since git last wrote its index, so most likely still changed.
    resume-kit's own git commands never write the index (infra/gitcmd.py); a person's ``git
    status`` or ``git add`` may, and then this says no and the order for the others is kept."""
    from resume_kit.infra.safefs import inside

    for path in _one_path_each(files)[:MAX_OWNED_PATHSPECS]:
        full = inside(root, path)
        try:
            if full is not None and os.lstat(full).st_ctime_ns >= since_ns:
                return True
        except OSError:
            continue
    return False


def _dirty_in_steps(
    root: Path, git_dir: Path, common_dir: Path, owned: Sequence[str] = (), first: bool = False
) -> tuple[str, bool] | None:
    """:func:`head_and_dirty` as HEAD (read from the git dir's files when they are plain,
    else ``rev-parse``), then ``diff --quiet --cached HEAD`` (the index against HEAD's tree:
    ~12-40 ms on 100,000 files), then only when that finds nothing the work tree, all outside
    ``.resume-kit/``; None when git cannot say (no commit yet): then status decides. The work
    tree is asked by ``status -uno``, which checks every tracked file's stat (~100-140 ms on
    100,000 files where measured), so the unit's own paths (``owned`` pathspecs) are asked
    alone by ``diff --numstat`` (~15-17 ms): what an agent most often leaves changed and
    unstaged when it verifies. With ``first`` (one of them was edited since git last wrote its
    index) beside the index's diff and waited for first, else beside the status; a change
    there settles the flag and stops the other. (Always beside the index's diff cost the other
    cases 4-6%, measured 2026-12-07.) Both compare contents where a stat changed: our git never
    rewrites the index (infra/gitcmd.py), and ``diff --quiet`` would then call a file whose
    stat alone changed (touched, or edited and put back) a change."""
    from resume_kit.facts.head_ref import head_commit
    from resume_kit.infra.gitcmd import run_git_bytes, start_git

    head = head_commit(git_dir, common_dir)
    if head is None:
        code, out, _ = run_git_bytes(root, "rev-parse", "--verify", "-q", "HEAD", check=False)
        head = out.decode("ascii", "replace").strip()
        if code != 0 or not head:
            return None
    asked: list[Child] = []
    outside = f":(exclude){STATE_DIR}"

    def start(*args: str) -> Child:
        asked.append(start_git(root, *args))
        return asked[-1]

    def unit_changed(child: Child) -> bool:
        """Whether the unit's paths' ``diff --numstat`` listed a file: its contents or mode
        changed (a file whose stat alone changed is not listed). Any other answer, a pathspec
        git refused included, leaves the flag to the status."""
        out, _ = child.communicate()
        return child.returncode == 0 and bool(out)

    def numstat_of_unit() -> Child:
        return start("diff", "--numstat", "-z", "--", *owned, outside)

    try:
        unit = numstat_of_unit() if first else None
        staged = start("diff", "--quiet", "--cached", head, "--", ".", outside)
        if unit is not None and unit_changed(unit):
            return head, True
        staged.communicate()
        if staged.returncode == 1:
            return head, True
        if staged.returncode != 0:
            return None
        whole = start("status", "--porcelain=v2", "-z", "-uno", "--", ".", outside)
        if owned and not first and unit_changed(numstat_of_unit()):
            return head, True
        out, _ = whole.communicate()
        if whole.returncode != 0:
            return None
        return head, _changes_outside_state(out, {})
    finally:
        for child in asked:
            if child.returncode is None:  # another answered first
                child.kill()
                child.communicate()


@dataclass
class WorkspaceState:
    commit: str | None
    dirty: bool
    fingerprint: str


def workspace_state(layout: Layout, unit: Unit) -> Callable[[], WorkspaceState]:
    """HEAD, the dirty flag and the unit's fingerprint, as a call that waits for them: git
    compares the tree on a thread while this one fingerprints the unit's files, takes the
    progress lock and reads progress.yaml again (~5 ms of a checkpoint on a large tree)."""
    from resume_kit.facts.fingerprint import fingerprint
    from resume_kit.infra.background import Threads

    git = Threads(1, "resume-kit-state").submit(
        head_and_dirty,
        layout.root,
        layout.git_dir,
        layout.git_common_dir,
        SPLIT_INDEX_BYTES,
        unit.files,
        unit.artifacts,
    )  # not waited for here (no ``with``): the thread ends when git does
    printed = fingerprint(layout.root, unit.files, unit.artifacts)

    def state() -> WorkspaceState:
        commit, dirty = git.result()
        return WorkspaceState(commit=commit, dirty=dirty, fingerprint=printed)

    return state


def attempt_state(root: Path, unit: Unit) -> str:
    """What a failed attempt ran against, to tell a retry after a change from a plain re-run:
    a sha256 over HEAD, the changed and untracked paths outside ``.resume-kit/`` with their
    contents, and the unit's fingerprint. Paths are read as the fingerprint reads artifacts
    (inside the work tree only, no symlinked folder followed)."""
    import json

    from resume_kit.core.digest import sha256
    from resume_kit.facts.fingerprint import fingerprint
    from resume_kit.facts.git import in_state_dir, parse_status_v2
    from resume_kit.infra.gitcmd import run_git_bytes

    _, out, _ = run_git_bytes(
        root, "status", "--porcelain=v2", "-z", "-uall", "--branch", check=False
    )
    status = parse_status_v2(out)
    changed = sorted(
        {
            path
            for entry in status["entries"]
            if entry["kind"] in ("1", "2", "u", "?")
            and (path := entry.get("path"))
            and not in_state_dir(path)
        }
    )
    canonical = json.dumps(
        [
            status["oid"],
            fingerprint(root, [], changed),
            fingerprint(root, unit.files, unit.artifacts),
        ],
        separators=(",", ":"),
    )
    return "sha256:" + sha256(canonical.encode()).hexdigest()


def stale_units(root: Path, progress: Progress) -> list[Unit]:
    """Done units whose evidence no longer matches the workspace (or that have none)."""
    from resume_kit.facts.fingerprint import fingerprint

    stale: list[Unit] = []
    for unit in progress.units:
        if unit.status != "done":
            continue
        if unit.evidence is None or unit.evidence.fingerprint != fingerprint(
            root, unit.files, unit.artifacts
        ):
            stale.append(unit)
    return stale


# --------------------------------------------------------------------------- recording


@dataclass
class Outcome:
    unit_id: str
    command: str
    result: RunResult
    log: str  # relative to the repo root
    recorded: bool  # False when the unit vanished or its command changed during the run
    failure: LastFailure | None = None
    evidence: Evidence | None = None


def build_failure(
    result: RunResult,
    previous: LastFailure | None,
    timeout_s: float,
    command: str | None = None,
    state: str | None = None,
) -> LastFailure:
    """The failure record. A repeat of the previous error counts toward UNIT_STUCK only when
    something changed since that attempt (``state``, see :func:`attempt_state`); an attempt
    with nothing changed is a plain re-run, counted in ``reruns`` instead."""
    lines = error_excerpt(result.output_tail, command)
    exit_code = (
        124 if result.timed_out else (result.exit_code if result.exit_code is not None else 1)
    )
    signature = failure_signature(lines, result.exit_code, result.timed_out)
    repeats, reruns = 1, 0
    if previous is not None and previous.signature == signature:
        if state is not None and previous.state == state:
            repeats, reruns = previous.repeats, previous.reruns + 1
        else:
            repeats = previous.repeats + 1
    excerpt = lines
    if result.timed_out:
        excerpt = [*excerpt[-(EXCERPT_MAX_LINES - 1) :], f"timed out after {timeout_s:g}s"]
    return LastFailure(
        at=now_iso(),
        exit_code=exit_code,
        signature=signature,
        repeats=repeats,
        excerpt="\n".join(excerpt),
        state=state,
        reruns=reruns,
    )


def record(
    layout: Layout,
    unit: Unit,
    command: str,
    result: RunResult,
    state: Callable[[], WorkspaceState] | None,
    log: str,
    timeout_s: float,
    *,
    txn: Transaction = transaction,
    start: bool = True,
    attempt: str | None = None,
) -> Outcome:
    """Write the outcome of a finished (not interrupted) run into progress.yaml. A failure
    marks the unit in progress only when ``start`` (someone chose to work on it: verify-next);
    a batch (``run``) leaves a unit still to do as it was, with its ``last_failure``.
    ``state``: the workspace as the command left it (:func:`workspace_state`), waited for
    once the file is read under the lock."""
    outcome = Outcome(unit_id=unit.id, command=command, result=result, log=log, recorded=False)
    with txn(layout) as doc:
        current = doc.progress.unit(unit.id)
        if current is None or current.verify != command:
            return outcome
        if result.passed and state is not None:
            left = state()
            current.status = "done"
            current.evidence = Evidence(
                verified_at=now_iso(),
                commit=left.commit,
                dirty=left.dirty,
                fingerprint=left.fingerprint,
                duration_s=round(result.duration_s, 2),
                log=log,
            )
            current.last_failure = None
            outcome.evidence = current.evidence
        else:
            if start or current.status == "done":
                current.status = "in_progress"
            current.evidence = None
            current.last_failure = build_failure(
                result, current.last_failure, timeout_s, command, state=attempt
            )
            outcome.failure = current.last_failure
        doc.changed_only(unit.id)
        outcome.recorded = True
    return outcome


@contextlib.contextmanager
def claim_unit(layout: Layout, unit_id: str) -> Iterator[FileLock]:
    """Hold ``.resume-kit/running/<id>.lock`` while a unit's command runs, so two processes
    (two `run`s, or `run` and `verify-next`) never run the same unit at once. The lock also
    records the command's process group: a resume-kit killed with SIGKILL leaves its command
    running, and the unit stays claimed until that command is gone."""
    lock = FileLock(layout.running / unit_id, timeout=0)
    try:
        lock.acquire()
    except LockError:
        raise LockError(
            f"unit '{unit_id}' is already being verified by {lock.describe_holder()}",
            hint="wait for it to finish, then run the command again",
        ) from None
    try:
        yield lock
    finally:
        lock.release()


def verify_unit(
    layout: Layout,
    unit: Unit,
    timeout_s: float,
    *,
    stop: threading.Event | None = None,
    on_tick: Callable[[float, str], None] | None = None,
    txn: Transaction = transaction,
    start: bool = True,
) -> Outcome:
    """Run ``unit.verify`` and record the result (``start``: see :func:`record`); an
    interrupted run records nothing."""
    command = unit.verify
    if command is None:
        raise ValueError(f"unit {unit.id} has no verify command")
    with claim_unit(layout, unit.id) as claim:
        log_path = new_log_path(layout, unit.id)
        result = run_command(
            command,
            cwd=layout.root,
            log_path=log_path,
            timeout_s=timeout_s,
            stop=stop,
            on_tick=on_tick,
            on_start=lambda pgid: claim.annotate(pgid=pgid, unit=unit.id),
            header=log_header(unit.id),
        )
    log = layout.rel(log_path)
    # Facts about the workspace are taken as the command left it, before waiting for the lock.
    state = workspace_state(layout, unit) if result.passed and not result.interrupted else None
    prune_runs(layout.runs)
    if result.interrupted:
        return Outcome(unit_id=unit.id, command=command, result=result, log=log, recorded=False)
    attempt = None if result.passed else attempt_state(layout.root, unit)
    outcome = record(
        layout, unit, command, result, state, log, timeout_s, txn=txn, start=start, attempt=attempt
    )
    if outcome.recorded:
        _remember(layout, outcome)
    return outcome


def _remember(layout: Layout, outcome: Outcome) -> None:
    """The outcome into the state library (facts/history_db; fails open)."""
    from resume_kit.facts.history_db import append

    failure, evidence = outcome.failure, outcome.evidence
    text = f"{outcome.command}\n{failure.excerpt or ''}" if failure is not None else outcome.command
    append(
        layout,
        "verify",
        text,
        unit=outcome.unit_id,
        commit=evidence.commit if evidence is not None else head_and_dirty(layout.root)[0],
        signature=failure.signature if failure is not None else None,
        passed=outcome.result.passed,
    )
