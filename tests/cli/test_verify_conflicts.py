"""verify-next and run record nothing while a merge or rebase has unresolved conflicts (exit 2,
one line and a hint); --force verifies anyway (issue 16 point 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from resume_kit.infra import trust
from resume_kit.progress_file import io as progress_io
from tests.conftest import git, run_cli
from tests.helpers_snapshot import conflicting_branches, write_progress


def _progress(repo: Path) -> Path:
    path = write_progress(
        repo,
        [
            {"id": "a", "title": "A", "verify": "true"},
            {"id": "b", "title": "B", "verify": "true"},
        ],
    )
    trust.approve(repo, progress_io.parse_and_validate(path.read_text()).units)
    return path


def _merge_conflict(repo: Path) -> None:
    conflicting_branches(repo, "feature")
    assert git(repo, "merge", "feature", check=False).returncode != 0


def _rebase_conflict(repo: Path) -> None:
    conflicting_branches(repo, "feature")
    git(repo, "checkout", "-q", "feature")
    assert git(repo, "rebase", "main", check=False).returncode != 0


@pytest.mark.parametrize(
    ("make", "operation", "finish"),
    [
        (_merge_conflict, "merge", "git merge --continue"),
        (_rebase_conflict, "rebase", "git rebase --continue"),
    ],
)
def test_verify_next_refuses_while_conflicts_are_unresolved(
    repo: Path,
    make,
    operation: str,
    finish: str,  # type: ignore[no-untyped-def]
) -> None:
    make(repo)
    path = _progress(repo)
    before = path.read_text()
    result = run_cli("verify-next", cwd=repo)
    assert result.code == 2
    lines = result.stderr.splitlines()
    assert lines == [
        f"resume-kit: error: a {operation} has 1 unresolved conflict (notes.md): a pass now "
        "would prove nothing about the result, so nothing is verified",
        f"hint: resolve them, `git add` them and finish with `{finish}` (or `git {operation} "
        "--abort`); or pass --force to verify and record anyway",
    ]
    assert path.read_text() == before  # nothing recorded, nothing started
    for args in (["verify-next", "--stale"], ["run"], ["run", "-j", "2"]):
        refused = run_cli(*args, cwd=repo)
        assert refused.code == 2 and "unresolved conflict" in refused.stderr, args
    assert path.read_text() == before
    # a dry run records nothing, so it still says what would run
    assert run_cli("verify-next", "--dry-run", cwd=repo).code == 0


def test_force_verifies_and_records_anyway(repo: Path) -> None:
    _merge_conflict(repo)
    path = _progress(repo)
    forced = run_cli("verify-next", "--force", cwd=repo)
    assert forced.code == 0, forced.stderr
    model = progress_io.parse_and_validate(path.read_text())
    assert model.require_unit("a").evidence is not None
    batch = run_cli("run", "--force", cwd=repo)
    assert batch.code == 0, batch.stderr
    assert progress_io.parse_and_validate(path.read_text()).require_unit("b").status == "done"


def test_once_resolved_verify_next_records_again(repo: Path) -> None:
    _merge_conflict(repo)
    path = _progress(repo)
    assert run_cli("verify-next", cwd=repo).code == 2
    (repo / "notes.md").write_text("both\n")
    git(repo, "add", "notes.md")  # resolved, the merge not yet committed
    result = run_cli("verify-next", cwd=repo)
    assert result.code == 0, result.stderr
    assert progress_io.parse_and_validate(path.read_text()).require_unit("a").status == "done"


def test_the_check_started_ahead_answers_for_the_index_it_read(repo: Path) -> None:
    """verify-next starts `git ls-files --unmerged` while it builds the model: its answer is
    taken once; one never taken is an old answer, stopped and started again, and none is
    left running when the process exits."""
    from resume_kit.infra.paths import find_layout
    from resume_kit.runner import conflicts

    layout = find_layout(repo)
    conflicts.start_conflicts_check(layout)
    assert conflicts.unmerged_paths(layout) == []  # the answer started ahead, taken
    conflicts.start_conflicts_check(layout)  # started on the clean index, never taken
    (old,) = conflicts._started.values()
    _merge_conflict(repo)
    conflicts.start_conflicts_check(layout)
    assert old.returncode is not None  # stopped and reaped
    assert conflicts.unmerged_paths(layout) == ["notes.md"]
    conflicts.start_conflicts_check(layout)
    (untaken,) = conflicts._started.values()
    conflicts._started.clear()  # what atexit runs
    assert untaken.returncode is not None and not conflicts._started
