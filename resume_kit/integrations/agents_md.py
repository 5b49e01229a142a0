"""`integrate agents-md`: one marked block in AGENTS.md / CLAUDE.md / GEMINI.md telling any agent
how to work with resume-kit; the markers make it replaceable and removable, the rest of the
file is kept byte for byte."""

from __future__ import annotations

from pathlib import Path

from resume_kit.infra.errors import ResumeKitError

FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
BEGIN = "<!-- resume-kit:begin (managed by `resume-kit integrate agents-md`) -->"
END = "<!-- resume-kit:end -->"
MAX_BYTES = 4 * 1024 * 1024
BLOCK = f"""{BEGIN}
## Working with resume-kit

This repository tracks its work in `.resume-kit/progress.yaml`, one unit at a time.

1. Start by reading the brief: run `resume-kit brief` (or read `.resume-kit/brief.md` when it
   exists) and follow its "next" section.
2. Do one unit, the next one the brief names; nothing beyond it.
3. When you think it is done, run `resume-kit verify-next`: the unit counts as done only when
   its verify command passes.
4. Record any side effect outside the work tree (a migration run, a package published, a file
   written elsewhere) on the unit, so the next session knows about it.
5. Never run `resume-kit trust`: approving a verify command is the person's decision, not yours.
{END}
"""


def _read(path: Path) -> str | None:
    from resume_kit.infra.safefs import NotARegularFile, read_regular

    try:
        return read_regular(path, MAX_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None
    except (NotARegularFile, OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResumeKitError(
            f"{path.name}: cannot be read as a UTF-8 text file ({exc}); nothing was changed",
            hint="fix or move the file, then run the command again",
        ) from None


def without_block(text: str) -> str | None:
    """``text`` without our block (and the blank line we put before it); None if absent."""
    start = text.find(BEGIN)
    end = text.find(END, start + 1)
    if start < 0 or end < 0:
        return None
    stop = end + len(END)
    if text[stop : stop + 1] == "\n":
        stop += 1
    head = text[:start]
    if head.endswith("\n\n"):
        head = head[:-1]
    return head + text[stop:]


def with_block(text: str) -> str:
    rest = without_block(text)
    base = text if rest is None else rest
    if not base:
        return BLOCK
    return base + ("" if base.endswith("\n") else "\n") + "\n" + BLOCK


def apply(root: Path, name: str, remove: bool) -> str:
    """Add (or refresh) or remove our block in ``root/name``; the line to print."""
    from resume_kit.infra.safefs import contained
    from resume_kit.infra.store import atomic_write

    if name not in FILES:
        raise ResumeKitError(f"unknown file {name!r}", hint=f"use one of {', '.join(FILES)}")
    path = contained(root, name)  # a symlinked AGENTS.md is refused, never followed
    text = _read(path)
    if remove:
        rest = None if text is None else without_block(text)
        if rest is None or text is None:
            return f"no resume-kit block in {name}: nothing changed"
        if rest.strip():
            atomic_write(path, rest)
            return f"removed the resume-kit block from {name}"
        path.unlink()
        return f"removed the resume-kit block; {name} held nothing else and was removed"
    new = with_block(text or "")
    if new == text:
        return f"the resume-kit block is already in {name}: nothing changed"
    atomic_write(path, new)
    return f"{'updated' if text and BEGIN in text else 'added'} the resume-kit block in {name}"
