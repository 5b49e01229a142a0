"""Which verify commands this user approved to run, per repository (the direnv model, SPEC 5).

An approval is the sha256 of (real absolute repo root, command), kept in
``<user data dir>/resume-kit/trust.json`` (``$XDG_DATA_HOME`` honoured), never in the repo. The
key covers a command's exact text, not the unit id nor the whole progress file, so status
updates, evidence, renamed units and hand edits that keep the text never revoke trust, while a
pulled, hand-edited or branch-switched command is refused until ``resume-kit trust`` approves
it. Keys written before (root, unit id, command) are still honoured. A repository's brief
template is approved the same way, keyed by (real repo root, its relative path, sha256 of its
content). ``RESUME_KIT_TRUST=all`` approves everything without asking: for CI only, and it says
so on stderr when it takes effect.

The file stores keys, the root and the id of the unit it was approved for (to read only),
never the command itself (it may hold a secret). Writes are atomic under a lock file, so concurrent approvals lose nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from resume_kit.core.digest import sha256
from resume_kit.core.typing_light import TYPE_CHECKING, Any
from resume_kit.infra.store import FileLock, atomic_write

if TYPE_CHECKING:
    from resume_kit.infra.paths import Layout
    from resume_kit.model.progress import Unit

TRUST_ENV = "RESUME_KIT_TRUST"
FILE_NAME = "trust.json"
FORMAT_VERSION = 1


def trust_all() -> bool:
    """True when ``RESUME_KIT_TRUST=all`` approves every command (CI)."""
    return os.environ.get(TRUST_ENV, "").strip().lower() == "all"


_warned_trust_all = False


def _trust_all_took_effect() -> None:
    """One line on stderr, once per process, when ``RESUME_KIT_TRUST=all`` approved something
    this user never approved: it is meant for CI, never for a person's machine."""
    global _warned_trust_all
    if _warned_trust_all:
        return
    _warned_trust_all = True
    from resume_kit.cli.ui import warn

    warn(
        "RESUME_KIT_TRUST=all approves every verify command and brief "
        "template without asking (meant for CI only)"
    )


def trust_file() -> Path:
    from resume_kit.infra.userdirs import user_data_dir

    return user_data_dir() / FILE_NAME


def _real_root(root: Path) -> str:
    return os.path.realpath(root)


def approval_key(root: Path, command: str) -> str:
    """sha256 over a tag, the real root and the command, NUL-separated (no ambiguity; the tag
    keeps it apart from the older per-unit keys and the template keys)."""
    material = "\0".join(("command", _real_root(root), command))
    return sha256(material.encode("utf-8", "surrogateescape")).hexdigest()


def legacy_approval_key(root: Path, unit_id: str, command: str) -> str:
    """The key approvals had before they followed the command text: (root, unit id, command)."""
    material = "\0".join((_real_root(root), unit_id, command))
    return sha256(material.encode("utf-8", "surrogateescape")).hexdigest()


def _approved_in(approved: dict[str, Any], root: Path, unit_id: str, command: str) -> bool:
    return (
        approval_key(root, command) in approved
        or legacy_approval_key(root, unit_id, command) in approved
    )


def template_key(root: Path, rel_path: str, digest: str) -> str:
    """sha256 over a tag, the real root, the template's relative path and its content's
    sha256; the tag keeps it apart from every command key (those start with the root)."""
    material = "\0".join(("template", _real_root(root), rel_path, digest))
    return sha256(material.encode("utf-8", "surrogateescape")).hexdigest()


MAX_TRUST_BYTES = 64 * 1024 * 1024


def _read_checked(path: Path) -> tuple[dict[str, Any], bool]:
    """(approvals, malformed): a missing file is no approvals; a malformed one is flagged."""
    from resume_kit.infra.safefs import read_regular

    try:  # the user's own file (a link they made is followed), but never a FIFO or device
        data = json.loads(read_regular(path, MAX_TRUST_BYTES, follow=True))
    except FileNotFoundError:
        return {}, False
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}, True
    approved = data.get("approved") if isinstance(data, dict) else None
    if not isinstance(approved, dict):
        return {}, True
    return approved, False


def _read(path: Path) -> dict[str, Any]:
    """The approvals mapping; an unreadable or malformed file counts as no approvals."""
    return _read_checked(path)[0]


def _pairs(items: Iterable[Unit | tuple[str, str]]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, tuple):
            pairs.append(item)
        elif item.verify is not None:
            pairs.append((item.id, item.verify))
    return pairs


def is_trusted(root: Path, unit_id: str, command: str, *, honour_env: bool = True) -> bool:
    if _approved_in(_read(trust_file()), root, unit_id, command):
        return True
    if honour_env and trust_all():
        _trust_all_took_effect()
        return True
    return False


def untrusted(root: Path, units: Iterable[Unit], *, honour_env: bool = True) -> list[Unit]:
    """The units whose verify command this user has not approved for ``root``, in order
    (``honour_env=False``: as the trust store alone says, ignoring ``RESUME_KIT_TRUST``)."""
    units = [u for u in units if u.verify is not None]
    if not units:
        return []
    approved = _read(trust_file())
    pending = [u for u in units if not _approved_in(approved, root, u.id, u.verify or "")]
    if pending and honour_env and trust_all():
        _trust_all_took_effect()
        return []
    return pending


def template_trusted(root: Path, rel_path: str, digest: str, *, honour_env: bool = True) -> bool:
    """Whether this user approved this exact template content for ``root``."""
    if template_key(root, rel_path, digest) in _read(trust_file()):
        return True
    if honour_env and trust_all():
        _trust_all_took_effect()
        return True
    return False


def approve_template(root: Path, rel_path: str, digest: str) -> int:
    """Approve one template content for ``root``; 1 when the approval is new."""
    entry = {"root": _real_root(root), "template": rel_path, "sha256": digest}
    return _store([(template_key(root, rel_path, digest), entry)])


def approve(root: Path, items: Iterable[Unit | tuple[str, str]]) -> int:
    """Approve ``items`` (units with a verify command, or ``(unit_id, command)`` pairs) for
    ``root``. Returns how many approvals were new."""
    real = _real_root(root)
    return _store(
        [
            (approval_key(root, command), {"root": real, "unit": unit_id})
            for unit_id, command in _pairs(items)
        ]
    )


def _store(entries: list[tuple[str, dict[str, str]]]) -> int:
    """Add ``(key, entry)`` approvals to the trust file; how many were new."""
    if not entries:
        return 0
    from resume_kit.model.progress import now_iso

    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path):
        approved, malformed = _read_checked(path)
        if malformed:
            # Keep an unreadable file for the user instead of silently replacing it.
            os.replace(path, path.with_name(path.name + ".corrupt"))
        added = 0
        stamp = now_iso()
        for key, entry in entries:
            if key not in approved:
                approved[key] = {**entry, "at": stamp}
                added += 1
        if added:
            body = {"format": FORMAT_VERSION, "approved": approved}
            atomic_write(path, json.dumps(body, indent=1, sort_keys=True) + "\n", mode=0o600)
    return added


def approve_created(layout: Layout, units: Iterable[Unit]) -> int:
    """Approve the verify commands of units just created on this machine (add/plan/import)."""
    return approve(layout.root, list(units))


def display_command(command: str) -> str:
    """A command safe to print on a terminal: control characters escaped, one line."""
    from resume_kit.core.escape import escape_controls

    return escape_controls(command)
