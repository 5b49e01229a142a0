"""Which part of an ``A && B && C`` verify command failed, when its empty output tells.

A chain stops at its first failing part. When the command printed nothing at all, every part
that ran was silent, so a part that always prints when it runs (pytest, mypy, ruff, …) did not
run: the failing part is before the first such part. When exactly one part is before it, that
part is named; with several, they are listed as the candidates. With any output, or any other
shell operator or a redirection (a redirected tool prints nothing here), or a command that is not
a chain, nothing is said: it cannot be known from the output.
"""

from __future__ import annotations

import shlex

# Tools that print something every time they run (a header, a summary, or "Success"), unless
# told to be quiet by one of the flags after them.
_ALWAYS_PRINTS = frozenset({"pytest", "py.test", "mypy", "ruff", "tox", "nox"})
_QUIETING = frozenset({"-qq", "-qqq", "--quiet", "--silent", "--no-error-summary"})
_PUNCTUATION = frozenset("();<>|&")
MAX_COMMAND_CHARS = 4000


def _parts(command: str) -> list[list[str]] | None:
    if len(command) > MAX_COMMAND_CHARS or "&&" not in command:
        return None
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: the shell itself would have said so
        return None
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token == "&&":
            parts.append([])
        elif set(token) <= _PUNCTUATION:  # another operator or a redirection: cannot tell
            return None
        else:
            parts[-1].append(token)
    return parts if len(parts) > 1 and all(parts) else None


def _prints(words: list[str]) -> bool:
    program = words[0].rsplit("/", 1)[-1]
    if program.startswith("python") and len(words) > 2 and words[1] == "-m":
        program = words[2]
    return program in _ALWAYS_PRINTS and _QUIETING.isdisjoint(words)


def silent_failure(command: str) -> str | None:
    """A line naming the part of ``command`` that failed, for a run that printed nothing."""
    parts = _parts(command)
    if parts is None:
        return None
    first_printer = next((i for i, words in enumerate(parts) if _prints(words)), None)
    if first_printer is None or first_printer == 0:
        return None
    shown = [shlex.join(words) for words in parts]
    later = shown[first_printer]
    if first_printer == 1:
        return f"`{shown[0]}` failed without output (so `{later}` after it never ran)"
    candidates = ", ".join(f"`{s}`" for s in shown[:first_printer])
    return f"one of {candidates} failed without output (so `{later}` never ran)"
