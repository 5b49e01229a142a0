"""Imports through the real CLI: Task Master, spec-kit and nested Markdown files in the shapes
those tools write (tests/fixtures/imports/), `init --import` and `import FILE`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from resume_kit.model import progress as p
from resume_kit.progress_file import roundtrip as progress_yaml
from resume_kit.progress_file import validate as progress_validate

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "imports"


def load(repo: Path) -> p.Progress:
    return progress_validate.validate(
        progress_yaml.parse_text((repo / ".resume-kit" / "progress.yaml").read_text())
    )


def units(repo: Path) -> dict[str, p.Unit]:
    return {u.id: u for u in load(repo).units}


def copy(repo: Path, name: str, as_name: str | None = None) -> str:
    target = as_name or name
    shutil.copy(FIXTURES / name, repo / target)
    return target


# --------------------------------------------------------------------------- Task Master


def test_taskmaster_tagged_file_with_subtasks(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    name = copy(repo, "taskmaster-tasks.json", "tasks.json")
    result = cli("init", "--import", name)
    assert result.code == 0, result.stderr
    model = load(repo)
    # the goal is the tag's own description (Task Master's default one would not be a goal)
    assert model.goal == "Extract parties and dates from the contracts in docs/"
    got = {u.id: (u.status, u.after) for u in model.units}
    assert got == {
        "task-1": ("done", []),
        # the parent waits for its children (not the cancelled one)
        "task-2": ("in_progress", ["task-1", "task-2.1", "task-2.2", "task-2.3"]),
        "task-2.1": ("done", ["task-1"]),
        "task-2.2": ("todo", ["task-2.1", "task-1"]),
        "task-2.3": ("todo", ["task-2.1", "task-1"]),
        "task-2.4": ("blocked", ["task-1"]),
        "task-3": ("blocked", ["task-2"]),
        "task-4": ("blocked", ["task-3"]),
    }
    by_id = units(repo)
    assert by_id["task-1"].verify == "pytest -q tests/test_skeleton.py"
    assert by_id["task-2.2"].verify == "pytest -q tests/test_parties.py"
    assert by_id["task-2"].verify is None  # prose is a test strategy, not a command
    assert by_id["task-2"].notes == (
        "Extract parties and dates from each contract.\n\nOne parser per document type.\n\n"
        "Test strategy: Run the parser on the sample contracts and compare with the expected JSON."
    )
    assert (
        by_id["task-2.1"].notes
        == "Turn each PDF into text.\n\npdfminer.six; keep the page numbers."
    )
    assert by_id["task-3"].blocked_reason == "deferred in Task Master"
    assert by_id["task-4"].blocked_reason == "cancelled in Task Master: not to be done"
    assert by_id["task-2.4"].blocked_reason == "cancelled in Task Master: not to be done"
    # the next unit is the first open subtask, not its parent
    assert "next unit: task-2.2 (Find the parties)" in result.stderr
    assert "2 imported verify commands came with the list and are not approved" in result.stderr
    assert "next: resume-kit trust, then resume-kit verify-next" in result.stderr
    assert 'resume-kit add "First unit"' not in result.stderr
    status = json.loads(cli("status", "--json").stdout)
    assert [u["id"] for u in status["units"]][:3] == ["task-1", "task-2", "task-2.1"]


def test_taskmaster_commands_are_not_approved_until_trust(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((FIXTURES / "taskmaster-tasks.json").read_text())
    first = data["master"]["tasks"][0]
    first["status"], first["testStrategy"] = "pending", "`test -d .`"
    (repo / "tasks.json").write_text(json.dumps(data))
    assert cli("init", "--import", "tasks.json").code == 0
    refused = cli("verify-next", "--unit", "task-1")
    assert refused.code == 4, refused.stderr
    listed = cli("trust", "--show")
    assert "task-1: test -d ." in listed.stdout + listed.stderr
    assert cli("trust", "--yes").code == 0
    passed = cli("verify-next", "--unit", "task-1")
    assert passed.code == 0, passed.stderr
    assert units(repo)["task-1"].evidence is not None


def test_taskmaster_older_untagged_file_and_goal_errors(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    tasks = [{"id": 1, "title": "One", "status": "pending", "dependencies": []}]
    (repo / "plain.json").write_text(json.dumps({"tasks": tasks}))
    missing = cli("init", "--import", "plain.json")
    assert missing.code == 2
    assert "plain.json names none" in missing.stderr
    assert "--import plain.json" in missing.stderr  # the hint is the command to run
    default = {"master": {"tasks": tasks, "metadata": {"description": "Tasks for master context"}}}
    (repo / "default.json").write_text(json.dumps(default))
    assert cli("init", "--import", "default.json").code == 2
    old = {"meta": {"projectName": "Contract extractor", "version": "1.0.0"}, "tasks": tasks}
    (repo / "old.json").write_text(json.dumps(old))
    assert cli("init", "--import", "old.json").code == 0
    assert load(repo).goal == "Contract extractor"
    assert [u.id for u in load(repo).units] == ["task-1"]


def test_a_feature_tag_names_the_goal(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    tasks = [{"id": 1, "title": "One", "status": "pending", "dependencies": []}]
    data = {
        "feature-auth": {
            "tasks": tasks,
            "metadata": {"description": "Tasks for feature-auth context"},
        }
    }
    (repo / "tasks.json").write_text(json.dumps(data))
    assert cli("init", "--import", "tasks.json").code == 0
    assert load(repo).goal == "feature-auth"


def test_several_tags_prefix_ids_and_only_a_description_is_a_goal(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    tasks = [{"id": 1, "title": "One", "status": "pending", "dependencies": []}]
    default = {"description": "Tasks for master context"}
    data = {"master": {"tasks": tasks, "metadata": default}, "feature-auth": {"tasks": tasks}}
    (repo / "tasks.json").write_text(json.dumps(data))
    assert cli("init", "--import", "tasks.json").code == 2  # a tag's name is no goal here
    data["feature-auth"]["metadata"] = {"description": "Log in with GitHub"}
    (repo / "tasks.json").write_text(json.dumps(data))
    assert cli("init", "--import", "tasks.json").code == 0
    model = load(repo)
    assert model.goal == "Log in with GitHub"
    assert [u.id for u in model.units] == ["master-task-1", "feature-auth-task-1"]


# --------------------------------------------------------------------------- spec-kit


def test_speckit_tasks_md(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    copy(repo, "speckit-tasks.md", "tasks.md")
    result = cli("init", "--import", "tasks.md")
    assert result.code == 0, result.stderr
    model = load(repo)
    assert model.goal == "Contract Extraction"
    got = {u.id: (u.status, u.parallel, u.group, u.files, u.after) for u in model.units}
    setup = "Phase 1: Setup (Shared Infrastructure)"
    assert got == {
        "t001": ("done", False, setup, [], []),
        "t002": ("todo", True, setup, ["pyproject.toml"], []),
        "t010": ("todo", True, "US1", ["tests/contract/test_parties.py"], []),
        "t012": ("todo", True, "US1", ["src/models/party.py"], []),
        "t014": ("todo", False, "US1", ["src/services/party_service.py"], ["t012", "t010"]),
        "t020": ("todo", True, "Phase N: Polish & Cross-Cutting Concerns", ["docs/**"], []),
    }
    assert units(repo)["t014"].title == "Implement PartyService in src/services/party_service.py"
    assert "next unit: t002" in result.stderr
    assert 'next: resume-kit edit t002 --verify "CMD", then resume-kit verify-next' in result.stderr


# --------------------------------------------------------------------------- Markdown


def test_nested_markdown_checklist(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    copy(repo, "nested-checklist.md", "TODO.md")
    result = cli("init", "--import", "TODO.md")
    assert result.code == 0, result.stderr
    model = load(repo)
    assert model.goal == "Release 2.0 of the contract extractor"
    got = [(u.id, u.title, u.status, u.group, u.after) for u in model.units]
    children = ["read-the-pdfs", "find-the-parties", "find-the-dates"]  # not the cancelled one
    assert got == [
        # the HTML comment is in neither the title nor the id
        ("parse-every-contract", "Parse every contract", "todo", "Parsing", children),
        ("read-the-pdfs", "Read the PDFs", "done", "Parsing", []),
        ("find-the-parties", "Find the parties", "in_progress", "Parsing", []),
        ("find-the-dates", "Find the dates", "in_progress", "Parsing", []),
        ("ocr-scanned-pages", "OCR scanned pages", "blocked", "Parsing", []),
        ("uber-parser-fur-vertrage", "Über-parser für Verträge", "todo", "Parsing", []),
        ("write-the-changelog", "Write the changelog", "todo", "Shipping", []),
        ("tag-the-release", "Tag the release", "done", "Shipping", ["push-the-tag"]),
        ("push-the-tag", "Push the tag", "todo", "Shipping", []),
    ]
    by_id = units(repo)
    assert by_id["find-the-parties"].notes == (
        'the names are in the first paragraph\nwatch for "and" inside company names'
    )
    assert by_id["ocr-scanned-pages"].blocked_reason == "cancelled in the task list ([-])"
    assert "background" not in {u.title for u in model.units}  # plain bullets are not tasks
    assert "next: resume-kit edit find-the-parties --verify" in result.stderr


# --------------------------------------------------------------------------- import FILE


def test_import_merges_by_id_and_never_duplicates(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "Release").code == 0
    assert cli("add", "Write the changelog", "--verify", "true", "--id", "changelog").code == 0
    copy(repo, "nested-checklist.md", "TODO.md")
    first = cli("import", "TODO.md")
    assert first.code == 0, first.stderr
    assert "imported TODO.md: 8 added, 0 updated, 1 unchanged" in first.stderr
    model = load(repo)
    assert len(model.units) == 9
    assert model.unit("write-the-changelog") is None  # the same title is the same unit
    again = cli("import", "TODO.md")
    assert "0 added, 0 updated, 9 unchanged" in again.stderr
    assert len(load(repo).units) == 9


def test_reimport_updates_only_where_there_is_no_evidence(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((FIXTURES / "taskmaster-tasks.json").read_text())
    first = data["master"]["tasks"][0]
    first["status"], first["testStrategy"] = "pending", "`test -d .`"
    (repo / "tasks.json").write_text(json.dumps(data))
    assert cli("init", "--import", "tasks.json").code == 0
    assert cli("trust", "--yes").code == 0
    assert cli("verify-next", "--unit", "task-1").code == 0
    first["title"] = "Renamed in Task Master"  # task-1 has evidence: it keeps its title
    data["master"]["tasks"][2]["title"] = "Export to CSV and XLSX"
    data["master"]["tasks"][2]["status"] = "pending"
    data["master"]["tasks"].append(
        {
            "id": 5,
            "title": "Archive",
            "status": "pending",
            "dependencies": [3],
            "testStrategy": "make archive",
        }
    )
    (repo / "tasks.json").write_text(json.dumps(data))
    result = cli("import", "tasks.json")
    assert result.code == 0, result.stderr
    assert "1 added, 1 updated, 7 unchanged" in result.stderr
    by_id = units(repo)
    assert by_id["task-1"].title == "Set up the project skeleton"
    assert by_id["task-1"].status == "done" and by_id["task-1"].evidence is not None
    assert (by_id["task-3"].title, by_id["task-3"].status) == ("Export to CSV and XLSX", "todo")
    assert by_id["task-3"].blocked_reason is None
    assert by_id["task-5"].after == ["task-3"]
    refused = cli("verify-next", "--unit", "task-5")
    assert refused.code == 4  # a command an import brings in is never approved


def test_import_needs_a_progress_file_and_a_known_format(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    copy(repo, "nested-checklist.md", "TODO.md")
    missing = cli("import", "TODO.md")
    assert missing.code == 2 and "resume-kit init --import TODO.md" in missing.stderr
    assert cli("init", "--goal", "g").code == 0
    wrong = cli("import", "TODO.md", "--format", "taskmaster")
    assert wrong.code == 2 and "not valid JSON" in wrong.stderr
    bad = cli("import", "TODO.md", "--format", "yaml")
    assert bad.code == 2
    assert cli("import", "TODO.md", "--format", "markdown").code == 0
    alone = cli("init", "--format", "speckit")
    assert alone.code == 2 and "--import FILE --format speckit" in alone.stderr


def test_a_merge_that_would_make_a_cycle_changes_nothing(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    def task(n: int, deps: list[int]) -> dict[str, object]:
        return {"id": n, "title": f"Task {n}", "status": "pending", "dependencies": deps}

    (repo / "tasks.json").write_text(json.dumps({"tasks": [task(1, []), task(2, [1])]}))
    assert cli("init", "--goal", "g", "--import", "tasks.json").code == 0
    before = (repo / ".resume-kit" / "progress.yaml").read_bytes()
    (repo / "tasks.json").write_text(
        json.dumps({"tasks": [task(1, [3]), task(2, [1]), task(3, [2])]})
    )
    result = cli("import", "tasks.json")
    assert result.code == 2
    assert "dependency cycle" in result.stderr and "nothing was changed" in result.stderr
    assert (repo / ".resume-kit" / "progress.yaml").read_bytes() == before


def test_import_reads_only_a_regular_utf8_file(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("init", "--goal", "g").code == 0
    (repo / "zero.md").symlink_to("/dev/zero")
    (repo / "binary.md").write_bytes(b"\xff\xfe- [ ] x\n")
    for name, expected in (("zero.md", "not a regular file"), ("binary.md", "not UTF-8")):
        result = cli("import", name)
        assert result.code == 2 and expected in result.stderr, result.stderr
    assert load(repo).units == []
