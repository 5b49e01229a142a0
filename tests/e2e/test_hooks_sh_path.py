"""prepare-commit-msg without Python: the hook's copy of progress.yaml in the user's cache
folder (hook_entry.write_hook_copy) answers a commit only when its bytes equal progress.yaml's.

Real repositories, real ``git commit``, the installed scripts. Whether sh answered is seen by
pointing the script at an interpreter that is not there (and a PATH without resume-kit): then
only the sh path can add a trailer, and a commit it leaves to Python prints "hook skipped".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.integrations import git_hooks as hooks
from resume_kit.integrations import hook_entry as hookentry
from tests.conftest import git, path_of_only
from tests.e2e.test_hooks import PROGRESS, commit, hooks_dir, install, message, write_progress

SKIPPED = "hook skipped"
OTHER = PROGRESS.replace("status: done", "status: X").replace("status: in_progress", "status: done")
OTHER = OTHER.replace("status: X", "status: in_progress")  # doc-001 in progress, same length


def copy_file(root: Path) -> Path:
    path = hookentry.hook_copy_file(str(root))
    assert path is not None
    return Path(path)


def tools_without_resume_kit(tmp_path: Path) -> str:
    return path_of_only(tmp_path, ("git", "sh", "grep", "cmp", "setsid", "nohup", "nice"))


def without_python(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on only the sh path can add a trailer in ``root`` (idempotent)."""
    path = hooks_dir(root) / "prepare-commit-msg"
    text = path.read_text()
    quoted = f"INSTALL_PYTHON={hooks.sh_quote(sys.executable)}"
    assert quoted in text or "INSTALL_PYTHON='/gone/python'" in text
    path.write_text(text.replace(quoted, "INSTALL_PYTHON='/gone/python'"))
    (hooks_dir(root) / "post-commit").unlink(missing_ok=True)  # its snapshot needs Python
    monkeypatch.setenv("PATH", tools_without_resume_kit(tmp_path))


@pytest.fixture
def primed(repo: Path) -> Path:
    """A repository whose first hooked commit (Python) left the hook's copy."""
    write_progress(repo)
    install(repo)
    commit(repo, "-m", "first")
    assert "Resume-Unit: doc-002" in message(repo)
    assert copy_file(repo).read_bytes() == b"resume-kit unit 1 doc-002\n" + PROGRESS.encode()
    return repo


def test_the_copy_is_private_and_outside_the_repository(primed: Path) -> None:
    path = copy_file(primed)
    assert not path.is_relative_to(primed)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_sh_adds_the_trailer_without_python(
    primed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_python(primed, tmp_path, monkeypatch)
    proc = commit(primed, "-m", "second")
    assert SKIPPED not in proc.stderr and proc.stderr == ""
    assert message(primed) == "second\n\nResume-Unit: doc-002\n\n"
    proc = commit(primed, "-m", "fix", "-m", "Resume-Unit: doc-001")  # an existing one is kept
    assert message(primed).count("Resume-Unit") == 1 and "doc-001" in message(primed)


def test_the_trailer_follows_the_file_not_the_copy(primed: Path) -> None:
    """The differential test: change each input in turn; the trailer is always the one a
    fresh reading of progress.yaml gives (Python stays available, so a stale copy would show)."""
    state = primed / ".resume-kit" / "progress.yaml"
    cases = {
        "another unit, same length": OTHER,
        "none in progress": PROGRESS.replace("in_progress", "todo"),
        "a comment added": PROGRESS + "# note\n",
        "back to the first": PROGRESS,
    }
    for name, text in cases.items():
        state.write_text(text)
        commit(primed, "-m", f"after: {name}")
        expected = hookentry.unit_in_progress(text)
        body = message(primed)
        if expected is None:
            assert "Resume-Unit" not in body, name
        else:
            assert body.endswith(f"Resume-Unit: {expected}\n\n"), name
        if "in_progress" in text:  # else grep ends the hook and the copy stays as it was
            copy = copy_file(primed).read_bytes()
            assert copy == f"resume-kit unit 1 {expected}\n".encode() + text.encode(), name


def test_a_changed_file_is_left_to_python(
    primed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_python(primed, tmp_path, monkeypatch)
    (primed / ".resume-kit" / "progress.yaml").write_text(OTHER)
    proc = commit(primed, "-m", "stale copy")
    assert SKIPPED in proc.stderr
    assert "Resume-Unit" not in message(primed)


@pytest.mark.parametrize("text", ["", "\n\nlater\n", "[wip] x\n", "# only a comment\n"])
def test_a_message_sh_cannot_judge_is_left_to_python(
    primed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    without_python(primed, tmp_path, monkeypatch)
    msg = tmp_path / "COMMIT_MSG"
    msg.write_text(text)
    hook = hooks_dir(primed) / "prepare-commit-msg"
    proc = subprocess.run(
        [str(hook), str(msg), "message"], cwd=primed, capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert SKIPPED in proc.stderr
    assert msg.read_text() == text


def test_an_empty_editor_message_still_aborts(primed: Path) -> None:
    (primed / "work.txt").write_text("edit\n")
    git(primed, "add", "work.txt")
    env = dict(os.environ, GIT_EDITOR="true")
    proc = subprocess.run(
        ["git", "commit", "-q"], cwd=primed, env=env, capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert git(primed, "log", "-1", "--format=%s").stdout.strip() == "first"


def test_a_cherry_pick_gets_no_trailer_from_sh(
    primed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(primed, "checkout", "-q", "-b", "side")
    (primed / "side.txt").write_text("side\n")
    git(primed, "add", "side.txt")
    git(primed, "commit", "-q", "--no-verify", "-m", "side work")
    sha = git(primed, "rev-parse", "HEAD").stdout.strip()
    git(primed, "checkout", "-q", "main")
    without_python(primed, tmp_path, monkeypatch)
    proc = subprocess.run(
        ["git", "cherry-pick", "--no-commit", sha], cwd=primed, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(
        ["git", "commit", "-q", "-m", "picked"], cwd=primed, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "Resume-Unit" not in message(primed)


def test_a_linked_worktree_is_answered_by_sh(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "wt", str(worktree))
    write_progress(worktree)
    install(worktree)
    commit(worktree, "-m", "python")
    without_python(repo, tmp_path, monkeypatch)
    proc = commit(worktree, "-m", "sh")
    assert proc.stderr == ""
    assert message(worktree) == "sh\n\nResume-Unit: doc-002\n\n"


@pytest.mark.parametrize("how", ["symlink", "forged header", "other bytes"])
def test_a_doubtful_copy_is_never_trusted(
    primed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    path = copy_file(primed)
    decoy = tmp_path / "decoy"
    decoy.write_bytes(b"resume-kit unit 1 doc-001\n" + PROGRESS.encode())
    path.unlink()
    if how == "symlink":
        path.symlink_to(decoy)
    elif how == "forged header":
        path.write_bytes(b"resume-kit unit 1 doc-001$(touch PWNED)\n" + PROGRESS.encode())
    else:
        path.write_bytes(b"resume-kit unit 1 doc-001\n" + PROGRESS.encode() + b"#\n")
    commit(primed, "-m", "python decides")
    assert message(primed).endswith("Resume-Unit: doc-002\n\n")
    assert decoy.read_bytes() == b"resume-kit unit 1 doc-001\n" + PROGRESS.encode()
    assert not path.is_symlink()  # Python replaced the link, never wrote through it
    assert not list(primed.rglob("PWNED")) and not list(Path("/").glob("PWNED"))


def test_the_sh_and_python_cache_folders_agree(tmp_path: Path) -> None:
    """The script's spelling of the copy's path (XDG_CACHE_HOME set, blank, unset) is Python's."""
    script = hooks.fast_path_script().split("\nunit=\n", 1)[0]
    probe = script.replace("    rk_copy=$rk_base", '    echo "$rk_base"; rk_copy=$rk_base', 1)
    tree = tmp_path / "a b"  # a space: no copy on either side
    for root, xdg in ((tmp_path, "/x/cache"), (tmp_path, ""), (tmp_path, None), (tree, None)):
        env = {"HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"]}
        if xdg is not None:
            env["XDG_CACHE_HOME"] = xdg
        proc = subprocess.run(
            ["sh", "-c", f"{probe}\ntree=$1\nrk_copy || :", "sh", str(root)],
            capture_output=True,
            text=True,
            env=env,
        )
        saved = dict(os.environ)
        try:
            os.environ.clear()
            os.environ.update(env)
            expected = hookentry.hook_copy_file(str(root))
        finally:
            os.environ.clear()
            os.environ.update(saved)
        if expected is None:
            assert proc.stdout == ""
        else:
            base = proc.stdout.strip()
            name = str(root).lstrip("/").replace("/", "%")
            assert os.path.join(base, "resume-kit", "hook-units", name) == expected


def sh_copy_names(trees: list[str]) -> list[str]:
    """What the installed script's rk_copy names the copy for each real path ("" for none)."""
    script = hooks.fast_path_script().split("\nunit=\n", 1)[0]
    probe = script.replace("    rk_copy=$rk_base", '    echo "$rk_name"; return 0\n', 1)
    loop = 'for tree in "$@"; do rk_copy || echo; done'
    proc = subprocess.run(
        ["sh", "-c", f"{probe}\n{loop}", "sh", *trees],
        capture_output=True,
        env={"HOME": "/home/u", "PATH": os.environ["PATH"]},
        check=True,
    )
    return proc.stdout.decode("utf-8", "surrogateescape").split("\n")[: len(trees)]


COMPONENT = st.text(
    alphabet=st.sampled_from(list("aZ09._+@,=~-%  $*?[]\\'\"\té\u2028")), min_size=1, max_size=8
).filter(lambda part: part not in (".", ".."))


@settings(max_examples=60, deadline=None)
@given(trees=st.lists(st.lists(COMPONENT, min_size=1, max_size=40), min_size=1, max_size=8))
def test_sh_spells_the_copy_name_as_python_does(trees: list[list[str]]) -> None:
    """Any real path: sh and Python give the same name, or neither gives one; no two paths
    share a name."""
    paths = ["/" + "/".join(parts) for parts in trees]
    expected = [hookentry.hook_copy_name(path) or "" for path in paths]
    assert sh_copy_names(paths) == expected
    pairs = {(path, name) for path, name in zip(paths, expected, strict=True) if name}
    assert len({name for _, name in pairs}) == len({path for path, _ in pairs})


IDS = st.text(
    alphabet=st.sampled_from(list("az09.-_ $`'\"\\;|&()\x1b\x07\t\r\n%#[]*?!é\u2028")),
    max_size=12,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(unit=IDS)
def test_any_unit_id_in_the_copy_reaches_the_trailer_only_when_valid(
    primed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unit: str
) -> None:
    """Whatever the copy's first line says, the message gets exactly ``Resume-Unit: <id>`` for
    a valid id and nothing else; the rest is left to Python (here: missing, so no trailer)."""
    without_python(primed, tmp_path, monkeypatch)
    copy_file(primed).write_bytes(
        b"resume-kit unit 1 " + unit.encode("utf-8", "surrogateescape") + b"\n" + PROGRESS.encode()
    )
    msg = tmp_path / "COMMIT_MSG"
    msg.write_text("work\n")
    hook = hooks_dir(primed) / "prepare-commit-msg"
    proc = subprocess.run(
        [str(hook), str(msg), "message"], cwd=primed, capture_output=True, text=True
    )
    assert proc.returncode == 0
    if unit == "":
        assert msg.read_text() == "work\n" and proc.stderr == ""
    elif hookentry.valid_unit_id(unit):
        assert msg.read_text() == f"work\n\nResume-Unit: {unit}\n"
    else:
        assert msg.read_text() == "work\n" and SKIPPED in proc.stderr
    assert not (primed / "PWNED").exists()


def test_hook_uninstall_removes_the_copy(primed: Path) -> None:
    from tests.conftest import run_cli

    result = run_cli("hook", "uninstall", cwd=primed)
    assert result.code == 0, result.stderr
    assert "copy of progress.yaml" in result.stdout
    assert not copy_file(primed).exists()
    again = run_cli("hook", "uninstall", cwd=primed)
    assert again.code == 0 and "nothing to do" in again.stdout
