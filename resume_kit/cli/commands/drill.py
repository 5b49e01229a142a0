"""``resume-kit drill``: rehearse a resume in a throwaway work tree and print its receipt.

The engine is :mod:`resume_kit.runner.drill`. The receipt (text and JSON) is saved in the
user's data directory, one folder per work tree (``drills/<key>/``), or in
``.resume-kit/drills/`` when asked (``--in-repo``); receipts are never read back from the repo.
"""

from __future__ import annotations

import json
from pathlib import Path

from resume_kit.cli.ui import hint, info, out, print_json
from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import EXIT_OK, EXIT_USAGE, EXIT_VERIFY_FAILED, ResumeKitError


def receipt_text(data: dict[str, Any]) -> str:
    lines = [
        f"drill {data['trace']} (seed {data['seed']}): "
        + ("every invariant held" if data["ok"] else "an invariant broke"),
        f"  kills: {len(data['kills'])} of {data['kills_requested']} asked; "
        f"ran: {', '.join(data['ran']) or 'nothing'}; rerun: {', '.join(data['rerun']) or 'none'}",
    ]
    for kill in data["kills"]:
        resume = f"{kill['resume_s']:.2f}s" if kill["resume_s"] is not None else "n/a"
        lost = f"; its pass cut off while written: {', '.join(kill['lost_pass'])}"
        lines.append(
            f"  kill {kill['n']}: at unit start {kill['after_start']} ({kill['event']}), "
            f"interrupted {kill['interrupted'] or 'none'}, lost {kill['lost_s']:.2f}s, "
            f"resume took {resume}" + (lost if kill["lost_pass"] else "")
        )
    for inv in data["invariants"]:
        mark = "held  " if inv["held"] else "BROKEN"
        lines.append(f"  {mark} {inv['text']}")
        for b in inv["broken"]:
            at = f"kill {b['kill']}" if b["kill"] is not None else "after the drill"
            lines.append(f"           {at}, unit {b['unit'] or '-'}: {b['detail']}")
    for s in data["skipped"]:
        lines.append(f"  skipped {s['unit']}: {s['reason']}")
    if data["leased"]:
        lines.append(f"  leased by the drill (released): {', '.join(data['leased'])}")
    if data["worktree"]:
        lines.append(f"  kept: {data['worktree']}")
    return "\n".join(lines)


def receipt_dir(layout: Any, in_repo: bool) -> Path:
    """Where the receipt goes; with ``in_repo`` the checked ``.resume-kit/drills`` (a symlink
    there or on the way, or a file of that name, is refused with one line, exit 2)."""
    if in_repo:
        folder: Path = layout.drills_folder()
        folder.mkdir(exist_ok=True)
        checked: Path = layout.drills_folder()  # again: nothing swapped in while it was made
        return checked
    from platformdirs import user_data_dir

    from resume_kit.core.digest import sha256_hex
    from resume_kit.infra.cachedir import ensure_private

    key = sha256_hex(f"{layout.root}\0{layout.git_common_dir}".encode())[:32]
    base = Path(user_data_dir("resume-kit", appauthor=False)) / "drills"
    return Path(ensure_private(str(base / key)))


def run(
    kills: int, seed: int | None, units: int | None, keep: bool, in_repo: bool, json_out: bool
) -> int:
    import random

    from resume_kit.infra.collector import long_lived_process
    from resume_kit.infra.paths import find_layout
    from resume_kit.infra.store import atomic_write
    from resume_kit.infra.trust import untrusted
    from resume_kit.progress_file import config as config_mod
    from resume_kit.progress_file import io as progress_io
    from resume_kit.runner.drill import Drill, skip_reason

    if kills < 0 or (units is not None and units < 1):
        raise ResumeKitError("--kills must be 0 or more, --units 1 or more", hint="see --help")
    long_lived_process()  # a rehearsal runs batch after batch
    layout = find_layout()
    progress = progress_io.load(layout).progress
    pending = [u for u in progress.units if u.status in ("todo", "in_progress") and u.verify]
    if not pending:
        raise ResumeKitError(
            "nothing to rehearse: no unit left with a verify command",
            hint='add one with `resume-kit add "TITLE" --verify "COMMAND"`',
        )
    patterns = config_mod.load(layout).side_effect_patterns
    # a side-effect unit is never run by the drill, so it needs no approval for it
    refused = untrusted(layout.root, [u for u in pending if not skip_reason(u, patterns, {})])
    if refused:
        raise ResumeKitError(
            "not approved: " + ", ".join(u.id for u in refused),
            hint="a person must approve them with `resume-kit trust` before a drill runs them",
        )
    if in_repo:
        layout.drills_folder()  # refused before the drill runs, not after
    seed = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
    receipt = Drill(layout, kills, seed, units, keep).run()
    data = receipt.to_json()
    text = receipt_text(data)
    folder = receipt_dir(layout, in_repo)
    stem = f"{data['trace']}"
    atomic_write(folder / f"{stem}.json", json.dumps(data, indent=2) + "\n")
    atomic_write(folder / f"{stem}.txt", text + "\n")
    if json_out:
        print_json({**data, "saved": str(folder / f"{stem}.json")})
    else:
        out(text)
        info(f"  receipt: {folder / stem}.txt")
        if not receipt.ok:
            hint("a real resume would not have been right: fix what broke, then drill again")
    return EXIT_OK if receipt.ok else EXIT_VERIFY_FAILED


__all__ = ["EXIT_USAGE", "receipt_text", "run"]
