"""Git hooks (the pre-commit model): our scripts, the hook they replaced, and where they live.

* Our script carries an id marker line, so we recognise it and never wrap it as "legacy".
* A foreign hook is renamed to ``<hook>.legacy`` (a rename keeps its bytes, mode and, for a
  symlink, the link itself) and our script runs it first with the same arguments.
* ``core.hooksPath`` is honoured (relative to the work tree root when relative); otherwise
  hooks live in ``<common git dir>/hooks``, which linked worktrees share.
* The scripts are POSIX sh; they run the interpreter that installed them, fall back to
  ``resume-kit`` on PATH, and fail open with one line on stderr when neither is there.
* prepare-commit-msg needs no interpreter when progress.yaml equals, byte for byte, the copy
  Python left in the user's cache folder (``_FAST_PATH``, ``hook_entry.write_hook_copy``).
* Nothing from the work tree runs: the interpreter is isolated (``-I``: neither the current
  directory nor ``PYTHON*`` variables reach ``sys.path``), starts from ``/``, and gets the work
  tree as ``--repo``. The post-commit log goes to the user's cache directory, never into the
  clone (a committed symlink there could aim the write at any of the user's files).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import Literal
from resume_kit.infra.errors import ResumeKitError
from resume_kit.infra.paths import STATE_DIR, Layout
from resume_kit.infra.store import atomic_write

HOOK_ID = "7c1e4b52-resume-kit-git-hook-v1"
MARKER = f"# resume-kit-hook-id: {HOOK_ID}"
LEGACY_SUFFIX = ".legacy"
SUPPORTED = ("post-commit", "prepare-commit-msg")
SCRIPT_MODE = 0o755
_SNIFF_BYTES = 4096

HookState = Literal["installed", "foreign", "missing"]


# --------------------------------------------------------------------------- the scripts


def sh_quote(value: str) -> str:
    """``value`` as one single-quoted POSIX sh word."""
    return "'" + value.replace("'", "'\\''") + "'"


_HEADER = """\
#!/bin/sh
{marker}
# Written by `resume-kit hook install`. `resume-kit hook uninstall` removes it and puts back
# the hook that was here before (kept meanwhile as {name}.legacy, which runs first).
HOOK={name}
INSTALL_PYTHON={python}

case $0 in */*) here=${{0%/*}} ;; *) here=. ;; esac
status=0
if [ -x "$here/$HOOK.legacy" ]; then
    "$here/$HOOK.legacy" "$@"
    status=$?
fi
"""

_PREPARE_COMMIT_MSG = """\
# A failing hook that was here before still stops the commit, as it did; our part never does.
[ "$status" -eq 0 ] || exit "$status"
# Fast exits: no progress file, a merge or squash message.
[ -f .resume-kit/progress.yaml ] || exit 0
case ${{2-}} in merge|squash|template) exit 0 ;; esac
[ $# -gt 0 ] || exit 0
cd -P . 2>/dev/null || exit 0
tree=$PWD
msg=$1
shift
case $msg in /*) ;; *) msg=$tree/$msg ;; esac
{fast_path}
# No unit in progress: done. Else Python, from /, with the work tree and the message file as
# absolute paths: see the BOOTSTRAP note.
grep -q in_progress .resume-kit/progress.yaml 2>/dev/null || exit 0
cd / || exit 0
if [ -x "$INSTALL_PYTHON" ]; then
    # -S and a direct import skip site-packages scanning and runpy: about 5 ms per commit
    "$INSTALL_PYTHON" -I -S -c "$BOOTSTRAP" {package_dir} prepare-commit-msg --repo "$tree" \\
        "$msg" "$@"
elif command -v resume-kit >/dev/null 2>&1; then
    resume-kit hook run prepare-commit-msg --repo "$tree" "$msg" "$@"
else
    echo "resume-kit: $HOOK hook skipped: neither $INSTALL_PYTHON nor resume-kit on PATH" \\
        "(reinstall resume-kit, then run: resume-kit hook install)" >&2
fi
exit 0
"""

_POST_COMMIT = """\
# The snapshot runs detached in the background so the commit returns at once, from /, with
# the work tree passed as --repo; it writes its own log in the user's cache directory.
[ -d {state_dir} ] || exit "$status"
tree=$PWD
if [ -x "$INSTALL_PYTHON" ]; then
    set -- "$INSTALL_PYTHON" -I -c "$BOOTSTRAP" {package_dir} post-commit --repo "$tree"
elif command -v resume-kit >/dev/null 2>&1; then
    set -- resume-kit hook run post-commit --repo "$tree"
else
    echo "resume-kit: $HOOK hook: no snapshot: neither $INSTALL_PYTHON nor resume-kit on" \\
        "PATH (reinstall resume-kit, then run: resume-kit hook install)" >&2
    exit "$status"
fi
(
    unset GIT_DIR GIT_INDEX_FILE GIT_WORK_TREE GIT_PREFIX
    GIT_OPTIONAL_LOCKS=0
    export GIT_OPTIONAL_LOCKS
    cd / || exit 0
    # low priority: a commit made right after this one must not wait for our snapshot
    if command -v nice >/dev/null 2>&1; then
        set -- nice -n 10 "$@"
    fi
    if command -v setsid >/dev/null 2>&1; then
        exec setsid "$@" </dev/null >/dev/null 2>&1
    fi
    exec nohup "$@" </dev/null >/dev/null 2>&1
) &
exit "$status"
"""

# Imports resume_kit.integrations.hook_entry from the folder it was installed from; if it moved, from the
# interpreter's site-packages; if it is gone, one line on stderr (the commit goes on). It runs
# with -I from /: sys.path holds only that folder and the interpreter's own directories.
_BOOTSTRAP = """\
import sys
sys.path.insert(0, sys.argv.pop(1))
try:
    from resume_kit.integrations.hook_entry import main
except ImportError:
    import site
    site.main()
    try:
        from resume_kit.integrations.hook_entry import main
    except ImportError:
        sys.stderr.write("resume-kit: hook skipped: resume_kit is not installed for "
                         + sys.executable + " any more (reinstall, then: resume-kit hook install)\\n")
        sys.exit(0)
sys.exit(main())
"""

_BODIES = {"prepare-commit-msg": _PREPARE_COMMIT_MSG, "post-commit": _POST_COMMIT}

# prepare-commit-msg without Python (see hook_entry.write_hook_copy): the copy of progress.yaml
# in the user's cache folder, equal byte for byte (cmp), names the unit. Everything it cannot
# decide as Python would (an unusual path, message, git dir or cache) returns 1: Python decides.
# Only builtins, one cmp and the same `git interpret-trailers` as Python runs.
_FAST_PATH = """\
rk_copy() {{
    case $tree in *[!{path_chars}]*) return 1 ;; esac
    rk_name=${{tree#/}}
    rk_rest=$rk_name
    rk_name=
    while :; do
        case $rk_rest in
            */*) rk_name=$rk_name${{rk_rest%%/*}}%; rk_rest=${{rk_rest#*/}} ;;
            *) rk_name=$rk_name$rk_rest; break ;;
        esac
    done
    [ -n "$rk_name" ] && [ "${{#rk_name}}" -le {name_max} ] || return 1
{cache_base}
    case $rk_base in /*) ;; *) return 1 ;; esac
    rk_copy=$rk_base/{app}/{folder}/$rk_name
    [ -f "$rk_copy" ] && [ ! -h "$rk_copy" ] || return 1
    {{ [ -O "$rk_copy" ]; }} 2>/dev/null || return 1
    [ ! -h .resume-kit ] && [ ! -h .resume-kit/progress.yaml ] || return 1
    [ -f .resume-kit/progress.yaml ] || return 1
    rk_head=
    {{ IFS= read -r rk_head && cmp -s - .resume-kit/progress.yaml; }} <"$rk_copy" 2>/dev/null ||
        return 1
    case $rk_head in {header}*) unit=${{rk_head#{header}}} ;; *) return 1 ;; esac
    case $unit in '') return 0 ;; [{id_first}]*) ;; *) return 1 ;; esac
    case $unit in *[!{id_rest}]*) return 1 ;; esac
}}
rk_trailer() {{
    if [ -n "${{GIT_DIR-}}" ]; then
        rk_gd=$GIT_DIR
    elif [ -d .git ]; then
        rk_gd=.git
    elif [ -f .git ]; then
        rk_line=
        {{ IFS= read -r rk_line <.git; }} 2>/dev/null || return 1
        case $rk_line in "gitdir: "*) rk_gd=${{rk_line#gitdir: }} ;; *) return 1 ;; esac
        case $rk_gd in ''|*[!{path_chars}]*) return 1 ;; esac
    else
        return 1
    fi
    case $rk_gd in /*) ;; *) rk_gd=$tree/$rk_gd ;; esac
    for rk_marker in {markers}; do
        [ ! -e "$rk_gd/$rk_marker" ] || exit 0
    done
    # A message that begins with a letter or digit has content (an empty one must still abort
    # the commit); any other first line is Python's to judge.
    rk_first=
    {{ IFS= read -r rk_first <"$msg"; }} 2>/dev/null || [ -n "$rk_first" ] || return 1
    case $rk_first in [{alnum}]*) ;; *) return 1 ;; esac
    unset {leaked}
    GIT_OPTIONAL_LOCKS=0
    [ -n "${{LC_ALL+set}}" ] || LC_ALL=C
    GIT_TERMINAL_PROMPT=0
    GIT_PAGER=cat
    GIT_NO_LAZY_FETCH=1
    export GIT_OPTIONAL_LOCKS LC_ALL GIT_TERMINAL_PROMPT GIT_PAGER GIT_NO_LAZY_FETCH
    git -C / {safe_config} interpret-trailers --in-place --where end --if-exists doNothing \\
        --if-missing add --trailer "{key}: $unit" "$msg"
    rk_status=$?
    [ "$rk_status" -eq 0 ] || echo {git_failed}"$rk_status" >&2
    exit 0
}}
unit=
if rk_copy; then
    [ -n "$unit" ] || exit 0
    rk_trailer
fi"""

_CACHE_BASE_XDG = """\
    case ${XDG_CACHE_HOME-} in
        /*) rk_base=$XDG_CACHE_HOME ;;
        *[!\\ \\	]*) return 1 ;;
        *) [ -n "${HOME-}" ] || return 1; rk_base=$HOME/.cache ;;
    esac"""
_CACHE_BASE_DARWIN = """\
    [ -n "${HOME-}" ] || return 1
    rk_base=$HOME/Library/Caches"""


def fast_path_script(platform: str = sys.platform) -> str:
    """The sh functions of prepare-commit-msg's path without Python, for ``platform``."""
    from resume_kit.infra.cachedir import APP
    from resume_kit.infra.gitcmd import LEAKED_GIT_VARS, SAFE_CONFIG
    from resume_kit.infra.messages import prefixed
    from resume_kit.integrations import hook_entry as entry

    def chars(allowed: frozenset[str]) -> str:
        text = "".join(sorted(allowed - {"-"}))
        return text + "-" if "-" in allowed else text

    return _FAST_PATH.format(
        path_chars=chars(entry.HOOK_COPY_PATH_CHARS),
        name_max=entry.HOOK_COPY_NAME_MAX,
        cache_base=_CACHE_BASE_DARWIN if platform == "darwin" else _CACHE_BASE_XDG,
        app=APP,
        folder=entry.HOOK_COPY_FOLDER,
        header=sh_quote(entry.HOOK_COPY_HEADER),
        id_first=chars(entry._ID_FIRST),
        id_rest=chars(entry._ID_REST),
        markers=" ".join(entry.OPERATION_MARKERS),
        alnum=chars(frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
        leaked=" ".join(LEAKED_GIT_VARS),
        safe_config=" ".join(f"-c {sh_quote(item)}" for item in SAFE_CONFIG),
        key=entry.TRAILER_KEY,
        git_failed=sh_quote(
            prefixed(f"no {entry.TRAILER_KEY} trailer: git interpret-trailers exited ")
        ),
    )


def package_parent() -> str:
    """The folder holding the ``resume_kit`` package this process runs."""
    import resume_kit

    return str(Path(resume_kit.__file__).resolve().parent.parent)


def render_script(name: str, python: str, package_dir: str | None = None) -> bytes:
    """The hook script for ``name`` that runs resume-kit with ``python``."""
    header = _HEADER.format(marker=MARKER, name=name, python=sh_quote(python))
    header += f"BOOTSTRAP={sh_quote(_BOOTSTRAP)}\n"
    body = _BODIES[name].format(
        state_dir=STATE_DIR,
        package_dir=sh_quote(package_dir or package_parent()),
        fast_path=fast_path_script() if name == "prepare-commit-msg" else "",
    )
    return (header + body).encode("utf-8")


def is_ours(path: Path) -> bool:
    """Whether ``path`` is a regular file carrying our id marker (a symlink never is)."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False
    return MARKER.encode() in head


def installed_python(path: Path) -> str | None:
    """The interpreter recorded in our script at ``path``."""
    try:
        text = path.read_bytes()[:_SNIFF_BYTES].decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("INSTALL_PYTHON="):
            value = line[len("INSTALL_PYTHON=") :]
            return value[1:-1].replace("'\\''", "'") if value.startswith("'") else value
    return None


# --------------------------------------------------------------------------- where hooks live


def post_commit_log(root: Path | str) -> Path:
    """Where the detached post-commit snapshot writes its stderr: the user's cache directory,
    one file per work tree (keyed by its real path), never inside the clone, where a committed
    symlink could aim the write at any file of the user's."""
    from resume_kit.core.digest import sha256_hex
    from resume_kit.infra.cachedir import user_cache_root

    key = sha256_hex(os.fsencode(os.path.realpath(root)))[:16]
    return Path(user_cache_root()) / "post-commit" / f"{key}.log"


def open_post_commit_log(root: Path | str) -> int:
    """A write descriptor on :func:`post_commit_log` (truncated, mode 0600, no symlink)."""
    path = post_commit_log(root)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o600)
    os.fchmod(fd, 0o600)
    return fd


def hooks_dir(layout: Layout) -> Path:
    """``core.hooksPath`` (relative to the work tree root) or ``<common git dir>/hooks``."""
    from resume_kit.infra.gitcmd import GitFailed, run_git

    try:
        configured = run_git(layout.root, "config", "--type=path", "--get", "core.hooksPath")
    except GitFailed as exc:
        if exc.status == 1:  # not set
            configured = ""
        else:
            detail = exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else ""
            raise ResumeKitError(
                f"cannot read core.hooksPath: {detail}", hint="check `git config core.hooksPath`"
            ) from None
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else layout.root / path
    return layout.git_common_dir / "hooks"


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def legacy_path(hook: Path) -> Path:
    return hook.with_name(hook.name + LEGACY_SUFFIX)


# --------------------------------------------------------------------------- install / remove


@dataclass(frozen=True)
class HookReport:
    name: str
    path: Path
    state: HookState
    legacy: bool  # a previous hook is kept as <name>.legacy
    python: str | None = None  # the interpreter our script runs (when installed)
    python_found: bool | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": str(self.path),
            "state": self.state,
            "legacy": self.legacy,
            "python": self.python,
            "python_found": self.python_found,
        }


def parse_hook_names(spec: str) -> list[str]:
    names = [part.strip() for part in spec.split(",") if part.strip()]
    unknown = [name for name in names if name not in SUPPORTED]
    if unknown or not names:
        raise ResumeKitError(
            f"unknown hook {unknown[0]!r}" if unknown else "no hooks named",
            hint=f"choose from: {', '.join(SUPPORTED)}",
        )
    return list(dict.fromkeys(names))


def install_hook(directory: Path, name: str, python: str | None = None) -> str:
    """Install our ``name`` hook in ``directory``; returns what happened, in a few words."""
    script = render_script(name, python or sys.executable)
    hook = directory / name
    legacy = legacy_path(hook)
    if is_ours(hook):
        if hook.read_bytes() == script and os.access(hook, os.X_OK):
            return "already installed"
        atomic_write(hook, script, mode=SCRIPT_MODE)
        return "updated"
    kept = False
    if _exists(hook):
        if _exists(legacy):
            raise ResumeKitError(
                f"{hook} is not ours and {legacy.name} already exists: refusing to overwrite either",
                hint="move one of them away, then run `resume-kit hook install` again",
            )
        os.rename(hook, legacy)  # bytes, mode and symlinks kept exactly
        kept = True
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write(hook, script, mode=SCRIPT_MODE)
    return f"installed (previous hook kept as {legacy.name}, runs first)" if kept else "installed"


def uninstall_hook(directory: Path, name: str) -> str | None:
    """Remove our ``name`` hook and restore the previous one; None when there was nothing."""
    hook = directory / name
    legacy = legacy_path(hook)
    if _exists(hook) and not is_ours(hook):
        if _exists(legacy):
            return f"left alone: {hook.name} is not ours ({legacy.name} kept too)"
        return None
    if _exists(legacy):
        os.replace(legacy, hook)  # atomic: never a moment without a hook
        return f"removed; previous hook restored from {legacy.name}"
    if _exists(hook):
        hook.unlink()
        return "removed"
    return None


def hook_report(directory: Path, name: str) -> HookReport:
    hook = directory / name
    legacy = _exists(legacy_path(hook))
    if is_ours(hook):
        python = installed_python(hook)
        found = bool(python) and os.access(python or "", os.X_OK)
        return HookReport(name, hook, "installed", legacy, python, found)
    if _exists(hook):
        return HookReport(name, hook, "foreign", legacy)
    return HookReport(name, hook, "missing", legacy)
