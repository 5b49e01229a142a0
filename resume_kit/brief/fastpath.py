"""The unchanged brief, served: when nothing ``resume-kit brief`` read has changed since it last
ran in this folder, print what it printed then, from a process that imports only the standard
library (issue 18; docs/brief.md, "The stored brief").

After a full Markdown brief, :func:`begin`/:meth:`Recording.store` keep a *receipt* in the user's
cache (never in the repository): the exact stdout and stderr text and exit code, and what they
depended on - a key (resume-kit and Python version, the options, the folder, the environment
variables that can change a brief), the ``git status`` argv the snapshot ran and a hash of its
output, how long the brief's relative ages and lease expiries still read the same, and the stat
signature of every path the build opened, listed or looked at (recorded by
:mod:`resume_kit.infra.deps`), the git files git itself reads, and every path git status listed.

:func:`serve` (first thing in ``cli.app.main`` for ``brief``) checks the receipt and serves it
only when every part matches; any doubt, difference or error is a miss and the full build runs.
The hook formats (``claude-hook``, ``copilot-hook``) are served too: the payload is read and the
gating decided as the full path does (and handed to it on a miss), the body is wrapped in the
same envelope, a new session is served when the transcript facts would be the same
(:func:`_hook_matches`) and the activity log judges the same with the meter event added.
Not served: ``--format json`` (it carries the snapshot id and the second), ``-o``,
``--summarize``, a session summary, or an approved repository template (its context holds the
second too).
"""

from __future__ import annotations

import os
import sys
import time

from resume_kit.infra.deps import Signature, hand_over_status, signature
from resume_kit.infra.gitcmd import find_program

TYPE_CHECKING = False  # typing costs milliseconds on the served path; mypy reads the guard
if TYPE_CHECKING:
    from collections.abc import Callable

    from resume_kit.core.typing_light import Any
    from resume_kit.infra.deps import Recorder
    from resume_kit.infra.gitcmd import Child

RECEIPT_VERSION = 2
# A receipt file: this line, the SHA-256 of the rest, a newline, then the receipt as marshal
# data (plain dicts, lists, strings and numbers; json would import re on the served path).
RECEIPT_MAGIC = b"resume-kit served brief 2\n"
HOOK_FORMATS = ("claude-hook", "copilot-hook")
# facts.transcripts.FRESH_SOURCES (a test keeps them equal; that package is heavy to import):
# a new session's own transcript is not read, the newest other session's is
NEW_SESSION_SOURCES = ("startup", "clear", "fork")
NO_FASTPATH_ENV = "RESUME_KIT_NO_FASTPATH"  # set: never serve and never store a receipt
DEBUG_ENV = "RESUME_KIT_DEBUG_FASTPATH"  # set: one line on stderr, served or why not
MAX_RECEIPT_BYTES = 8 * 1024 * 1024
MAX_LISTED_PATHS = 20_000  # a git status listing more: no receipt (stat-ing them all costs)
RACY_NS = 100_000_000  # a dependency touched this close to the build's start: no receipt
SAFETY_S = 2  # seconds taken off the ages' steadiness and the lease expiries
# Environment variables that can change what a brief says or how it is printed.
ENV_PREFIXES = ("RESUME_KIT_", "GIT_", "XDG_", "CLAUDE", "CODEX", "COPILOT", "GEMINI",
                "ANTHROPIC", "LC_", "PYTHON")  # fmt: skip
ENV_NAMES = ("HOME", "USER", "LOGNAME", "PATH", "LANG", "TZ", "NO_COLOR", "FORCE_COLOR", "TERM",
             "COLUMNS")  # fmt: skip
ENV_NOT_KEYED = ("RESUME_KIT_NOW", NO_FASTPATH_ENV, DEBUG_ENV, "RESUME_KIT_DEBUG")


def disabled() -> bool:
    return os.environ.get(NO_FASTPATH_ENV, "") not in ("", "0")


# --------------------------------------------------------------------------- the key


def parse_request(args: list[str]) -> dict[str, Any] | None:
    """The options of a ``brief`` argv this path serves, as the CLI's own stdlib parser reads
    them (:mod:`resume_kit.cli.fast_start`); None for anything else (another command,
    ``--help``, json, ``-o``, ``--summarize``, what that parser leaves to typer)."""
    from resume_kit.cli.fast_start import parse

    parsed = parse(args)
    if parsed is None or parsed[0] != "brief":
        return None
    values = parsed[1]
    fmt, summarize = values["fmt"], values["summarize"]
    if values["output"] is not None or summarize is True:
        return None
    if fmt in HOOK_FORMATS:  # a hook's brief is never summarised: the option changes nothing
        return {"max_tokens": values["max_tokens"], "format": fmt}
    if fmt != "markdown":
        return None
    return {"max_tokens": values["max_tokens"], "summarize": summarize}


def hook_request(request: dict[str, Any], hook_input: dict[str, Any]) -> dict[str, Any]:
    """A hook brief's request with what of the payload the build uses, besides the session's
    id and transcript (those are compared in :func:`_hook_matches`), for its key."""
    shape = [hook_input.get(name) for name in ("cwd", "source", "hook_event_name")]
    return {**request, "payload": shape}


def _environment() -> list[list[str]]:
    return sorted(
        [name, value]
        for name, value in os.environ.items()
        if (name.startswith(ENV_PREFIXES) or name in ENV_NAMES) and name not in ENV_NOT_KEYED
    )


def key_text(request: dict[str, Any], cwd: str) -> str:
    """Everything besides the files that decides the brief's bytes, as one canonical text."""
    from resume_kit import __version__

    key = {
        "receipt": RECEIPT_VERSION,
        "resume_kit": __version__,
        "python": sys.version,
        "executable": sys.executable,
        "request": sorted(request.items()),
        "cwd": cwd,
        "uid": os.getuid() if hasattr(os, "getuid") else None,
        "host": os.uname().nodename if hasattr(os, "uname") else None,
        "tty": [_isatty(sys.stdout), _isatty(sys.stderr)],
        "encoding": [getattr(sys.stdout, "encoding", None), getattr(sys.stderr, "encoding", None)],
        "env": _environment(),
    }
    return repr(sorted(key.items()))


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def receipt_path(request: dict[str, Any], cwd: str) -> str:
    from resume_kit.core.digest import sha256_hex
    from resume_kit.infra.cachedir import user_cache_root

    material = f"{cwd}\0{sorted(request.items())!r}".encode("utf-8", "surrogateescape")
    name = sha256_hex(material)
    return os.path.join(user_cache_root(), "served-briefs", name[:32] + ".receipt")


# --------------------------------------------------------------------------- serving


def serve(args: list[str]) -> int | None:
    """Print the stored brief and return its exit code, or None (nothing printed) to build;
    130 when interrupted (as typer's main ends an interrupted built brief: nothing printed)."""
    try:
        return _print_stored(args)
    except KeyboardInterrupt:
        return 130


def _print_stored(args: list[str]) -> int | None:
    debug = os.environ.get(DEBUG_ENV, "") not in ("", "0")
    try:
        receipt, why = _serve(args)
    except Exception as exc:  # a cache: whatever goes wrong, the full build runs
        receipt, why = None, f"unexpected {type(exc).__name__}"
    if debug:
        from resume_kit.infra.messages import say

        served = "served the stored brief" if why == "served" else f"served: {why}"
        say("fastpath: " + (served if receipt is not None else f"building: {why}"))
    if receipt is None:
        return None
    # Once printing starts there is no going back to a build: a closed pipe ends it quietly,
    # as it ends a built brief (cli.app.main).
    stderr, cut = receipt["stderr"], receipt["stderr_before_stdout"]
    try:
        _emit(sys.stderr, stderr[:cut])
        _emit(sys.stdout, receipt["stdout"])
        _emit(sys.stderr, stderr[cut:])
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    code: int = receipt["code"]
    return code


def _emit(stream: Any, text: str) -> None:
    if text:
        stream.write(text)
        stream.flush()


def _read_receipt(path: str) -> dict[str, Any] | None:
    """The receipt, if it is a regular file of this user's, not too big, and JSON."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RECEIPT_BYTES:
            return None
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None
        chunks = []
        while data := os.read(fd, 1 << 20):
            chunks.append(data)
    finally:
        os.close(fd)
    return decode_receipt(b"".join(chunks))


def encode_receipt(receipt: dict[str, Any]) -> bytes:
    import marshal

    from resume_kit.core.digest import sha256_hex

    payload = marshal.dumps(receipt)
    return RECEIPT_MAGIC + sha256_hex(payload).encode("ascii") + b"\n" + payload


def decode_receipt(data: bytes) -> dict[str, Any] | None:
    """The receipt in ``data``; None unless it is whole (its checksum matches) and plain data."""
    import marshal

    from resume_kit.core.digest import sha256_hex

    head = len(RECEIPT_MAGIC)
    if not data.startswith(RECEIPT_MAGIC) or data[head + 64 : head + 65] != b"\n":
        return None
    payload = data[head + 65 :]
    if sha256_hex(payload).encode("ascii") != data[head : head + 64]:
        return None
    try:
        loaded = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return loaded if _shaped(loaded) else None


RECEIPT_TYPES = {"key": str, "stdout": str, "stderr": str, "stderr_before_stdout": int,
                 "code": int, "created": int, "ages_steady": float, "until": float,
                 "status": dict, "deps": list, "hook": dict}  # fmt: skip
SILENT = {"stdout": "", "stderr": "", "stderr_before_stdout": 0, "code": 0}


def _shaped(value: object) -> bool:
    """A dict with exactly the receipt's fields, each of its type (never a code object; what
    is inside deps and status is checked as it is used: a surprise there is an error, a miss)."""
    if type(value) is not dict or value.keys() != RECEIPT_TYPES.keys():
        return False
    return all(type(value[name]) is kind for name, kind in RECEIPT_TYPES.items())


def _serve(args: list[str]) -> tuple[dict[str, Any] | None, str]:
    if disabled():
        return None, f"{NO_FASTPATH_ENV} is set"
    request = parse_request(args)
    if request is None:
        return None, "not a brief this path serves"
    cwd = os.getcwd()
    if "format" in request:
        return _serve_hook(request, cwd)
    receipt = _read_receipt(receipt_path(request, cwd))
    if receipt is None:
        return None, "no stored brief"
    why = _check(receipt, request, cwd)
    return (receipt, "served") if why is None else (None, why)


def _check(
    receipt: dict[str, Any],
    request: dict[str, Any],
    cwd: str,
    meanwhile: Callable[[], object] | None = None,
) -> str | None:
    """None when nothing the stored brief depends on changed, else what did. ``meanwhile``
    (reads only) runs while ``git status`` does, once every other input is found unchanged."""
    key = key_text(request, cwd)
    if receipt.get("key") != key:
        return f"{_key_difference(receipt.get('key'), key)} differs"
    from resume_kit.core.clock import clock_ns

    now = clock_ns() / 1e9
    created, ages_steady, until = receipt["created"], receipt["ages_steady"], receipt["until"]
    if not (created <= int(now) <= created + ages_steady - SAFETY_S and now < until - SAFETY_S):
        return "the clock moved past what the stored brief says"
    status = receipt["status"]
    git = find_program("git")
    if git is None or git != status["git"]:
        return "git is not the one the stored brief ran"
    for path, recorded, listed in status["config"]:
        if _differs(signature(path, listed=listed), recorded):
            return f"changed: {path}"
    started_ns = time.time_ns()
    child = _spawn_status(git, status["argv"], status["cwd"])  # runs while the stats are taken
    try:
        changed = next(
            (
                path
                for path, recorded, listed in receipt["deps"]
                if _differs(signature(path, listed=listed), recorded)
            ),
            None,
        )
        if changed is None and meanwhile is not None:
            meanwhile()
    except BaseException:
        _abandon(child)
        raise
    if changed is not None:  # the build takes the status still running (one tree walk)
        hand_over_status(status["cwd"], status["argv"], started_ns, _Running(child))
        return f"changed: {changed}"
    output, ok = _collect(child)
    if not ok:
        return "git status failed"
    from resume_kit.core.digest import sha256_hex

    if sha256_hex(output) != status["sha256"]:
        hand_over_status(status["cwd"], status["argv"], started_ns, _Finished(output))
        return "git status differs"
    return None


# --------------------------------------------------------------------------- the hook formats

# (the payload, whether this event delivers the brief, or what the gating raised): the served
# path read stdin and ran the gating, so a build after a miss must not do either again
_hook_handoff: tuple[dict[str, Any], bool | BaseException] | None = None


def take_hook_handoff() -> tuple[dict[str, Any], bool] | None:
    """What the served path read and decided for this hook, once; None when it did not run."""
    global _hook_handoff
    taken, _hook_handoff = _hook_handoff, None
    if taken is None:
        return None
    hook_input, decided = taken
    if isinstance(decided, BaseException):
        raise decided
    return hook_input, decided


def _serve_hook(request: dict[str, Any], cwd: str) -> tuple[dict[str, Any] | None, str]:
    """A hook's brief: its payload read and its gating decided as the full path does them
    (and handed to it on a miss), then the stored body checked, judged and wrapped."""
    global _hook_handoff
    from resume_kit.integrations.agent_input import read_hook_input
    from resume_kit.integrations.hook_gate import delivers, for_event

    copilot = request["format"] == "copilot-hook"
    hook_input = read_hook_input(timeout=1.0)
    _hook_handoff = (hook_input, False)
    try:
        delivered = delivers(hook_input, copilot)
    except Exception as exc:  # the build reports it as it always has
        _hook_handoff = (hook_input, exc)
        raise
    _hook_handoff = (hook_input, delivered)
    if not delivered:
        return SILENT, "this event does not deliver the brief"
    keyed = hook_request(request, hook_input)
    receipt = _read_receipt(receipt_path(keyed, cwd))
    if receipt is None:
        return None, "no stored brief"
    hook = receipt["hook"]
    judged: list[Any] = []
    why = _hook_matches(hook, hook_input) or _check(
        receipt, keyed, cwd, lambda: judged.extend(_judge_meter(hook, hook_input))
    )
    if why is not None:
        return None, why
    session, tokens, event, same = judged
    if not same:
        return None, "the activity log judges differently"
    body = for_event(receipt["stdout"], hook_input, copilot)  # before the write: no way back
    if event is not None:
        from resume_kit.facts.activity_log import add_event

        try:
            add_event(hook["root"], event)
        except OSError:  # as the build: the log judged as it is after the failed write
            from resume_kit.core.activity import Limits, judge
            from resume_kit.facts.activity_log import with_event

            activity = with_event(hook["root"], session, tokens, None, Limits(*hook["limits"]))
            if repr(judge(activity, hook["last_verified"])) != hook["judgement"]:
                return None, "the meter's event could not be written"
    return {**receipt, "stdout": body}, "served"


def _judge_meter(hook: dict[str, Any], hook_input: dict[str, Any]) -> list[Any]:
    """[session, tokens, the meter event this start records (or None), whether the activity
    log with it judges as the stored brief's did]: reads only (the event is written once the
    brief is served), so it runs while the served path's ``git status`` does."""
    from resume_kit.core.activity import Limits, judge
    from resume_kit.facts.activity_log import brief_session, session_event, with_event

    transcript = {"session_id": hook["transcript_session"], "tokens": {"total": hook["tokens"]}}
    session, tokens = brief_session(hook_input, transcript)
    event = session_event(hook_input, session, tokens)
    activity = with_event(hook["root"], session, tokens, event, Limits(*hook["limits"]))
    same = repr(judge(activity, hook["last_verified"])) == hook["judgement"]
    return [session, tokens, event, same]


def _hook_matches(hook: dict[str, Any], hook_input: dict[str, Any]) -> str | None:
    """None when the build would read the same transcript facts for this payload's session as
    for the stored one's (facts.transcripts.read_transcript): the same session and transcript;
    or no transcript in either and a discovery that does not look at the session (not a new
    session), or that passed over no session for its id and did not read this one's; or two
    transcripts that do not exist yet, so the newest other session of the tree was read, and
    that is neither this session nor found by passing over one."""
    session, path = hook_input.get("session_id"), hook_input.get("transcript_path")
    found = None if path is None else signature(os.path.abspath(path))
    now = None if found is None else list(found)
    if session == hook["session"] and path == hook["transcript"]:
        return None if now == hook["transcript_sig"] else "the hook's transcript changed"
    new_session = hook_input.get("source") in NEW_SESSION_SOURCES
    if path is None and hook["transcript"] is None and not new_session:
        return None
    if (path is None) != (hook["transcript"] is None):
        return "another session, with or without a transcript"
    if path is not None and (now is not None or hook["transcript_sig"] is not None):
        return "another session, whose transcript exists"
    if path is not None and not hook["earlier"]:
        return "another session, and the stored brief read no earlier one"
    if hook["session_skipped"]:
        return "another session, and the stored brief passed over one for its id"
    if hook["earlier"] and hook["transcript_session"] == session:
        return "the new session is the one the stored brief read"
    return None


class _Running:
    """A ``git status`` child handed to the build: collected or abandoned there."""

    def __init__(self, child: Child) -> None:
        self.child = child

    def collect(self) -> tuple[bytes, bool]:
        return _collect(self.child)

    def abandon(self) -> None:
        _abandon(self.child)


class _Finished:
    """A ``git status`` output handed to the build (it ran and succeeded)."""

    def __init__(self, output: bytes) -> None:
        self.output = output

    def collect(self) -> tuple[bytes, bool]:
        return self.output, True

    def abandon(self) -> None:
        pass


def _key_difference(stored: Any, now: str) -> str:
    """Which part of the key changed (for the debug line)."""
    import ast

    try:
        old, new = dict(ast.literal_eval(stored)), dict(ast.literal_eval(now))
        return str(next(name for name in new if old.get(name) != new[name]))
    except (TypeError, ValueError, SyntaxError, StopIteration):
        return "the key"


def _differs(now: Signature, recorded: Any) -> bool:
    return bool((None if now is None else list(now)) != recorded)


def _spawn_status(git: str, argv: list[str], cwd: str) -> Child:
    """``git status`` (the recorded ``argv``, run by ``git``) started in ``cwd`` with
    resume-kit's git environment, its stdout on a pipe, stderr on the null device."""
    from resume_kit.infra.gitcmd import start_argv

    return start_argv(cwd, [git, *argv[1:]], stderr=False)


def _collect(child: Child) -> tuple[bytes, bool]:
    output, _ = child.communicate()
    return output, child.returncode == 0


def _abandon(child: Child) -> None:
    child.kill()
    child.communicate()


# --------------------------------------------------------------------------- recording

_active: Recording | None = None


def refuse(reason: str) -> None:
    """The brief being recorded used something a receipt cannot key (a session summary, an
    approved repository template): it is not stored."""
    if _active is not None:
        _active.refused.append(reason)


def session_skipped() -> None:
    """The transcript reader passed over a session for having the hook's session id: the
    brief is not served to another new session (which would not pass over it)."""
    if _active is not None and _active.hook is not None:
        _active.hook["session_skipped"] = True


def observe_hook(root: str, transcript: Any, activity: Any, last_verified: str | None) -> None:
    """What a hook brief's build read that its payload decides: the transcript's session and
    tokens, the activity judged (a served brief judges the log again; reconcile's activity
    findings say only what :func:`resume_kit.core.activity.judge` returns)."""
    if _active is None or _active.hook is None:
        return
    from resume_kit.core.activity import judge
    from resume_kit.facts.activity_log import brief_session

    session, tokens = brief_session(None, transcript)
    limits = activity.limits
    _active.hook.update(
        root=root,
        earlier=isinstance((transcript or {}).get("earlier_session"), dict),
        transcript_session=session,
        tokens=tokens,
        last_verified=last_verified,
        limits=[limits.compactions, limits.sessions, limits.tokens],
        judgement=repr(judge(activity, last_verified)),
    )


class _Tee:
    """stderr as it is, and a copy of what was written (the receipt's stderr text)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.copy: list[str] = []

    def write(self, text: str) -> int:
        self.copy.append(text)
        return int(self.stream.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class Recording:
    """One full brief being recorded for serving; :meth:`end` always, :meth:`store` on success."""

    def __init__(self, request: dict[str, Any], hook_input: dict[str, Any] | None = None) -> None:
        import time

        from resume_kit.core.timeutil import track_steadiness
        from resume_kit.infra.deps import Watch

        # a hook's brief: its payload's session and transcript, then what observe_hook saw
        self.hook: dict[str, Any] | None = None
        if hook_input is not None:
            request = hook_request(request, hook_input)
            path = hook_input.get("transcript_path")
            self.hook = {
                "session": hook_input.get("session_id"),
                "transcript": path,
                "transcript_sig": None if path is None else signature(os.path.abspath(path)),
                "session_skipped": False,
            }
        self.request = request
        self.cwd = os.getcwd()
        self.key = key_text(request, self.cwd)
        self.refused: list[str] = []
        self.stdout_at = 0  # how many stderr writes came before the brief was printed
        self.started_ns = time.time_ns()
        self.steadiness: tuple[float, float, int | None] | None = None
        self._recording = Watch()
        self.recorder = self._recording.__enter__()
        track_steadiness()
        self.tee = _Tee(sys.stderr)
        sys.stderr = self.tee

    def printing(self) -> None:
        """The brief is printed now: stderr written so far comes before it."""
        self.stdout_at = len(self.tee.copy)

    def end(self) -> None:
        global _active
        from resume_kit.core.timeutil import tracked_steadiness

        if sys.stderr is self.tee:
            sys.stderr = self.tee.stream
        self.steadiness = tracked_steadiness()
        self._recording.__exit__(None, None, None)
        _active = None

    def store(self, stdout: str, layout: Any, code: int) -> None:
        """Write the receipt (fails open: a brief that cannot be keyed is simply not stored):
        after the process's answer, in a detached child (:mod:`resume_kit.infra.detach`),
        unless the debug line asks for it to be written before that line is printed."""
        if os.environ.get(DEBUG_ENV, "") in ("", "0"):
            from resume_kit.infra.detach import defer

            defer(lambda: self._stored(stdout, layout, code, debug=False))
        else:
            self._stored(stdout, layout, code, debug=True)

    def _stored(self, stdout: str, layout: Any, code: int, *, debug: bool) -> None:
        try:
            why = self._store(stdout, layout, code)
        except Exception as exc:
            why = f"unexpected {type(exc).__name__}: {exc}"
        if debug:
            from resume_kit.infra.messages import say

            say("fastpath: " + ("stored the brief" if why is None else f"not stored: {why}"))

    def _store(self, stdout: str, layout: Any, code: int) -> str | None:
        from resume_kit.infra.store import atomic_write

        rec = self.recorder
        path = receipt_path(self.request, self.cwd)
        if self.refused:
            _remove(path)
            return self.refused[0]
        problem = _unkeyable(rec)
        if problem is not None:
            _remove(path)
            return problem
        assert rec.git_status is not None and self.steadiness is not None
        status_cwd, argv, output = rec.git_status
        git = find_program(argv[0])
        if git is None:
            return "git is not on PATH"
        hook: dict[str, Any] = {}
        if self.hook is not None:
            if "judgement" not in self.hook:
                _remove(path)
                return "the hook's activity was not observed"
            hook = self.hook
            if hook["transcript_sig"] is not None:
                hook["transcript_sig"] = list(hook["transcript_sig"])
        # a hook's brief: the activity log every session start writes is judged again, not
        # compared by its stat signature; the session's transcript is compared by _hook_matches
        judged: set[str] = set()
        if self.hook is not None:
            from resume_kit.facts.activity_log import log_path

            judged.add(str(log_path(hook["root"])))
        deps = self._dependencies(layout, output, path, git, judged)
        if isinstance(deps, str):
            _remove(path)
            return deps
        if isinstance(hook.get("transcript"), str):
            transcript = os.path.abspath(hook["transcript"])
            deps = [dep for dep in deps if dep[0] != transcript]
        configs = set(_git_config_files(str(layout.root)))
        # what git's configuration is made of, checked before the served git status starts:
        # a filter driver added since would otherwise run (the argv overrides only the old ones)
        config_deps = [dep for dep in deps if dep[0] in configs]
        deps = [dep for dep in deps if dep[0] not in configs]
        from resume_kit.core.digest import sha256_hex

        ages_steady, until, created = self.steadiness
        if created is None:
            return "the brief's time was not noted"
        receipt = {
            "key": self.key,
            "stdout": stdout,
            "stderr": "".join(self.tee.copy),
            # how much of stderr came before the brief (the order a merged 2>&1 shows)
            "stderr_before_stdout": len("".join(self.tee.copy[: self.stdout_at])),
            "code": code,
            "created": created,
            "ages_steady": float(ages_steady),
            "until": float(until) if until != float("inf") else 1e18,
            "status": {
                "git": git,
                "argv": argv,
                "cwd": status_cwd,
                "sha256": sha256_hex(output),
                "config": config_deps,
            },
            "deps": deps,
            "hook": hook,
        }
        folder = os.path.dirname(path)  # private; the cache root above is left as it is
        os.makedirs(folder, 0o700, exist_ok=True)
        if os.lstat(folder).st_mode & 0o077:
            os.chmod(folder, 0o700)
        atomic_write(_path(path), encode_receipt(receipt), mode=0o600, durable=False)
        return None

    def _dependencies(
        self, layout: Any, status_output: bytes, receipt: str, git: str, judged: set[str]
    ) -> list[list[Any]] | str:
        from resume_kit.facts.git import parse_status_v2

        rec = self.recorder
        root, git_dir, common = str(layout.root), str(layout.git_dir), str(layout.git_common_dir)
        seen = list(filter(_kept_paths(layout), rec.paths))
        # not listed: a folder is compared by what it is (files coming and going in the cache
        # folders, or in folders that were only created, change nothing the brief read)
        looked = {p for p in seen if p not in rec.listed}
        paths: dict[str, None] = dict.fromkeys(seen)
        entries = parse_status_v2(status_output)["entries"]
        if len(entries) > MAX_LISTED_PATHS:
            return f"git status lists more than {MAX_LISTED_PATHS} paths"
        explicit: dict[str, None] = {}  # compared in full: listed or not
        for entry in entries:
            for name in (entry["path"], entry.get("orig_path")):
                if name:
                    explicit[os.path.join(root, name.rstrip("/"))] = None
        # The git dirs themselves by identity only: every plain `git status` (an editor's)
        # creates and removes index.lock there; the files that matter are named below.
        git_folders = {git_dir, common}
        for name in ("CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG", "sequencer/todo"):
            explicit[os.path.join(git_dir, name)] = None
        for name in ("HEAD", "index", "config", "config.worktree", "shallow", "packed-refs",
                     "refs", "refs/stash", "logs/refs/stash", "MERGE_HEAD", "rebase-merge",
                     "rebase-apply", "sequencer", "FETCH_HEAD", "ORIG_HEAD"):  # fmt: skip
            explicit[os.path.join(git_dir, name)] = None
            explicit[os.path.join(common, name)] = None
        for base, folders, files in os.walk(os.path.join(common, "refs", "resume-kit")):
            for name in folders + files:
                explicit[os.path.join(base, name)] = None
        for config in _git_config_files(root):  # also checked before git starts: see serve
            explicit[config] = None
        folder = self.cwd  # how git found the work tree from here: a new .git on the way up
        while True:
            explicit[folder] = None
            explicit[os.path.join(folder, ".git")] = None
            if folder == root or os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)
        explicit[git] = None
        for path in _clean_tracked_files(root, seen, explicit):
            paths.pop(path, None)
        looked -= explicit.keys()
        looked |= git_folders
        paths.update(explicit)
        paths.update(dict.fromkeys(git_folders))
        paths.pop(receipt, None)
        for path in judged:
            paths.pop(path, None)
        deps: list[list[Any]] = []
        for path in paths:
            listed = path not in looked
            sig = signature(path, listed=listed)
            times = [t for t in (sig or ())[4:6]]
            racy = bool(times) and max(times) >= self.started_ns - RACY_NS
            if racy and path not in rec.written and not _written_in(path, rec):
                return f"{path} changed while the brief was built"
            deps.append([path, None if sig is None else list(sig), listed])
        return deps


def _clean_tracked_files(root: str, seen: list[str], explicit: dict[str, None]) -> set[str]:
    """The recorded paths the served git status already checks: files of the work tree that
    git tracks with no flag that hides them from status (assume-unchanged, skip-worktree) and
    that status did not list. What the brief read of them is their content (fingerprints,
    artifacts' size and hash), which status compares; a 2,000-artifact brief stats 2,000 paths
    fewer. Files in ``.resume-kit/`` and the git dirs stay (they are few)."""
    from resume_kit.infra.gitcmd import run_git_bytes

    prefix = root.rstrip(os.sep) + os.sep
    state = prefix + ".resume-kit" + os.sep
    candidates = {
        p for p in seen if p.startswith(prefix) and p not in explicit and not p.startswith(state)
    }
    if not candidates:
        return set()
    status, out, _ = run_git_bytes(_path(root), "ls-files", "-v", "-z", check=False)
    if status != 0:
        return set()
    # each entry is a tag and a path: tracked with no assume-unchanged (lower case) or
    # skip-worktree (S) flag is "H "; the candidates are encoded as git wrote them (fsencode's
    # codec), not the 20,000 entries of a large tree decoded (~5 ms)
    listed = set(out.split(b"\0"))
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    import stat

    found = set()
    for path in candidates:
        try:
            entry = b"H " + path[len(prefix) :].encode(encoding, errors)
        except UnicodeEncodeError:  # no name git could have listed: stays a dependency
            continue
        if entry not in listed:
            continue
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                found.add(path)
        except OSError:
            continue
    return found


def _written_in(path: str, rec: Recorder) -> bool:
    """A folder the build itself created, removed or renamed something in."""
    return any(os.path.dirname(w) == path for w in rec.written)


def _unkeyable(rec: Recorder) -> str | None:
    if rec.doubtful:
        return rec.doubtful[0]
    if rec.git_status is None:
        return "git status did not run"
    for argv in rec.programs:
        sub = _git_subcommand(argv)
        if sub not in KEYED_GIT and not _names_between_commits(argv, sub):
            return f"the build ran {' '.join(argv[:1] + ([sub] if sub else []))}"
    return None


# git commands a brief runs whose output the receipt keys: status itself (hashed), what
# status's branch lines and the git files pin (rev-parse, log of HEAD, config, ancestry), and
# the fingerprint reuse's ls-files of the index (pinned). diff only as _names_between_commits.
KEYED_GIT = frozenset({"status", "rev-parse", "log", "config", "merge-base", "rev-list",
                       "for-each-ref", "cat-file", "show-ref", "ls-files"})  # fmt: skip


def _names_between_commits(argv: list[str], sub: str | None) -> bool:
    """The fingerprint reuse's ``git diff --name-only … OLD NEW --`` after HEAD moved: two
    commits' trees, immutable objects. Any other diff (``--numstat`` reads the work tree's
    content) is not keyed."""
    if sub != "diff" or "--name-only" not in argv or "--" not in argv:
        return False
    tail = argv[argv.index("diff") + 1 : argv.index("--")]
    commits = [a for a in tail if not a.startswith("-")]
    return len(commits) == 2 and all(
        len(c) in (40, 64) and set(c) <= set("0123456789abcdef") for c in commits
    )


def _git_subcommand(argv: list[str]) -> str | None:
    if not argv or os.path.basename(argv[0]) != "git":
        return None
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg in ("-c", "-C", "--git-dir", "--work-tree", "--namespace"):
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _kept_paths(layout: Any) -> Callable[[str], bool]:
    """Which recorded paths the brief depends on: not Python's own files, not what the build
    only writes (snapshots, the history library, the file-hash memo). The prefixes are worked
    out once: a large workspace records thousands of paths."""
    from resume_kit.facts.history_db import history_root

    python = tuple(
        {p.rstrip(os.sep) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    )
    only_written = (
        str(layout.snapshots),
        str(history_root()),
        str(layout.user_cache / "hashes.json"),
    )
    below = (*python, *(p + os.sep for p in only_written), "/dev/", "/proc/", "/sys/")

    def kept(path: str) -> bool:
        return "__pycache__" not in path and path not in only_written and not path.startswith(below)

    return kept


def _git_config_files(root: str) -> list[str]:
    """Every file git's configuration comes from here, the files they include, and the
    standard places a new one could appear."""
    from resume_kit.infra.gitcmd import run_git_bytes

    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config"), "/etc/gitconfig"]
    status, out, _ = run_git_bytes(_path(root), "config", "-z", "--list", "--show-origin")
    if status != 0:
        raise RuntimeError("git config --list failed")
    records = out.split(b"\0")
    for origin, entry in zip(records[::2], records[1::2], strict=False):
        source = os.fsdecode(origin)
        if source.startswith("file:"):
            files.append(os.path.abspath(os.path.join(root, source[5:])))
        name, _, value = os.fsdecode(entry).partition("\n")
        if name.lower().startswith("include") and name.lower().endswith(".path"):
            base = os.path.dirname(files[-1]) if source.startswith("file:") else root
            files.append(os.path.abspath(os.path.join(base, os.path.expanduser(value))))
    return files


def _path(text: str) -> Any:
    from pathlib import Path

    return Path(text)


def _remove(path: str) -> None:
    import contextlib

    with contextlib.suppress(OSError):  # there was none
        os.unlink(path)


def begin(
    request: dict[str, Any] | None, hook_input: dict[str, Any] | None = None
) -> Recording | None:
    """Start recording the full brief about to be built, when a receipt could serve it (a
    hook's brief with the payload it answers)."""
    global _active
    if request is None or disabled() or _active is not None:
        return None
    _active = Recording(request, hook_input)
    return _active
