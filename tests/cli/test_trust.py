"""Trust: direnv-style approvals of verify commands, in the user's data dir (SPEC 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from resume_kit.infra import trust
from resume_kit.model.progress import Unit
from tests.helpers_snapshot import write_progress

ROOT_PKG = Path(__file__).resolve().parent.parent


def test_approvals_live_in_xdg_data_home_and_never_store_the_command(
    repo: Path, isolated_home: Path
) -> None:
    assert not trust.is_trusted(repo, "a", "echo s3cr3t")
    assert trust.approve(repo, [("a", "echo s3cr3t")]) == 1
    assert trust.is_trusted(repo, "a", "echo s3cr3t")
    path = isolated_home / ".local" / "share" / "resume-kit" / "trust.json"
    assert trust.trust_file() == path
    text = path.read_text()
    assert "s3cr3t" not in text
    assert os.stat(path).st_mode & 0o077 == 0
    assert not any(p.name.startswith("trust") for p in repo.rglob("*"))


def test_key_covers_root_and_command_not_the_unit_id(repo: Path, tmp_path: Path) -> None:
    trust.approve(repo, [("a", "make test")])
    other = tmp_path / "other"
    other.mkdir()
    assert trust.is_trusted(repo, "a", "make test")
    assert not trust.is_trusted(repo, "a", "make test ")  # any change to the command
    assert trust.is_trusted(repo, "b", "make test")  # approval follows the text, not the id
    assert not trust.is_trusted(other, "a", "make test")  # another repository
    link = tmp_path / "link"
    link.symlink_to(repo)
    assert trust.is_trusted(link, "a", "make test")  # the same repository by another path


def test_untrusted_keeps_order_and_skips_units_without_a_command(repo: Path) -> None:
    units = [
        Unit(id="a", title="a", verify="true"),
        Unit(id="b", title="b"),
        Unit(id="c", title="c", verify="false"),
        Unit(id="d", title="d", verify="echo d"),
    ]
    assert [u.id for u in trust.untrusted(repo, units)] == ["a", "c", "d"]
    assert trust.approve(repo, [units[2]]) == 1
    assert trust.approve(repo, [units[2], units[1]]) == 0  # already approved; b has no command
    assert [u.id for u in trust.untrusted(repo, units)] == ["a", "d"]


def test_trust_all_env(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESUME_KIT_TRUST", "all")
    assert trust.is_trusted(repo, "x", "rm -rf nothing")
    assert trust.untrusted(repo, [Unit(id="x", title="x", verify="echo")]) == []
    monkeypatch.setenv("RESUME_KIT_TRUST", "some")
    assert not trust.is_trusted(repo, "x", "rm -rf nothing")


def test_corrupt_file_counts_as_no_approvals_and_is_kept_aside(repo: Path) -> None:
    path = trust.trust_file()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert not trust.is_trusted(repo, "a", "true")
    assert trust.approve(repo, [("a", "true")]) == 1
    assert trust.is_trusted(repo, "a", "true")
    assert path.with_name("trust.json.corrupt").read_text() == "{not json"


def test_three_processes_approving_at_once_lose_nothing(repo: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from resume_kit.infra import trust\n"
        "n = sys.argv[1]\n"
        "for i in range(15):\n"
        "    trust.approve(Path(sys.argv[2]), [(f'u{n}-{i}', f'echo {n} {i}')])\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(n), str(repo)], cwd=ROOT_PKG)
        for n in range(3)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    data = json.loads(trust.trust_file().read_text())
    assert len(data["approved"]) == 45
    assert all(
        trust.is_trusted(repo, f"u{n}-{i}", f"echo {n} {i}") for n in range(3) for i in range(15)
    )


def test_display_command_escapes_terminal_control() -> None:
    shown = trust.display_command("echo ok\x1b]0;pwned\x07\nrm x\tz")
    assert "\x1b" not in shown and "\n" not in shown and "\x07" not in shown
    assert shown == "echo ok\\x1b]0;pwned\\x07\\nrm x\\tz"


# --------------------------------------------------------------------------- the CLI


def test_trust_show_lists_without_approving_then_trust_approves(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {"id": "one", "title": "One", "verify": "echo one > one.txt"},
            {"id": "two", "title": "Two"},
            {"id": "three", "title": "Three", "verify": "echo three"},
        ],
    )
    shown = cli("trust", "--show")
    assert shown.code == 0, shown.stderr
    assert shown.stdout.splitlines() == ["one: echo one > one.txt", "three: echo three"]
    assert "2 verify commands not approved" in shown.stderr
    refused = cli("verify-next")
    assert refused.code == 4
    assert not (repo / "one.txt").exists()

    # no terminal here: plain `trust` approves nothing; `--yes` is a person's explicit act
    assert cli("trust").code == 4
    assert cli("verify-next").code == 4
    approved = cli("trust", "--yes")
    assert approved.code == 0, approved.stderr
    assert approved.stdout.splitlines() == ["one: echo one > one.txt", "three: echo three"]
    assert "approved 2 verify commands" in approved.stderr
    again = cli("trust", "--yes")
    assert again.code == 0 and again.stdout == ""
    assert "nothing to approve" in again.stderr
    ran = cli("verify-next")
    assert ran.code == 0, ran.stderr
    assert (repo / "one.txt").read_text() == "one\n"


def test_trust_escapes_control_characters_in_listed_commands(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(repo, [{"id": "a", "title": "A", "verify": "echo \x1b[2Jcleared"}])
    result = cli("trust", "--show")
    assert result.code == 0
    assert "\x1b" not in result.stdout
    assert "echo \\x1b[2Jcleared" in result.stdout


def test_trust_works_without_a_valid_progress_file(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".resume-kit" / "progress.yaml"
    path.parent.mkdir()
    path.write_text("schema_version: 1\ngoal: [broken\n")
    result = cli("trust")
    assert result.code == 0
    assert "nothing to approve" in result.stderr
    assert "Traceback" not in result.stderr
    assert path.read_text() == "schema_version: 1\ngoal: [broken\n"


def test_commands_created_with_add_are_approved_and_a_hand_edit_is_not(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "trust flow").code == 0
    assert cli("add", "First", "--verify", "echo first > first.txt", "--id", "first").code == 0
    assert cli("trust", "--show").stderr.strip().endswith("nothing to approve")

    path = repo / ".resume-kit" / "progress.yaml"
    path.write_text(path.read_text().replace("echo first > first.txt", "echo edited > first.txt"))
    refused = cli("verify-next")
    assert refused.code == 4
    assert "unit 'first'" in refused.stderr and "echo edited > first.txt" in refused.stderr
    assert "resume-kit trust" in refused.stderr
    assert not (repo / "first.txt").exists()


def test_trust_all_env_through_the_cli(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(repo, [{"id": "a", "title": "A", "verify": "touch ran"}])
    assert cli("verify-next", env={"RESUME_KIT_TRUST": "all"}).code == 0
    assert (repo / "ran").exists()
    assert "RESUME_KIT_TRUST=all" in cli("trust", env={"RESUME_KIT_TRUST": "all"}).stderr
