"""The one glob engine (resume_kit.model.globs): which paths a unit's globs name, and the broad
form the batch scheduler uses to decide whether two units may run together."""

from __future__ import annotations

from pathlib import Path

import pytest

from resume_kit.facts.fingerprint import fingerprint
from resume_kit.model.globs import broad_glob_regex, glob_match, glob_regex

TREE = (
    "src/a.py",
    "src/b.txt",
    "src/sub/c.py",
    "src/sub/deep/d.py",
    "src/.hidden/e.py",
    "src/.f.py",
    "docs/x1.md",
    "docs/y2.md",
    "docs/z.md",
    "out/137.json",
    "top.py",
)
FILES = ["src/**/*.py", "docs/[xy]?.md", "docs/[!x]*.md", "*.py", "src/**", "./out/137.json"]
ARTIFACTS = ["out/137.json", "out/missing.json"]
# Computed with the code before the glob engine moved into resume_kit.model.globs: existing
# evidence carries this value, so it must never change.
PINNED = "sha256:beeefebd99c1c340f4ec716d34ea124668cca3dc66c41d3879c52a985dca130c"


def _tree(root: Path) -> None:
    for rel in TREE:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"content of {rel}\n")


def test_fingerprints_of_existing_evidence_do_not_change(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert fingerprint(tmp_path, FILES, ARTIFACTS) == PINNED


@pytest.mark.parametrize(
    ("path", "pattern", "strict"),
    [
        ("src/a.py", "src/*.py", True),
        ("src/sub/a.py", "src/*.py", False),
        ("src/sub/a.py", "src/**/*.py", True),
        ("src/a.py", "src/**/*.py", True),
        ("src/.a.py", "src/*.py", False),
        ("src/.h/a.py", "src/**/*.py", False),
        ("a/b.txt", "[!x]/b.txt", True),
        ("a.py", "[unclosed", False),
        ("[unclosed", "[unclosed", True),
        ("x/y", "x?y", False),
    ],
)
def test_the_strict_and_the_broad_form_agree_where_the_strict_one_matches(
    path: str, pattern: str, strict: bool
) -> None:
    assert bool(glob_regex(pattern).match(path)) is strict
    if strict:  # the broad form errs on the safe side: never misses a path the glob names
        assert broad_glob_regex(pattern).match(path)


def test_the_broad_form_crosses_folders_and_dots() -> None:
    assert broad_glob_regex("src/*.py").match("src/sub/a.py")
    assert broad_glob_regex("src/*.py").match("src/.a.py")
    assert broad_glob_regex("x?y").match("x/y")
    assert broad_glob_regex("[!]x]").match("a")  # an odd class still matches safely


def test_glob_match_drops_a_leading_dot_slash() -> None:
    assert glob_match("out/137.json", ["./out/137.json"])
    assert not glob_match("out/138.json", ["./out/137.json"])
