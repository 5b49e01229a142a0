"""``resume-kit trust``: list verify commands not approved on this machine, and approve them."""

from __future__ import annotations

from resume_kit.errors import EXIT_OK, ResumeKitError
from resume_kit.ui import PROG, info, out


def run(show: bool) -> int:
    from resume_kit.paths import find_layout
    from resume_kit.progress_io import load
    from resume_kit.trust import approve, display_command, trust_all, untrusted

    layout = find_layout()
    try:
        units = load(layout).progress.units
    except ResumeKitError as exc:
        # trust works without a valid progress file (SPEC 3): there is just nothing to approve.
        info(f"{PROG}: warning: {exc.message}")
        info(f"{PROG}: nothing to approve")
        return EXIT_OK
    pending = untrusted(layout.root, units)
    if not pending:
        reason = " (RESUME_KIT_TRUST=all approves everything)" if trust_all() else ""
        info(f"{PROG}: nothing to approve{reason}")
        return EXIT_OK
    for unit in pending:
        out(f"{unit.id}: {display_command(unit.verify or '')}")
    count = len(pending)
    noun = "command" if count == 1 else "commands"
    if show:
        info(f"{PROG}: {count} {noun} not approved; run `resume-kit trust` to approve them")
        return EXIT_OK
    approve(layout.root, pending)
    info(f"{PROG}: approved {count} verify {noun} for {layout.root}")
    return EXIT_OK
