"""init, add, plan, start/block/reset and the action ledger through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from resume_kit.model import progress as p
from resume_kit.progress_file import roundtrip as progress_yaml
from resume_kit.progress_file import validate as progress_validate
from tests.conftest import Result, run_cli


def load(repo: Path) -> p.Progress:
    return progress_validate.validate(
        progress_yaml.parse_text((repo / ".resume-kit" / "progress.yaml").read_text())
    )


def test_init_creates_the_folder_and_refuses_to_overwrite(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    result: Result = cli("init", "--goal", "Extract the   contracts")
    assert result.code == 0, result.stderr
    assert load(repo).goal == "Extract the contracts"
    gitignore = (repo / ".resume-kit" / ".gitignore").read_text()
    for folder in ("snapshots/", "runs/", "history/", "*.lock"):
        assert folder in gitignore
    before = (repo / ".resume-kit" / "progress.yaml").read_bytes()
    again = cli("init", "--goal", "other")
    assert again.code == 2 and "already exists" in again.stderr
    assert (repo / ".resume-kit" / "progress.yaml").read_bytes() == before


def test_init_needs_a_goal_and_a_repository(repo: Path, tmp_path: Path) -> None:
    assert run_cli("init", cwd=repo).code == 2
    outside = tmp_path / "plain"
    outside.mkdir()
    result = run_cli("init", "--goal", "g", cwd=outside)
    assert result.code == 2
    assert result.stderr.startswith("resume-kit: error: not inside a git work tree")


def test_commands_work_from_a_subfolder(repo: Path) -> None:
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert run_cli("init", "--goal", "g", cwd=sub).code == 0
    assert (repo / ".resume-kit" / "progress.yaml").exists()
    assert run_cli("add", "Parse", "--verify", "true", cwd=sub).code == 0
    assert [u.id for u in load(repo).units] == ["parse"]


def test_import_markdown_with_spec_kit_lines(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "tasks.md").write_text(
        "# Build the user service\n\n"
        "- [x] T001 Set up the project\n"
        "- [ ] T012 [P] [US1] Create User model in src/models/user.py\n"
        "* [ ] Write the docs\n"
        "not a task\n"
    )
    assert cli("init", "--import", "tasks.md").code == 0
    model = load(repo)
    assert model.goal == "Build the user service"
    assert [(u.id, u.title, u.status) for u in model.units] == [
        ("t001", "Set up the project", "done"),
        ("t012", "Create User model in src/models/user.py", "todo"),
        ("write-the-docs", "Write the docs", "todo"),
    ]


def test_import_taskmaster_json(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    tasks = {
        "master": {
            "tasks": [
                {
                    "id": 1,
                    "title": "Set up",
                    "status": "done",
                    "dependencies": [],
                    "testStrategy": "x",
                    "subtasks": [
                        {"id": 1, "title": "Init repo", "status": "done", "dependencies": []},
                        {"id": 2, "title": "CI", "status": "pending", "dependencies": [1]},
                    ],
                },
                {"id": 2, "title": "Build API", "status": "in-progress", "dependencies": [1]},
                {"id": 3, "title": "Later", "status": "deferred", "dependencies": [2, 99]},
            ]
        }
    }
    (repo / "tasks.json").write_text(json.dumps(tasks))
    assert cli("init", "--goal", "Ship it", "--import", "tasks.json").code == 0
    model = load(repo)
    assert [(u.id, u.status, u.after) for u in model.units] == [
        ("task-1", "done", ["task-1.1", "task-1.2"]),  # a parent is done after its subtasks
        ("task-1.1", "done", []),
        ("task-1.2", "todo", ["task-1.1"]),
        ("task-2", "in_progress", ["task-1"]),
        ("task-3", "blocked", ["task-2"]),
    ]


def test_import_errors_are_clear(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "empty.md").write_text("nothing here\n")
    (repo / "bad.json").write_text("{nope")
    for name, expected in (
        ("empty.md", "no task lines found"),
        ("bad.json", "not valid JSON"),
        ("missing.md", "no such file"),
    ):
        result = cli("init", "--goal", "g", "--import", name)
        assert result.code == 2 and expected in result.stderr, result.stderr
    assert not (repo / ".resume-kit" / "progress.yaml").exists()


def test_add_validates_ids_dependencies_and_commands(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli("init", "--goal", "g")
    assert (
        cli(
            "add",
            "Parse dates",
            "--verify",
            "pytest -q",
            "--files",
            "src/*.py",
            "--artifact",
            "out/a.json",
        ).code
        == 0
    )
    assert cli("add", "Parse dates", "--verify", "true", "--after", "parse-dates").code == 0
    model = load(repo)
    assert [u.id for u in model.units] == ["parse-dates", "parse-dates-2"]
    assert model.units[0].files == ["src/*.py"] and model.units[0].artifacts == ["out/a.json"]
    assert model.units[1].after == ["parse-dates"]
    for args, expected in (
        (["x", "--verify", "true", "--id", "Bad Id"], "invalid id 'Bad Id'"),
        (["x", "--verify", "true", "--id", "parse-dates"], "already exists"),
        (["x", "--verify", "true", "--after", "nope"], "unknown unit 'nope'"),
        (["x", "--verify", "  "], "--verify is empty"),
        (["x"], "Missing option '--verify'"),
    ):
        result = cli("add", *args)
        assert result.code == 2 and expected in result.stderr, (args, result.stderr)


def test_plan_adds_only_new_paths_and_never_resets(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli("init", "--goal", "g")
    docs = repo / "docs"
    docs.mkdir()
    for n in (2, 1):
        (docs / f"{n:03d}.txt").write_text("x")
    (docs / "My File.TXT").write_text("x")
    args = [
        "plan",
        "--each",
        "docs/*",
        "--title",
        "Extract {name} ({n})",
        "--verify",
        "test -s out/{stem}.json && echo {path}",
        "--artifact",
        "out/{stem}.json",
        "--id-prefix",
        "doc-",
    ]
    assert cli(*args).code == 0
    model = load(repo)
    assert [u.id for u in model.units] == ["doc-docs-001", "doc-docs-002", "doc-docs-my-file"]
    assert model.units[0].title == "Extract 001.txt (1)"
    assert model.units[2].verify == "test -s out/'My File'.json && echo 'docs/My File.TXT'"
    assert model.units[0].artifacts == ["out/001.json"]
    cli("start", "doc-docs-001")
    (docs / "000.txt").write_text("x")
    second = cli(*args)
    assert second.code == 0 and "planned 1 new unit (3 already present)" in second.stderr
    model = load(repo)
    assert [u.id for u in model.units] == [
        "doc-docs-001",
        "doc-docs-002",
        "doc-docs-my-file",
        "doc-docs-000",
    ]
    assert model.require_unit("doc-docs-001").status == "in_progress"
    assert cli("plan", "--each", "nothing/*", "--title", "t", "--verify", "v").code == 2


def test_start_block_reset(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli("init", "--goal", "g")
    cli("add", "A", "--verify", "true", "--id", "a")
    assert cli("start", "a").code == 0
    assert load(repo).require_unit("a").status == "in_progress"
    assert cli("block", "a", "--reason", "waiting for the API key").code == 0
    model = load(repo)
    assert model.require_unit("a").status == "blocked"
    assert model.require_unit("a").blocked_reason == "waiting for the API key"
    assert model.notes is None  # the reason is the unit's, not the top-level notes'
    status = cli("status")
    assert "blocked:\n  a: waiting for the API key\n" in status.stdout
    brief = cli("brief")
    assert "> a blocked: waiting for the API key" in brief.stdout
    assert cli("reset", "a").code == 0
    assert load(repo).require_unit("a").status == "todo"
    assert load(repo).require_unit("a").blocked_reason is None
    assert "waiting for the API key" not in cli("status").stdout
    assert "waiting for the API key" not in cli("brief").stdout
    cli("block", "a", "--reason", "again")
    cli("start", "a")
    assert load(repo).require_unit("a").blocked_reason is None
    missing = cli("start", "zzz")
    assert missing.code == 2 and "no unit with id 'zzz'" in missing.stderr


def test_action_ledger(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli("init", "--goal", "g")
    assert cli("action", "record", "push-branch", "--description", "Pushed feature/x").code == 0
    assert (
        cli(
            "action",
            "record",
            "mail-team",
            "--description",
            "Sent the summary",
            "--status",
            "unknown",
        ).code
        == 0
    )
    assert (
        cli(
            "action", "record", "push-branch", "--description", "Pushed again", "--status", "failed"
        ).code
        == 0
    )
    listed = json.loads(cli("action", "list", "--json").stdout)
    assert [(a["key"], a["status"]) for a in listed] == [
        ("push-branch", "failed"),
        ("mail-team", "unknown"),
    ]
    assert cli("action", "record", "k", "--description", "d", "--status", "maybe").code == 2


def test_a_git_dir_leaked_from_a_hook_is_ignored(repo: Path, tmp_path: Path) -> None:
    """git exports GIT_DIR to hooks; resume-kit must still act on the work tree it runs in."""
    other = tmp_path / "other"
    other.mkdir()
    leak = {
        "GIT_DIR": str(other / ".git"),
        "GIT_INDEX_FILE": str(other / "index"),
        "GIT_WORK_TREE": str(other),
    }
    assert run_cli("init", "--goal", "g", cwd=repo, env=leak).code == 0
    assert (repo / ".resume-kit" / "progress.yaml").exists()
    assert run_cli("add", "A", "--verify", "true", cwd=repo, env=leak).code == 0
