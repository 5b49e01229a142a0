"""`add`, `plan`, `start`, `block`, `reset`: changes a person makes to the units."""

from __future__ import annotations

import glob
import os
import re
import shlex
from pathlib import Path, PurePosixPath

from resume_kit.cli.ui import info, note
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.model import progress
from resume_kit.model.progress import Status, Unit
from resume_kit.progress_file import io as progress_io


def _check_id(unit_id: str) -> str:
    if not progress.ID_PATTERN.match(unit_id):
        raise ResumeKitError(
            f"invalid id '{unit_id}': ids must match {progress.ID_PATTERN_TEXT}",
            hint="use lower-case letters, digits, '.', '_' and '-', e.g. --id parse-dates",
        )
    return unit_id


def _check_command(verify: str) -> str:
    from resume_kit.progress_file.validate import command_problem

    if not verify.strip():
        raise ResumeKitError(
            "--verify is empty",
            hint='give a command that exits 0 when the unit is done, e.g. --verify "pytest -q tests/test_x.py"',
        )
    problem = command_problem(verify)
    if problem:
        raise ResumeKitError(
            f"the verify command {problem}",
            hint="put a long command in a script and verify with `sh script.sh`",
        )
    return verify


def add(
    title: str,
    verify: str,
    unit_id: str | None,
    files: list[str],
    artifacts: list[str],
    after: list[str],
) -> int:
    if not title.strip():
        raise ResumeKitError(
            "the title is empty", hint='resume-kit add "Parse the dates" --verify "..."'
        )
    _check_command(verify)
    layout = paths.find_layout()
    with progress_io.transaction(layout) as doc:
        model = doc.progress
        taken = {u.id for u in model.units}
        if unit_id is not None:
            _check_id(unit_id)
            if unit_id in taken:
                raise ResumeKitError(
                    f"a unit with id '{unit_id}' already exists", hint="choose another --id"
                )
        else:
            base = progress.slugify(title)[:48].strip("-._") or "unit"
            unit_id, n = base, 2
            while unit_id in taken:
                unit_id, n = f"{base}-{n}", n + 1
        for dep in after:
            if dep not in taken:
                raise ResumeKitError(
                    f"--after names unknown unit '{dep}'", hint="see `resume-kit status` for ids"
                )
        unit = Unit(
            id=unit_id,
            title=" ".join(title.split()),
            verify=verify,
            files=files,
            artifacts=artifacts,
            after=after,
        )
        model.units.append(unit)
    from resume_kit.infra.trust import approve_created

    approve_created(layout, [unit])
    info(f"added unit {unit.id}: {unit.title}")
    return 0


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


def plan(each: str, title: str, verify: str, artifact: str | None, id_prefix: str) -> int:
    _check_command(verify)
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
                verify=_check_command(_expand_command(verify, values)),
                artifacts=[_expand(artifact, values)] if artifact else [],
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


def set_status(unit_id: str, status: Status, reason: str | None = None) -> int:
    layout = paths.find_layout()
    if status == "blocked" and (reason is None or not reason.strip()):
        raise ResumeKitError("--reason is empty", hint="say why, so the next session knows")
    with progress_io.transaction(layout) as doc:
        unit = doc.progress.require_unit(unit_id)
        previous = unit.status
        if status == "in_progress":
            missing = [
                dep
                for dep in unit.after
                if (d := doc.progress.unit(dep)) is None or d.status != "done"
            ]
            if missing:
                note(f"{unit_id} depends on units not done yet: {', '.join(missing)}")
        unit.status = status
        if status != "done":
            unit.evidence = None
        if status == "todo":
            unit.last_failure = None
        if status == "blocked" and reason:
            line = f"{unit_id} blocked: {' '.join(reason.split())}"
            notes = doc.progress.notes
            doc.progress.notes = f"{notes.rstrip()}\n{line}" if notes else line
    info(f"{unit_id}: {previous} -> {status}")
    return 0
