"""The cause line of a failing run's output (issue 14 point 10): pytest's short-summary
``FAILED id - reason`` lines folded to the first one, and the one line that says why it
failed (that first ``FAILED`` line, else the newest exception or ``assert`` line).

Works on excerpt lines already made inert (resume_kit.core.inert.block_lines), including the
``N × line (lines a-b)`` groups of resume_kit.facts.logs.
"""

from __future__ import annotations

from collections.abc import Sequence

from resume_kit.core.lazy_regex import lazy

_GROUP = lazy(r"^\d+ × ")  # "5 × E   AssertionError: … (output lines 10-58)"
# pytest's short summary: a test id (a .py path, maybe ::name) after FAILED or ERROR
_FAILED = lazy(r"^(?:FAILED|ERROR) (\S+?\.py(?:::\S+)?)(?: - .+)?$")
_EXCEPTION = lazy(
    r"^(?:E\s+)?(?:[A-Za-z_][\w.]{0,200}\.)?[A-Z]\w{0,100}(?:Error|Exception|Exit|Interrupt)(?::|$)"
    r"|^E\s+assert\b"
)


def _bare(line: str) -> str:
    return _GROUP.sub("", line.strip(), count=1)


def failed_ids(lines: Sequence[str]) -> list[str]:
    """The test ids of pytest's short-summary lines, in order."""
    return [m.group(1) for line in lines if (m := _FAILED.match(line.strip()))]


def cause_line(lines: Sequence[str]) -> str | None:
    """The line that says why the run failed: the first ``FAILED id - reason`` line, else the
    newest exception or ``assert`` line; None when there is neither."""
    for line in lines:
        if _FAILED.match(line.strip()):
            return line.strip()
    for line in reversed(lines):
        if _EXCEPTION.match(_bare(line)):
            return line.strip()
    return None


def fold_failed(lines: list[str], more: str) -> list[str]:
    """``lines`` with pytest's short-summary lines after the first one replaced by one line:
    ``[N more failing: <more>]``."""
    at = [i for i, line in enumerate(lines) if _FAILED.match(line.strip())]
    if len(at) < 2:
        return lines
    rest = set(at[1:])
    folded = [line for i, line in enumerate(lines) if i not in rest]
    folded.insert(at[0] + 1, f"[{len(rest)} more failing: {more}]")
    return folded
