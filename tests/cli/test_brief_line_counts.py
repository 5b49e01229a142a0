"""The brief's snapshot skips `git diff --numstat` (nothing it shows reads line counts);
other snapshots keep them."""

from __future__ import annotations

from pathlib import Path

from resume_kit.facts.snapshot_store import load_latest
from resume_kit.infra.paths import find_layout
from tests.conftest import git, run_cli
from tests.helpers_snapshot import write_progress


def _changes(repo: Path) -> dict[str, list[dict[str, object]]]:
    snapshot, warnings = load_latest(find_layout(repo))
    assert snapshot is not None and warnings == []
    changes: dict[str, list[dict[str, object]]] = snapshot["changes"]  # type: ignore[assignment]
    return changes


def test_brief_snapshots_have_null_line_counts_and_manual_ones_counts(repo: Path) -> None:
    write_progress(repo, [{"id": "a", "title": "A", "verify": "true"}])
    (repo / "README.md").write_text("hello\nmore\n")
    (repo / "staged.txt").write_text("one\ntwo\n")
    git(repo, "add", "staged.txt")
    assert run_cli("snapshot", cwd=repo).code == 0
    manual = _changes(repo)
    assert [(c["added"], c["deleted"]) for c in manual["unstaged"]] == [(1, 0)]
    assert [(c["added"], c["deleted"]) for c in manual["staged"]] == [(2, 0)]
    assert run_cli("brief", cwd=repo).code == 0
    brief = _changes(repo)
    assert [c["path"] for c in brief["unstaged"]] == ["README.md"]
    assert [(c["added"], c["deleted"]) for c in brief["unstaged"] + brief["staged"]] == [
        (None, None),
        (None, None),
    ]
