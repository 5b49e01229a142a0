"""The in-progress cache the CLI leaves for the prepare-commit-msg hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from resume_kit.infra import cachedir
from resume_kit.infra.paths import find_layout
from resume_kit.integrations import hook_entry as hookentry
from resume_kit.progress_file.io import load
from tests.conftest import git

PROGRESS = ".resume-kit/progress.yaml"


def cache_file(repo: Path) -> Path:
    """Where the CLI leaves the cache: the work tree's folder in the user's cache directory."""
    return find_layout(repo).user_cache / cachedir.IN_PROGRESS_NAME


VARIANTS = [
    # (progress.yaml text, the unit in progress)
    "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    title: A\n    status: done\n"
    "  - id: b\n    title: B\n    status: in_progress\n",
    "schema_version: 1\ngoal: g\nunits:\n- id: a\n  title: 'in_progress soon'\n  status: todo\n",
    "schema_version: 1\ngoal: g\nunits:\n  - {id: a, title: A, status: in_progress}\n",
    "schema_version: 1\ngoal: g\nunits:\n  - id: \"a\"  # c\n    status: 'in_progress'\n"
    "    title: A\n  - id: b\n    title: B\n    status: in_progress\n",
    "schema_version: 1\ngoal: g\nnotes: |\n  - id: x\n    status: in_progress\nunits:\n"
    "  - id: a\n    title: A\n    status: todo\n",
]


def _setup(repo: Path, text: str) -> Path:
    (repo / ".resume-kit").mkdir(exist_ok=True)
    (repo / PROGRESS).write_text(text)
    load(find_layout(repo))  # what any resume-kit command does first
    return repo


@pytest.mark.parametrize("text", VARIANTS)
def test_cache_says_what_the_scanner_says(repo: Path, text: str) -> None:
    _setup(repo, text)
    data = (repo / PROGRESS).read_bytes()
    cached = hookentry.cached_unit_in_progress(str(repo), data)
    assert cached is not None
    assert (cached or None) == hookentry.unit_in_progress(data.decode())


def _commit_message(tmp_path: Path) -> Path:
    message = tmp_path / "MSG"
    message.write_text("Do the thing\n")
    return message


# VARIANTS[0] with enough done units in front to be over the size the hook scans first.
LARGE = VARIANTS[0].replace(
    "units:\n",
    "units:\n" + "".join(f"  - id: d{n}\n    title: D {n}\n    status: done\n" for n in range(300)),
)


def test_hook_uses_the_cache_without_scanning_a_large_file(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(LARGE.encode()) > hookentry.SCAN_FIRST_BYTES
    _setup(repo, LARGE)

    def no_scan(text: str) -> str | None:
        raise AssertionError("scanned although the cache knew")

    monkeypatch.setattr(hookentry, "unit_in_progress", no_scan)
    monkeypatch.setattr(hookentry, "first_unit_in_progress", no_scan)
    message = _commit_message(tmp_path)
    assert hookentry.prepare_commit_msg([str(message), "message"], worktree=str(repo)) == 0
    assert message.read_text().endswith("Resume-Unit: b\n")


@pytest.mark.parametrize(("text", "unit"), [(VARIANTS[0], "b"), (VARIANTS[3], "a")])
def test_a_small_file_is_scanned_without_the_cache(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, unit: str
) -> None:
    """Scanning a small file is sooner than finding the cache (a SHA-256 and two realpaths)."""
    _setup(repo, text)

    def no_cache(worktree: str, data: bytes) -> str | None:
        raise AssertionError("looked for the cache of a small file")

    monkeypatch.setattr(hookentry, "cached_unit_in_progress", no_cache)
    message = _commit_message(tmp_path)
    assert hookentry.prepare_commit_msg([str(message), "message"], worktree=str(repo)) == 0
    assert message.read_text().endswith(f"Resume-Unit: {unit}\n")


@pytest.mark.parametrize("text", VARIANTS)
def test_the_small_file_answer_is_the_caches(repo: Path, text: str) -> None:
    _setup(repo, text)
    data = (repo / PROGRESS).read_bytes()
    small = hookentry.scanned_small(data)
    assert small is None or small == hookentry.cached_unit_in_progress(str(repo), data)


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_text("resume-kit in-progress 1\n1 00000000\nzz\n"),
        lambda path: path.write_text("garbage"),
        lambda path: path.write_bytes(b"\xff\xfe"),
        lambda path: path.unlink(),
        lambda path: path.write_text(path.read_text().replace("\nb\n", "\nB!\n")),
    ],
)
def test_stale_or_damaged_cache_means_scanning(repo: Path, tmp_path: Path, damage: object) -> None:
    _setup(repo, VARIANTS[0])
    damage(cache_file(repo))  # type: ignore[operator]
    message = _commit_message(tmp_path)
    assert hookentry.prepare_commit_msg([str(message), "message"], worktree=str(repo)) == 0
    assert message.read_text().endswith("Resume-Unit: b\n")


def test_a_hand_edit_is_not_served_from_the_cache(repo: Path, tmp_path: Path) -> None:
    _setup(repo, VARIANTS[0])
    edited = VARIANTS[0].replace("status: done", "status: in_progress")
    (repo / PROGRESS).write_text(edited)  # no resume-kit command since
    assert hookentry.cached_unit_in_progress(str(repo), edited.encode()) is None
    message = _commit_message(tmp_path)
    hookentry.prepare_commit_msg([str(message), "message"], worktree=str(repo))
    assert message.read_text().endswith("Resume-Unit: a\n")


def test_cli_writes_keep_the_cache_current(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    assert cli("add", "First", "--verify", "true", "--id", "first").code == 0
    assert cli("add", "Second", "--verify", "true", "--id", "second").code == 0
    for unit, expected in (("second", "second"), ("first", "first")):
        assert cli("start", unit).code == 0
        data = (repo / PROGRESS).read_bytes()
        assert hookentry.cached_unit_in_progress(str(repo), data) == expected
    assert cli("reset", "first").code == 0 and cli("reset", "second").code == 0
    data = (repo / PROGRESS).read_bytes()
    assert hookentry.cached_unit_in_progress(str(repo), data) == ""
    assert cache_file(repo).is_file()
    assert str(cache_file(repo)) == hookentry.in_progress_file(str(repo))
    assert not (repo / ".resume-kit" / "cache" / "in-progress").exists()
    assert "in-progress" not in git(repo, "status", "--porcelain").stdout
