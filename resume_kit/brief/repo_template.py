"""The repository's own brief template (``.resume-kit/templates/brief.md.j2``): read safely and
pinned by the sha256 of its content, so ``trust`` approves exactly what ``brief`` renders.

It arrived with the repository, so it is read only as a regular file with no symlink anywhere
on its path (``.resume-kit`` and ``templates`` included), at most :data:`MAX_BYTES`, UTF-8. It is
used only after a person approved that content on this machine (``resume_kit.infra.trust``); until
then the shipped template is used. It is one self-contained file: its ``include``, ``import``
and ``extends`` load only resume-kit's shipped templates (resume_kit.brief.render).
"""

from __future__ import annotations

from pathlib import Path

from resume_kit.core.digest import sha256
from resume_kit.core.light_dataclass import dataclass
from resume_kit.infra.errors import ResumeKitError

REL_PATH = ".resume-kit/templates/brief.md.j2"
MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class RepoTemplate:
    rel_path: str  # relative to the work tree root, forward slashes
    source: str
    sha256: str


def _refused(reason: str) -> ResumeKitError:
    return ResumeKitError(
        f"brief template {REL_PATH} {reason}; it was not used",
        hint="replace it with a regular file or remove it (it may have come with the repository)",
    )


def find(root: Path) -> RepoTemplate | None:
    """The repository's template, or None when it has none. Raises :class:`ResumeKitError`
    (``UnsafePath`` for a symlink on the way) for anything but a readable regular file."""
    from resume_kit.infra.safefs import FileTooLarge, NotARegularFile, contained, read_regular

    try:
        data = read_regular(contained(root, REL_PATH), MAX_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except NotARegularFile as exc:
        raise _refused(f"is {exc.kind}") from None
    except FileTooLarge:
        raise _refused(f"is larger than {MAX_BYTES // 1024} KiB") from None
    except OSError as exc:
        raise _refused(f"cannot be read ({exc.strerror or exc})") from None
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refused("is not UTF-8 text") from None
    return RepoTemplate(REL_PATH, source, sha256(data).hexdigest())
