"""`resume-kit init`: create .resume-kit/ with a progress file (never overwrites)."""

from __future__ import annotations

from pathlib import Path

from resume_kit.cli.ui import info
from resume_kit.infra import paths
from resume_kit.infra.errors import ResumeKitError
from resume_kit.infra.store import ensure_gitignore
from resume_kit.model import progress
from resume_kit.progress_file import io as progress_io

HEADER = (
    "# resume-kit progress file (schema: https://github.com/resume-kit/resume-kit#progress-file).\n"
    "# A unit becomes done only when `resume-kit verify-next` has run its verify command and it\n"
    "# passed; evidence is written by the tool. Comments you add here survive every rewrite.\n"
)


MAX_IMPORT_BYTES = 64 * 1024 * 1024


def _read_import(path: Path) -> str:
    from resume_kit.infra.store import FileTooLarge, NotARegularFile, read_regular

    try:
        data = read_regular(path, MAX_IMPORT_BYTES)
    except FileNotFoundError:
        raise ResumeKitError(f"{path}: no such file", hint="give the path of a task list") from None
    except NotARegularFile as exc:
        raise ResumeKitError(
            f"cannot read {path}: not a regular file ({exc.kind})",
            hint="give the path of a task list file",
        ) from None
    except FileTooLarge:
        raise ResumeKitError(
            f"{path} is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MiB: not a task list"
        ) from None
    except OSError as exc:
        raise ResumeKitError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ResumeKitError(
            f"{path}: not UTF-8 text", hint="save the task list as UTF-8"
        ) from None


def run(goal: str | None, import_file: Path | None) -> int:
    layout = paths.find_layout()
    if layout.progress.exists():
        raise ResumeKitError(
            f"{layout.rel(layout.progress)} already exists",
            hint="init never overwrites; add units with `resume-kit add`, or move the file away",
        )
    units: list[progress.Unit] = []
    if import_file is not None:
        from resume_kit.progress_file.importers import parse_import

        imported = parse_import(_read_import(import_file), import_file.name)
        units = imported.units
        goal = goal or imported.goal
    if goal is None or not goal.strip():
        raise ResumeKitError(
            "a goal is needed: one sentence that says what the whole task achieves",
            hint='resume-kit init --goal "Extract parties and dates from the contracts in docs/"',
        )
    model = progress.Progress(goal=" ".join(goal.split()), units=units)
    layout.state_dir.mkdir(exist_ok=True)
    ensure_gitignore(layout)
    progress_io.create(layout, model, header=HEADER)
    if units:
        from resume_kit.infra.trust import approve_created

        approve_created(layout, [u for u in units if u.verify])
    done = sum(1 for u in units if u.status == "done")
    info(f"created {layout.rel(layout.progress)}" + (f" with {len(units)} units" if units else ""))
    if done:
        info(
            f"{done} imported units are marked done without evidence; "
            "`resume-kit status` lists them as DONE_UNVERIFIED until verified"
        )
    if units and not any(u.verify for u in units):
        info(
            "imported units have no verify command yet: add `verify:` to each in progress.yaml, "
            "then a person must review them and approve them with `resume-kit trust`"
        )
    info('next: resume-kit add "First unit" --verify "pytest tests/test_first.py"')
    return 0
