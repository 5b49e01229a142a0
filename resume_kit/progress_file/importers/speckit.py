"""spec-kit's task line, ``- [ ] T014 [P] [US1] Implement X in src/x.py (depends on T012)``:
its id, markers, story, files and dependencies (templates/tasks-template.md of github/spec-kit)."""

from __future__ import annotations

import glob
import re

from resume_kit.core.light_dataclass import dataclass, field

_ID = re.compile(r"^(?P<id>T\d+)\b[:.]?\s*")
_MARKER = re.compile(r"^\[(?P<tag>P|US\d+|Story\s*\d+)\]\s*", re.IGNORECASE)
_DEPENDS = re.compile(
    r"\s*\((?:depends\s+on|after|requires)\s+(?P<ids>T\d+(?:\s*(?:,|and|&)\s*T\d+)*)\s*\)",
    re.IGNORECASE,
)
# "in src/models/user.py", "in `src/a.py` and src/b.py", "in docs/"
_IN_PATHS = re.compile(
    r"\bin\s+(?P<paths>`?[^\s,;()`]+`?(?:\s*(?:,|and)\s*`?[^\s,;()`]+`?)*)", re.IGNORECASE
)
_PATH_SPLIT = re.compile(r"\s*(?:,|\band\b)\s*")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_TITLE = re.compile(r"^Tasks:\s*", re.IGNORECASE)


@dataclass
class Task:
    id: str | None
    title: str
    parallel: bool = False
    story: str | None = None
    files: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)  # spec-kit ids as written


def feature_name(heading: str) -> str:
    """The goal from ``# Tasks: User authentication``: the feature's name."""
    return _TITLE.sub("", heading).strip() or heading


def _path(token: str) -> str | None:
    """A file glob the unit owns for a path named in its text, or None when it is not one."""
    from resume_kit.infra.safefs import escapes

    path = token.strip("`").rstrip(".:")
    if "://" in path or not path or escapes(path) is not None:
        return None
    if path.endswith("/"):
        return glob.escape(path) + "**"
    if "/" in path or _EXTENSION.search(path):
        return glob.escape(path)
    return None


def read_task(body: str) -> Task:
    """The parts of one task line's text (after the checkbox)."""
    task_id = None
    match = _ID.match(body)
    if match:
        task_id = match.group("id")
        body = body[match.end() :]
    parallel, story = False, None
    while (marker := _MARKER.match(body)) is not None:
        tag = marker.group("tag")
        if tag.upper() == "P":
            parallel = True
        else:
            story = "US" + re.sub(r"\D", "", tag)
        body = body[marker.end() :]
    after: list[str] = []
    for dep in _DEPENDS.finditer(body):
        after += [d.upper() for d in re.findall(r"T\d+", dep.group("ids"), re.IGNORECASE)]
    title = " ".join(_DEPENDS.sub("", body).split())
    files: list[str] = []
    for found in _IN_PATHS.finditer(title):
        for token in _PATH_SPLIT.split(found.group("paths")):
            path = _path(token)
            if path is not None and path not in files:
                files.append(path)
    return Task(
        id=task_id,
        title=title or (task_id or ""),
        parallel=parallel,
        story=story,
        files=files,
        after=after,
    )
