"""One readiness rule: verify-next, run and the brief's "Next" name the same unit (issue 13).

Unit ``a`` is to do and ``b`` is in progress with ``after: [a]``: ``b`` is not ready while ``a``
is not done (SPEC 5: dependencies first), so all three must name ``a``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Result, run_cli
from tests.helpers_snapshot import write_progress

TRUST_ALL = {"RESUME_KIT_TRUST": "all"}


def _cli(repo: Path, *args: str) -> Result:
    return run_cli(*args, cwd=repo, env=TRUST_ALL)


def _a_todo_b_in_progress_after_a(repo: Path) -> None:
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "status": "todo", "verify": "true"},
            {"id": "b", "title": "B", "status": "in_progress", "verify": "true", "after": ["a"]},
        ],
    )


def test_verify_next_run_and_brief_name_the_same_unit(repo: Path) -> None:
    _a_todo_b_in_progress_after_a(repo)

    dry = _cli(repo, "verify-next", "--dry-run", "--json")
    assert dry.code == 0, dry.stderr
    assert json.loads(dry.stdout)["unit"] == "a"

    brief = _cli(repo, "brief", "--format", "json")
    assert brief.code == 0, brief.stderr
    assert json.loads(brief.stdout)["next"]["id"] == "a"
    markdown = _cli(repo, "brief")
    assert "Unit `a`" in markdown.stdout.split("## Next", 1)[1].split("\n## ", 1)[0]

    status = _cli(repo, "status")
    assert status.stdout.rstrip().endswith("next: a"), status.stdout

    ran = _cli(repo, "run", "--max-units", "1", "--json")
    assert ran.code == 0, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    assert [line["unit"] for line in lines if "unit" in line] == ["a"]


def test_in_progress_unit_waiting_on_a_blocked_one_is_not_picked(repo: Path) -> None:
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "status": "blocked", "verify": "true"},
            {"id": "b", "title": "B", "status": "in_progress", "verify": "true", "after": ["a"]},
        ],
    )
    nxt = _cli(repo, "verify-next")
    assert nxt.code == 3, nxt.stderr
    assert "nothing verifiable: 1 blocked, 1 waiting for unfinished units" in nxt.stderr
    ran = _cli(repo, "run")
    assert ran.code == 3 and "none of them ready" in ran.stderr
