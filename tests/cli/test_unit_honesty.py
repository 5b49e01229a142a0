"""Issue 14 points 5-8 through the real CLI on a real git repository: plan units own their
file, stuck means stuck, claimed is not verified, run leaves honest statuses."""

from __future__ import annotations

import json
from pathlib import Path

from resume_kit.model import progress as p
from resume_kit.progress_file import roundtrip as progress_yaml
from resume_kit.progress_file import validate as progress_validate
from tests.conftest import git

TRUST = {"RESUME_KIT_TRUST": "all"}


def load(repo: Path) -> p.Progress:
    return progress_validate.validate(
        progress_yaml.parse_text((repo / ".resume-kit" / "progress.yaml").read_text())
    )


def findings(cli, code: str) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    result = cli("status", "--json")
    assert result.code == 0, result.stderr
    return [f for f in json.loads(result.stdout)["findings"] if f["code"] == code]


# ----------------------------------------------------------------------- 5: plan units own their file


def test_plan_units_own_their_file_so_a_change_makes_exactly_that_unit_stale(
    repo: Path,
    cli,  # type: ignore[no-untyped-def]
) -> None:
    cli("init", "--goal", "g")
    docs = repo / "docs"
    docs.mkdir()
    for name in ("a.txt", "b.txt", "c[1].txt"):
        (docs / name).write_text(f"content of {name}\n")
    (docs / "c1.txt").write_text("a file the escaped glob of c[1].txt must not match\n")
    (repo / "shared.cfg").write_text("x\n")
    cli("add", "Setup", "--verify", "true", "--id", "setup")
    result = cli(
        "plan",
        "--each",
        "docs/*.txt",
        "--title",
        "Check {name}",
        "--verify",
        "test -s {path}",
        "--files",
        "shared.cfg",
        "--after",
        "setup",
    )
    assert result.code == 0, result.stderr
    model = load(repo)
    units = {u.id: u for u in model.units}
    assert units["docs-a"].files == ["docs/a.txt", "shared.cfg"]
    assert units["docs-c-1"].files == ["docs/c[[]1].txt", "shared.cfg"]
    assert all(units[i].after == ["setup"] for i in ("docs-a", "docs-b", "docs-c-1", "docs-c1"))
    bad = cli("plan", "--each", "docs/*.txt", "--title", "t", "--verify", "v", "--after", "zz")
    assert bad.code == 2 and "--after names unknown unit 'zz'" in bad.stderr

    run = cli("run", "--keep-going", env=TRUST)
    assert run.code == 0, run.stderr
    model = load(repo)
    prints = {u.id: u.evidence.fingerprint for u in model.units if u.evidence}
    assert len(prints) == 5
    assert len({prints[i] for i in ("docs-a", "docs-b", "docs-c-1", "docs-c1")}) == 4
    assert findings(cli, "DONE_BUT_CHANGED") == []

    (docs / "b.txt").write_text("changed\n")
    changed = findings(cli, "DONE_BUT_CHANGED")
    assert [f["unit"] for f in changed] == ["docs-b"]
    dry = cli("verify-next", "--stale", "--dry-run", "--json", env=TRUST)
    assert dry.code == 0, dry.stderr
    assert "docs-b" in dry.stdout and "docs-a" not in dry.stdout
    # the escaped glob names c[1].txt itself, not c1.txt
    (docs / "c1.txt").write_text("changed too\n")
    assert sorted(f["unit"] for f in findings(cli, "DONE_BUT_CHANGED")) == ["docs-b", "docs-c1"]


# ----------------------------------------------------------------------- 8: run leaves honest statuses


def test_run_keep_going_leaves_failed_units_to_do_and_the_trailer_names_the_started_one(
    repo: Path,
    cli,  # type: ignore[no-untyped-def]
) -> None:
    cli("init", "--goal", "g")
    for n in range(1, 5):
        cli("add", f"Broken {n}", "--verify", f"echo 'error: broken {n}'; exit 1", "--id", f"f{n}")
    cli("add", "Passes", "--verify", "true", "--id", "ok")
    cli("add", "Mine", "--verify", "echo 'error: half done'; exit 1", "--id", "mine")
    assert cli("start", "mine").code == 0

    run = cli("run", "--keep-going", env=TRUST)
    assert run.code == 1, run.stderr
    units = {u.id: u for u in load(repo).units}
    assert [i for i, u in units.items() if u.status == "in_progress"] == ["mine"]
    for n in range(1, 5):
        unit = units[f"f{n}"]
        assert unit.status == "todo" and unit.last_failure is not None
        assert f"broken {n}" in unit.last_failure.excerpt
    assert units["ok"].status == "done"
    status = json.loads(cli("status", "--json").stdout)
    assert {u["id"]: u["status"] for u in status["units"]}["f1"] == "todo"

    brief = cli("brief", "--format", "json")
    assert brief.code == 0, brief.stderr
    assert json.loads(brief.stdout)["next"]["id"] == "mine"  # the one someone started

    assert cli("hook", "install").code == 0
    (repo / "work.txt").write_text("w\n")
    git(repo, "add", "work.txt")
    git(repo, "commit", "-q", "-m", "work on mine")
    message = git(repo, "log", "-1", "--format=%B").stdout
    assert "Resume-Unit: mine" in message and "f1" not in message

    # verify-next is someone choosing a unit: its failure does mark it in progress
    assert cli("verify-next", "--unit", "f2", env=TRUST).code == 1
    assert load(repo).require_unit("f2").status == "in_progress"


# ----------------------------------------------------------------------- 7: claimed is not verified


def test_imported_checked_items_are_claimed_not_verified_everywhere(
    repo: Path,
    cli,  # type: ignore[no-untyped-def]
) -> None:
    (repo / "tasks.md").write_text(
        "# Ship it\n- [x] Write the parser\n- [x] Write the docs\n- [ ] Release\n"
    )
    assert cli("init", "--import", "tasks.md").code == 0
    status = cli("status")
    assert status.code == 0, status.stderr
    rows = {line.split()[0]: line for line in status.stdout.splitlines() if line.strip()}
    assert "claimed done" in rows["write-the-parser"] and "not verified" in rows["write-the-parser"]
    unverified = findings(cli, "DONE_UNVERIFIED")
    assert [f["unit"] for f in unverified] == ["write-the-parser", "write-the-docs"]
    assert all("claimed done (not verified)" in f["message"] for f in unverified)

    brief = cli("brief")
    assert brief.code == 0, brief.stderr
    text = brief.stdout
    assert "Done (verified, do not redo)" not in text and "no evidence" not in text
    claimed = next(line for line in text.splitlines() if line.startswith("Claimed done"))
    assert "write-the-parser" in claimed and "write-the-docs" in claimed
    assert "2 of them only claimed, not verified" in text
    data = json.loads(cli("brief", "--format", "json").stdout)
    assert data["progress"]["claimed"] == ["write-the-parser", "write-the-docs"]
    assert data["progress"]["done_ranges"] == []

    # once resume-kit sees the check pass, the unit is verified, not claimed
    progress_file = repo / ".resume-kit" / "progress.yaml"
    progress_file.write_text(
        progress_file.read_text().replace(
            "title: Write the parser\n", "title: Write the parser\n    verify: 'true'\n", 1
        )
    )
    assert "verify: 'true'" in progress_file.read_text()
    assert cli("verify-next", "--stale", env=TRUST).code == 0
    text = cli("brief").stdout
    done = next(line for line in text.splitlines() if line.startswith("Done (verified"))
    assert "write-the-parser" in done and "write-the-docs" not in done
    claimed = next(line for line in text.splitlines() if line.startswith("Claimed done"))
    assert "write-the-docs" in claimed and "write-the-parser" not in claimed


# ----------------------------------------------------------------------- 6: stuck means stuck


def test_plain_re_runs_are_not_stuck_but_changed_attempts_are(
    repo: Path,
    cli,  # type: ignore[no-untyped-def]
) -> None:
    cli("init", "--goal", "g")
    cli("add", "Parse", "--verify", "echo 'error: KeyError party_b'; exit 1", "--id", "parse")
    first = cli("verify-next", env=TRUST)
    assert first.code == 1 and "plain re-run" not in first.stderr
    for n in (1, 2, 3):
        again = cli("verify-next", env=TRUST)
        assert again.code == 1
        assert f"a plain re-run ({n} so far" in again.stderr, again.stderr
    failure = load(repo).require_unit("parse").last_failure
    assert failure is not None and failure.repeats == 1 and failure.reruns == 3
    assert failure.state is not None and failure.state.startswith("sha256:")
    assert findings(cli, "UNIT_STUCK") == []
    assert "+3 re-run" in cli("status").stdout

    # an edit between attempts makes it a real retry: three of those are stuck
    for n in (2, 3):
        (repo / "parser.py").write_text(f"attempt {n}\n")
        assert cli("verify-next", env=TRUST).code == 1
        failure = load(repo).require_unit("parse").last_failure
        assert failure is not None and failure.repeats == n and failure.reruns == 0
    stuck = findings(cli, "UNIT_STUCK")
    assert [f["unit"] for f in stuck] == ["parse"]

    # a file written before the field existed still loads, and counts as before
    path = repo / ".resume-kit" / "progress.yaml"
    text = path.read_text()
    old = "\n".join(
        line for line in text.splitlines() if "state: " not in line and "reruns: " not in line
    )
    path.write_text(old + "\n")
    assert cli("status").code == 0
    assert cli("verify-next", env=TRUST).code == 1
    failure = load(repo).require_unit("parse").last_failure
    assert failure is not None and failure.repeats == 4 and failure.state is not None
    path.write_text(path.read_text().replace("repeats: 4", "repeats: 4\n      reruns: -1"))
    bad = cli("status")
    assert bad.code == 2 and "last_failure has a value of the wrong type" in bad.stderr
