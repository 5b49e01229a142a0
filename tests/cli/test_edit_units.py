"""edit, rm, rename and note (issue 16 point 1): comments survive, approvals follow the command
text, a person's edit on a terminal approves and an agent's does not."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from resume_kit.infra import trust
from resume_kit.model import progress as p
from resume_kit.progress_file import io as progress_io
from tests.conftest import run_cli

TEXT = """\
# the person's header
schema_version: 2
goal: g
units:
  # first comes a
  - id: alpha-long-name   # keep me
    title: A
    status: todo
    verify: 'true'
  # b waits for a
  - id: beta-long-name
    title: B
    status: todo
    verify: test -f b.txt
    after: [alpha-long-name]   # flow list
  - id: gamma
    title: C
    status: todo
    verify: echo c
notes: top
"""


def _repo(repo: Path, text: str = TEXT, approve: bool = True) -> Path:
    state = repo / ".resume-kit"
    state.mkdir()
    (state / "progress.yaml").write_text(text)
    model = progress_io.parse_and_validate(text)
    if approve:
        trust.approve(repo, model.units)
    return state / "progress.yaml"


def _model(path: Path) -> p.Progress:
    return progress_io.parse_and_validate(path.read_text())


def test_edit_changes_only_what_it_is_given_and_keeps_comments(repo: Path) -> None:
    path = _repo(repo)
    result = run_cli(
        "edit", "gamma", "--title", "  C   two ", "--files", "src/c.py", "--files", "src/d.py",
        "--artifact", "out/c.json", "--after", "beta-long-name", cwd=repo,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert result.stderr == "edited gamma: title, files, artifacts, after\n"
    unit = _model(path).require_unit("gamma")
    assert (unit.title, unit.files, unit.artifacts, unit.after) == (
        "C two", ["src/c.py", "src/d.py"], ["out/c.json"], ["beta-long-name"],
    )  # fmt: skip
    text = path.read_text()
    head = TEXT[: TEXT.index("  - id: gamma")]
    assert text.startswith(head) and text.endswith("notes: top\n")
    # the command did not change: still approved
    assert run_cli("trust", "--show", cwd=repo).stderr.startswith("resume-kit: nothing to approve")


def test_an_agents_new_verify_command_is_not_approved(repo: Path) -> None:
    path = _repo(repo)
    result = run_cli("edit", "alpha-long-name", "--verify", "touch PWNED", cwd=repo)
    assert result.code == 0, result.stderr
    assert "the new verify command is not approved" in result.stderr
    assert "a person must approve it with `resume-kit trust`" in result.stderr
    assert _model(path).require_unit("alpha-long-name").verify == "touch PWNED"
    assert "  - id: alpha-long-name   # keep me\n" in path.read_text()
    refused = run_cli("verify-next", cwd=repo)
    assert refused.code == 4, refused.stderr
    assert not (repo / "PWNED").exists()
    # a command that is already approved text stays approved when an agent sets it
    assert run_cli("edit", "gamma", "--verify", "true", cwd=repo).code == 0
    assert trust.untrusted(repo, _model(path).units) == [_model(path).units[0]]


def _on_terminal(*args: str, cwd: Path) -> tuple[int, str]:
    master, replica = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "resume_kit", *args], cwd=cwd, stdin=replica, stdout=replica,
        stderr=replica, env={**os.environ, "TERM": "dumb"},
    )  # fmt: skip
    os.close(replica)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    code = proc.wait(timeout=60)
    os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.subprocess
def test_a_persons_edit_on_a_terminal_approves_the_new_command(repo: Path) -> None:
    path = _repo(repo)
    code, shown = _on_terminal("edit", "alpha-long-name", "--verify", "touch DONE", cwd=repo)
    assert code == 0, shown
    assert "not approved" not in shown
    assert trust.untrusted(repo, _model(path).units) == []
    assert run_cli("verify-next", cwd=repo).code == 0
    assert (repo / "DONE").exists()


def test_a_new_verify_command_drops_the_evidence_it_no_longer_proves(repo: Path) -> None:
    path = _repo(repo)
    assert run_cli("verify-next", cwd=repo).code == 0
    assert _model(path).require_unit("alpha-long-name").evidence is not None
    result = run_cli("edit", "alpha-long-name", "--verify", "echo a", cwd=repo)
    assert "its evidence was dropped" in result.stderr
    unit = _model(path).require_unit("alpha-long-name")
    assert unit.evidence is None and unit.status == "done"  # now a claim, shown as such


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gamma"], "nothing to change for 'gamma'"),
        (["gamma", "--after", "gamma"], "--after names 'gamma' itself"),
        (["gamma", "--after", "zz"], "--after names unknown unit 'zz'"),
        (
            ["alpha-long-name", "--after", "beta-long-name"],
            "--after would make dependency cycle: alpha-long-name -> beta-long-name -> alpha-long-name",
        ),
        (["gamma", "--title", " "], "--title is empty"),
        (["gamma", "--verify", ""], "--verify is empty"),
        (["nope", "--title", "x"], "no unit with id 'nope'"),
    ],
)
def test_edit_refusals(repo: Path, args: list[str], message: str) -> None:
    path = _repo(repo)
    result = run_cli("edit", *args, cwd=repo)
    assert result.code == 2
    assert result.stderr.startswith(f"resume-kit: error: {message}"), result.stderr
    assert path.read_text() == TEXT


def test_rm_refuses_while_others_depend_and_names_them(repo: Path) -> None:
    path = _repo(repo)
    result = run_cli("rm", "alpha-long-name", cwd=repo)
    assert result.code == 2
    assert result.stderr.splitlines() == [
        "resume-kit: error: 1 unit depends on 'alpha-long-name': beta-long-name",
        "hint: edit their --after first, or pass --force to remove it from their after",
    ]
    assert path.read_text() == TEXT
    forced = run_cli("rm", "alpha-long-name", "--force", cwd=repo)
    assert forced.code == 0, forced.stderr
    assert forced.stderr == (
        "removed unit alpha-long-name\n"
        "note: no longer waiting for alpha-long-name: beta-long-name\n"
    )
    model = _model(path)
    assert [u.id for u in model.units] == ["beta-long-name", "gamma"]
    assert model.require_unit("beta-long-name").after == []
    text = path.read_text()
    assert "# first comes a\n" in text and "# b waits for a\n" in text  # between units: kept
    assert "keep me" not in text  # the removed unit's own comment went with it


def test_rm_of_a_unit_nobody_waits_for_touches_nothing_else(repo: Path) -> None:
    path = _repo(repo)
    assert run_cli("rm", "gamma", cwd=repo).code == 0
    assert path.read_text() == TEXT.replace(
        "  - id: gamma\n    title: C\n    status: todo\n    verify: echo c\n", ""
    )


def test_rename_rewrites_after_and_keeps_evidence_and_comments(repo: Path) -> None:
    path = _repo(repo)
    assert run_cli("verify-next", cwd=repo).code == 0
    before = _model(path).require_unit("alpha-long-name")
    result = run_cli("rename", "alpha-long-name", "a", cwd=repo)
    assert result.code == 0, result.stderr
    assert result.stderr == (
        "renamed alpha-long-name -> a\nnote: after rewritten in: beta-long-name\n"
    )
    model = _model(path)
    unit = model.require_unit("a")
    assert (unit.status, unit.evidence) == ("done", before.evidence)
    assert model.require_unit("beta-long-name").after == ["a"]
    text = path.read_text()
    squeezed = re.sub(" +", " ", text)  # ruamel keeps a comment's column, not its gap
    assert "- id: a # keep me\n" in squeezed and "after: [a] # flow list\n" in squeezed
    assert "# first comes a\n" in text and text.startswith("# the person's header\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gamma", "beta-long-name"], "a unit with id 'beta-long-name' already exists"),
        (["gamma", "Bad Id"], "invalid id 'Bad Id'"),
        (["zz", "y"], "no unit with id 'zz'"),
    ],
)
def test_rename_refusals(repo: Path, args: list[str], message: str) -> None:
    path = _repo(repo)
    result = run_cli("rename", *args, cwd=repo)
    assert result.code == 2 and result.stderr.startswith(f"resume-kit: error: {message}")
    assert path.read_text() == TEXT


def test_shortening_every_id_keeps_every_command_approved(repo: Path) -> None:
    units = "".join(
        f"  - id: types-boltons-mod{i:02d}\n    title: T{i}\n    verify: echo {i}\n"
        for i in range(16)
    )
    _repo(repo, f"schema_version: 2\ngoal: g\nunits:\n{units}")
    for i in range(16):
        assert run_cli("rename", f"types-boltons-mod{i:02d}", f"m{i}", cwd=repo).code == 0
    shown = run_cli("trust", "--show", cwd=repo)
    assert shown.stderr.startswith("resume-kit: nothing to approve"), shown.stdout


def test_hand_edits_that_keep_the_command_keep_the_approval(repo: Path) -> None:
    path = _repo(repo)
    path.write_text(path.read_text().replace("alpha-long-name", "a").replace("beta-long", "b"))
    assert run_cli("trust", "--show", cwd=repo).stderr.startswith("resume-kit: nothing to approve")
    path.write_text(path.read_text().replace("verify: echo c", "verify: echo c2"))
    assert run_cli("trust", "--show", cwd=repo).stdout == "gamma: echo c2\n"


def test_approvals_under_the_older_per_unit_key_are_honoured_and_follow_a_rename(
    repo: Path,
) -> None:
    path = _repo(repo, approve=False)
    store = trust.trust_file()
    store.parent.mkdir(parents=True)
    keys = {
        trust.legacy_approval_key(repo, u.id, u.verify or ""): {"root": str(repo), "unit": u.id}
        for u in _model(path).units
    }
    store.write_text(json.dumps({"format": 1, "approved": keys}))
    assert trust.untrusted(repo, _model(path).units) == []
    assert run_cli("rename", "gamma", "g3", cwd=repo).code == 0
    assert trust.untrusted(repo, _model(path).units) == []


def test_note_sets_and_clears_the_units_note(repo: Path) -> None:
    path = _repo(repo)
    result = run_cli("note", "gamma", "half way through the parser", cwd=repo)
    assert result.code == 0 and result.stderr == "gamma: note kept\n"
    assert _model(path).require_unit("gamma").notes == "half way through the parser"
    assert path.read_text() == TEXT.replace(
        "verify: echo c\n", "verify: echo c\n    notes: half way through the parser\n"
    )
    assert run_cli("note", "gamma", "", cwd=repo).stderr == "gamma: note cleared\n"
    assert path.read_text() == TEXT


def test_the_next_units_note_reaches_status_and_the_brief(repo: Path) -> None:
    _repo(repo)
    assert run_cli("note", "alpha-long-name", "half way\nthrough the parser", cwd=repo).code == 0
    assert run_cli("note", "gamma", "not next, not started", cwd=repo).code == 0
    status = run_cli("status", cwd=repo).stdout
    assert "notes:\n  alpha-long-name: half way through the parser\n" in status
    assert "not next" not in status
    brief = run_cli("brief", cwd=repo).stdout
    assert "alpha-long-name (next) was in the middle of: half way through the parser" in brief
    assert "not next" not in brief


def test_add_and_edit_set_and_clear_side_effects_keeping_comments(repo: Path) -> None:
    path = _repo(repo)
    added = run_cli(
        "add", "Publish", "--verify", "git push origin main", "--side-effects", cwd=repo
    )
    assert added.code == 0, added.stderr
    assert _model(path).require_unit("publish").side_effects is True
    assert run_cli("edit", "gamma", "--side-effects", cwd=repo).stderr == (
        "edited gamma: side_effects\n"
    )
    assert "    verify: echo c\n    side_effects: true\n" in path.read_text()
    assert run_cli("edit", "gamma", "--side-effects", cwd=repo).stderr == "gamma: nothing changed\n"
    assert run_cli("edit", "gamma", "--no-side-effects", cwd=repo).code == 0
    text = path.read_text()
    assert "side_effects" not in text.split("- id: gamma")[1].split("- id: publish")[0]
    assert text.startswith(TEXT[: TEXT.index("  - id: gamma")])
    assert _model(path).require_unit("gamma").side_effects is False
