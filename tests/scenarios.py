"""Realistic workspaces for the brief's golden scenarios, built for real: a git repository,
the real `resume-kit` CLI (init, add, trust, run, verify-next) and real git operations."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import git, run_cli


@dataclass
class Scenario:
    root: Path
    must: list[str]  # facts the brief must state (substrings of the Markdown)
    must_not: list[str]  # what it must not state
    hook_input: dict[str, str] | None = None


def _repo(tmp: Path, goal: str) -> Path:
    root = tmp / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "README.md").write_text("project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    rk(root, "init", "--goal", goal)
    return root


def rk(root: Path, *args: str, ok: bool = True, input: str | None = None) -> str:
    result = run_cli(*args, cwd=root, input=input)
    assert not ok or result.code == 0, (args, result.stderr)
    return result.stdout


def _commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def batch_died(tmp: Path) -> Scenario:
    """A batch of six modules whose run stopped at unit 4 (its output file is missing)."""
    root = _repo(tmp, "Generate the six module stubs in out/")
    for n in range(1, 7):
        rk(root, "add", f"Module {n}", "--id", f"mod-{n}", "--verify", f"test -f out/{n}.txt")
    (root / "out").mkdir()
    for n in range(1, 4):
        (root / "out" / f"{n}.txt").write_text(f"module {n}\n")
    _commit(root, "modules 1-3")
    rk(root, "trust", "--yes")
    rk(root, "run", ok=False)
    return Scenario(
        root,
        must=["**3/6 units done**", "`mod-1` … `mod-3`", "Unit `mod-4`", "test -f out/4.txt"],
        must_not=["Unit `mod-5`", "All 6 units", "Left out to fit the size limit: done ids"],
    )


def half_done(tmp: Path) -> Scenario:
    """A unit half done: uncommitted edits in its file and a failing test."""
    root = _repo(tmp, "Add the parser")
    (root / "src").mkdir()
    (root / "src" / "parse.py").write_text("def parse(s):\n    return s\n")
    (root / "check.py").write_text(
        "import sys\nsys.path.insert(0, 'src')\nimport parse\n"
        "r = parse.parse('1,2,3')\n"
        "assert r == ['1', '2', '3'], f'expected a list, got {r!r}'\n"
    )
    _commit(root, "parser skeleton")
    rk(root, "add", "Split fields", "--id", "split", "--verify", "python check.py",
       "--files", "src/parse.py")  # fmt: skip
    rk(root, "trust", "--yes")
    rk(root, "start", "split")
    (root / "src" / "parse.py").write_text("def parse(s):\n    return s.split(';')\n")
    rk(root, "verify-next", ok=False)
    cache = root / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    # as pytest writes it: its cache is never a change of the work tree
    (root / ".pytest_cache" / ".gitignore").write_text("# Created by pytest automatically.\n*\n")
    (cache / "lastfailed").write_text(json.dumps({"tests/test_parse.py::test_split": True}))
    return Scenario(
        root,
        must=["Unit `split`", "`src/parse.py`", "expected a list", "python check.py"],
        must_not=["All 1 units", "Text in code spans and fenced blocks"],
    )


def merge_conflict(tmp: Path) -> Scenario:
    """A merge stopped on a conflict in the file of a unit already done."""
    root = _repo(tmp, "Document the API")
    (root / "api.md").write_text("v1\n")
    _commit(root, "api doc v1")
    rk(root, "add", "API doc", "--id", "api-doc", "--verify", "test -f api.md", "--files", "api.md")
    rk(root, "add", "Guide", "--id", "guide", "--verify", "test -f guide.md")
    rk(root, "trust", "--yes")
    rk(root, "verify-next")
    git(root, "checkout", "-q", "-b", "feature")
    (root / "api.md").write_text("feature version\n")
    _commit(root, "Rewrite the API doc")
    git(root, "checkout", "-q", "main")
    (root / "api.md").write_text("main version\n")
    _commit(root, "Touch the API doc")
    git(root, "merge", "feature", check=False)
    return Scenario(
        root,
        must=["**A merge is in progress**", "`api.md` (conflict", "`api-doc`", "Unit `guide`"],
        must_not=["Unit `api-doc`"],
    )


def rebase_stopped(tmp: Path) -> Scenario:
    """A rebase of three commits stopped at the second."""
    root = _repo(tmp, "Port the scripts")
    (root / "a.txt").write_text("base\n")
    _commit(root, "base")
    rk(root, "add", "Port", "--id", "port", "--verify", "test -f b.txt")
    git(root, "checkout", "-q", "-b", "topic")
    (root / "one.txt").write_text("1\n")
    _commit(root, "first")
    (root / "a.txt").write_text("topic\n")
    _commit(root, "second")
    (root / "three.txt").write_text("3\n")
    _commit(root, "third")
    git(root, "checkout", "-q", "main")
    (root / "a.txt").write_text("main\n")
    _commit(root, "main change")
    git(root, "checkout", "-q", "topic")
    git(root, "rebase", "main", check=False)
    return Scenario(
        root,
        must=["**A rebase is in progress**", "`a.txt` (conflict", "Unit `port`"],
        must_not=["## Finished"],
    )


def claimed_import(tmp: Path) -> Scenario:
    """A task list imported with two items already ticked."""
    root = tmp / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "tasks.md").write_text(
        "- [x] Write the schema\n- [x] Load the fixtures\n- [ ] Serve the API\n"
    )
    git(root, "add", "-A")
    git(root, "-c", "user.email=t@e", "-c", "user.name=T", "commit", "-q", "-m", "tasks")
    rk(root, "init", "--goal", "Build the service", "--import", "tasks.md")
    return Scenario(
        root,
        must=["Serve the API", "Build the service"],
        must_not=["All 3 units"],
    )


def todo_disagrees(tmp: Path) -> Scenario:
    """The agent's transcript says a unit is in progress that the progress file has done."""
    root = _repo(tmp, "Translate the pages")
    rk(root, "add", "Page one", "--id", "page-1", "--verify", "true")
    rk(root, "add", "Page two", "--id", "page-2", "--verify", "test -f two.md")
    rk(root, "trust", "--yes")
    rk(root, "verify-next")
    transcript = tmp / "session.jsonl"
    todos = [
        {"content": "Page one", "status": "in_progress", "activeForm": "Translating page one"},
        {"content": "Page two", "status": "pending", "activeForm": "Translating page two"},
    ]
    records = [
        {"type": "user", "uuid": "u1", "timestamp": "2026-12-01T10:00:00Z",
         "message": {"role": "user", "content": "translate the pages"}},
        {"type": "assistant", "uuid": "a1", "timestamp": "2026-12-01T10:00:05Z",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": todos}}],
             "usage": {"input_tokens": 1200, "output_tokens": 300}}},
    ]  # fmt: skip
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    return Scenario(
        root,
        must=["Unit `page-2`", "`page-1`", "Todo in progress: `Page one`", "Resources:"],
        must_not=["Unit `page-1`"],
        hook_input={"cwd": str(root), "transcript_path": str(transcript)},
    )


def big_workspace(tmp: Path) -> Scenario:
    """200 units, 60 done (10 of them only claimed by an imported task list), the 51st plan
    unit failing with a long mypy log, and a merge stopped on a conflict in a done unit's file."""
    root = tmp / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "src").mkdir()
    for n in range(1, 191):
        (root / "src" / f"mod_{n:03d}.py").write_text("ok\n" if n <= 50 else "todo\n")
    errors = [
        f"src/mod_051.py:{line}: error: Function is missing a type annotation  [no-untyped-def]"
        for line in range(1, 241)
    ]
    (root / "mypy.log").write_text("\n".join([*errors, "Found 240 errors in 1 file"]) + "\n")
    (root / "tasks.md").write_text("".join(f"- [x] Set up part {n}\n" for n in range(1, 11)))
    _commit(root, "modules")
    rk(root, "init", "--goal", "Type-annotate every module in src/", "--import", "tasks.md")
    rk(root, "plan", "--each", "src/mod_*.py", "--title", "Annotate {stem}",
       "--verify", "grep -q ok {path} || { cat mypy.log; false; }")  # fmt: skip
    rk(root, "trust", "--yes")
    rk(root, "run", ok=False)
    git(root, "checkout", "-q", "-b", "feature")
    (root / "src" / "mod_005.py").write_text("ok feature\n")
    _commit(root, "Annotate mod_005 differently")
    git(root, "checkout", "-q", "main")
    (root / "src" / "mod_005.py").write_text("ok main\n")
    _commit(root, "Touch mod_005")
    git(root, "merge", "feature", check=False)
    return Scenario(
        root,
        must=[
            "**60/200 units done**",
            "Unit `src-mod_051`",
            "grep -q ok src/mod_051.py",
            "`set-up-part-1` … `set-up-part-10`",
            "`src-mod_001` … `src-mod_050`",
        ],
        must_not=["Unit `src-mod_001`", "Unit `set-up-part-1`"],
    )


SCENARIOS: dict[str, Callable[[Path], Scenario]] = {
    "batch-died": batch_died,
    "half-done": half_done,
    "merge-conflict": merge_conflict,
    "rebase-stopped": rebase_stopped,
    "claimed-import": claimed_import,
    "todo-disagrees": todo_disagrees,
    "big-workspace": big_workspace,
}
