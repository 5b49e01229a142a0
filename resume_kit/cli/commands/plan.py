"""`plan --each GLOB`: one unit per matching file, its title, verify command and artifact filled
in from the file's name; each unit owns its file (``files``), so its fingerprint covers it;
re-running adds only new files."""

from __future__ import annotations

import glob
import os
from pathlib import Path, PurePosixPath

from resume_kit.cli.commands.units import check_command
from resume_kit.cli.ui import info, note
from resume_kit.core.placeholders import expand, expand_command
from resume_kit.core.typing_light import TYPE_CHECKING
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model import progress
from resume_kit.model.progress import Unit
from resume_kit.progress_file import io as progress_io

if TYPE_CHECKING:
    from resume_kit.model.globs import Ownership


def _owners(units: list[Unit]) -> list[tuple[str, Ownership]]:
    from resume_kit.model.globs import Ownership

    return [(u.id, Ownership(u.files)) for u in units if u.files]


def _owner_of(rel: str, owners: list[tuple[str, Ownership]]) -> str | None:
    return next((uid for uid, owned in owners if owned.owns(rel)), None)


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # os.fsdecode keeps undecodable bytes as lone surrogates
        return False
    return True


def _owned(rel: str, extra: list[str], values: dict[str, str]) -> list[str]:
    """The unit's ``files``: its own path as a glob naming exactly that file (``glob.escape``:
    a name holding ``*``, ``?`` or ``[`` would otherwise match other files), then ``--files``."""
    owned = [glob.escape(rel)]
    for pattern in extra:
        expanded = expand(pattern, values)
        if expanded not in owned:
            owned.append(expanded)
    return owned


def plan(
    each: str,
    title: str,
    verify: str,
    artifact: str | None,
    id_prefix: str,
    files: list[str] | None = None,
    after: list[str] | None = None,
) -> int:
    check_command(verify)
    extra, after = files or [], after or []
    layout = paths.find_layout()
    if id_prefix and not progress.ID_PATTERN.match(id_prefix + "x"):
        raise ResumeKitError(
            f"invalid --id-prefix '{id_prefix}'",
            hint="use lower-case letters, digits, '.', '_' and '-'",
        )
    cwd = Path.cwd()
    matches: list[str] = []
    undecodable: set[str] = set()
    for match in glob.glob(each, root_dir=cwd, recursive=True):
        full = Path(os.path.abspath(cwd / match))
        if not full.is_file():
            continue
        try:
            rel = full.relative_to(layout.root).as_posix()
        except ValueError:
            continue
        if rel.split("/", 1)[0] in (".git", paths.STATE_DIR):
            continue
        if not _is_utf8(rel):
            undecodable.add(rel)
            continue
        matches.append(rel)
    matches = sorted(set(matches))
    if undecodable:
        note(
            f"skipped {len(undecodable)} file(s) whose names are not valid UTF-8 "
            "(the progress file cannot hold them)"
        )
    if not matches:
        raise ResumeKitError(
            f"no files match '{each}' (relative to {cwd})",
            hint="check the glob; quote it so the shell does not expand it",
        )
    created: list[Unit] = []
    owned: list[tuple[str, str]] = []  # (path, the unit that owns it) skipped
    with progress_io.transaction(layout) as doc:
        model = doc.progress
        taken = {u.id for u in model.units}
        owners = _owners(model.units)
        for dep in after:
            if dep not in taken:
                raise ResumeKitError(
                    f"--after names unknown unit '{dep}'", hint="see `resume-kit status` for ids"
                )
        for n, rel in enumerate(matches, start=1):
            unit_id = progress.id_from_path(rel, id_prefix)
            if not unit_id or not progress.ID_PATTERN.match(unit_id):
                raise ResumeKitError(
                    f"cannot make an id from '{rel}'",
                    hint="use --id-prefix so ids start with a letter or digit",
                )
            owner = _owner_of(rel, owners)
            if owner is not None:
                if owner != unit_id:
                    owned.append((rel, owner))
                continue
            if unit_id in taken:
                existing = model.require_unit(unit_id)
                if not existing.files:
                    continue  # planned by an older version (no files): already present
                unit_id = progress.unique_id(unit_id, taken)
            pure = PurePosixPath(rel)
            values = {"path": rel, "stem": pure.stem, "name": pure.name, "n": str(n)}
            unit = Unit(
                id=unit_id,
                title=expand(title, values),
                verify=check_command(expand_command(verify, values)),
                files=_owned(rel, extra, values),
                artifacts=[expand(artifact, values)] if artifact else [],
                after=list(after),
            )
            model.units.append(unit)
            taken.add(unit_id)
            created.append(unit)
    if created:
        from resume_kit.infra.trust import approve_created

        approve_created(layout, created)
    info(
        f"planned {len(created)} new unit{'s' if len(created) != 1 else ''} "
        f"({len(matches) - len(created) - len(owned)} already present)"
    )
    if owned:
        shown = ", ".join(f"{rel} ({uid})" for rel, uid in owned[:5])
        note(
            f"skipped {len(owned)} file{'s' if len(owned) != 1 else ''} already owned by "
            f"another unit: {shown}{' …' if len(owned) > 5 else ''}"
        )
    return 0
