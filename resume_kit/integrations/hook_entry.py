"""The fast entry the installed git hooks call (``python -I [-S] -c BOOTSTRAP DIR NAME --repo
TREE ARGS``, see ``resume_kit.integrations.git_hooks``; ``python -I -m resume_kit.integrations.hook_entry NAME --repo TREE
ARGS`` works too).

It runs inside every ``git commit``, so the prepare-commit-msg path imports nothing beyond
``os`` and ``sys`` (no typer, no YAML library, not even ``subprocess``): progress.yaml is scanned
line by line for the first unit in progress, and only a file in an unusual YAML style falls
back to a real parser. It fails open: any problem is one line on stderr and exit status 0.

The interpreter runs isolated (``-I``: no current directory and no ``PYTHON*`` variables on
``sys.path``) from ``/``, and the work tree comes as ``--repo``: a ``__future__.py`` or
``resume_kit/`` at the root of a cloned repository is never imported.
"""

from __future__ import annotations

import os
import sys

PROGRESS_PATH = os.path.join(".resume-kit", "progress.yaml")
# The unit in progress as the CLI last read it, keyed by the progress file's exact bytes (size
# and CRC-32): a commit right after verify-next then skips scanning a file of 10,000 units.
# It lives in the user's cache folder (resume_kit.infra.cachedir names it), never in the repository.
_CACHE_HEADER = "resume-kit in-progress 1"
TRAILER_KEY = "Resume-Unit"
SKIPPED_SOURCES = ("merge", "squash", "template")
# Present in the (per-worktree) git dir while git replays or combines commits: a Resume-Unit
# trailer for today's unit would be a lie on those commits.
OPERATION_MARKERS = (
    "MERGE_HEAD",
    "MERGE_MSG",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
)
SCISSORS = "------------------------ >8 ------------------------"
_ID_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ID_REST = _ID_FIRST | frozenset("._-")


class UnusualYaml(ValueError):
    """The line scanner met YAML it does not handle; a real parser must decide."""


def warn(message: str) -> None:
    from resume_kit.infra.messages import say

    say(message)


def valid_unit_id(value: str) -> bool:
    return bool(value) and value[0] in _ID_FIRST and all(c in _ID_REST for c in value)


# --------------------------------------------------------------------------- progress.yaml


def _scalar(text: str) -> str:
    """A plain or quoted one-line YAML scalar, without a trailing comment."""
    text = text.strip(" \t")  # YAML white space is space and tab only, not NBSP
    if not text:
        return ""
    quote = text[0]
    if quote in "'\"":
        end = text.find(quote, 1)
        if end < 0:
            raise UnusualYaml("multi-line quoted scalar")
        inner = text[1:end]
        if (quote == '"' and "\\" in inner) or (quote == "'" and text[end + 1 : end + 2] == "'"):
            raise UnusualYaml("escaped quoted scalar")
        rest = text[end + 1 :].strip(" \t")
        if rest and not rest.startswith("#"):
            raise UnusualYaml("text after a quoted scalar")
        return inner
    if quote in "&*!|>{[%@`":
        raise UnusualYaml("anchor, tag, block or flow scalar")
    cut = text.find(" #")
    return (text if cut < 0 else text[:cut]).rstrip(" \t")


def _key_value(text: str) -> tuple[str, str] | None:
    """``key: value`` split in two, or None when the line is not a simple mapping entry."""
    colon = text.find(":")
    while colon >= 0 and colon + 1 < len(text) and text[colon + 1] not in " \t":
        colon = text.find(":", colon + 1)
    if colon <= 0:
        return None
    key = text[:colon].strip(" \t")
    if not key or key[0] in "'\"?&*!{[":
        raise UnusualYaml("complex key")
    return key, text[colon + 1 :]


def first_unit_in_progress(text: str) -> str | None:
    """The id of the first unit whose status is in_progress, scanning block-style YAML.

    Raises UnusualYaml when the file uses a style the scanner does not follow (flow
    collections, anchors, multi-line scalars, tabs...), so the caller can use a real parser.
    """
    in_units = False
    item_indent: int | None = None  # column of the "- " that opens each unit
    key_indent: int | None = None  # column of the unit's own keys
    unit: dict[str, str] = {}

    def finish() -> str | None:
        found = unit.get("id") if unit.get("status") == "in_progress" else None
        unit.clear()
        return found

    for line in text.splitlines():
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if body.startswith("\t"):
            raise UnusualYaml("tab indentation")
        stripped = body.rstrip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        is_item = stripped == "-" or stripped.startswith("- ")
        if indent == 0 and not is_item:
            if stripped in ("---", "..."):
                continue
            found = finish() if in_units else None
            if found is not None:
                return found
            pair = _key_value(stripped)
            if pair is None:
                raise UnusualYaml("top-level line that is not a key")
            in_units = pair[0] == "units"
            if in_units and _scalar(pair[1]):
                raise UnusualYaml("units is not a block sequence")
            item_indent = key_indent = None
            continue
        if not in_units:
            continue
        if item_indent is None:
            if not is_item:
                raise UnusualYaml("units is not a block sequence")
            item_indent = indent
        if indent < item_indent:
            raise UnusualYaml("line out of the units' indentation")
        if indent == item_indent:
            if not is_item:
                raise UnusualYaml("line out of the units' indentation")
            found = finish()
            if found is not None:
                return found
            rest = stripped[1:].lstrip(" ")
            if not rest:
                key_indent = None  # the unit's keys start on the next line
                continue
            key_indent = indent + len(stripped) - len(rest)
            stripped = rest
        else:
            if key_indent is None:
                key_indent = indent
            if indent > key_indent or (indent == key_indent and is_item):
                continue  # nested: evidence, last_failure, lists, continuation lines
            if indent < key_indent:
                raise UnusualYaml("line out of the unit's indentation")
        pair = _key_value(stripped)
        if pair is None:
            raise UnusualYaml("unit line that is not a key")
        key, value = pair
        if key in ("id", "status"):
            if key in unit:
                raise UnusualYaml("duplicate key")
            value = _scalar(value)
            if not value:
                raise UnusualYaml("value on a later line")
            unit[key] = value
    return finish() if in_units else None


def first_unit_in_progress_yaml(text: str) -> str | None:
    """The same answer from a real (safe) YAML parser; slow to import, used as a fallback."""
    if "site" not in sys.modules or not any("-packages" in p for p in sys.path):
        import site  # the hook starts Python with -S: make the installed packages importable

        site.main()
    import yaml

    data = yaml.safe_load(text)
    units = data.get("units") if isinstance(data, dict) else None
    if not isinstance(units, list):
        return None
    for unit in units:
        if isinstance(unit, dict) and unit.get("status") == "in_progress":
            unit_id = unit.get("id")
            return unit_id if isinstance(unit_id, str) else None
    return None


def unit_in_progress(text: str) -> str | None:
    """The id of the first unit in progress; ValueError when the file cannot be read as YAML."""
    if "in_progress" not in text:
        return None
    try:
        found = first_unit_in_progress(text)
    except UnusualYaml:
        try:
            found = first_unit_in_progress_yaml(text)
        except Exception as exc:  # yaml.YAMLError and anything odd in the document
            raise ValueError(str(exc).splitlines()[0] if str(exc) else "does not parse") from None
    return found


# Up to this size the line scanner answers sooner than the cache would (its folder is named by
# a SHA-256 of two resolved paths): at most ~0.7 ms against ~1-2 ms (issue 18, the hooks).
SCAN_FIRST_BYTES = 8 * 1024


def scanned_small(data: bytes) -> str | None:
    """The scanner's answer for a small progress file ("" when no unit is in progress); None
    when the file is larger, not UTF-8 or in a style the scanner leaves to the cache/parser."""
    if len(data) > SCAN_FIRST_BYTES:
        return None
    try:
        return first_unit_in_progress(data.decode("utf-8")) or ""
    except (UnusualYaml, UnicodeDecodeError):
        return None


def content_key(data: bytes) -> str:
    import zlib  # a small C module: no site-packages needed

    return f"{len(data)} {zlib.crc32(data):08x}"


def in_progress_file(worktree: str) -> str | None:
    """The in-progress cache of the work tree at ``worktree`` (what ``Layout.user_cache``
    names), found without running git; None outside a work tree."""
    from resume_kit.infra.cachedir import in_progress_file as cache_file
    from resume_kit.infra.cachedir import worktree_cache

    git_dir = git_dir_of(worktree)
    if git_dir is None:
        return None
    common = git_dir
    try:  # a linked worktree's git dir names the shared one
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            common = os.path.join(git_dir, handle.readline().strip())
    except OSError:
        pass
    return cache_file(worktree_cache(os.path.realpath(worktree), os.path.realpath(common)))


def cached_unit_in_progress(worktree: str, data: bytes) -> str | None:
    """The unit id the cache holds for exactly these progress-file bytes ("" when none is in
    progress), or None when the cache is missing, damaged or about other bytes."""
    path = in_progress_file(worktree)
    if path is None:
        return None
    from resume_kit.infra.safefs import read_regular

    try:
        lines = read_regular(path, 4096).decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) != 4 or lines[0] != _CACHE_HEADER or lines[3] != "":
        return None
    if lines[1] != content_key(data):
        return None
    unit_id = lines[2]
    return unit_id if unit_id == "" or valid_unit_id(unit_id) else None


def write_unit_in_progress(path: str, data: bytes, unit_id: str | None) -> None:
    """Record at ``path`` (``cachedir.in_progress_file`` of the CLI's ``Layout.user_cache``) that ``unit_id``
    (None: no unit) is in progress in these progress-file bytes. A cache, not state: written
    without fsync, and any failure is ignored."""
    text = f"{_CACHE_HEADER}\n{content_key(data)}\n{unit_id or ''}\n"
    _replace_private(path, text.encode("utf-8"))


def _replace_private(path: str, data: bytes) -> None:
    """``path`` replaced atomically by ``data``: written to a new 0600 temporary file (never
    through a symlink) and renamed; any failure leaves the old file and is ignored."""
    tmp = f"{path}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
        with open(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        try:  # noqa: SIM105 - contextlib is one import more on every commit
            os.unlink(tmp)
        except OSError:
            pass


# --------------------------------------------------------------------------- the hook's own copy

# The prepare-commit-msg script answers most commits without Python: it compares progress.yaml
# with a copy kept in the user's cache folder (``cmp``) and, when the bytes are equal, takes the
# unit id from the copy's first line. The copy's name is the work tree's real path with "/" as
# "%", so POSIX sh finds it with no hash; a path with other characters gets no copy (Python
# answers those commits). git_hooks renders the sh side from these same constants.
HOOK_COPY_FOLDER = "hook-units"
HOOK_COPY_HEADER = "resume-kit unit 1 "
HOOK_COPY_PATH_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+@,=~/-"
)
HOOK_COPY_NAME_MAX = 200  # under NAME_MAX (255) everywhere
HOOK_COPY_DATA_MAX = 4 << 20  # what prepare_commit_msg reads of progress.yaml


def hook_copy_name(real_root: str) -> str | None:
    """The copy's file name for the work tree at ``real_root`` (a real, absolute path), or None
    when the sh side could not spell it (other characters, too long, the root folder)."""
    if not real_root.startswith("/") or real_root == "/":
        return None
    if not all(c in HOOK_COPY_PATH_CHARS for c in real_root):
        return None
    name = real_root[1:].replace("/", "%")
    return name if len(name) <= HOOK_COPY_NAME_MAX else None


def hook_copy_file(worktree: str) -> str | None:
    """Where the hook's copy of this work tree's progress.yaml lives (the user's cache folder)."""
    from resume_kit.infra.cachedir import user_cache_root

    name = hook_copy_name(os.path.realpath(worktree))
    root = user_cache_root()
    if name is None or not os.path.isabs(root):
        return None
    return os.path.join(root, HOOK_COPY_FOLDER, name)


def write_hook_copy(worktree: str, data: bytes, unit_id: str | None) -> None:
    """Keep ``data`` (progress.yaml's bytes) headed by the unit in progress in them (None: no
    unit) for the sh side of prepare-commit-msg. A cache: private (0700 folder, 0600 file, no
    symlink followed), replaced atomically, any failure ignored (the next commit asks Python)."""
    if unit_id is not None and not valid_unit_id(unit_id):
        return
    if len(data) >= HOOK_COPY_DATA_MAX:
        return
    path = hook_copy_file(worktree)
    if path is None:
        return
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, 0o700, exist_ok=True)
        info = os.lstat(folder)
        if not os.path.isdir(folder) or os.path.islink(folder) or info.st_uid != os.getuid():
            return
        if info.st_mode & 0o077:
            os.chmod(folder, 0o700)
    except OSError:
        return
    _replace_private(path, f"{HOOK_COPY_HEADER}{unit_id or ''}\n".encode("ascii") + data)


def remove_hook_copy(worktree: str) -> bool:
    """Remove the hook's copy of this work tree's progress.yaml (``hook uninstall``); whether
    there was one. A symlink there is removed itself, never followed."""
    path = hook_copy_file(worktree)
    if path is None:
        return False
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


# --------------------------------------------------------------------------- commit message


def has_content(message: str, comment_char: str = "#") -> bool:
    """Whether the message says anything once comments (and a scissors cut) are ignored.

    An empty message aborts a commit; a trailer added to one would commit it instead.
    """
    for line in message.splitlines():
        if line.startswith(comment_char):
            if SCISSORS in line:
                return False
            continue
        if line.strip():
            return True
    return False


def git_dir_of(worktree: str) -> str | None:
    """This worktree's git dir, found without running git (``.git`` may be a file)."""
    env_dir = os.environ.get("GIT_DIR")
    if env_dir:
        return env_dir if os.path.isabs(env_dir) else os.path.join(worktree, env_dir)
    dot_git = os.path.join(worktree, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8") as handle:
            first = handle.readline().strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    path = first[len("gitdir:") :].strip()
    return path if os.path.isabs(path) else os.path.join(worktree, path)


def operation_in_progress(git_dir: str | None) -> bool:
    if git_dir is None:
        return False
    return any(os.path.exists(os.path.join(git_dir, name)) for name in OPERATION_MARKERS)


def _run(argv: list[str], env: dict[str, str]) -> int:
    """Run a command and wait, without importing subprocess (about 10 ms) where possible."""
    spawn = getattr(os, "posix_spawnp", None)
    if spawn is None:  # pragma: no cover - Windows
        import subprocess

        return subprocess.call(argv, env=env)
    pid = spawn(argv[0], argv, env)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status


def add_trailer(message_file: str, unit_id: str) -> int:
    """``git interpret-trailers`` on the (absolute) ``message_file``, run outside the repository
    (``-C /``, no ``GIT_DIR``): inside it a repository's ``trailer.<key>.command`` would run."""
    from resume_kit.infra.gitcmd import clean_git_env, safe_config_args

    return _run(
        [
            "git",
            "-C",
            "/",
            *safe_config_args(),
            "interpret-trailers",
            "--in-place",
            "--where",
            "end",
            "--if-exists",
            "doNothing",
            "--if-missing",
            "add",
            "--trailer",
            f"{TRAILER_KEY}: {unit_id}",
            message_file,
        ],
        clean_git_env(),
    )


def prepare_commit_msg(args: list[str], worktree: str = ".") -> int:
    """Add ``Resume-Unit: <id>`` for the unit in progress. Always returns 0 (fail-open)."""
    if not args:
        warn("prepare-commit-msg: no message file given")
        return 0
    message_file = os.path.join(os.path.abspath(worktree), args[0])  # an absolute one stays
    source = args[1] if len(args) > 1 else ""
    if source in SKIPPED_SOURCES:
        return 0
    progress_file = os.path.join(worktree, PROGRESS_PATH)
    from resume_kit.infra.safefs import open_regular

    try:  # no symlink, no FIFO or device: a commit must never wait on the file
        with open_regular(progress_file) as handle:
            data = handle.read(4 << 20)
    except FileNotFoundError:
        return 0
    except OSError as exc:
        why = exc.strerror or str(exc)
        warn(f"no {TRAILER_KEY} trailer: cannot read {PROGRESS_PATH}: {why}")
        return 0
    if b"in_progress" not in data:
        return 0
    unit_id = scanned_small(data)
    if unit_id is None:
        unit_id = cached_unit_in_progress(worktree, data)
    if unit_id is None:
        try:
            unit_id = unit_in_progress(data.decode("utf-8"))
        except ValueError as exc:  # includes UnicodeDecodeError
            warn(f"no {TRAILER_KEY} trailer: {PROGRESS_PATH} does not parse ({exc})")
            return 0
    unit_id = unit_id or None
    write_hook_copy(worktree, data, unit_id)  # the next commit on these bytes needs no Python
    if unit_id is None:
        return 0
    if not valid_unit_id(unit_id):
        warn(f"no {TRAILER_KEY} trailer: {unit_id!r} is not a valid unit id")
        return 0
    if operation_in_progress(git_dir_of(worktree)):
        return 0
    try:
        with open(message_file, encoding="utf-8", errors="replace") as handle:
            message = handle.read()
    except OSError as exc:
        warn(f"no {TRAILER_KEY} trailer: cannot read {message_file}: {exc.strerror}")
        return 0
    if not has_content(message):
        return 0  # an editor opened on an empty message: leaving it empty must still abort
    try:
        status = add_trailer(message_file, unit_id)
    except OSError as exc:
        warn(f"no {TRAILER_KEY} trailer: cannot run git interpret-trailers: {exc.strerror}")
        return 0
    if status != 0:
        warn(f"no {TRAILER_KEY} trailer: git interpret-trailers exited {status}")
    return 0


def post_commit(args: list[str], worktree: str) -> int:
    """The detached snapshot after a commit (the hook already returned). Its stderr goes to the
    user's cache directory (:func:`resume_kit.integrations.git_hooks.post_commit_log`), never into the clone."""
    from pathlib import Path

    from resume_kit.integrations.git_hooks import open_post_commit_log

    try:
        fd = open_post_commit_log(worktree)
    except OSError:
        pass  # stderr stays where the hook sent it (/dev/null)
    else:
        os.dup2(fd, 2)
        os.close(fd)
    from resume_kit.cli.commands.snapshot import run

    code = run(json_out=False, quiet=True, trigger="post-commit", start=Path(worktree))
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations.aider import refresh

    try:
        layout = find_layout(Path(worktree))
    except Exception:  # not a work tree any more: nothing to refresh (the snapshot said why)
        return code
    refresh(layout)  # `integrate aider`: fail-open, else a no-op
    return code


HOOKS = {"prepare-commit-msg": prepare_commit_msg, "post-commit": post_commit}


def main(argv: list[str] | None = None) -> int:
    """``NAME [--repo TREE] ARGS``: the work tree defaults to the current directory."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in HOOKS:
        warn(f"hookentry: unknown hook {args[0] if args else '(none)'!r}")
        return 0
    name, rest, worktree = args[0], args[1:], "."
    if rest[:1] == ["--repo"] and len(rest) >= 2:
        worktree, rest = rest[1], rest[2:]
    try:
        return HOOKS[name](rest, worktree)
    except Exception as exc:  # fail-open: a commit must never break because of resume-kit
        warn(f"{name} hook skipped: unexpected {type(exc).__name__}: {exc}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
