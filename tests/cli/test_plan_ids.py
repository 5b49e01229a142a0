"""plan skips paths another unit owns and says so; ids join the prefix with '-' without
repeating a folder it names; ids from titles are transliterated, or short and stable when no
Latin letter is left (issue 16 point 3). One id rule for add, plan and the importers."""

from __future__ import annotations

from pathlib import Path

import pytest

from resume_kit.model import progress as p
from resume_kit.progress_file import io as progress_io
from tests.conftest import run_cli


def _units(repo: Path) -> list[p.Unit]:
    text = (repo / ".resume-kit" / "progress.yaml").read_text()
    return progress_io.parse_and_validate(text).units


def _boltons(repo: Path) -> None:
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    folder = repo / "boltons"
    folder.mkdir()
    for name in ("debugutils", "iterutils", "strutils"):
        (folder / f"{name}.py").write_text("x = 1\n")


PLAN = ["plan", "--each", "boltons/*.py", "--title", "Type {name}", "--verify", "true"]


def test_a_path_owned_by_a_unit_is_skipped_and_reported(repo: Path) -> None:
    _boltons(repo)
    assert run_cli(*PLAN, "--id-prefix", "types", cwd=repo).code == 0
    before = [u.id for u in _units(repo)]
    assert before == [
        "types-boltons-debugutils",
        "types-boltons-iterutils",
        "types-boltons-strutils",
    ]
    again = run_cli(*PLAN, "--id-prefix", "stubs-", cwd=repo)
    assert again.code == 0, again.stderr
    assert again.stderr.splitlines() == [
        "planned 0 new units (0 already present)",
        "note: skipped 3 files already owned by another unit: boltons/debugutils.py "
        "(types-boltons-debugutils), boltons/iterutils.py (types-boltons-iterutils), "
        "boltons/strutils.py (types-boltons-strutils)",
    ]
    assert [u.id for u in _units(repo)] == before
    # the same plan again: its own units, already present, nothing to report
    same = run_cli(*PLAN, "--id-prefix", "types", cwd=repo)
    assert same.stderr == "planned 0 new units (3 already present)\n"


def test_a_path_owned_through_a_glob_of_an_added_unit_is_skipped(repo: Path) -> None:
    _boltons(repo)
    run_cli("add", "All of strutils", "--verify", "true", "--files", "boltons/str*", cwd=repo)
    result = run_cli(*PLAN, cwd=repo)
    assert (
        "skipped 1 file already owned by another unit: boltons/strutils.py (all-of-strutils)"
        in result.stderr
    )
    assert [u.id for u in _units(repo)] == [
        "all-of-strutils",
        "boltons-debugutils",
        "boltons-iterutils",
    ]


@pytest.mark.parametrize(
    ("path", "prefix", "expected"),
    [
        ("boltons/debugutils.py", "types", "types-boltons-debugutils"),
        ("boltons/debugutils.py", "types-", "types-boltons-debugutils"),
        ("types/debugutils.pyi", "types", "types-debugutils"),
        ("types/debugutils.pyi", "types-", "types-debugutils"),
        ("types/debugutils.pyi", "stubs-types", "stubs-types-debugutils"),
        ("types.pyi", "types", "types-types"),  # the file itself is never dropped
        ("docs/001.txt", "doc-", "doc-docs-001"),
        ("docs/001.txt", "", "docs-001"),
        ("docs/über.txt", "", "docs-uber"),
        ("a.b/c", "x.", "x.a.b-c"),
    ],
)
def test_plan_ids(path: str, prefix: str, expected: str) -> None:
    assert p.id_from_path(path, prefix) == expected


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("über alles", "uber-alles"),
        ("Straße bauen", "strasse-bauen"),
        ("Crème brûlée", "creme-brulee"),
        ("Fix  the   parser", "fix-the-parser"),
        ("2024", "2024"),
    ],
)
def test_ids_from_titles_are_transliterated(title: str, expected: str) -> None:
    assert p.id_from_title(title) == expected


def test_titles_without_latin_letters_get_a_short_stable_id(repo: Path) -> None:
    first = p.id_from_title("データ処理")
    assert first.startswith("u-") and len(first) == 8 and p.ID_PATTERN.match(first)
    assert p.id_from_title("データ処理") == first  # stable
    assert p.id_from_title("日本 2") != first and p.id_from_title("日本 2").startswith("u-")
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    assert run_cli("add", "über den Fluss", "--verify", "true", cwd=repo).code == 0
    assert run_cli("add", "データ処理", "--verify", "true", cwd=repo).code == 0
    assert run_cli("add", "データ処理", "--verify", "true", cwd=repo).code == 0
    assert [u.id for u in _units(repo)] == ["uber-den-fluss", first, f"{first}-2"]


def test_plan_ids_that_collide_with_a_unit_owning_other_files_get_a_suffix(repo: Path) -> None:
    _boltons(repo)
    run_cli(
        "add", "x", "--id", "boltons-strutils", "--verify", "true", "--files", "other.py", cwd=repo
    )
    assert run_cli(*PLAN, cwd=repo).code == 0
    assert [u.id for u in _units(repo)][-1] == "boltons-strutils-2"
    assert _units(repo)[-1].files == ["boltons/strutils.py"]
