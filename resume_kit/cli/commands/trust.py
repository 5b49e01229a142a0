"""``resume-kit trust [--show] [--yes]``: show the verify commands and the brief template that
no person approved on this machine, and let a person approve them.

Approving is a person's act: on a terminal each item is shown and asked about (y/N); with no
terminal nothing is approved and the exit code is 4, unless ``--yes`` is given, which a
person types to approve everything listed. ``--show`` only lists.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from resume_kit.cli.ui import out, say, warn
from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.typing_light import TYPE_CHECKING
from resume_kit.infra.errors import EXIT_OK, ResumeKitError, UntrustedCommandError

if TYPE_CHECKING:
    from resume_kit.infra.paths import Layout

ASK_HINT = "a person must read them and approve them by running `resume-kit trust` in a terminal"


@dataclass(frozen=True)
class _Item:
    noun: str  # "verify command" | "brief template"
    lines: list[str]  # what is shown, already escaped for the terminal
    approve: Callable[[], int]


def _command_items(layout: Layout) -> list[_Item]:
    from resume_kit.infra.trust import approve, display_command, untrusted
    from resume_kit.progress_file.io import load

    root = layout.root
    try:
        units = load(layout).progress.units
    except ResumeKitError as exc:
        # trust works without a valid progress file (SPEC 3): there is just nothing to approve.
        warn(exc.message)
        return []
    return [
        _Item(
            "verify command",
            [f"{unit.id}: {display_command(unit.verify or '')}"],
            lambda unit=unit: approve(root, [unit]),  # type: ignore[misc]
        )
        for unit in untrusted(root, units)
    ]


def _template_items(root: Path) -> list[_Item]:
    from resume_kit.brief import repo_template
    from resume_kit.infra.trust import approve_template, display_command, template_trusted

    try:
        found = repo_template.find(root)
    except ResumeKitError as exc:
        warn(exc.message)
        return []
    if found is None or template_trusted(root, found.rel_path, found.sha256):
        return []
    body = found.source.splitlines()
    lines = [
        f"brief template {found.rel_path} (sha256 {found.sha256[:16]}…, "
        f"{len(body)} line{'' if len(body) == 1 else 's'}):",
        *(f"  | {display_command(line)}" for line in body),
    ]
    return [
        _Item("brief template", lines, lambda: approve_template(root, found.rel_path, found.sha256))
    ]


def _count(items: list[_Item]) -> str:
    commands = sum(1 for i in items if i.noun == "verify command")
    parts = []
    if commands:
        parts.append(f"{commands} verify command{'' if commands == 1 else 's'}")
    if len(items) > commands:
        parts.append("the brief template")
    return " and ".join(parts)


def _ask(item: _Item) -> bool:
    for line in item.lines:
        out(line)
    sys.stderr.write(f"approve this {item.noun}? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer:  # end of input: nothing more is approved
        sys.stderr.write("\n")
        return False
    return answer.strip().lower() in ("y", "yes")


def run(show: bool, yes: bool = False) -> int:
    from resume_kit.infra.paths import find_layout
    from resume_kit.infra.trust import trust_all

    layout = find_layout()
    root = layout.root
    items = [*_command_items(layout), *_template_items(root)]
    if not items:
        reason = " (RESUME_KIT_TRUST=all approves everything)" if trust_all() else ""
        say(f"nothing to approve{reason}")
        return EXIT_OK
    interactive = not show and not yes and sys.stdin.isatty()
    if not interactive:
        for item in items:
            for line in item.lines:
                out(line)
    if show:
        say(f"{_count(items)} not approved; {ASK_HINT}")
        return EXIT_OK
    if not yes and not interactive:
        raise UntrustedCommandError(
            f"nothing approved: {_count(items)} need a person's approval and there is no "
            "terminal to ask on",
            hint=ASK_HINT,
        )
    answers = [True] * len(items) if yes else [_ask(item) for item in items]
    chosen = [item for item, ok in zip(items, answers, strict=True) if ok]
    left = [item for item, ok in zip(items, answers, strict=True) if not ok]
    for item in chosen:
        item.approve()
    if chosen:
        say(f"approved {_count(chosen)} for {root}")
    if left:
        say(f"not approved: {_count(left)}")
    return EXIT_OK
