"""Merge our hooks into an agent's JSON settings (Claude Code ``settings.json``, Codex
``hooks.json``), keeping every other setting and hook, and take them out again.

The shape both agents read::

    {"hooks": {"SessionStart": [{"matcher": "startup|...", "hooks": [
        {"type": "command", "command": "...", "timeout": 30}]}]}}

Our entries are recognised by their exact command line (the resume-kit executable, see
:func:`command_line`, then one of our exact argument lists), so a person's own resume-kit hook
with other options is never touched; an entry of ours that is out of date (another executable,
matcher or timeout) is replaced in place. The merge itself is pure (``add_hooks``,
``remove_hooks``); ``update_file`` does the I/O: key order and indentation are kept, a file
that does not parse is refused untouched, and nothing is written when nothing changes.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ResumeKitError
from resume_kit.infra.safefs import (
    FileTooLarge,
    NotARegularFile,
    contained,
    open_regular,
)
from resume_kit.infra.store import atomic_write

SESSION_START_MATCHER = "startup|resume|clear|compact|fork"
BRIEF_ARGS = "brief --format claude-hook"
SNAPSHOT_ARGS = "snapshot --quiet --trigger pre-compact"
STOP_ARGS = "stop-check"
# The tool hooks (issue 15): `hook-tool pre|post [--agent NAME]`.
TOOL_PRE_ARGS = "hook-tool pre"
TOOL_POST_ARGS = "hook-tool post"
TOOL_MODULE = "resume_kit.integrations.tool_hook"
# The hooks run `"$RK" ARGS` from the agent's shell: RK is the executable `integrate` ran as
# (a venv's script works from any shell), or `resume-kit` on PATH once that file is gone.
_FALLBACK = re.compile(r'RK=(?P<exe>.+); \[ -x "\$RK" \] \|\| RK=resume-kit; "\$RK" (?P<args>.+)')
# The start of both entry-script commands: the interpreter and the entry script, both still there
# (see _entry_guard).
_ENTRY_GUARD = r'PY=(?P<py>.+); E=(?P<entry>.+); \[ -x "\$PY" \] && \[ -f "\$E" \] && '
# A tool hook runs on every shell call, so it skips the CLI (typer costs ~70 ms a call): the
# interpreter `integrate` ran with, isolated, runs cli/isolated_entry.py by path with site-packages
# (past its fast path the hook may need PyYAML); `resume-kit` on PATH if not.
_TOOL = re.compile(
    _ENTRY_GUARD + r'"\$PY" -I "\$E" hook-tool (?P<rest>.+) \|\| resume-kit hook-tool (?P=rest)'
)
# The tool hooks as resume-kit wrote them until 2026-12-07: `python -I -m` the hook module, whose
# runpy start cost ~6 ms a call more. Recognised, so `integrate` replaces them.
_TOOL_BY_MODULE = re.compile(
    r'PY=(?P<py>.+); \[ -x "\$PY" \] && "\$PY" -I -m resume_kit\.integrations\.tool_hook '
    r"(?P<rest>.+) \|\| resume-kit hook-tool (?P=rest)"
)
# A brief hook is the start of every session: the interpreter `integrate` ran with starts
# cli/isolated_entry.py by path with -I -S (no site-packages start-up, nothing from the current
# folder on sys.path); `resume-kit` on PATH once either file is gone.
_ISOLATED = re.compile(
    _ENTRY_GUARD + r'exec "\$PY" -I -S "\$E" (?P<args>.+); exec resume-kit (?P=args)'
)
ENTRY_SCRIPT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cli", "isolated_entry.py"
)


def executable() -> str | None:
    """The absolute path of the resume-kit script this process runs as, else the one on PATH."""
    import shutil

    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "resume-kit" and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    found = shutil.which("resume-kit")
    return os.path.abspath(found) if found else None


def command_line(args: str, exe: str | None) -> str:
    if exe is None:
        return f"resume-kit {args}"
    return f'RK={shlex.quote(exe)}; [ -x "$RK" ] || RK=resume-kit; "$RK" {args}'


def _entry_guard(python: str) -> str:
    """``python`` and :data:`ENTRY_SCRIPT` in ``PY`` and ``E``, each checked to be still there
    (what :data:`_ENTRY_GUARD` recognises)."""
    quoted = f"PY={shlex.quote(python)}; E={shlex.quote(ENTRY_SCRIPT)}; "
    return quoted + '[ -x "$PY" ] && [ -f "$E" ] && '


def tool_command_line(args: str, python: str) -> str:
    """``args`` (``hook-tool …``) run by ``python -I`` :data:`ENTRY_SCRIPT`, else by PATH."""
    return _entry_guard(python) + f'"$PY" -I "$E" {args} || resume-kit {args}'


def isolated_command_line(args: str, python: str) -> str:
    """``args`` (``brief …``) run by ``python -I -S`` :data:`ENTRY_SCRIPT`, else by PATH."""
    return _entry_guard(python) + f'exec "$PY" -I -S "$E" {args}; exec resume-kit {args}'


def command_args(command: str) -> str | None:
    """The resume-kit arguments of a command line :func:`command_line` (or
    :func:`tool_command_line`, :func:`isolated_command_line`) wrote, else None."""
    if command.startswith("resume-kit "):
        return command[len("resume-kit ") :]
    match = _FALLBACK.fullmatch(command) or _ISOLATED.fullmatch(command)
    if match:
        return match["args"]
    tool = _TOOL.fullmatch(command) or _TOOL_BY_MODULE.fullmatch(command)
    return f"hook-tool {tool['rest']}" if tool else None


@dataclass(frozen=True)
class HookSpec:
    event: str
    args: str
    matcher: str | None = None
    timeout: int = 30
    exe: str | None = None
    # Extra keys of the hook entry (Codex's `additionalContextLimit`).
    extra: tuple[tuple[str, Any], ...] = ()
    # Arguments an older resume-kit wrote for this hook: such an entry is replaced.
    replaces: tuple[str, ...] = ()
    # The interpreter that runs the entry script directly, for a tool hook or a brief hook
    # (see tool_command_line, isolated_command_line).
    python: str | None = None

    @property
    def command(self) -> str:
        if self.python is not None and self.args.startswith("brief "):
            return isolated_command_line(self.args, self.python)
        if self.python is not None:
            return tool_command_line(self.args, self.python)
        return command_line(self.args, self.exe)

    def hook(self) -> dict[str, Any]:
        return {
            "type": "command",
            "command": self.command,
            "timeout": self.timeout,
            **dict(self.extra),
        }

    def group(self) -> dict[str, Any]:
        group: dict[str, Any] = {}
        if self.matcher is not None:
            group["matcher"] = self.matcher
        group["hooks"] = [self.hook()]
        return group


SESSION_START = HookSpec("SessionStart", BRIEF_ARGS, SESSION_START_MATCHER)
# Claude Code (2.1.332) shows a PostCompact hook's plain stdout to the model after /compact; the
# brief command delivers once per compaction between this and SessionStart(compact).
POST_COMPACT = HookSpec("PostCompact", BRIEF_ARGS)
PRE_COMPACT = HookSpec("PreCompact", SNAPSHOT_ARGS)
STOP = HookSpec("Stop", STOP_ARGS, timeout=600)
ALL_SPECS = (SESSION_START, POST_COMPACT, PRE_COMPACT, STOP)
TOOL_ARGS = frozenset(
    f"{args}{suffix}"
    for args in (TOOL_PRE_ARGS, TOOL_POST_ARGS)
    for suffix in ("", " --agent codex", " --agent gemini", " --agent cursor")
)
OUR_ARGS = frozenset({BRIEF_ARGS, SNAPSHOT_ARGS, STOP_ARGS}) | TOOL_ARGS


def hook_python() -> str | None:
    """This interpreter, when it runs our hooks as the agent will: isolated (``-I``: no current
    folder, no PYTHONPATH) it imports the tool hook's module and typer (which a brief that must
    be built needs once site-packages are loaded), and it runs :data:`ENTRY_SCRIPT` with ``-I
    -S`` from ``/`` (the tool hooks run it with ``-I``: site-packages at the start); else None
    (the hooks then call the resume-kit script)."""
    import subprocess

    checks = (
        ([sys.executable, "-I", "-c", f"import {TOOL_MODULE}, typer"], b""),
        ([sys.executable, "-I", "-S", ENTRY_SCRIPT, "--version"], b"resume-kit "),
    )
    for argv, printed in checks:
        try:
            proc = subprocess.run(
                argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL, cwd="/"
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode != 0 or not proc.stdout.startswith(printed):
            return None
    return sys.executable


def tool_specs(
    matcher: str, python: str | None, exe: str | None, agent: str | None = None,
    post_events: tuple[str, ...] = ("PostToolUse",), pre_event: str = "PreToolUse",
    timeout: int = 15, post_matcher: str | None = "",
) -> list[HookSpec]:  # fmt: skip
    """The before- and after-tool hooks: one before event, one or more after events
    (``post_matcher`` "" means the same matcher, None every tool)."""
    suffix = f" --agent {agent}" if agent else ""
    pre = HookSpec(pre_event, TOOL_PRE_ARGS + suffix, matcher, timeout, exe, python=python)
    after = matcher if post_matcher == "" else post_matcher
    posts = [
        HookSpec(event, TOOL_POST_ARGS + suffix, after, timeout, exe, python=python)
        for event in post_events
    ]
    return [pre, *posts]


class SettingsError(ResumeKitError):
    """The settings file cannot be read or has a shape we must not guess about."""


def specs_for(
    stop_verify: bool, exe: str | None = None, post_compact: bool = True, python: str | None = None
) -> list[HookSpec]:
    """Claude Code's hooks; the brief ones run by ``python`` (:func:`hook_python`) when given."""
    from resume_kit.core.light_dataclass import replace

    briefs = [SESSION_START, *([POST_COMPACT] if post_compact else [])]
    rest = [PRE_COMPACT, *([STOP] if stop_verify else [])]
    return [replace(spec, exe=exe, python=python) for spec in briefs] + [
        replace(spec, exe=exe) for spec in rest
    ]


# --------------------------------------------------------------------------- pure merge


def _is_ours(hook: Any, args: Iterable[str]) -> bool:
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    return command_args(hook["command"]) in set(args)


def _place(groups: list[Any], spec: HookSpec) -> bool:
    """Put ``spec``'s hook into ``groups`` once; True when ``groups`` changed.

    An entry of ours that is out of date (another executable, an older argument list, a missing
    extra key, an older matcher) is brought up to date in place, keeping the person's own keys
    (a timeout they changed). A group shared with the person's hooks keeps its matcher.
    """
    for index, group in enumerate(groups):
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            continue
        for position, hook in enumerate(inner):
            if not _is_ours(hook, [spec.args, *spec.replaces]):
                continue
            new_hook = {**hook, "command": spec.command, **dict(spec.extra)}
            new_group = dict(group)
            if len(inner) == 1:
                new_group.pop("matcher", None)
                if spec.matcher is not None:
                    new_group = {"matcher": spec.matcher, **new_group}
            new_group["hooks"] = [*inner[:position], new_hook, *inner[position + 1 :]]
            if new_group == group:
                return False
            groups[index] = new_group
            return True
    groups.append(spec.group())
    return True


def add_hooks(
    settings: dict[str, Any], specs: Sequence[HookSpec], where: str = "settings"
) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``settings`` with each spec's hook present once; and the events changed."""
    result = copy.deepcopy(settings)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'{where}: "hooks" is not an object', hint="fix it by hand first")
    added: list[str] = []
    for spec in specs:
        groups = hooks.setdefault(spec.event, [])
        if not isinstance(groups, list):
            raise SettingsError(
                f'{where}: "hooks.{spec.event}" is not a list', hint="fix it by hand first"
            )
        if _place(groups, spec):
            added.append(spec.event)
    if not hooks and "hooks" not in settings:
        del result["hooks"]
    return result, added


def remove_hooks(
    settings: dict[str, Any], commands: Iterable[str] = OUR_ARGS
) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``settings`` without our hooks, and the events they were removed from.

    A group, event list or ``hooks`` object left empty by the removal goes too; anything that
    was already empty or is not in the expected shape is left exactly as it was.
    """
    commands = set(commands)
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result, []
    removed: list[str] = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups: list[Any] = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list) or not any(_is_ours(h, commands) for h in inner):
                kept_groups.append(group)
                continue
            if event not in removed:
                removed.append(event)
            rest = [h for h in inner if not _is_ours(h, commands)]
            if rest:
                kept_groups.append({**group, "hooks": rest})
        if event in removed:
            if kept_groups:
                hooks[event] = kept_groups
            else:
                del hooks[event]
    if removed and not hooks:
        del result["hooks"]
    return result, removed


# --------------------------------------------------------------------------- file I/O


@dataclass
class SettingsFile:
    path: Path
    data: dict[str, Any]
    existed: bool
    indent: int | str
    mode: int | None


def _indent_of(text: str) -> int | str:
    for line in text.splitlines()[1:]:
        body = line.lstrip(" \t")
        if body and body != line:
            prefix = line[: len(line) - len(body)]
            return "\t" if prefix.startswith("\t") else len(prefix)
    return 2


MAX_SETTINGS_BYTES = 4 * 1024 * 1024


def settings_target(path: Path, root: Path | None) -> Path:
    """The file to read and write. In a work tree (``root``) nothing is followed: a symlink
    on the way (``.claude`` itself included) is refused. The user's own file may be a
    symlink they made (dotfiles): its target is read and written, so the link stays."""
    if root is not None:
        return contained(root, path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def read_settings(path: Path, root: Path | None = None) -> SettingsFile:
    """``path`` parsed (see :func:`settings_target` for ``root``); never blocks on a FIFO."""
    path = settings_target(path, root)
    try:
        with open_regular(path, follow=root is None) as handle:
            raw = handle.read(MAX_SETTINGS_BYTES + 1)
            mode = os.fstat(handle.fileno()).st_mode & 0o7777
        if len(raw) > MAX_SETTINGS_BYTES:
            raise FileTooLarge(path, len(raw), MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        return SettingsFile(path, {}, False, 2, None)
    except NotARegularFile as exc:
        raise SettingsError(
            f"{path} is not a regular file ({exc.kind}); nothing was changed",
            hint="move it away, then run the command again",
        ) from None
    except FileTooLarge:
        raise SettingsError(
            f"{path} is larger than {MAX_SETTINGS_BYTES // (1024 * 1024)} MiB; nothing was changed",
            hint="fix the file by hand",
        ) from None
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SettingsError(
            f"{path} is not UTF-8 text; nothing was changed", hint="fix the file by hand"
        ) from None
    if not text.strip():
        data: Any = {}
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SettingsError(
                f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); nothing was changed",
                hint="fix the file (or move it away), then run the command again",
            ) from None
        except RecursionError:
            raise SettingsError(f"{path}: nested too deeply; nothing was changed") from None
    if not isinstance(data, dict):
        raise SettingsError(
            f"{path}: the top level is not a JSON object; nothing was changed",
            hint="fix the file by hand",
        )
    return SettingsFile(path, data, True, _indent_of(text), mode)


def render(data: dict[str, Any], indent: int | str = 2) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Change:
    events: list[str]  # events we added to or removed from
    wrote: bool
    deleted: bool = False


def install(path: Path, specs: Sequence[HookSpec], root: Path | None = None) -> Change:
    """Add our hooks to ``path`` (a project file when ``root`` is its work tree)."""
    current = read_settings(path, root)
    new, added = add_hooks(current.data, specs, str(current.path))
    if not added:
        return Change([], wrote=False)
    atomic_write(current.path, render(new, current.indent), mode=current.mode)
    return Change(added, wrote=True)


def uninstall(
    path: Path,
    remove_empty_dir: bool = False,
    root: Path | None = None,
    args: Iterable[str] = OUR_ARGS,
) -> Change:
    """Take our hooks out of ``path``; a file left holding nothing at all is removed (but a
    user's symlink is kept, its target then holding ``{}``)."""
    current = read_settings(path, root)
    if not current.existed:
        return Change([], wrote=False)
    new, removed = remove_hooks(current.data, args)
    if not removed:
        return Change([], wrote=False)
    if not new and current.path == path:
        path.unlink()
        if remove_empty_dir:
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # only succeeds when nothing else is in it
        return Change(removed, wrote=True, deleted=True)
    atomic_write(current.path, render(new, current.indent), mode=current.mode)
    return Change(removed, wrote=True)
