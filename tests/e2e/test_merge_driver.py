"""`hook install` registers the progress.yaml merge driver; `git merge` then merges by unit."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git, run_cli

TRUST_ALL = {"RESUME_KIT_TRUST": "all"}


def test_git_merge_of_divergent_progress_files_keeps_both_verified_units(repo: Path) -> None:
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    for uid in ("a", "b"):
        assert run_cli("add", uid, "--verify", "true", "--id", uid, cwd=repo).code == 0
    installed = run_cli("hook", "install", cwd=repo)
    assert "merge driver: registered" in installed.stdout
    assert "merge=resume-kit" in (repo / ".git" / "info" / "attributes").read_text()
    assert "merge-driver %O %A %B %L" in git(repo, "config", "merge.resume-kit.driver").stdout
    assert not (repo / ".gitattributes").exists()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "units")
    git(repo, "checkout", "-q", "-b", "other")
    assert run_cli("verify-next", "--unit", "b", cwd=repo, env=TRUST_ALL).code == 0
    git(repo, "commit", "-q", "-am", "b done")
    git(repo, "checkout", "-q", "main")
    assert run_cli("verify-next", "--unit", "a", cwd=repo, env=TRUST_ALL).code == 0
    git(repo, "commit", "-q", "-am", "a done")
    merged = git(repo, "merge", "-q", "--no-edit", "other", check=False)
    assert merged.returncode == 0, merged.stderr + merged.stdout
    text = (repo / ".resume-kit" / "progress.yaml").read_text()
    assert text.count("status: done") == 2 and "<<<<<<<" not in text


def test_conflicting_titles_stop_the_merge_with_markers(repo: Path) -> None:
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    assert run_cli("add", "a", "--verify", "true", "--id", "a", cwd=repo).code == 0
    assert run_cli("hook", "install", "--commit-attributes", cwd=repo).code == 0
    assert "merge=resume-kit" in (repo / ".gitattributes").read_text()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "units")
    git(repo, "checkout", "-q", "-b", "other")
    assert run_cli("edit", "a", "--title", "Theirs", cwd=repo).code == 0
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    assert run_cli("edit", "a", "--title", "Ours", cwd=repo).code == 0
    git(repo, "commit", "-q", "-am", "ours")
    merged = git(repo, "merge", "-q", "--no-edit", "other", check=False)
    assert merged.returncode != 0
    text = (repo / ".resume-kit" / "progress.yaml").read_text()
    assert "<<<<<<< ours\n" in text and "title: Ours" in text and "title: Theirs" in text


def test_hook_uninstall_takes_the_merge_driver_out_and_keeps_other_attributes(repo: Path) -> None:
    attributes = repo / ".gitattributes"
    attributes.write_text("*.png binary\n")
    assert run_cli("hook", "install", "--commit-attributes", cwd=repo).code == 0
    assert "merge=resume-kit" in attributes.read_text()
    removed = run_cli("hook", "uninstall", cwd=repo)
    assert "merge driver: removed (and its line in .gitattributes)" in removed.stdout
    assert attributes.read_text() == "*.png binary\n"
    assert git(repo, "config", "--get-regexp", "^merge\\.", check=False).stdout == ""
    again = run_cli("hook", "uninstall", cwd=repo)
    assert "merge driver" not in again.stdout and "nothing to do" in again.stdout
