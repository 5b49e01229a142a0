"""`plan --each GLOB`: one unit per matching file, its title, verify command and artifact filled
in from the file's name; each unit owns its file (``files``), so its fingerprint covers it;
re-running adds only new files."""

from __future__ import annotations

import glob
import os
import re
import shlex
from pathlib import Path, PurePosixPath

from resume_kit.cli.commands.units import check_command
from resume_kit.cli.ui import info, note
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model import progress
from resume_kit.model.progress import Unit
from resume_kit.progress_file import io as progress_io


def _plan_id(rel_path: str, prefix: str) -> str:
    stem = (
        str(PurePosixPath(rel_path).with_suffix("")) if PurePosixPath(rel_path).suffix else rel_path
    )
    return prefix + progress.slugify(stem.replace("/", "-"))


_PLACEHOLDER = re.compile(r"\{(path|stem|name|n)\}")
_WORD_BREAK = frozenset(" \t\n;&|()<>")


def _expand(template: str, values: dict[str, str]) -> str:
    """Title and artifact: each placeholder replaced once (a value holding ``{name}`` stays)."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _expand_command(template: str, values: dict[str, str]) -> str:
    """The verify command: in one pass, each placeholder becomes exactly one shell word
    (``shlex.quote``); a value that would start a word with ``-`` gets ``./`` so it is never
    an option. A placeholder inside quotes cannot be made safe, so it is refused."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(template):
        char = template[i]
        found = _PLACEHOLDER.match(template, i) if char == "{" else None
        if found is not None:
            if quote is not None:
                raise ResumeKitError(
                    f"--verify has {found.group()} inside quotes",
                    hint=f"leave {found.group()} unquoted: resume-kit quotes each file name itself",
                )
            value = values[found.group(1)]
            if value.startswith("-") and (i == 0 or template[i - 1] in _WORD_BREAK):
                value = "./" + value
            out.append(shlex.quote(value))
            i = found.end()
            continue
        if char == "\\" and quote != "'":
            out.append(template[i : i + 2])
            i += 2
            continue
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        out.append(char)
        i += 1
    return "".join(out)


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
        expanded = _expand(pattern, values)
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
    with progress_io.transaction(layout) as doc:
        model = doc.progress
        taken = {u.id for u in model.units}
        for dep in after:
            if dep not in taken:
                raise ResumeKitError(
                    f"--after names unknown unit '{dep}'", hint="see `resume-kit status` for ids"
                )
        for n, rel in enumerate(matches, start=1):
            unit_id = _plan_id(rel, id_prefix)
            if not unit_id or not progress.ID_PATTERN.match(unit_id):
                raise ResumeKitError(
                    f"cannot make an id from '{rel}'",
                    hint="use --id-prefix so ids start with a letter or digit",
                )
            if unit_id in taken:
                continue
            pure = PurePosixPath(rel)
            values = {"path": rel, "stem": pure.stem, "name": pure.name, "n": str(n)}
            unit = Unit(
                id=unit_id,
                title=_expand(title, values),
                verify=check_command(_expand_command(verify, values)),
                files=_owned(rel, extra, values),
                artifacts=[_expand(artifact, values)] if artifact else [],
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
        f"({len(matches) - len(created)} already present)"
    )
    return 0
