"""`resume-kit drill`: real `run` subprocesses SIGKILLed in a throwaway worktree, real git."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git, run_cli_subprocess

pytestmark = pytest.mark.subprocess


# A unit's command that a kill lands in even when the drill wakes late. The drill polls every
# 5 ms but can wake late on loaded cores: CI once saw a kill land after the third unit had
# passed, with nothing left to interrupt (``sleep 0.2`` and no output, so the first output
# came only as the command ended). This one prints first and then runs a second until its file
# exists: a drill 0.5 s late still lands inside it, and the final check, files there, is quick.
_LONG_ENOUGH = "echo {i}; test -e out{i}.txt || sleep 1; echo {i} > out{i}.txt"


def _plan(repo: Path, *units: tuple[str, str, list[str]]) -> None:
    assert run_cli_subprocess("init", "--goal", "drill", cwd=repo).code == 0
    for title, verify, extra in units:
        assert run_cli_subprocess("add", title, "--verify", verify, *extra, cwd=repo).code == 0
    assert run_cli_subprocess("trust", "--yes", cwd=repo).code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")


def _drill(repo: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = run_cli_subprocess("drill", "--json", *args, cwd=repo, timeout=300)
    assert result.code in (0, 1), result.stderr
    return result.code, json.loads(result.stdout)


def _broken(receipt: dict) -> dict[str, list[dict]]:  # type: ignore[type-arg]
    return {i["name"]: i["broken"] for i in receipt["invariants"] if not i["held"]}


def test_a_sound_setup_holds_with_reproducible_kills_and_a_saved_receipt(
    repo: Path, isolated_home: Path
) -> None:
    _plan(
        repo,
        *[(f"step {i}", _LONG_ENOUGH.format(i=i), []) for i in range(1, 4)],
        ("publish", "git push origin main", []),
    )
    status_before = git(repo, "status", "--porcelain").stdout
    caches = isolated_home / ".cache" / "resume-kit" / "worktrees"
    assert run_cli_subprocess("status", cwd=repo).code == 0
    live_cache = sorted(p.name for p in caches.iterdir())
    code, first = _drill(repo, "--kills", "2", "--seed", "11")
    assert code == 0, _broken(first)
    assert len(first["kills"]) == 2
    assert all(k["unit"] for k in first["kills"])
    assert sorted(first["ran"]) == ["step-1", "step-2", "step-3"]
    assert first["skipped"] == [
        {"unit": "publish", "reason": "side effect (git-push)", "kind": "rule"}
    ]
    assert sorted(first["leased"]) == ["step-1", "step-2", "step-3"]
    assert all(k["interrupted"] in first["ran"] for k in first["kills"])
    assert all(k["resume_s"] is not None for k in first["kills"])
    # the live tree: untouched, no worktree left, nothing done in the live progress file
    assert git(repo, "status", "--porcelain").stdout == status_before
    assert len(git(repo, "worktree", "list").stdout.splitlines()) == 1
    assert not (repo / "out1.txt").exists()
    assert sorted(p.name for p in caches.iterdir()) == live_cache  # none of the throwaway's
    saved = Path(first["saved"])
    assert saved.is_relative_to(isolated_home / ".local" / "share" / "resume-kit" / "drills")
    assert json.loads(saved.read_text())["trace"] == first["trace"]
    history = isolated_home / ".local" / "share" / "resume-kit" / "history"
    assert len(list(history.glob("*.sqlite3"))) <= 1  # the live tree's only, no throwaway's
    assert saved.with_suffix(".txt").read_text().startswith(f"drill {first['trace']}")
    _, again = _drill(repo, "--kills", "2", "--seed", "11")
    moments = [(k["after_start"], k["event"]) for k in first["kills"]]
    assert [(k["after_start"], k["event"]) for k in again["kills"]] == moments


def test_a_verify_that_passes_only_the_first_time_breaks_the_drill(repo: Path) -> None:
    """Seed 3 kills as the first unit starts. The sleep keeps that kill ahead of the command's
    one-time effect: on loaded cores the kill once landed after ``touch`` but before the pass
    was recorded, so the rerun failed and the unit ended not done, which no invariant sees
    (the drill cannot tell a command that had passed from one that had not yet finished)."""
    _plan(repo, ("once", "sleep 0.5; test ! -e .once && touch .once", []), ("two", "true", []))
    code, receipt = _drill(repo, "--kills", "1", "--seed", "3")
    assert code == 1
    assert [b["unit"] for b in _broken(receipt)["done_passes"]] == ["once"]


def test_a_verify_that_passes_only_the_first_time_breaks_the_drill_in_runs_overlap(
    repo: Path,
) -> None:
    """Seed 7 kills as the second unit starts: ``run`` starts it while the first unit's pass is
    still being written, so the kill usually cuts that pass off (6 runs in 6 on 2 loaded
    cores) and the first unit runs again and fails. The drill before this held there (it
    counted both units as interrupted); wherever the kill lands it must now break. The second
    unit runs a second, so a drill that wakes late still kills it while it runs."""
    _plan(repo, ("once", "test ! -e .once && touch .once", []), ("two", "sleep 1", []))
    code, receipt = _drill(repo, "--kills", "1", "--seed", "7")
    (kill,) = receipt["kills"]
    assert (kill["after_start"], kill["event"], kill["interrupted"]) == (2, "started", "two")
    assert code == 1
    assert [b["unit"] for b in _broken(receipt)["done_passes"]] == ["once"]
    assert kill["lost_pass"] in ([], ["once"])
    assert "one_rerun" not in _broken(receipt)


def test_an_artifact_outside_the_work_tree_breaks_the_drill(repo: Path) -> None:
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "app.bin").write_text("from an earlier live run\n")
    (repo / "build").symlink_to(outside)  # committed: every checkout shares the live folder
    _plan(repo, ("build", "test -f build/app.bin", ["--artifact", "build/app.bin"]))
    code, receipt = _drill(repo, "--kills", "1", "--seed", "1")
    assert code == 1
    assert [b["unit"] for b in _broken(receipt)["contained"]] == ["build"]


def test_a_verify_that_touches_a_shared_file_in_the_live_tree_breaks_the_drill(
    repo: Path,
) -> None:
    shared = repo / "shared.txt"
    shared.write_text("live data\n")
    _plan(repo, ("count", f"echo run >> {shared}", []), ("other", "true", []))
    code, receipt = _drill(repo, "--kills", "1", "--seed", "2", "--in-repo")
    assert code == 1
    assert any("shared.txt" in b["detail"] for b in _broken(receipt)["live_untouched"])
    assert Path(receipt["saved"]).parent == repo / ".resume-kit" / "drills"


def test_usage_errors_exit_2(repo: Path) -> None:
    _plan(repo, ("only", "true", []))
    bad = run_cli_subprocess("drill", "--kills", "-1", cwd=repo)
    assert bad.code == 2 and "--kills" in bad.stderr
    run_cli_subprocess("verify-next", cwd=repo)
    nothing = run_cli_subprocess("drill", cwd=repo)
    assert nothing.code == 2 and "nothing to rehearse" in nothing.stderr


def test_a_cloned_symlinked_drills_folder_is_refused_before_the_drill_runs(
    tmp_path: Path, repo: Path, isolated_home: Path
) -> None:
    """A hostile repository commits ``.resume-kit/drills`` as a symlink to a folder outside;
    in a clone of it, ``drill --in-repo`` refuses at once and writes nothing there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("the person's own file\n")
    marker = tmp_path / "ran.txt"  # the verify leaves it: proof that the drill ran
    _plan(repo, ("step", f"echo ran >> {marker}", []))
    (repo / ".resume-kit" / "drills").symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "drills folder")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert (clone / ".resume-kit" / "drills").is_symlink()
    assert run_cli_subprocess("trust", "--yes", cwd=clone).code == 0
    before = sorted((p.name, p.read_bytes()) for p in outside.iterdir())
    result = run_cli_subprocess("drill", "--in-repo", "--kills", "1", "--seed", "1", cwd=clone)
    assert result.code == 2, result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("resume-kit: error")]
    assert len(errors) == 1 and ".resume-kit/drills is a symlink" in errors[0]
    assert "Traceback" not in result.stderr
    assert sorted((p.name, p.read_bytes()) for p in outside.iterdir()) == before
    # refused before the drill: no throwaway worktree was made, no receipt saved anywhere
    assert len(git(clone, "worktree", "list").stdout.splitlines()) == 1
    assert not (isolated_home / ".local" / "share" / "resume-kit" / "drills").exists()
    assert not marker.exists()


def test_a_drills_file_instead_of_a_folder_is_refused(repo: Path) -> None:
    _plan(repo, ("step", "true", []))
    (repo / ".resume-kit" / "drills").write_text("not a folder\n")
    result = run_cli_subprocess("drill", "--in-repo", cwd=repo)
    assert result.code == 2
    assert ".resume-kit/drills is not a folder" in result.stderr
    assert (repo / ".resume-kit" / "drills").read_text() == "not a folder\n"


def test_units_marked_side_effects_are_skipped_like_rule_matches(
    tmp_path: Path, repo: Path
) -> None:
    marker = tmp_path / "sent.txt"  # what the marked unit's command would do outside
    _plan(
        repo,
        ("step", "echo 1 > out.txt", []),
        ("notify", f"echo sent >> {marker}", ["--side-effects"]),
        ("publish", "git push origin main", []),
    )
    code, receipt = _drill(repo, "--kills", "1", "--seed", "4")
    assert code == 0, _broken(receipt)
    assert receipt["skipped"] == [
        {"unit": "notify", "reason": "marked side_effects: true", "kind": "field"},
        {"unit": "publish", "reason": "side effect (git-push)", "kind": "rule"},
    ]
    assert receipt["ran"] == ["step"]
    assert not marker.exists()
    # a person never approved this one: the drill does not run it, so it needs no approval
    with (repo / ".resume-kit" / "progress.yaml").open("a") as progress:
        progress.write(
            f"  - id: unapproved\n    title: U\n    verify: echo x >> {marker}\n"
            "    side_effects: true\n"
        )
    code, receipt = _drill(repo, "--kills", "0")
    assert code == 0 and receipt["skipped"][-1]["unit"] == "unapproved"
    assert not marker.exists()
    text = run_cli_subprocess("drill", "--seed", "4", cwd=repo, timeout=300).stdout
    assert "skipped notify: marked side_effects: true" in text


def test_leases_others_hold_are_respected_and_the_drills_own_never_outlive_it(
    tmp_path: Path, repo: Path
) -> None:
    _plan(
        repo,
        *[(f"step {i}", _LONG_ENOUGH.format(i=i), []) for i in range(1, 5)],
        ("broken", "exit 3", []),  # a failure keeps its lease: the drill must release it
    )
    other = tmp_path / "other"  # another agent, in another worktree of the same clone
    git(repo, "worktree", "add", "-q", "--detach", str(other))
    assert run_cli_subprocess("claim", "step-2", "--offline", cwd=other).code == 0
    assert run_cli_subprocess("claim", "step-4", "--offline", cwd=repo).code == 0  # the person's
    code, receipt = _drill(repo, "--kills", "2", "--seed", "7")
    assert code == 0, _broken(receipt)
    assert len(receipt["kills"]) == 2
    skipped = {s["unit"]: s for s in receipt["skipped"]}
    assert skipped["step-2"]["kind"] == "leased"
    assert str(other) in skipped["step-2"]["reason"]
    assert skipped["step-4"]["reason"] == "leased by you in the live work tree"
    assert sorted(receipt["ran"]) == sorted(receipt["leased"]) == ["broken", "step-1", "step-3"]
    listed = run_cli_subprocess("leases", "--json", "--offline", cwd=repo)
    leases = json.loads(listed.stdout)["leases"]
    assert [(row["unit"], row["holder"]["worktree"]) for row in leases] == [
        ("step-2", str(other)),
        ("step-4", str(repo)),
    ]  # none of the drill's
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/resume-kit/").stdout
    assert refs.split() == ["refs/resume-kit/leases/step-2", "refs/resume-kit/leases/step-4"]
