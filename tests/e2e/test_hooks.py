"""Git hooks: real repositories, real `git commit`, the real CLI in a subprocess."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.integrations import git_hooks as hooks
from resume_kit.integrations import hook_entry as hookentry
from tests.conftest import REPO_ROOT, git, path_of_only, run_cli

PROGRESS = """\
schema_version: 1
goal: Extract the contracts
units:
  - id: doc-001
    title: First
    status: done
    verify: "true"
  - id: doc-002   # the one being worked on
    title: Second
    status: in_progress
    verify: "true"
"""


def write_progress(root: Path, text: str = PROGRESS) -> None:
    state = root / ".resume-kit"
    state.mkdir(exist_ok=True)
    (state / "progress.yaml").write_text(text, encoding="utf-8")


def commit(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    (root / "work.txt").write_text(f"{time.monotonic_ns()}\n")
    git(root, "add", "work.txt")
    proc = subprocess.run(
        ["git", "commit", "-q", *args],
        cwd=root,
        text=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def message(root: Path, rev: str = "HEAD") -> str:
    return git(root, "log", "-1", "--format=%B", rev).stdout


def install(root: Path, *args: str) -> str:
    result = run_cli("hook", "install", *args, cwd=root)
    assert result.code == 0, result.stderr
    return result.stdout


def hooks_dir(root: Path) -> Path:
    return root / ".git" / "hooks"


def wait_for(predicate, seconds: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    """Poll ``predicate`` until it holds or the deadline passes (a bounded loop, no fixed sleep)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


# --------------------------------------------------------------------------- commits


@pytest.mark.skipif(
    importlib.util.find_spec("resume_kit.cli.commands.snapshot") is None,
    reason="the snapshot command is not in this tree yet",
)
def test_post_commit_records_a_snapshot_in_the_background(repo: Path) -> None:
    write_progress(repo)
    install(repo)
    proc = commit(repo, "-m", "work")
    assert proc.stderr == ""
    snapshots = repo / ".resume-kit" / "snapshots"

    def written() -> list[Path]:
        return sorted(snapshots.glob("*.json")) if snapshots.is_dir() else []

    assert wait_for(lambda: bool(written())), hooks.post_commit_log(repo).read_text()
    head = git(repo, "rev-parse", "HEAD").stdout.strip()

    def snapshot_of_head() -> bool:
        try:
            data = json.loads(written()[-1].read_text())
        except (ValueError, IndexError):
            return False  # still being renamed into place
        return bool(data["trigger"] == "post-commit" and data["repo"]["head"] == head)

    assert wait_for(snapshot_of_head)


def test_trailer_added_for_the_unit_in_progress(repo: Path) -> None:
    write_progress(repo)
    install(repo)
    commit(repo, "-m", "extract contract 2")
    assert message(repo) == "extract contract 2\n\nResume-Unit: doc-002\n\n"
    trailers = git(repo, "log", "-1", "--format=%(trailers:key=Resume-Unit,valueonly)").stdout
    assert trailers.strip() == "doc-002"


def test_no_trailer_without_a_unit_in_progress(repo: Path) -> None:
    write_progress(repo, PROGRESS.replace("in_progress", "todo"))
    install(repo)
    commit(repo, "-m", "plain")
    assert "Resume-Unit" not in message(repo)


def test_existing_trailer_is_kept(repo: Path) -> None:
    write_progress(repo)
    install(repo)
    commit(repo, "-m", "fix", "-m", "Resume-Unit: doc-001")
    body = message(repo)
    assert body.count("Resume-Unit") == 1
    assert "Resume-Unit: doc-001" in body


def test_merge_and_cherry_pick_get_no_trailer(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, "-m", "on side")
    side_only = git(repo, "rev-parse", "HEAD").stdout.strip()
    git(repo, "checkout", "-q", "main")
    (repo / "other.txt").write_text("x\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-q", "-m", "on main")
    write_progress(repo)
    install(repo)
    merge = subprocess.run(
        ["git", "merge", "--no-ff", "-q", "-m", "merge side", "side"],
        cwd=repo,
        text=True,
        capture_output=True,
    )
    assert merge.returncode == 0, merge.stderr
    assert "Resume-Unit" not in message(repo)
    git(repo, "checkout", "-q", "-b", "picks", "main~1")
    git(repo, "cherry-pick", side_only)
    assert "Resume-Unit" not in message(repo)


def test_an_empty_editor_message_still_aborts_the_commit(repo: Path) -> None:
    write_progress(repo)
    install(repo)
    (repo / "work.txt").write_text("edited\n")
    git(repo, "add", "work.txt")
    before = git(repo, "rev-parse", "HEAD").stdout
    proc = subprocess.run(
        ["git", "commit"],
        cwd=repo,
        text=True,
        capture_output=True,
        env={**os.environ, "GIT_EDITOR": "true"},
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0
    assert "empty commit message" in proc.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


@pytest.mark.parametrize(
    "broken",
    [
        "units: [ {id: doc-002, status: in_progress\n",  # does not parse
        "goal: x\nunits:\n  - id: doc-002\n    status: in_progress\n   bad: [\n",
        "\xff\xfe in_progress",  # not UTF-8 (written as latin-1 below)
        "units:\n  - id: Not An Id!\n    status: in_progress\n",
    ],
)
def test_a_broken_progress_file_never_blocks_a_commit(repo: Path, broken: str) -> None:
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit" / "progress.yaml").write_bytes(broken.encode("latin-1"))
    install(repo)
    proc = commit(repo, "-m", "still commits")
    assert message(repo).startswith("still commits")
    assert "Resume-Unit" not in message(repo)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) <= 1
    if lines:
        assert lines[0].startswith("resume-kit: ")


# --------------------------------------------------------------------------- legacy hooks


LEGACY_PREPARE = """\
#!/bin/sh
echo "legacy ran: $2" >&2
printf 'Legacy-Line: %s\\n' "${2:-none}" >> "$1"
"""


def test_legacy_hook_runs_first_with_the_same_arguments(repo: Path) -> None:
    write_progress(repo)
    legacy = hooks_dir(repo) / "prepare-commit-msg"
    legacy.write_text(LEGACY_PREPARE)
    legacy.chmod(0o755)
    out = install(repo)
    assert "prepare-commit-msg.legacy" in out
    proc = commit(repo, "-m", "with legacy")
    assert "legacy ran: message" in proc.stderr
    body = message(repo)
    assert body.index("Legacy-Line: message") < body.index("Resume-Unit: doc-002")


def test_a_failing_legacy_prepare_commit_msg_still_fails_the_commit(repo: Path) -> None:
    write_progress(repo)
    legacy = hooks_dir(repo) / "prepare-commit-msg"
    legacy.write_text("#!/bin/sh\necho 'legacy says no' >&2\nexit 3\n")
    legacy.chmod(0o755)
    install(repo)
    before = git(repo, "rev-parse", "HEAD").stdout
    proc = commit(repo, "-m", "refused", check=False)
    assert proc.returncode != 0
    assert "legacy says no" in proc.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


def test_legacy_post_commit_still_runs(repo: Path) -> None:
    legacy = hooks_dir(repo) / "post-commit"
    legacy.write_text('#!/bin/sh\necho "post $(git rev-parse HEAD)" > post-commit-ran\n')
    legacy.chmod(0o755)
    install(repo)
    commit(repo, "-m", "x")
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert (repo / "post-commit-ran").read_text().strip() == f"post {head}"


def test_non_utf8_legacy_hook_is_restored_byte_for_byte(repo: Path) -> None:
    original = b"#!/bin/sh\n# caf\xe9 \xff\xfe\r\nexit 0\n"
    hook = hooks_dir(repo) / "post-commit"
    hook.write_bytes(original)
    hook.chmod(0o750)
    install(repo)
    assert (hooks_dir(repo) / "post-commit.legacy").read_bytes() == original
    commit(repo, "-m", "x")
    result = run_cli("hook", "uninstall", cwd=repo)
    assert result.code == 0, result.stderr
    assert hook.read_bytes() == original
    assert stat.S_IMODE(hook.stat().st_mode) == 0o750
    assert not (hooks_dir(repo) / "post-commit.legacy").exists()
    assert not (hooks_dir(repo) / "prepare-commit-msg").exists()


def test_dead_symlink_is_kept_as_legacy_and_restored(repo: Path) -> None:
    hook = hooks_dir(repo) / "prepare-commit-msg"
    os.symlink("/nonexistent/their-hook", hook)
    write_progress(repo)
    install(repo)
    legacy = hooks_dir(repo) / "prepare-commit-msg.legacy"
    assert legacy.is_symlink() and os.readlink(legacy) == "/nonexistent/their-hook"
    commit(repo, "-m", "x")  # git ignored the dead link before; we do too
    assert "Resume-Unit: doc-002" in message(repo)
    status = json.loads(run_cli("hook", "status", "--json", cwd=repo).stdout)
    by_name = {h["name"]: h for h in status["hooks"]}
    assert by_name["prepare-commit-msg"]["state"] == "installed"
    assert by_name["prepare-commit-msg"]["legacy"] is True
    assert run_cli("hook", "uninstall", cwd=repo).code == 0
    assert hook.is_symlink() and os.readlink(hook) == "/nonexistent/their-hook"
    assert not os.path.lexists(legacy)


def test_install_twice_changes_nothing(repo: Path) -> None:
    original = b"#!/bin/sh\nexit 0\n"
    hook = hooks_dir(repo) / "post-commit"
    hook.write_bytes(original)
    hook.chmod(0o755)
    install(repo)
    first = {p.name: p.read_bytes() for p in hooks_dir(repo).iterdir()}
    out = install(repo)
    assert out.count("already installed") == 2
    assert {p.name: p.read_bytes() for p in hooks_dir(repo).iterdir()} == first
    assert (hooks_dir(repo) / "post-commit.legacy").read_bytes() == original
    assert not (hooks_dir(repo) / "post-commit.legacy.legacy").exists()


def test_uninstall_is_idempotent_and_leaves_foreign_hooks(repo: Path) -> None:
    result = run_cli("hook", "uninstall", cwd=repo)
    assert result.code == 0 and "nothing to do" in result.stdout
    install(repo, "--hooks", "post-commit")
    foreign = b"#!/bin/sh\necho mine\n"
    (hooks_dir(repo) / "prepare-commit-msg").write_bytes(foreign)
    assert run_cli("hook", "uninstall", cwd=repo).code == 0
    assert not (hooks_dir(repo) / "post-commit").exists()
    assert (hooks_dir(repo) / "prepare-commit-msg").read_bytes() == foreign


def test_install_refuses_to_overwrite_a_kept_legacy_hook(repo: Path) -> None:
    hook = hooks_dir(repo) / "post-commit"
    hook.write_bytes(b"#!/bin/sh\necho first\n")
    install(repo)
    hook.write_bytes(b"#!/bin/sh\necho someone replaced ours\n")  # another tool took over
    result = run_cli("hook", "install", cwd=repo)
    assert result.code == 2
    assert "refusing" in result.stderr and "Traceback" not in result.stderr
    assert hook.read_bytes() == b"#!/bin/sh\necho someone replaced ours\n"
    assert (hooks_dir(repo) / "post-commit.legacy").read_bytes() == b"#!/bin/sh\necho first\n"


def test_unknown_hook_name_is_a_usage_error(repo: Path) -> None:
    result = run_cli("hook", "install", "--hooks", "pre-rebase", cwd=repo)
    assert result.code == 2
    assert "pre-rebase" in result.stderr
    assert not (hooks_dir(repo) / "pre-rebase").exists()


# --------------------------------------------------------------------------- where hooks live


def test_core_hooks_path_relative_to_the_work_tree(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".githooks")
    write_progress(repo)
    (repo / "sub").mkdir()
    result = run_cli("hook", "install", cwd=repo / "sub")
    assert result.code == 0, result.stderr
    assert hooks.is_ours(repo / ".githooks" / "prepare-commit-msg")
    assert not (hooks_dir(repo) / "prepare-commit-msg").exists()
    status = json.loads(run_cli("hook", "status", "--json", cwd=repo / "sub").stdout)
    assert Path(status["hooks_dir"]) == repo / ".githooks"
    (repo / "sub" / "f.txt").write_text("x\n")
    git(repo / "sub", "add", "f.txt")
    git(repo / "sub", "commit", "-q", "-m", "from a subfolder")
    assert "Resume-Unit: doc-002" in message(repo)


def test_linked_worktree_uses_the_common_hooks_dir(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "wt", str(worktree))
    write_progress(worktree)
    result = run_cli("hook", "install", cwd=worktree)
    assert result.code == 0, result.stderr
    assert hooks.is_ours(hooks_dir(repo) / "prepare-commit-msg")
    commit(worktree, "-m", "in the worktree")
    assert "Resume-Unit: doc-002" in message(worktree)
    commit(repo, "-m", "in the main tree")  # no progress file there: no trailer
    assert "Resume-Unit" not in message(repo)
    status = json.loads(run_cli("hook", "status", "--json", cwd=repo).stdout)
    assert {h["state"] for h in status["hooks"]} == {"installed"}


def test_worktree_during_a_cherry_pick_gets_no_trailer(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, "-m", "side work")
    sha = git(repo, "rev-parse", "HEAD").stdout.strip()
    git(repo, "checkout", "-q", "main")
    worktree = tmp_path / "wt2"
    git(repo, "worktree", "add", "-q", "-b", "wt2", str(worktree), "main")
    write_progress(worktree)
    install(worktree)
    git(worktree, "cherry-pick", sha)
    assert "Resume-Unit" not in message(worktree)


# --------------------------------------------------------------------------- interpreter


def _path_without_resume_kit(tmp_path: Path) -> str:
    return path_of_only(tmp_path, ("git", "sh", "grep", "mkdir", "setsid", "nohup", "cat"))


def _point_at_missing_python(root: Path, names: tuple[str, ...] = hooks.SUPPORTED) -> None:
    for name in names:
        path = hooks_dir(root) / name
        text = path.read_text().replace(
            f"INSTALL_PYTHON={hooks.sh_quote(sys.executable)}", "INSTALL_PYTHON='/gone/python'"
        )
        assert "/gone/python" in text
        path.write_text(text)


def test_missing_interpreter_and_no_path_fallback_fails_open(repo: Path, tmp_path: Path) -> None:
    write_progress(repo)
    install(repo)
    _point_at_missing_python(repo)
    (repo / "work.txt").write_text("x\n")
    git(repo, "add", "work.txt")
    proc = subprocess.run(
        ["git", "commit", "-q", "-m", "no python"],
        cwd=repo,
        text=True,
        capture_output=True,
        env={**os.environ, "PATH": _path_without_resume_kit(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 2  # one clear line from each hook
    assert all("/gone/python" in line and "resume-kit hook install" in line for line in lines)
    assert "Resume-Unit" not in message(repo)
    status = run_cli("hook", "status", cwd=repo)
    assert "interpreter /gone/python is gone" in status.stdout


def test_path_fallback_when_the_interpreter_is_gone(repo: Path, tmp_path: Path) -> None:
    write_progress(repo)
    install(repo, "--hooks", "prepare-commit-msg")
    _point_at_missing_python(repo, ("prepare-commit-msg",))
    bin_dir = _path_without_resume_kit(tmp_path)
    shim = Path(bin_dir) / "resume-kit"
    shim.write_text(f'#!/bin/sh\nexec {hooks.sh_quote(sys.executable)} -m resume_kit "$@"\n')
    shim.chmod(0o755)
    (repo / "work.txt").write_text("x\n")
    git(repo, "add", "work.txt")
    proc = subprocess.run(
        ["git", "commit", "-q", "-m", "via PATH"],
        cwd=repo,
        text=True,
        capture_output=True,
        env={**os.environ, "PATH": bin_dir},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Resume-Unit: doc-002" in message(repo)


def test_python_without_resume_kit_fails_open_in_one_line(repo: Path, tmp_path: Path) -> None:
    bare_python = shutil.which("python3", path="/usr/bin:/bin:/usr/local/bin")
    if bare_python is None:
        pytest.skip("no system python3")
    probe = subprocess.run(
        [bare_python, "-S", "-c", "import resume_kit"], cwd=tmp_path, capture_output=True
    )
    if probe.returncode == 0:
        pytest.skip("the system python3 has resume_kit installed")
    write_progress(repo)
    hook = hooks_dir(repo) / "prepare-commit-msg"
    hook.write_bytes(hooks.render_script(hook.name, bare_python, str(tmp_path / "moved")))
    hook.chmod(0o755)
    proc = commit(repo, "-m", "module gone")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "resume_kit is not installed" in lines[0], proc.stderr
    assert "Resume-Unit" not in message(repo)


def test_the_installed_package_folder_moving_falls_back_to_site_packages(
    repo: Path, tmp_path: Path
) -> None:
    write_progress(repo)
    hook = hooks_dir(repo) / "prepare-commit-msg"
    hook.write_bytes(hooks.render_script(hook.name, sys.executable, str(tmp_path / "moved")))
    hook.chmod(0o755)
    proc = commit(repo, "-m", "package moved")
    assert proc.stderr == ""
    assert "Resume-Unit: doc-002" in message(repo)


def test_interpreter_path_with_quotes_survives_the_shell() -> None:
    odd = "/opt/it's here/bin/python"
    script = hooks.render_script("post-commit", odd).decode()
    assert hooks.MARKER in script
    proc = subprocess.run(
        ["sh", "-c", script.split("\ncase ")[0] + '\nprintf %s "$INSTALL_PYTHON"'],
        text=True,
        capture_output=True,
        check=True,
    )
    assert proc.stdout == odd


# --------------------------------------------------------------------------- status and run


def test_status_reports_missing_foreign_and_installed(repo: Path) -> None:
    (hooks_dir(repo) / "post-commit").write_text("#!/bin/sh\n")
    status = json.loads(run_cli("hook", "status", "--json", cwd=repo).stdout)
    assert Path(status["hooks_dir"]) == hooks_dir(repo)
    states = {h["name"]: (h["state"], h["legacy"]) for h in status["hooks"]}
    assert states == {"post-commit": ("foreign", False), "prepare-commit-msg": ("missing", False)}
    install(repo)
    status = json.loads(run_cli("hook", "status", "--json", cwd=repo).stdout)
    states = {h["name"]: (h["state"], h["legacy"]) for h in status["hooks"]}
    assert states == {
        "post-commit": ("installed", True),
        "prepare-commit-msg": ("installed", False),
    }
    assert all(h["python"] == sys.executable and h["python_found"] for h in status["hooks"])


def test_hook_run_pre_push_checks_the_unit_in_progress(repo: Path) -> None:
    write_progress(repo, PROGRESS.replace('verify: "true"\n', 'verify: "echo boom >&2; exit 1"\n'))
    trusted = {"RESUME_KIT_TRUST": "all"}
    failing = run_cli("hook", "run", "pre-push", cwd=repo, env=trusted)
    assert failing.code == 1
    assert "doc-002" in failing.stderr and "boom" in failing.stderr
    assert "resume-kit verify-next" in failing.stderr
    untrusted = run_cli("hook", "run", "pre-push", cwd=repo)
    assert untrusted.code == 0 and "not approved" in untrusted.stderr
    write_progress(repo)
    assert run_cli("hook", "run", "pre-push", cwd=repo, env=trusted).code == 0


def test_pre_commit_framework_manifest() -> None:
    manifest = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    by_id = {hook["id"]: hook for hook in manifest}
    snapshot = by_id["resume-kit-snapshot"]
    assert snapshot["stages"] == ["post-commit"]
    assert snapshot["always_run"] is True and snapshot["pass_filenames"] is False
    check = by_id["resume-kit-check-unit"]
    assert check["stages"] == ["pre-push"]
    for hook in manifest:
        assert hook["language"] == "python"
        assert hook["entry"].startswith("resume-kit hook run ")


def test_fast_entry_imports_almost_nothing(tmp_path: Path) -> None:
    """The prepare-commit-msg path must not pull in typer, yaml, GitPython or subprocess."""
    write_progress(tmp_path)
    (tmp_path / "msg").write_text("subject\n")
    code = (
        "import sys; from resume_kit.integrations import hook_entry as hookentry;"
        "hookentry.unit_in_progress(open('.resume-kit/progress.yaml').read());"
        "heavy = [m for m in ('typer', 'yaml', 'git', 'subprocess', 'ruamel', 'rich')"
        " if m in sys.modules]; print(','.join(heavy))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, text=True, capture_output=True, check=True
    )
    assert proc.stdout.strip() == ""


# --------------------------------------------------------------------------- the line scanner

_IDS = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,12}", fullmatch=True)
_STATUS = st.sampled_from(["todo", "in_progress", "done", "blocked"])
_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=30
).filter(lambda s: s.strip())


@st.composite
def progress_documents(draw: st.DrawFn) -> dict[str, object]:
    units = []
    for unit_id in draw(st.lists(_IDS, unique=True, max_size=6)):
        unit: dict[str, object] = {"id": unit_id, "title": draw(_TEXT), "status": draw(_STATUS)}
        if draw(st.booleans()):
            unit["verify"] = draw(_TEXT)
        if draw(st.booleans()):
            unit["files"] = draw(st.lists(_TEXT, max_size=3))
        if draw(st.booleans()):
            unit["last_failure"] = {
                "at": "2026-11-29T07:58:00Z",
                "exit_code": 1,
                "signature": "9c1e",
                "repeats": 1,
                "excerpt": draw(_TEXT),
                "status": "in_progress",
            }
        keys = list(unit)
        order = draw(st.permutations(keys))
        units.append({key: unit[key] for key in order})
    doc: dict[str, object] = {"schema_version": 1, "goal": draw(_TEXT), "units": units}
    if draw(st.booleans()):
        doc["actions"] = [{"key": "k", "description": "d", "status": "success"}]
    if draw(st.booleans()):
        doc["notes"] = draw(_TEXT)
    return doc


def _expected(doc: dict[str, object]) -> str | None:
    for unit in doc["units"]:  # type: ignore[attr-defined]
        if unit["status"] == "in_progress":
            return str(unit["id"])
    return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(progress_documents(), st.sampled_from([(2, 0), (4, 2), (3, 1)]), st.booleans())
def test_scanner_agrees_with_a_yaml_parser(
    doc: dict[str, object], indent: tuple[int, int], flow_lists: bool
) -> None:
    from resume_kit.progress_file import roundtrip as progress_yaml

    texts = [
        yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, default_flow_style=flow_lists),
        progress_yaml.dump(progress_yaml.merge_into(None, doc), indent),
    ]
    for text in texts:
        assert hookentry.unit_in_progress(text) == _expected(doc), text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_scanner_never_crashes_on_junk(text: str) -> None:
    # a ValueError is a file that does not parse (one line, the commit goes on); anything
    # else escaping would be a crash
    with contextlib.suppress(ValueError):
        found = hookentry.unit_in_progress(text)
        assert found is None or (isinstance(found, str) and "in_progress" in text)


def test_scanner_handles_hand_written_styles() -> None:
    text = (
        "# my progress\n---\nschema_version: 1\ngoal: 'a: b'\nunits:\n"
        "- id: a\n  title: |\n    status: in_progress\n    - id: fake\n  status: done\n"
        "-\n  status: 'in_progress'  # here\n  id: \"b-2\"\n"
        "notes: >\n  units: none\n"
    )
    assert hookentry.first_unit_in_progress(text) == "b-2"
    assert hookentry.unit_in_progress("units: [{id: x, status: in_progress}]\n") == "x"
    assert hookentry.unit_in_progress("goal: in_progress\n") is None


def test_uninstall_restores_the_legacy_hook_even_when_ours_was_deleted(repo: Path) -> None:
    original = b"#!/bin/sh\necho original\n"
    hook = hooks_dir(repo) / "post-commit"
    hook.write_bytes(original)
    install(repo)
    hook.unlink()
    assert run_cli("hook", "uninstall", cwd=repo).code == 0
    assert hook.read_bytes() == original


@pytest.mark.skipif(
    importlib.util.find_spec("resume_kit.cli.commands.snapshot") is None,
    reason="the snapshot command is not in this tree yet",
)
def test_hook_run_post_commit_returns_at_once_and_snapshots_in_the_background(repo: Path) -> None:
    # without .resume-kit/ it does nothing at all
    assert run_cli("hook", "run", "post-commit", cwd=repo).code == 0
    assert not (repo / ".resume-kit").exists()
    write_progress(repo)
    result = run_cli("hook", "run", "post-commit", cwd=repo)
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    snapshots = repo / ".resume-kit" / "snapshots"
    assert wait_for(lambda: snapshots.is_dir() and any(snapshots.glob("*.json")))
