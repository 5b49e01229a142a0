"""The one way resume-kit runs git: argv lists, no optional locks (so no write of the index:
``--no-optional-locks``, and ``diff.autoRefreshIndex=false`` for ``diff``, which does not heed
it), a cleaned environment, and no program that the repository's configuration names.

Leaked ``GIT_DIR``/``GIT_INDEX_FILE``/``GIT_WORK_TREE`` (set by git while it runs a hook) are
removed so a command aimed at a work tree never acts on another repository by accident.

A repository's ``.git/config`` is as hostile as its files (docs/security.md). Every setting
that makes git start a program is overridden here, for every git command resume-kit runs:

* ``core.fsmonitor`` (run on every index read), ``log.showSignature`` (gpg),
  ``status.submoduleSummary``, auto gc and maintenance, and transports (``protocol.allow``,
  ``GIT_NO_LAZY_FETCH``: a partial clone would fetch missing objects through ``core.sshCommand``
  or a credential helper) - :data:`SAFE_CONFIG`, as ``-c`` options, which outrank every config
  file and every ``include.path``/``includeIf`` file; the pager (``--no-pager``);
* ``diff.external`` and ``diff.<driver>.command|textconv`` (``--no-ext-diff --no-textconv``) and
  submodule descent, which runs git inside a submodule with that submodule's own config
  (``--ignore-submodules=dirty``: only a submodule's recorded commit is compared) - added to
  ``status``/``diff``/``log``/``show`` by :data:`SUBCOMMAND_OPTIONS`;
* ``filter.<driver>.clean|smudge|process`` (run by ``status`` and ``diff`` on files whose stat
  data changed): the drivers the configuration defines are read with ``git config
  --get-regexp`` (reading runs nothing) and each is overridden with empty commands.

resume-kit runs no git command that fires hooks (``core.hooksPath``) on its own, no network
command, and ``git interpret-trailers`` (whose ``trailer.<key>.command`` would run) only outside
the repository (:mod:`resume_kit.integrations.hook_entry`). ``tests/adversarial/test_security_hooks.py`` proves it.

git runs as a plain child process, as pre-commit runs it; why GitPython stays out (import cost,
maintenance mode, leaks, no porcelain-v2 parser) is in docs/architecture.md. It is started with
``os.posix_spawn``, not :mod:`subprocess`: every brief runs git (its configuration, ``status``
and ``log``), and importing subprocess brings locale, selectors and fcntl along: ~2.4 ms of
imports on every brief (2026-12-06). What subprocess does that matters for git is done the same
way (:func:`start_program`):

* the program is found on the ``PATH`` of the environment it runs with (subprocess's rule);
* stdin is the null device; stdout and stderr are pipes, read together until both close, so a
  child that fills one while the other is being read cannot stall;
* SIGPIPE and SIGXFSZ, which Python ignores, are back at their defaults in the child (as
  subprocess's ``restore_signals``);
* no descriptor this process opened is passed on (Python opens them close-on-exec). Unlike
  subprocess's ``close_fds``, what this process's own parent passed on inheritable is passed
  on too, as a shell does; the child is git, and it is waited for or killed.

``posix_spawn`` cannot change the child's folder (Python has no such file action), and
changing this process's folder would move every thread's: the folder goes in as git's ``-C``
(:func:`start_argv`).
"""

from __future__ import annotations

import errno
import os
import stat

from resume_kit.infra.errors import ResumeKitError

TYPE_CHECKING = False  # not typing's (see below)
if TYPE_CHECKING:
    from collections.abc import Mapping

_signal = __import__("_signal")  # built in and already loaded; `signal` costs ~1 ms
_RESTORED_SIGNALS = tuple(
    getattr(_signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, name)
)
_CHUNK = 1 << 20

# Paths are os.PathLike (a pathlib.Path is one) so that importing this module costs neither
# pathlib nor typing: the prepare-commit-msg hook imports it on every commit.

LEAKED_GIT_VARS = (
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
)

# Settings that would make git run a program, each switched off (see the module docstring).
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "log.showSignature=false",
    "status.submoduleSummary=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "protocol.allow=never",
)
# Options of the subcommands that read file contents or descend into submodules.
_DIFF_OPTIONS = ("--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty")
SUBCOMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "status": ("--ignore-submodules=dirty",),
    "diff": _DIFF_OPTIONS,
    "log": ("--no-show-signature", *_DIFF_OPTIONS[:2]),
    "show": ("--no-show-signature", *_DIFF_OPTIONS[:2]),
}
# Subcommands that may hash work-tree files, and so run a clean filter.
_FILTERED = frozenset({"status", "diff"})
# `git diff` that found files whose stat changed but not their content takes the index lock and
# rewrites the index to record their stat, optional locks or not (git 2.39); a user's own git
# command at that moment would fail on index.lock. Switched off, a diff's patch, --numstat or
# --stat still compares contents, but its exit status (--quiet, --exit-code) and --name-only
# count such a file as changed: ask those only where the index alone is compared (--cached).
_NO_INDEX_WRITE = ("-c", "diff.autoRefreshIndex=false")
_FILTER_KEYS = ("clean", "smudge", "process")
# Global options that take their value as the next argument.
_GLOBAL_WITH_VALUE = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace"})


# How the person's git reads pathspecs: ours are written for the default (the `:(exclude)` magic
# included), so these go for our own git commands; a verify command keeps them.
_PATHSPEC_VARS = (
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
)


class Child:
    """A started program with its stdout (and stderr, when piped) to read; ``returncode`` is
    None until :meth:`communicate` has waited for it. Like ``subprocess.Popen``'s."""

    __slots__ = ("_pipes", "pid", "returncode")

    def __init__(self, pid: int, pipes: list[int]) -> None:
        self.pid = pid
        self._pipes = pipes  # [stdout] or [stdout, stderr]: read ends
        self.returncode: int | None = None

    def communicate(self) -> tuple[bytes, bytes]:
        """Everything the program writes to stdout and stderr (empty when not piped), after
        it exited; its exit status is then in ``returncode``."""
        chunks: dict[int, list[bytes]] = {fd: [] for fd in self._pipes}
        try:
            if len(self._pipes) == 1:  # no poll: the served path never imports select
                while data := os.read(self._pipes[0], _CHUNK):
                    chunks[self._pipes[0]].append(data)
            else:
                _read_together(chunks)
        finally:
            self._close()
        self._wait()
        out, err, *_ = [b"".join(parts) for parts in chunks.values()] + [b"", b""]
        return out, err

    def kill(self) -> None:
        """Stop the program (SIGKILL) if it still runs; :meth:`communicate` reaps it."""
        import contextlib

        if self.returncode is None:
            with contextlib.suppress(OSError):  # already gone
                os.kill(self.pid, _signal.SIGKILL)

    def _close(self) -> None:
        while self._pipes:
            os.close(self._pipes.pop())

    def _wait(self) -> None:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)


def _read_together(chunks: dict[int, list[bytes]]) -> None:
    import select

    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    open_fds = len(chunks)
    while open_fds:
        for fd, _ in poller.poll():
            data = os.read(fd, _CHUNK)
            if data:
                chunks[fd].append(data)
            else:
                poller.unregister(fd)
                open_fds -= 1


def find_program(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """``name`` as subprocess would run it: itself when it names a folder, else the first
    executable file of that name on the ``PATH`` of ``env`` (default: this process's)."""
    if os.path.dirname(name):
        return name
    # os.get_exec_path(env), without the `warnings` module it imports (~0.3 ms of a served brief)
    path = (os.environ if env is None else env).get("PATH")
    for folder in (os.defpath if path is None else path).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None


def start_program(argv: list[str], env: dict[str, str], *, stderr: bool = True) -> Child:
    """``argv`` started with ``env`` (see the module doc), stdin on the null device, stdout
    piped and stderr piped (``stderr=False``: on the null device). FileNotFoundError when the
    program is not found."""
    program = find_program(argv[0], env)
    if program is None:
        raise FileNotFoundError(2, "No such file or directory", argv[0])
    out_read, out_write = os.pipe()
    pipes, ends = [out_read], [out_write]
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_write, 1),
    ]
    if stderr:
        err_read, err_write = os.pipe()
        pipes.append(err_read)
        ends.append(err_write)
        actions.append((os.POSIX_SPAWN_DUP2, err_write, 2))
    else:
        actions.append((os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0))
    try:
        pid = os.posix_spawn(program, argv, env, file_actions=actions, setsigdef=_RESTORED_SIGNALS)
    except BaseException:
        for fd in pipes:
            os.close(fd)
        raise
    finally:
        for fd in ends:
            os.close(fd)
    return Child(pid, pipes)


def clean_git_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment with leaked repository variables removed."""
    env = dict(os.environ if base is None else base)
    for name in (*LEAKED_GIT_VARS, *_PATHSPEC_VARS):
        env.pop(name, None)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env.setdefault("LC_ALL", "C")
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_PAGER"] = "cat"
    env["GIT_NO_LAZY_FETCH"] = "1"
    return env


class GitFailed(Exception):
    def __init__(self, args: list[str], status: int, stderr: str):
        super().__init__(f"git {' '.join(args)} exited {status}: {stderr.strip()}")
        self.status = status
        self.stderr = stderr


class UnsafeGitConfig(ResumeKitError):
    """The repository's git configuration names a program resume-kit cannot switch off."""


def safe_config_args() -> list[str]:
    """``-c KEY=VALUE`` for every entry of :data:`SAFE_CONFIG`."""
    out: list[str] = []
    for item in SAFE_CONFIG:
        out += ["-c", item]
    return out


def _subcommand_index(args: tuple[str, ...]) -> int | None:
    skip = False
    for index, arg in enumerate(args):
        if skip:
            skip = False
        elif arg in _GLOBAL_WITH_VALUE:
            skip = True
        elif not arg.startswith("-"):
            return index
    return None


_filter_cache: dict[str, list[str]] = {}
_core_cache: dict[str, dict[str, str]] = {}
_read_ahead: dict[str, tuple[dict[str, None], dict[str, str]]] = {}  # read with rev-parse
_CONFIG_ARGS = ("config", "-z", "--get-regexp", r"^(filter|core)\.")


def _start_config_read(cwd: os.PathLike[str]) -> Child:
    """``git config --get-regexp`` of the configuration seen from ``cwd``, started."""
    return start_git(cwd, *_CONFIG_ARGS)


def start_config_read(cwd: os.PathLike[str]) -> Child | None:
    """The configuration read of :func:`filter_overrides` started now, to run alongside the
    ``git rev-parse`` that finds the work tree; hand it to :func:`adopt_config_read`. None when
    it cannot start (then it is read the usual way)."""
    try:
        return _start_config_read(cwd)
    except OSError:
        return None


def adopt_config_read(started: Child | None, root: os.PathLike[str] | None) -> None:
    """Wait for ``started`` and keep its answer as the configuration seen from ``root``: the
    repository that ``git rev-parse`` found from the same directory, so the same files. None:
    the directory is no work tree, and the answer is dropped."""
    if started is None:
        return
    out, _ = started.communicate()
    if root is not None:
        _read_ahead[os.fspath(root)] = _parse_config(out)


def _read_config(cwd: os.PathLike[str]) -> tuple[dict[str, None], dict[str, str]]:
    """(filter driver names, ``core.*`` settings: the last value of each key, lower-cased
    names) of the configuration seen from ``cwd``, in one ``git config`` (it only reads files)."""
    ahead = _read_ahead.pop(os.fspath(cwd), None)
    if ahead is not None:
        return ahead
    out, _ = _start_config_read(cwd).communicate()
    return _parse_config(out)


def _parse_config(out: bytes) -> tuple[dict[str, None], dict[str, str]]:
    drivers: dict[str, None] = {}
    core: dict[str, str] = {}
    for record in out.split(b"\0"):
        name_bytes, _, value = record.partition(b"\n")
        name = name_bytes.decode("utf-8", "surrogateescape")
        if name.startswith("core."):
            core[name.lower()] = value.decode("utf-8", "surrogateescape")
            continue
        section, dot, _ = name.rpartition(".")
        if dot and section.startswith("filter."):
            drivers[section[len("filter.") :]] = None
    return drivers, core


def core_settings(cwd: os.PathLike[str]) -> dict[str, str]:
    """The ``core.*`` settings seen from ``cwd`` (``{"core.autocrlf": "true"}``), read with the
    filter drivers: once per directory and process."""
    key = os.fspath(cwd)
    if key not in _core_cache:
        filter_overrides(cwd)
    return _core_cache.get(key, {})


def filter_overrides(cwd: os.PathLike[str]) -> list[str]:
    """``-c filter.<driver>.clean=`` (and smudge, process; ``required=false``) for every filter
    driver the configuration seen from ``cwd`` defines, so git runs none of them. Read once per
    directory and process: ``git config`` only reads files."""
    key = os.fspath(cwd)
    cached = _filter_cache.get(key)
    if cached is not None:
        return cached
    drivers, core = _read_config(cwd)
    _core_cache[key] = core
    overrides: list[str] = []
    for driver in drivers:
        if "=" in driver:
            # `-c` splits at the first "=": such a driver cannot be switched off, so no git
            # command that could run it may start.
            raise UnsafeGitConfig(
                f"the git configuration defines a filter driver named {driver!r}, which "
                "resume-kit cannot switch off: no git command was run",
                hint=f"remove the filter.{driver}.* settings (git config --list --show-origin)",
            )
        for item in _FILTER_KEYS:
            overrides += ["-c", f"filter.{driver}.{item}="]
        overrides += ["-c", f"filter.{driver}.required=false"]
    _filter_cache[key] = overrides
    return overrides


def git_argv(cwd: os.PathLike[str], args: tuple[str, ...]) -> list[str]:
    """The full argv for ``git ARGS`` in ``cwd`` with every safety override in place."""
    argv = ["git", "--no-optional-locks", "--no-pager", *safe_config_args()]
    index = _subcommand_index(args)
    if index is None:
        return [*argv, *args]
    sub = args[index]
    if sub in _FILTERED:
        argv += filter_overrides(cwd)
    if sub == "diff":
        argv += _NO_INDEX_WRITE
    return [*argv, *args[: index + 1], *SUBCOMMAND_OPTIONS.get(sub, ()), *args[index + 1 :]]


def start_argv(cwd: str | os.PathLike[str], argv: list[str], *, stderr: bool = True) -> Child:
    """A whole git argv (from :func:`git_argv`) started in ``cwd`` with resume-kit's git
    environment (see :func:`start_program`). The folder goes in as git's ``-C``,
    checked first as subprocess's change of folder would be: FileNotFoundError or
    NotADirectoryError."""
    folder = os.fspath(cwd)
    if not stat.S_ISDIR(os.stat(folder).st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), folder)
    return start_program([argv[0], "-C", folder, *argv[1:]], clean_git_env(), stderr=stderr)


def start_git(cwd: os.PathLike[str], *args: str) -> Child:
    """``git ARGS`` (see :func:`git_argv`) started in ``cwd``, its stdout and stderr piped: for a
    read whose answer is needed later, so git runs while this process works. Finish it with
    ``communicate()``."""
    return start_argv(cwd, git_argv(cwd, args))


def run_git_bytes(
    cwd: os.PathLike[str], *args: str, check: bool = True
) -> tuple[int, bytes, bytes]:
    """Run git ARGS (see :func:`git_argv`) in ``cwd``; return (status, stdout, stderr)."""
    child = start_argv(cwd, git_argv(cwd, args))
    out, err = child.communicate()
    status = child.returncode
    assert status is not None
    if check and status != 0:
        raise GitFailed(list(args), status, err.decode("utf-8", "replace"))
    return status, out, err


def run_git(cwd: os.PathLike[str], *args: str, check: bool = True) -> str:
    """Like :func:`run_git_bytes` but decoded as UTF-8 (with surrogate escapes) and stripped."""
    _, out, _ = run_git_bytes(cwd, *args, check=check)
    return out.decode("utf-8", "surrogateescape").strip()
