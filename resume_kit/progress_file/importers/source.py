"""Reading the task list a person names: a bounded, regular, UTF-8 file (never a FIFO or device)."""

from __future__ import annotations

from pathlib import Path

from resume_kit.infra.errors import ResumeKitError

MAX_IMPORT_BYTES = 64 * 1024 * 1024


def read_task_list(path: Path) -> str:
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
