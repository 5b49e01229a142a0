"""`resume-kit integrate claude|codex|gemini|cursor|copilot|aider|agents-md [--remove]`."""

from __future__ import annotations

from pathlib import Path

from resume_kit.cli.ui import out, warn
from resume_kit.integrations import settings


def _shown(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return str(path)


def _apply(
    path: Path,
    root: Path | None,
    remove: bool,
    specs: list[settings.HookSpec],
    project: bool,
) -> int:
    where = _shown(path, root)
    if remove:
        ours = settings.OUR_ARGS | {spec.args for spec in specs}
        change = settings.uninstall(path, remove_empty_dir=project, root=root, args=ours)
        if not change.wrote:
            out(f"no resume-kit hooks in {where}: nothing changed")
        elif change.deleted:
            out(
                f"removed resume-kit {', '.join(change.events)} hooks; {where} held nothing "
                "else and was removed"
            )
        else:
            out(f"removed resume-kit {', '.join(change.events)} hooks from {where}")
        return 0
    change = settings.install(path, specs, root)
    if change.wrote:
        out(f"added resume-kit {', '.join(change.events)} hooks to {where}")
    else:
        out(f"resume-kit hooks already in {where}: nothing changed")
    if settings.executable() is None:
        warn(
            "`resume-kit` is not on PATH and this process is not its script: the hooks call "
            "it through PATH, so they fail until it is (for example: pipx install resume-kit)"
        )
    return 0


def claude(user: bool, remove: bool, stop_verify: bool, local: bool = False) -> int:
    from resume_kit.integrations import claude as claude_paths

    root: Path | None = None
    if user:
        path = claude_paths.user_settings()
    else:
        from resume_kit.infra.paths import find_layout

        root = find_layout().root
        path = (claude_paths.local_settings if local else claude_paths.project_settings)(root)
    exe = settings.executable()
    python = None if remove else settings.hook_python()
    specs = [
        *settings.specs_for(stop_verify, exe, python=python),
        *claude_paths.tool_specs(python, exe),
    ]
    where = _shown(path, root)
    if remove:
        denied = claude_paths.remove_deny_rules(path, root)
        code = _apply(path, root, remove, specs, project=not user)
        if denied:
            out(f"removed the rules denying the agent `resume-kit trust` from {where}")
        return code
    code = _apply(path, root, remove, specs, project=not user)
    if claude_paths.add_deny_rules(path, root):
        out(
            f"added permission rules to {where} that deny the agent `resume-kit trust`: "
            "approving a command is a person's act"
        )
    return code


def codex(remove: bool, stop_verify: bool) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations import codex as codex_paths

    root = find_layout().root
    exe = settings.executable()
    python = None if remove else settings.hook_python()
    specs = [*codex_paths.specs(stop_verify, exe, python), *codex_paths.tool_specs(python, exe)]
    code = _apply(codex_paths.project_hooks(root), root, remove, specs, project=True)
    if not remove:
        for line in codex_paths.REQUIREMENTS:
            out(line)
    return code


def gemini(remove: bool, stop_verify: bool) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations import gemini as gemini_paths

    root = find_layout().root
    exe = settings.executable()
    python = None if remove else settings.hook_python()
    specs = [*gemini_paths.specs(exe, stop_verify, python), *gemini_paths.tool_specs(python, exe)]
    return _apply(gemini_paths.project_settings(root), root, remove, specs, project=True)


def cursor(remove: bool) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations import cursor as cursor_conf

    for line in cursor_conf.apply(find_layout().root, settings.executable(), remove):
        out(line)
    return 0


def copilot(remove: bool) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations import copilot as copilot_conf

    python = None if remove else settings.hook_python()
    root = find_layout().root
    for line in copilot_conf.apply(root, settings.executable(), remove, python):
        out(line)
    return 0


def aider(remove: bool) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations import aider as aider_conf

    layout = find_layout()
    for line in (aider_conf.uninstall if remove else aider_conf.install)(layout.root, layout):
        out(line)
    return 0


def agents_md(files: list[str], remove: bool) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.integrations import agents_md as block

    root = find_layout().root
    for name in files:
        out(block.apply(root, name, remove))
    return 0
