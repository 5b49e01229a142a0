"""Aider has no hooks: `integrate aider` lists ``.resume-kit/brief.md`` under ``read:`` in
``.aider.conf.yml`` and turns on a refresh of that file after every commit (the post-commit
hook) and every verify. The switch lives in the user's cache (trusted), never in the
repository: a cloned repository cannot turn the refresh on."""

from __future__ import annotations

import contextlib
from pathlib import Path

from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ResumeKitError

BRIEF_REL = ".resume-kit/brief.md"
CONF = ".aider.conf.yml"
READ_BLOCK = f"read:\n  - {BRIEF_REL}\n"
_SWITCH = "aider-brief"


def _switch(layout: Any) -> Path:
    return Path(layout.user_cache) / _SWITCH


def enabled(layout: Any) -> bool:
    return _switch(layout).is_file()


def write_brief(layout: Any) -> None:
    """Render the markdown brief into ``.resume-kit/brief.md`` (no symlink followed)."""
    from resume_kit.brief.pipeline import build
    from resume_kit.infra.safefs import contained
    from resume_kit.infra.store import atomic_write

    text, _, _ = build(None, "markdown", False, hook_input={"cwd": str(layout.root)})
    atomic_write(contained(layout.root, BRIEF_REL), text)


def refresh(layout: Any) -> None:
    """After a commit or a verify: rewrite the brief file of ``layout``'s work tree when Aider
    is integrated. Fail-open: any trouble is one line on stderr."""
    try:
        if enabled(layout):
            write_brief(layout)
    except Exception as exc:
        from resume_kit.infra.messages import say

        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        say(f"{BRIEF_REL} not refreshed: {message.splitlines()[0]}")


def _conf_text(root: Path) -> tuple[Path, str | None]:
    from resume_kit.infra.safefs import contained, read_regular

    path = contained(root, CONF)
    try:
        return path, read_regular(path, 1 << 20).decode("utf-8")
    except FileNotFoundError:
        return path, None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResumeKitError(f"{CONF}: cannot be read ({exc}); nothing was changed") from None


def _reads(text: str) -> Any:
    import yaml

    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError:
        raise ResumeKitError(
            f"{CONF} is not valid YAML; nothing was changed", hint="fix the file by hand"
        ) from None
    if not isinstance(data, dict):
        raise ResumeKitError(f"{CONF}: the top level is not a mapping; nothing was changed")
    return data.get("read")


def install(root: Path, layout: Any) -> list[str]:
    from resume_kit.infra.store import atomic_write

    lines: list[str] = []
    path, text = _conf_text(root)
    reads = _reads(text or "")
    listed = reads == BRIEF_REL or (isinstance(reads, list) and BRIEF_REL in reads)
    if reads is not None and not listed:
        raise ResumeKitError(
            f"{CONF} already has a `read:` entry; nothing was changed",
            hint=f"add {BRIEF_REL} to it by hand, then run the command again",
        )
    write_brief(layout)  # first: a brief.md that cannot be written leaves everything as it was
    if reads is None:
        base = text or ""
        sep = "" if not base or base.endswith("\n") else "\n"
        atomic_write(path, base + sep + READ_BLOCK)
        lines.append(f"added {BRIEF_REL} to `read:` in {CONF}")
    else:
        lines.append(f"{BRIEF_REL} already in `read:` in {CONF}: nothing changed")
    switch = _switch(layout)
    switch.parent.mkdir(parents=True, exist_ok=True)
    switch.write_text("on\n")
    lines.append(f"wrote {BRIEF_REL}; it is rewritten after every commit and every verify")
    return lines


def uninstall(root: Path, layout: Any) -> list[str]:
    from resume_kit.infra.store import atomic_write

    lines: list[str] = []
    with contextlib.suppress(FileNotFoundError):
        _switch(layout).unlink()
    path, text = _conf_text(root)
    if text is not None and READ_BLOCK in text:
        rest = text.replace(READ_BLOCK, "", 1)
        if rest.strip():
            atomic_write(path, rest)
        else:
            path.unlink()
        lines.append(f"removed {BRIEF_REL} from {CONF}")
    elif text is not None and BRIEF_REL in text:
        lines.append(f"{CONF} lists {BRIEF_REL} in a shape we did not write: remove it by hand")
    lines.append(f"{BRIEF_REL} is no longer refreshed")
    return lines
