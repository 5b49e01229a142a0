"""No write, rename, prune or redirect follows a symlink in or out of ``.resume-kit/``
(issue 12 items 4, 16 and the write parts of 15; docs/security.md).

Every attack is a real repository: the attacker's source repo with the symlinks committed,
a ``git clone`` of it, then the victim's ordinary commands through the installed console
script. What counts is what the victim's home looks like afterwards: a listing with hashes
of everything in it (the user's own resume-kit data and cache folders aside) must not change.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from resume_kit.integrations import git_hooks as hooks
from tests.conftest import Result
from tests.hostile import (
    hostile_clone,
    install_hooks_for_every_repository,
    plant_user_secrets,
    run_user,
    user_git,
)

PROGRESS = (
    "schema_version: 1\n"
    "goal: Finish the work\n"
    "units:\n"
    "  - id: a\n"
    "    title: First\n"
    "    status: todo\n"
    "    verify: echo ok\n"
)
TRUST_ALL = {"RESUME_KIT_TRUST": "all", "RESUME_KIT_LOCK_TIMEOUT": "0.5"}
# The user's own resume-kit folders (trusted: approvals, caches) may change; nothing else.
TRUSTED = (".local/share/resume-kit", ".cache/resume-kit", ".config/resume-kit")
TRUSTED_PARENTS = {".local", ".local/share", ".cache", ".config"}


def listing(home: Path) -> dict[str, str]:
    """Every path under ``home`` with what it is: a file's sha256, a link's target, 'dir'."""
    seen: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(home):
        rel_dir = Path(dirpath).relative_to(home)
        dirnames[:] = [d for d in dirnames if (rel_dir / d).as_posix() not in TRUSTED]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = (rel_dir / name).as_posix()
            if path.is_symlink():
                seen[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                if rel not in TRUSTED_PARENTS:
                    seen[rel] = "dir"
            else:
                seen[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


def one_line_refusal(result: Result, what: str) -> None:
    """Exit 2 with one error line (and its hint) naming the symlink, no traceback."""
    assert result.code == 2, (result.code, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("resume-kit: error:")]
    assert len(errors) == 1, result.stderr
    assert f"{what} is a symlink" in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    hints = [line for line in result.stderr.splitlines() if line.startswith("hint:")]
    assert len(hints) <= 1, result.stderr


def hook_refusal(result: Result, what: str) -> None:
    """Hook mode: exit 0 and one line on stderr."""
    assert result.code == 0, (result.code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{what} is a symlink" in lines[0], result.stderr


def no_crash(result: Result) -> None:
    assert result.code != 70 and "Traceback" not in result.stderr, result.stderr


def commit_with_hooks(clone: Path, done: Callable[[], bool]) -> None:
    """The user's `git commit` (hooks installed); waits, bounded, for the detached post-commit
    snapshot to report."""
    proc = user_git(clone, "commit", "-q", "--allow-empty", "-m", "work")
    assert proc.returncode == 0, proc.stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not done():
        time.sleep(0.05)


def post_commit_log(clone: Path) -> Callable[[], bool]:
    """True once the detached post-commit snapshot wrote to its log (in the user's cache)."""
    log = hooks.post_commit_log(clone)
    return lambda: log.is_file() and log.stat().st_size > 0


ORDINARY: list[tuple[str, ...]] = [
    ("status",),
    ("snapshot",),
    ("brief",),
    ("verify-next",),
    ("add", "More", "--verify", "true"),
    ("run",),
]


def ordinary_commands(clone: Path) -> dict[tuple[str, ...], Result]:
    results = {args: run_user(*args, cwd=clone, env=TRUST_ALL) for args in ORDINARY}
    for result in results.values():
        no_crash(result)
    return results


# --------------------------------------------------------------------------- item 4


def test_snapshot_pruning_never_deletes_through_a_symlinked_snapshots_folder(
    tmp_path: Path, isolated_home: Path
) -> None:
    plant_user_secrets(isolated_home)
    elsewhere = isolated_home / "somewhere"
    elsewhere.mkdir()
    for name in ("a.json", "b.json", "c.json"):
        (elsewhere / name).write_text('{"mine": true}\n')
    clone = hostile_clone(
        tmp_path,
        {".resume-kit/progress.yaml": PROGRESS, ".resume-kit/config.yaml": "keep_snapshots: 1\n"},
        symlinks={".resume-kit/snapshots": str(elsewhere)},
    )
    install_hooks_for_every_repository(isolated_home)
    before = listing(isolated_home)
    results = ordinary_commands(clone)
    one_line_refusal(results[("snapshot",)], ".resume-kit/snapshots")
    one_line_refusal(results[("brief",)], ".resume-kit/snapshots")
    hook_refusal(
        run_user("brief", "--format", "claude-hook", cwd=clone, input="{}"),
        ".resume-kit/snapshots",
    )
    hook_refusal(
        run_user("snapshot", "--trigger", "post-commit", cwd=clone), ".resume-kit/snapshots"
    )
    commit_with_hooks(clone, post_commit_log(clone))
    assert "snapshots is a symlink" in hooks.post_commit_log(clone).read_text()
    assert listing(isolated_home) == before


def test_the_history_copy_never_lands_in_a_symlinked_history_folder(
    tmp_path: Path, isolated_home: Path
) -> None:
    plant_user_secrets(isolated_home)
    rc_dir = isolated_home / ".bashrc.d"
    rc_dir.mkdir()
    clone = hostile_clone(
        tmp_path,
        # a YAML comment line that is also a shell command
        {".resume-kit/progress.yaml": "# ; touch ~/PWNED\n" + PROGRESS},
        symlinks={".resume-kit/history": str(rc_dir)},
    )
    before = listing(isolated_home)
    results = ordinary_commands(clone)
    for args in (("verify-next",), ("add", "More", "--verify", "true"), ("run",)):
        one_line_refusal(results[args], ".resume-kit/history")
    assert list(rc_dir.iterdir()) == []
    assert listing(isolated_home) == before


def test_committed_history_names_neither_stop_a_write_nor_leave_the_folder(
    tmp_path: Path, isolated_home: Path
) -> None:
    """A clone ships copies in ``.resume-kit/history`` named as resume-kit names them, one
    with no real date in it and one a FIFO: the victim's next write keeps its history copy
    in that folder, never opens the FIFO, and the bogus name does not stop it."""
    plant_user_secrets(isolated_home)
    clone = hostile_clone(
        tmp_path,
        {
            ".resume-kit/progress.yaml": PROGRESS,
            ".resume-kit/history/progress-20261399T999999-000000000.yaml": "not a date\n",
        },
    )
    history = clone / ".resume-kit" / "history"
    os.mkfifo(history / "progress-20260101T000000-000000001.yaml")
    before = listing(isolated_home)
    result = run_user("add", "More", "--verify", "true", cwd=clone, env=TRUST_ALL)
    assert result.code == 0, result.stderr
    names = sorted(p.name for p in history.iterdir())
    assert len(names) == 3 and "progress-20261399T999999-000000000.yaml" in names
    assert listing(isolated_home) == before


def test_a_symlinked_state_folder_is_refused_by_every_command(
    tmp_path: Path, isolated_home: Path
) -> None:
    plant_user_secrets(isolated_home)
    (isolated_home / "progress.yaml").write_text(PROGRESS.replace("Finish", "SECRET GOAL"))
    clone = hostile_clone(
        tmp_path, {"README.md": "hi\n"}, symlinks={".resume-kit": str(isolated_home)}
    )
    before = listing(isolated_home)
    results = ordinary_commands(clone)
    for args, result in results.items():
        one_line_refusal(result, ".resume-kit")
        assert "SECRET GOAL" not in result.stdout + result.stderr, args
    one_line_refusal(run_user("init", "--goal", "g", cwd=clone), ".resume-kit")
    hook_refusal(run_user("brief", "--format", "claude-hook", cwd=clone, input="{}"), ".resume-kit")
    hook_refusal(run_user("snapshot", "--trigger", "pre-compact", cwd=clone), ".resume-kit")
    hook_refusal(run_user("stop-check", cwd=clone, input="{}"), ".resume-kit")
    hook_refusal(run_user("hook", "run", "pre-push", cwd=clone), ".resume-kit")
    assert not (isolated_home / "snapshots").exists()
    assert listing(isolated_home) == before


def test_git_commit_with_hooks_writes_nothing_through_a_symlinked_state_folder(
    tmp_path: Path, isolated_home: Path
) -> None:
    plant_user_secrets(isolated_home)
    clone = hostile_clone(
        tmp_path, {"README.md": "hi\n"}, symlinks={".resume-kit": str(isolated_home)}
    )
    install_hooks_for_every_repository(isolated_home)
    before = listing(isolated_home)
    commit_with_hooks(clone, post_commit_log(clone))
    assert listing(isolated_home) == before


def test_a_symlinked_progress_file_is_neither_read_nor_written(
    tmp_path: Path, isolated_home: Path
) -> None:
    plant_user_secrets(isolated_home)
    other = isolated_home / "other-project" / "progress.yaml"
    other.parent.mkdir()
    other.write_text(PROGRESS.replace("Finish the work", "SECRET GOAL"))
    clone = hostile_clone(
        tmp_path, {"README.md": "hi\n"}, symlinks={".resume-kit/progress.yaml": str(other)}
    )
    before = listing(isolated_home)
    results = ordinary_commands(clone)
    for args, result in results.items():
        one_line_refusal(result, ".resume-kit/progress.yaml")
        assert "SECRET GOAL" not in result.stdout + result.stderr, args
    assert listing(isolated_home) == before


def test_run_logs_never_go_through_a_symlinked_runs_folder(
    tmp_path: Path, isolated_home: Path
) -> None:
    plant_user_secrets(isolated_home)
    logs = isolated_home / "logs"
    logs.mkdir()
    (logs / "mine.log").write_text("my own log\n")
    clone = hostile_clone(
        tmp_path,
        {".resume-kit/progress.yaml": PROGRESS},
        symlinks={".resume-kit/runs": str(logs)},
    )
    before = listing(isolated_home)
    results = ordinary_commands(clone)
    one_line_refusal(results[("verify-next",)], ".resume-kit/runs")
    one_line_refusal(results[("run",)], ".resume-kit/runs")
    assert listing(isolated_home) == before


def test_a_symlinked_cache_folder_is_refused(tmp_path: Path, isolated_home: Path) -> None:
    plant_user_secrets(isolated_home)
    target = isolated_home / "cachedir"
    target.mkdir()
    clone = hostile_clone(
        tmp_path,
        {".resume-kit/progress.yaml": PROGRESS},
        symlinks={".resume-kit/cache": str(target)},
    )
    before = listing(isolated_home)
    results = ordinary_commands(clone)
    for args in (("status",), ("snapshot",), ("brief",)):
        one_line_refusal(results[args], ".resume-kit/cache")
    assert listing(isolated_home) == before


def test_a_symlinked_lock_file_is_refused_at_once(tmp_path: Path, isolated_home: Path) -> None:
    secrets = plant_user_secrets(isolated_home)
    progress_lock = hostile_clone(
        tmp_path / "one",
        {".resume-kit/progress.yaml": PROGRESS},
        symlinks={".resume-kit/progress.yaml.lock": str(secrets["bashrc"])},
    )
    claim_lock = hostile_clone(
        tmp_path / "two",
        {".resume-kit/progress.yaml": PROGRESS},
        symlinks={".resume-kit/running/a.lock": str(secrets["aws"])},
    )
    before = listing(isolated_home)
    began = time.monotonic()
    slow = {"RESUME_KIT_LOCK_TIMEOUT": "30"}
    result = run_user("add", "More", "--verify", "true", cwd=progress_lock, env=slow)
    one_line_refusal(result, ".resume-kit/progress.yaml.lock")
    assert time.monotonic() - began < 20  # refused, not waited out
    result = run_user("verify-next", cwd=claim_lock, env=TRUST_ALL)
    one_line_refusal(result, ".resume-kit/running/a.lock")
    assert "ok" not in result.stdout  # the command never ran
    assert listing(isolated_home) == before


def test_a_symlinked_claims_folder_is_refused(tmp_path: Path, isolated_home: Path) -> None:
    plant_user_secrets(isolated_home)
    elsewhere = isolated_home / "run"
    elsewhere.mkdir()
    clone = hostile_clone(
        tmp_path,
        {".resume-kit/progress.yaml": PROGRESS},
        symlinks={".resume-kit/running": str(elsewhere)},
    )
    before = listing(isolated_home)
    one_line_refusal(run_user("verify-next", cwd=clone, env=TRUST_ALL), ".resume-kit/running")
    one_line_refusal(run_user("run", cwd=clone, env=TRUST_ALL), ".resume-kit/running")
    assert listing(isolated_home) == before


def test_temporary_file_names_that_are_symlinks_are_never_followed(
    tmp_path: Path, isolated_home: Path
) -> None:
    secrets = plant_user_secrets(isolated_home)
    clone = hostile_clone(
        tmp_path,
        {".resume-kit/progress.yaml": PROGRESS},
        symlinks={
            ".resume-kit/.progress.yaml.1.1a.tmp": str(secrets["bashrc"]),
            ".resume-kit/.progress.yaml.lock.1.1a.tmp": str(secrets["aws"]),
        },
    )
    before = listing(isolated_home)
    result = run_user("add", "More", "--verify", "true", cwd=clone)
    assert result.code == 0, result.stderr
    assert listing(isolated_home) == before


def test_pruning_removes_only_names_resume_kit_generates(
    tmp_path: Path, isolated_home: Path
) -> None:
    clone = hostile_clone(
        tmp_path,
        {
            ".resume-kit/progress.yaml": PROGRESS,
            ".resume-kit/snapshots/notes.json": "{}\n",
            ".resume-kit/snapshots/20200101T000000000Z.json": "{}\n",
            ".resume-kit/history/progress-keep-me.yaml": "x\n",
        },
    )
    # the person's own config may keep one snapshot (a repository's is bounded to 5 or more)
    user_config = isolated_home / ".config" / "resume-kit" / "config.yaml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text("keep_snapshots: 1\n")
    for _ in range(3):
        assert run_user("snapshot", cwd=clone).code == 0
    snapshots = sorted(p.name for p in (clone / ".resume-kit/snapshots").iterdir())
    generated = [n for n in snapshots if n not in ("notes.json", "20200101T000000000Z.json")]
    assert "notes.json" in snapshots and "20200101T000000000Z.json" in snapshots
    assert len([n for n in generated if n.endswith(".json")]) == 1
    for n in range(25):
        assert run_user("add", f"Unit {n}", "--verify", "true", cwd=clone).code == 0
    history = sorted(p.name for p in (clone / ".resume-kit/history").iterdir())
    assert "progress-keep-me.yaml" in history
    assert len([n for n in history if n != "progress-keep-me.yaml" and n != ".gitignore"]) == 20


# --------------------------------------------------------------------------- item 15 (writes)


def test_rewrites_keep_a_private_progress_file_private(tmp_path: Path) -> None:
    clone = hostile_clone(tmp_path, {".resume-kit/progress.yaml": PROGRESS})
    progress = clone / ".resume-kit" / "progress.yaml"
    os.chmod(progress, 0o600)
    assert run_user("add", "More", "--verify", "true", cwd=clone).code == 0
    assert run_user("verify-next", cwd=clone, env=TRUST_ALL).code == 0
    assert "More" in progress.read_text()
    assert stat.S_IMODE(progress.stat().st_mode) == 0o600
    copies = list((clone / ".resume-kit" / "history").iterdir())
    assert copies and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in copies)


def test_run_logs_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    clone = hostile_clone(tmp_path, {".resume-kit/progress.yaml": PROGRESS})
    assert run_user("verify-next", cwd=clone, env=TRUST_ALL).code == 0
    logs = list((clone / ".resume-kit" / "runs").glob("*.log"))
    assert len(logs) == 1
    assert stat.S_IMODE(logs[0].stat().st_mode) == 0o600


def test_a_repository_gitignore_cannot_get_tool_state_committed(tmp_path: Path) -> None:
    clone = hostile_clone(
        tmp_path,
        {
            ".resume-kit/progress.yaml": PROGRESS,
            ".resume-kit/.gitignore": "!runs/\n!snapshots/\n!history/\n!cache/\n",
        },
    )
    assert run_user("verify-next", cwd=clone, env=TRUST_ALL).code == 0
    assert run_user("snapshot", cwd=clone).code == 0
    assert run_user("add", "More", "--verify", "true", cwd=clone).code == 0
    assert list((clone / ".resume-kit" / "runs").glob("*.log"))
    untracked = user_git(clone, "status", "--porcelain", "--untracked-files=all").stdout
    for folder in ("runs/", "snapshots/", "history/", "cache/"):
        assert f".resume-kit/{folder}" not in untracked, untracked
    user_git(clone, "add", "-A")
    staged = user_git(clone, "diff", "--cached", "--name-only").stdout.split()
    assert not [p for p in staged if p.startswith(".resume-kit/") and "/" in p[12:]], staged
    (clone / "work.py").write_text("print('real work')\n")
    shown = run_user("snapshot", "--json", cwd=clone)
    assert shown.code == 0, shown.stderr
    changes = json.loads(shown.stdout)["changes"]
    work = [e["path"] for kind in ("staged", "unstaged", "untracked") for e in changes[kind]]
    assert work and not [p for p in work if p.startswith(".resume-kit/")], work


def test_temporary_files_of_killed_writes_are_cleaned_up_on_the_next_write(
    tmp_path: Path,
) -> None:
    clone = hostile_clone(tmp_path, {".resume-kit/progress.yaml": PROGRESS})
    state = clone / ".resume-kit"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    leftovers = [
        state / f".progress.yaml.{pid}.1a2b.tmp",
        state / f".progress.yaml.lock.{pid}.3c.tmp",
    ]
    for path in leftovers:
        path.write_text("half a write\n")
    alive = state / f".progress.yaml.{os.getppid()}.4d.tmp"  # a live writer's: kept
    alive.write_text("being written\n")
    similar = [
        state / ".progress.yaml.tmp",
        state / f".progress.yaml.{pid}.xyz.tmp",
        state / "x.tmp",
    ]
    for path in similar:
        path.write_text("not ours\n")
    assert run_user("add", "More", "--verify", "true", cwd=clone).code == 0
    assert [p for p in leftovers if p.exists()] == []
    assert alive.exists()
    assert all(p.exists() for p in similar)


def test_integrate_user_keeps_a_symlinked_settings_file_a_symlink(
    tmp_path: Path, isolated_home: Path
) -> None:
    clone = hostile_clone(tmp_path, {"README.md": "hi\n"})
    dotfiles = isolated_home / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{\n    "model": "opus"\n}\n')
    os.chmod(dotfiles, 0o600)
    link = isolated_home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    result = run_user("integrate", "claude", "--user", cwd=clone)
    assert result.code == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(dotfiles)
    assert "brief --format claude-hook" in dotfiles.read_text()  # after the executable
    assert '    "model": "opus"' in dotfiles.read_text()
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o600
    result = run_user("integrate", "claude", "--user", "--remove", cwd=clone)
    assert result.code == 0, result.stderr
    assert link.is_symlink() and "resume-kit" not in dotfiles.read_text()


def test_a_project_settings_file_symlinked_out_of_the_repo_is_refused(
    tmp_path: Path, isolated_home: Path
) -> None:
    user_file = isolated_home / ".claude" / "settings.json"
    user_file.parent.mkdir()
    user_file.write_text('{"model": "opus"}\n')
    for name, links in (
        ("file", {".claude/settings.json": str(user_file)}),
        ("folder", {".claude": str(user_file.parent)}),
        ("codex", {".codex/hooks.json": str(user_file)}),
    ):
        clone = hostile_clone(tmp_path / name, {"README.md": "hi\n"}, symlinks=links)
        before = listing(isolated_home)
        what = next(iter(links))
        args = ("integrate", "codex") if name == "codex" else ("integrate", "claude")
        one_line_refusal(run_user(*args, cwd=clone), what)
        one_line_refusal(run_user(*args, "--remove", cwd=clone), what)
        assert listing(isolated_home) == before
    assert user_file.read_text() == '{"model": "opus"}\n'


def test_a_fifo_settings_file_does_not_hang(tmp_path: Path, isolated_home: Path) -> None:
    clone = hostile_clone(tmp_path, {"README.md": "hi\n"})
    (isolated_home / ".claude").mkdir()
    os.mkfifo(isolated_home / ".claude" / "settings.json")
    (clone / ".claude").mkdir()
    os.mkfifo(clone / ".claude" / "settings.json")
    for args in (("--user",), ()):
        began = time.monotonic()
        result = run_user("integrate", "claude", *args, cwd=clone, timeout=30)
        assert result.code == 2, result.stderr
        assert "not a regular file (a FIFO)" in result.stderr
        assert time.monotonic() - began < 20


def test_integrate_aider_never_writes_through_a_committed_symlink(
    tmp_path: Path, isolated_home: Path
) -> None:
    """A clone's `.resume-kit/brief.md` or `.aider.conf.yml` pointing at the user's shell rc:
    `integrate aider` refuses in one line, and the refreshes after a commit and a verify that
    the user's switch then asks for leave the target alone."""
    secrets = plant_user_secrets(isolated_home)
    bashrc = secrets["bashrc"]
    original = bashrc.read_text()
    for name, link in (("brief", ".resume-kit/brief.md"), ("conf", ".aider.conf.yml")):
        clone = hostile_clone(
            tmp_path / name,
            {".resume-kit/progress.yaml": PROGRESS},
            symlinks={link: str(bashrc)},
        )
        one_line_refusal(run_user("integrate", "aider", cwd=clone), link)
        if name == "brief":  # refused before anything was written
            assert not (clone / ".aider.conf.yml").exists()
        assert run_user("hook", "install", cwd=clone).code == 0
        (clone / "work.txt").write_text("x\n")
        user_git(clone, "add", "work.txt")
        assert user_git(clone, "commit", "-q", "-m", "work").returncode == 0
        run_user("verify-next", cwd=clone, env=TRUST_ALL)
        assert bashrc.read_text() == original and not bashrc.is_symlink()
        assert (clone / link).is_symlink()
