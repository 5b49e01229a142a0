"""The trust check before a verify command runs (docs/security.md): verify-next and run refuse,
with exit 4, a command no person approved on this machine; and whether a person is typing."""

from __future__ import annotations

from resume_kit.core.typing_light import TYPE_CHECKING
from resume_kit.infra.errors import UntrustedCommandError

if TYPE_CHECKING:
    from pathlib import Path

    from resume_kit.model.progress import Unit


def person_at_terminal() -> bool:
    """Whether a person is typing this command: standard input is a terminal. An agent's
    shell tool gives it a pipe, so what an agent changes is never approved by changing it."""
    import sys

    return sys.stdin is not None and sys.stdin.isatty()


def require_approved(root: Path, units: list[Unit]) -> None:
    """Raise unless every verify command among ``units`` is approved for the work tree at
    ``root``. One refused command is named with its text; several are counted and listed."""
    from resume_kit.cli.display.common import id_list, shown
    from resume_kit.infra.trust import untrusted

    refused = untrusted(root, units)
    if len(refused) == 1:
        first = refused[0]
        raise UntrustedCommandError(
            f"unit '{first.id}': verify command not approved on this machine: "
            f"{shown(first.verify or '')}",
            hint="it did not come from `resume-kit add/plan/init` here (a pull or a hand edit?); "
            "a person must read it and approve it with `resume-kit trust`",
        )
    if refused:
        raise UntrustedCommandError(
            f"{len(refused)} verify commands are not approved on this machine: "
            f"{id_list([u.id for u in refused])}",
            hint="they did not come from `resume-kit add/plan/init` here (a pull or a hand "
            "edit?); a person must read them and approve them with `resume-kit trust`",
        )
