"""Every ``resume-kit: …`` and ``hint:`` line comes from resume_kit/infra/messages.py, in its
exact forms.

The scan reads every string literal under ``resume_kit/`` (f-strings with ``{PROG}`` count as
the prefix spelled out) and fails on a message prefix (``resume-kit: ``, or a bare ``hint: ``,
``note: ``, ``warning: ``, ``error: ``) at the start of a string, of a line in it or right
after a quote, outside the messages module and the allow-list below. Prose such as
``[resume-kit: 12 bytes omitted]`` or "upgrade resume-kit: pip …" is not a prefix and is not
flagged.
"""

from __future__ import annotations

import ast
import io
import re
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from resume_kit.infra import messages

PACKAGE = Path(messages.__file__).resolve().parent.parent
MESSAGES_MODULE = "resume_kit/infra/messages.py"
PREFIX = re.compile(
    r"(?:^|[\n\"'])(?P<prefix>(?:resume-kit|hint|note|warning|error): )", re.MULTILINE
)

# (file, the start of the literal's prefixed text, why it cannot call the messages module)
ALLOWED: list[tuple[str, str, str]] = [
    (
        "resume_kit/runner/supervisor.py",
        "resume-kit: cannot run ",
        "run by path as `python -I -S supervisor.py`: resume_kit is not on its sys.path",
    ),
    (
        "resume_kit/integrations/git_hooks.py",
        "resume-kit: $HOOK hook skipped: neither",
        "the prepare-commit-msg shell script prints it when no Python can run resume-kit",
    ),
    (
        "resume_kit/integrations/git_hooks.py",
        "resume-kit: $HOOK hook: no snapshot: neither",
        "the post-commit shell script prints it when no Python can run resume-kit",
    ),
    (
        "resume_kit/integrations/git_hooks.py",
        "resume-kit: hook skipped: resume_kit is not installed",
        "the hook bootstrap prints it exactly when resume_kit cannot be imported",
    ),
    (
        "resume_kit/brief/facts_text.py",
        "note: {}",
        "a line of the snapshot report (data on stdout, not a diagnostic)",
    ),
]


def _text(node: ast.JoinedStr) -> str:
    """An f-string's text, with ``{PROG}`` written out and other fields as ``{}``."""
    parts: list[str] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
        elif isinstance(value, ast.FormattedValue):
            field = value.value
            name = field.id if isinstance(field, ast.Name) else getattr(field, "attr", "")
            parts.append(messages.PROG if name == "PROG" else "{}")
    return "".join(parts)


def prefixed_literals(source: str) -> list[tuple[int, str]]:
    """(line, text from the prefix on) of each string literal in ``source`` that prints a
    message prefix."""
    tree = ast.parse(source)
    inside_fstrings = {
        id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values
    }
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = _text(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in inside_fstrings:
                continue
            text = node.value
        else:
            continue
        for match in PREFIX.finditer(text):
            start = match.start("prefix")
            found.append((node.lineno, text[start : start + 80]))
    return found


def scan() -> list[tuple[str, int, str]]:
    hits: list[tuple[str, int, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        if rel == MESSAGES_MODULE:
            continue
        for line, text in prefixed_literals(path.read_text(encoding="utf-8")):
            hits.append((rel, line, text))
    return hits


def test_no_resume_kit_prefix_outside_the_messages_module() -> None:
    stray = [
        f"{rel}:{line}: {text!r}"
        for rel, line, text in scan()
        if not any(rel == f and text.startswith(start) for f, start, _ in ALLOWED)
    ]
    assert stray == [], "print these through resume_kit.infra.messages:\n" + "\n".join(stray)


def test_every_allowed_literal_still_exists() -> None:
    hits = scan()
    for rel, start, why in ALLOWED:
        assert why
        assert any(r == rel and text.startswith(start) for r, _, text in hits), (rel, start)


@pytest.mark.parametrize(
    "source",
    [
        'info("resume-kit: done")',
        'info(f"resume-kit: {x} done")',
        'info(f"{PROG}: {x} done")',
        'info(f"{ui.PROG}: warning: {x}")',
        "text = 'echo \"resume-kit: skipped\" >&2'",
        'text = """first line\nresume-kit: second line"""',
        'info("hint: run it again")',
        'info(f"note: {n} skipped")',
    ],
)
def test_the_scan_sees_a_prefix(source: str) -> None:
    assert prefixed_literals(source)


@pytest.mark.parametrize(
    "source",
    [
        'x = "[resume-kit: 12 bytes of output omitted here]"',
        'x = "upgrade resume-kit: pip install --upgrade resume-kit"',
        'x = f"commit with resume-kit: {n} units"',
        "# resume-kit: a comment is not output",
    ],
)
def test_the_scan_ignores_prose(source: str) -> None:
    assert prefixed_literals(source) == []


def _stderr(call: object, *args: object) -> str:
    buffer = io.StringIO()
    with redirect_stderr(buffer):
        call(*args)  # type: ignore[operator]
    return buffer.getvalue()


def test_the_exact_forms() -> None:
    assert _stderr(messages.error, "no progress file", "run `resume-kit init`") == (
        "resume-kit: error: no progress file\nhint: run `resume-kit init`\n"
    )
    assert _stderr(messages.error, "interrupted") == "resume-kit: error: interrupted\n"
    assert _stderr(messages.error, "x", "") == "resume-kit: error: x\n"
    assert _stderr(messages.warning, "stale") == "resume-kit: warning: stale\n"
    assert _stderr(messages.note, "ignored") == "resume-kit: note: ignored\n"
    assert _stderr(lambda: messages.note("aside", prefix=False)) == "note: aside\n"
    assert _stderr(messages.hint, "do this") == "hint: do this\n"
    assert _stderr(messages.say, "brief written to b.md") == "resume-kit: brief written to b.md\n"
    assert _stderr(messages.emit, "as it is") == "as it is\n"


def test_the_cli_helpers_print_the_same_forms() -> None:
    from resume_kit.cli import ui

    assert _stderr(ui.error_line, "bad", "fix it") == "resume-kit: error: bad\nhint: fix it\n"
    assert _stderr(ui.warn, "odd") == "resume-kit: warning: odd\n"
    assert _stderr(ui.say, "skipped") == "resume-kit: skipped\n"
    assert _stderr(ui.info, "plain") == "plain\n"
    assert _stderr(ui.hint, "do this") == "hint: do this\n"
    assert _stderr(ui.note, "aside") == "note: aside\n"
    assert ui.PROG == messages.PROG == "resume-kit"


def test_the_commit_hook_warns_through_the_messages_module() -> None:
    from resume_kit.integrations import hook_entry

    assert _stderr(hook_entry.main, ["no-such-hook"]) == (
        "resume-kit: hookentry: unknown hook 'no-such-hook'\n"
    )


def test_the_messages_module_imports_only_sys() -> None:
    tree = ast.parse((PACKAGE / "infra" / "messages.py").read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert imported <= {"sys", "__future__"}
