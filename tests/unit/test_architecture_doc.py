"""docs/architecture.md shows the package tree with one line per module: keep it true."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "resume_kit"
_ENTRY = re.compile(r"^(?P<lead>[│ ]*)(?:├── |└── )(?P<name>[\w.]+/?)(?:\s|$)")


def documented_modules() -> set[str]:
    """Module paths named in the tree block that starts with ``resume_kit/``."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("```text\nresume_kit/\n", 1)[1].split("```", 1)[0]
    folders: list[str] = []
    found: set[str] = set()
    for line in block.splitlines():
        match = _ENTRY.match(line)
        if match is None:
            continue
        depth = len(match["lead"]) // 4
        del folders[depth:]
        name = match["name"]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        else:
            found.add("/".join([*folders, name]))
    return found


def package_modules() -> set[str]:
    return {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py"
    }


def test_every_module_has_its_line_in_the_architecture_tree() -> None:
    assert sorted(package_modules() - documented_modules()) == []


def test_the_tree_names_no_module_that_does_not_exist() -> None:
    assert sorted(documented_modules() - package_modules()) == []


def test_each_command_module_stays_thin() -> None:
    # The CLI is thin: a command body calls the rooms, prints and returns an exit code.
    long = {
        path.name: lines
        for path in (PACKAGE / "cli" / "commands").glob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) >= 200
    }
    assert long == {}
