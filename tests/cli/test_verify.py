"""verify-next through the real CLI on real repositories (SPEC 3 and 5)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from resume_kit.facts.fingerprint import fingerprint
from resume_kit.runner import verify
from tests.conftest import git, run_cli_on_terminal
from tests.helpers_snapshot import head, write_progress

TRUST_ALL = {"RESUME_KIT_TRUST": "all"}


def read_units(repo: Path) -> dict[str, dict[str, object]]:
    doc = yaml.safe_load((repo / ".resume-kit" / "progress.yaml").read_text())
    return {u["id"]: u for u in doc["units"]}


def process_gone(pid: int, within_s: float = 5.0) -> bool:
    """True once ``pid`` no longer exists (or is a zombie); polls until ``within_s``."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


# --------------------------------------------------------------------------- pass and fail


def test_pass_marks_done_with_evidence_and_prints_the_next_unit(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("A = 1\n")
    git(repo, "add", "src/a.py")
    git(repo, "commit", "-q", "-m", "add a")
    write_progress(
        repo,
        [
            {
                "id": "a",
                "title": "Make A",
                "verify": "echo building; echo out > out-a.txt",
                "files": ["src/*.py"],
                "artifacts": ["out-a.txt"],
                "last_failure": {
                    "at": "2026-01-01T00:00:00Z",
                    "exit_code": 1,
                    "signature": "abc",
                    "repeats": 2,
                    "excerpt": "old",
                },
                "status": "in_progress",
            },
            {"id": "b", "title": "Make B", "verify": "true", "after": ["a"]},
        ],
    )
    result = cli("verify-next", env=TRUST_ALL)
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == [
        result.stdout.splitlines()[0],
        "next: b — Make B",
        "  verify: true",
    ]
    assert result.stdout.startswith("passed: a in ")
    assert "resume-kit: running a: echo building; echo out > out-a.txt" in result.stderr
    unit = read_units(repo)["a"]
    assert unit["status"] == "done"
    assert "last_failure" not in unit
    evidence = unit["evidence"]
    assert isinstance(evidence, dict)
    assert evidence["commit"] == head(repo)
    assert evidence["dirty"] is False  # out-a.txt is untracked; .resume-kit/ never counts
    assert evidence["fingerprint"] == fingerprint(repo, ["src/*.py"], ["out-a.txt"])
    assert isinstance(evidence["duration_s"], float)
    log = repo / str(evidence["log"])
    assert str(evidence["log"]).startswith(".resume-kit/runs/a-")
    header, body = log.read_text().split("\n", 1)
    assert body == "building\n"
    match = verify.LOG_HEADER.fullmatch(header)
    assert match is not None and match["unit"] == "a"


def test_dirty_is_true_only_for_tracked_changes_outside_the_state_dir(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [{"id": "a", "title": "A", "verify": "true"}, {"id": "b", "title": "B", "verify": "true"}],
    )
    git(repo, "add", ".resume-kit/progress.yaml")
    git(repo, "commit", "-q", "-m", "track progress")
    assert cli("verify-next", env=TRUST_ALL).code == 0  # rewrites the tracked progress.yaml
    assert read_units(repo)["a"]["evidence"]["dirty"] is False  # type: ignore[index]
    (repo / "README.md").write_text("changed\n")
    assert cli("verify-next", env=TRUST_ALL).code == 0
    assert read_units(repo)["b"]["evidence"]["dirty"] is True  # type: ignore[index]


def test_unborn_head_gives_a_null_commit(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_progress(root, [{"id": "a", "title": "A", "verify": "true"}])
    result = run_cli("verify-next", cwd=root, env=TRUST_ALL)
    assert result.code == 0, result.stderr
    assert read_units(root)["a"]["evidence"]["commit"] is None  # type: ignore[index]


def test_failure_records_last_failure_and_counts_repeats(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    script = repo / "check.sh"
    script.write_text(
        "echo collecting\n"
        "echo 'Traceback (most recent call last):'\n"
        "echo '  File \"src/extract.py\", line 88, in parse'\n"
        "echo \"KeyError: 'party_b' password=hunter2hunter2\"\n"
        "exit 3\n"
    )
    write_progress(repo, [{"id": "doc-001", "title": "Doc 1", "verify": "sh check.sh"}])
    first = cli("verify-next", env=TRUST_ALL)
    assert first.code == 1
    assert "doc-001 failed (exit 3)" in first.stderr
    assert "hunter2hunter2" not in first.stderr
    unit = read_units(repo)["doc-001"]
    assert unit["status"] == "in_progress"
    assert "evidence" not in unit
    failure = unit["last_failure"]
    assert isinstance(failure, dict)
    assert failure["exit_code"] == 3
    assert failure["repeats"] == 1
    excerpt = str(failure["excerpt"]).splitlines()
    assert excerpt[0] == 'File "src/extract.py", line 88, in parse'
    assert excerpt[1].startswith("KeyError: 'party_b' password=[REDACTED")
    assert len(excerpt) == 2
    assert len(str(failure["signature"])) == 64

    (repo / "extract.py").write_text("a change between the attempts\n")  # a real retry
    second = cli("verify-next", env=TRUST_ALL)
    assert second.code == 1
    again = read_units(repo)["doc-001"]["last_failure"]
    assert again["repeats"] == 2  # type: ignore[index]
    assert again["signature"] == failure["signature"]  # type: ignore[index]
    assert "same failure 2x running" in second.stderr

    script.write_text("echo 'ValueError: something else'\nexit 1\n")
    third = cli("verify-next", env=TRUST_ALL)
    assert third.code == 1
    other = read_units(repo)["doc-001"]["last_failure"]
    assert other["repeats"] == 1  # type: ignore[index]
    assert other["signature"] != failure["signature"]  # type: ignore[index]


def test_signature_is_stable_across_runs_with_varying_noise(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    # Every run prints a new time, address, temp path, duration and pid around the same error.
    (repo / "noisy.sh").write_text(
        "n=$(cat n 2>/dev/null || echo 0); n=$((n + 7)); echo $n > n\n"
        'echo "2026-11-2${n#?}T08:0$((n % 10)):1$((n % 10)).$n Z starting pid $$"\n'
        'echo "ERROR test_parse failed in 0.$n'
        's at 0x7ffd$n$n (pid=$$)"\n'
        'echo "  see /tmp/pytest-of-me/pytest-$n/test_parse$n/out.json for details"\n'
        'echo "tests/test_parse.py:42: AssertionError: object at 0x55$n$n"\n'
        "exit 1\n"
    )
    write_progress(repo, [{"id": "a", "title": "A", "verify": "sh noisy.sh"}])
    assert cli("verify-next", env=TRUST_ALL).code == 1
    first = read_units(repo)["a"]["last_failure"]
    assert cli("verify-next", env=TRUST_ALL).code == 1
    second = read_units(repo)["a"]["last_failure"]
    assert first["excerpt"] != second["excerpt"]  # type: ignore[index]
    assert first["signature"] == second["signature"]  # type: ignore[index]
    assert second["repeats"] == 2  # type: ignore[index]


def test_normalise_line_rules() -> None:
    norm = verify.normalise_line
    assert norm("2026-11-29T08:00:00.123Z boom") == norm("2025-01-02 13:14:15 boom")
    assert norm("at 0x7f3a2b1c") == norm("at 0xdeadbeef")
    assert norm("wrote /tmp/tmpa1b2/x.json") == norm("wrote /tmp/tmpzz9/y.json")
    assert norm("passed in 0.12s") == norm("passed in 3.5 seconds")
    assert norm("killed pid 1234") == norm("killed pid 99")
    assert norm("bind 127.0.0.1:53211 failed") == norm("bind 127.0.0.1:40001 failed")
    # what identifies the failure stays
    assert norm("src/a.py:88: KeyError") != norm("src/a.py:89: KeyError")
    assert norm("KeyError: 'party_b'") != norm("KeyError: 'party_c'")
    assert norm("expected 3 items, got 4") != norm("expected 3 items, got 5")
    assert norm("FAILED tests/t.py::test_x[3]") != norm("FAILED tests/t.py::test_x[4]")
    assert verify.failure_signature(["x"], 1) != verify.failure_signature(["x"], 2)
    assert verify.failure_signature(["x"], None, timed_out=True) != verify.failure_signature(
        ["x"], 1
    )


def test_excerpt_falls_back_to_the_last_lines_and_is_capped(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {
                "id": "quiet",
                "title": "Q",
                "verify": "for i in 1 2 3 4 5 6 7; do echo line $i; done; exit 2",
            },
            {
                "id": "loud",
                "title": "L",
                "verify": "for i in $(seq 1 60); do echo error number $i; done; false",
            },
        ],
    )
    assert cli("verify-next", env=TRUST_ALL).code == 1
    quiet = read_units(repo)["quiet"]["last_failure"]
    assert str(quiet["excerpt"]).splitlines() == [f"line {i}" for i in range(3, 8)]  # type: ignore[index]
    assert cli("verify-next", "--unit", "loud", env=TRUST_ALL).code == 1
    loud = str(read_units(repo)["loud"]["last_failure"]["excerpt"]).splitlines()  # type: ignore[index]
    assert len(loud) == 20
    assert loud[-1] == "error number 60"


def test_output_with_control_characters_keeps_the_file_valid(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {
                "id": "a",
                "title": "A",
                "verify": "printf '\\033[31mError: red\\033[0m\\007 bell\\001\\n'; exit 1",
            }
        ],
    )
    assert cli("verify-next", env=TRUST_ALL).code == 1
    excerpt = read_units(repo)["a"]["last_failure"]["excerpt"]  # type: ignore[index]
    assert excerpt == "Error: red\\x07 bell\\x01"
    assert cli("status", "--json").code == 0


# --------------------------------------------------------------------------- json, dry run, picking


def test_json_output(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "verify": "echo hi"},
            {"id": "b", "title": "B", "verify": "exit 5"},
        ],
    )
    passed = cli("verify-next", "--json", env=TRUST_ALL)
    assert passed.code == 0, passed.stderr
    data = json.loads(passed.stdout)
    log = data.pop("log")
    assert log.startswith(".resume-kit/runs/a-") and (repo / log).is_file()
    assert isinstance(data.pop("duration_s"), float)
    assert data == {
        "unit": "a",
        "command": "echo hi",
        "exit_code": 0,
        "passed": True,
        "timed_out": False,
        "next": "b",
    }
    failed = json.loads(cli("verify-next", "--json", env=TRUST_ALL).stdout)
    assert failed["unit"] == "b" and failed["exit_code"] == 5 and failed["passed"] is False
    assert failed["next"] is None and failed["repeats"] == 1


def test_dry_run_runs_nothing(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    path = write_progress(repo, [{"id": "a", "title": "Make A", "verify": "touch marker"}])
    before = path.read_text()
    result = cli("verify-next", "--dry-run")  # untrusted is fine: nothing runs
    assert result.code == 0
    assert result.stdout.splitlines()[:2] == ["a — Make A", "  verify: touch marker"]
    assert "not approved" in result.stdout
    as_json = json.loads(cli("verify-next", "--dry-run", "--json", env=TRUST_ALL).stdout)
    assert as_json == {"unit": "a", "title": "Make A", "command": "touch marker", "trusted": True}
    assert not (repo / "marker").exists()
    assert path.read_text() == before
    assert not (repo / ".resume-kit" / "runs").exists()


def test_picking_order_and_unit_option(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "verify": "echo a >> ran", "status": "blocked"},
            {"id": "b", "title": "B", "verify": "echo b >> ran", "after": ["c"]},
            {"id": "c", "title": "C", "verify": "echo c >> ran"},
            {"id": "d", "title": "D", "verify": "echo d >> ran", "status": "in_progress"},
        ],
    )
    for _ in range(3):
        assert cli("verify-next", env=TRUST_ALL).code == 0
    assert (repo / "ran").read_text().split() == [
        "d",
        "c",
        "b",
    ]  # in progress, ready todo, unblocked
    assert cli("verify-next", "--unit", "a", env=TRUST_ALL).code == 0
    assert cli("verify-next", "--unit", "c", env=TRUST_ALL).code == 0  # re-verify a done unit
    assert (repo / "ran").read_text().split() == ["d", "c", "b", "a", "c"]
    missing = cli("verify-next", "--unit", "zz", env=TRUST_ALL)
    assert missing.code == 2 and "no unit with id 'zz'" in missing.stderr


def test_nothing_to_do_exits_3(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "verify": "true", "status": "done"},
            {"id": "b", "title": "B", "verify": "true", "status": "done"},
        ],
    )
    done = cli("verify-next", env=TRUST_ALL)
    assert done.code == 3
    assert done.stderr.strip() == "resume-kit: nothing to do: all 2 units done"
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "verify": "true", "status": "blocked"},
            {"id": "b", "title": "B", "verify": "true", "after": ["a"]},
        ],
    )
    stuck = cli("verify-next", env=TRUST_ALL)
    assert stuck.code == 3
    assert stuck.stderr.splitlines()[0] == (
        "resume-kit: nothing verifiable: 1 blocked, 1 waiting for unfinished units"
    )


def test_unit_without_verify_exits_2_with_a_hint(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(repo, [{"id": "a", "title": "A"}])
    result = cli("verify-next", env=TRUST_ALL)
    assert result.code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "resume-kit: error: unit 'a' has no verify command"
    assert lines[1].startswith("hint: add a `verify:` line")


def test_invalid_progress_file_exits_2_untouched(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".resume-kit" / "progress.yaml"
    path.parent.mkdir()
    path.write_text("schema_version: 1\ngoal: g\nunits:\n  - id: A B\n")
    result = cli("verify-next", env=TRUST_ALL)
    assert result.code == 2 and "Traceback" not in result.stderr
    assert path.read_text() == "schema_version: 1\ngoal: g\nunits:\n  - id: A B\n"


# --------------------------------------------------------------------------- stale


def test_stale_reverifies_only_changed_done_units(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "a.txt").write_text("a1\n")
    (repo / "b.txt").write_text("b1\n")
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "verify": "echo a >> ran", "files": ["a.txt"]},
            {"id": "b", "title": "B", "verify": "echo b >> ran", "files": ["b.txt"]},
            {
                "id": "c",
                "title": "C",
                "verify": "echo c >> ran && touch c.out",
                "artifacts": ["c.out"],
            },
        ],
    )
    for _ in range(3):
        assert cli("verify-next", env=TRUST_ALL).code == 0
    assert cli("verify-next", "--stale", env=TRUST_ALL).code == 3
    (repo / "a.txt").write_text("a2\n")
    (repo / "c.out").unlink()  # a missing artifact makes the evidence stale too
    (repo / "ran").unlink()
    planned = cli("verify-next", "--stale", "--dry-run", "--json", env=TRUST_ALL)
    assert [item["unit"] for item in json.loads(planned.stdout)] == ["a", "c"]
    assert not (repo / "ran").exists()
    result = cli("verify-next", "--stale", env=TRUST_ALL)
    assert result.code == 0, result.stderr
    assert (repo / "ran").read_text().split() == ["a", "c"]
    units = read_units(repo)
    assert units["a"]["evidence"]["fingerprint"] == fingerprint(repo, ["a.txt"], [])  # type: ignore[index]
    assert cli("verify-next", "--stale", env=TRUST_ALL).code == 3


def test_stale_stops_at_the_first_failure(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "verify": "echo a >> ran; exit 1", "status": "done"},
            {"id": "b", "title": "B", "verify": "echo b >> ran", "status": "done"},
        ],
    )
    result = cli("verify-next", "--stale", "--json", env=TRUST_ALL)
    assert result.code == 1
    assert [r["unit"] for r in json.loads(result.stdout)] == ["a"]
    assert (repo / "ran").read_text().split() == ["a"]
    units = read_units(repo)
    assert units["a"]["status"] == "in_progress" and units["b"]["status"] == "done"


@pytest.mark.parametrize(
    ("forged", "error"),
    [
        (  # as long as the path it replaces: the unit's line is where the header says
            '"../ab.py"',
            "the progress cache disagrees with progress.yaml (unit 'a': files: '../ab.py' "
            "climbs out of the work tree with '..'; paths must stay inside the work tree)",
        ),
        (  # longer: the next line no longer starts where the header says
            '"../../etc/passwd"',
            "the progress cache disagrees with progress.yaml",
        ),
    ],
)
def test_a_cache_changed_by_hand_stops_verify_next_before_the_run_and_is_removed(
    repo: Path,
    cli,  # type: ignore[no-untyped-def]
    forged: str,
    error: str,
) -> None:
    """verify-next builds a cached unit when it reads it (only the one it runs): a unit the cache
    holds differently from what validation allows is a one-line error, nothing runs, and the
    cache is removed, so the next run reads progress.yaml itself."""
    from resume_kit.infra.paths import find_layout

    write_progress(
        repo,
        [
            {"id": "a", "title": "A", "verify": "echo ran > ran.txt", "files": ["src/a.py"]},
            {"id": "b", "title": "B", "verify": "true", "after": ["a"]},
        ],
    )
    assert cli("status", env=TRUST_ALL).code == 0  # writes the progress cache
    cache = find_layout(repo).user_cache / "progress.json"
    text = cache.read_text()
    assert '"src/a.py"' in text
    cache.write_text(text.replace('"src/a.py"', forged))  # its key still matches
    result = cli("verify-next", env=TRUST_ALL)
    assert result.code == 2
    assert result.stderr.splitlines()[0] == f"resume-kit: error: {error}"
    assert "the damaged cache was removed: run the command again" in result.stderr
    assert not (repo / "ran.txt").exists()
    assert read_units(repo)["a"].get("status", "todo") == "todo"
    assert not cache.exists()
    assert cli("verify-next", env=TRUST_ALL).code == 0
    assert (repo / "ran.txt").exists() and read_units(repo)["a"]["status"] == "done"


@pytest.mark.parametrize("shift", [1, -1, 7])
def test_block_offsets_in_the_cache_that_are_wrong_never_reach_progress_yaml(
    repo: Path,
    cli,
    shift: int,  # type: ignore[no-untyped-def]
) -> None:
    """verify-next rewrites the unit's block at the offset the progress cache names only when
    our emitter reproduces the old block there exactly: wrong offsets (a cache changed by hand)
    make it search the text, and progress.yaml is what correct ones give."""
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.roundtrip import dump, new_document, parse_text
    from resume_kit.progress_file.validate import validate

    units = [
        {"id": "a", "title": "A", "verify": "true", "notes": "first"},
        {"id": "b", "title": "B", "verify": "true", "after": ["a"]},
        {"id": "c", "title": "C", "verify": "true"},
    ]
    write_progress(repo, units)
    progress = repo / ".resume-kit" / "progress.yaml"
    model = validate(parse_text(progress.read_text()))
    progress.write_text(dump(new_document(model)))  # the layout resume-kit writes
    assert cli("status", env=TRUST_ALL).code == 0
    cache = find_layout(repo).user_cache / "progress.json"
    pristine, good_cache = progress.read_bytes(), cache.read_text()
    assert cli("verify-next", env=TRUST_ALL).code == 0
    expected = progress.read_bytes()
    header, rest = good_cache.split("\n", 1)
    fields = json.loads(header)
    starts, end, indent = fields["blocks"]
    fields["blocks"] = [
        [start + shift if start + shift > 0 else start for start in starts],
        end,
        indent,
    ]
    progress.write_bytes(pristine)
    cache.write_text(json.dumps(fields, ensure_ascii=False) + "\n" + rest)
    assert cli("verify-next", env=TRUST_ALL).code == 0
    done = read_units(repo)
    assert done["a"]["status"] == "done" and done["b"].get("status", "todo") == "todo"
    varying = ("verified_at:", "duration_s:", "log:")  # the clock's and the log's name

    def steady(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.strip().startswith(varying)]

    assert steady(progress.read_text()) == steady(expected.decode())


def test_each_checkpoint_appends_one_line_to_the_progress_cache(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """verify-next appends a tail line to the progress cache instead of writing its 4 MB again
    (issue 18); every later reader gets from it exactly the model progress.yaml parses to, and
    after MAX_TAILS lines the next checkpoint writes the whole text again."""
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.cache_json import MAX_TAILS, data_of
    from resume_kit.progress_file.roundtrip import dump, new_document, parse_text, to_data
    from resume_kit.progress_file.validate import validate

    count = MAX_TAILS + 2
    write_progress(
        repo, [{"id": f"u{i:02}", "title": f"U {i}", "verify": "true"} for i in range(count)]
    )
    progress = repo / ".resume-kit" / "progress.yaml"
    progress.write_text(dump(new_document(validate(parse_text(progress.read_text())))))
    assert cli("status", env=TRUST_ALL).code == 0
    cache = find_layout(repo).user_cache / "progress.json"

    def tail_lines() -> int:
        text = cache.read_text()
        return text[text.rindex("\n]}\n") + 4 :].count("\n")

    assert tail_lines() == 0
    for done in range(1, count + 1):
        assert cli("verify-next", env=TRUST_ALL).code == 0
        assert tail_lines() == (done if done <= MAX_TAILS else done - MAX_TAILS - 1)
        parsed = to_data(validate(parse_text(progress.read_text())))
        assert data_of(cache.read_text()) == parsed
        assert read_units(repo)[f"u{done - 1:02}"]["status"] == "done"
    status = cli("status", "--json", env=TRUST_ALL)
    assert status.code == 0
    assert json.loads(status.stdout)["counts"]["verified"] == count


# --------------------------------------------------------------------------- trust and environment


def test_untrusted_command_is_refused_and_nothing_runs(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    path = write_progress(repo, [{"id": "evil", "title": "E", "verify": "touch marker"}])
    before = path.read_text()
    result = cli("verify-next")
    assert result.code == 4
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "resume-kit: error: unit 'evil': verify command not approved on this machine: touch marker"
    )
    assert "resume-kit trust" in lines[1]
    assert not (repo / "marker").exists()
    assert path.read_text() == before


def test_approved_via_the_api_runs(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    from resume_kit.infra.trust import approve

    write_progress(repo, [{"id": "a", "title": "A", "verify": "touch marker"}])
    approve(repo, [("a", "touch marker")])
    assert cli("verify-next").code == 0
    assert (repo / "marker").exists()


def test_command_environment_and_stdin(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo, [{"id": "a", "title": "A", "verify": "env > env.txt; pwd > pwd.txt; cat > stdin.txt"}]
    )
    sub = repo / "sub"
    sub.mkdir()
    # what git exports while it runs a hook in this repository
    env = {
        **TRUST_ALL,
        "GIT_DIR": str(repo / ".git"),
        "GIT_INDEX_FILE": str(repo / ".git/index"),
        "GIT_WORK_TREE": str(repo),
        "KEEP_ME": "kept",
    }
    result = cli("verify-next", env=env, cwd=sub, input="data on stdin\n")
    assert result.code == 0, result.stderr
    seen = dict(
        line.split("=", 1) for line in (repo / "env.txt").read_text().splitlines() if "=" in line
    )
    assert "GIT_DIR" not in seen and "GIT_INDEX_FILE" not in seen and "GIT_WORK_TREE" not in seen
    assert seen["KEEP_ME"] == "kept"
    for forced in ("GIT_OPTIONAL_LOCKS", "GIT_TERMINAL_PROMPT", "LC_ALL"):
        assert seen.get(forced) == os.environ.get(forced)
    assert (repo / "pwd.txt").read_text().strip() == str(repo)
    assert (repo / "stdin.txt").read_text() == ""


# --------------------------------------------------------------------------- timeout, output size


def test_timeout_kills_the_whole_process_group(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {
                "id": "slow",
                "title": "S",
                "verify": "sleep 300 & echo $! > grandchild.pid; echo waiting; wait",
            }
        ],
    )
    result = cli("verify-next", "--timeout", "0.5", env=TRUST_ALL)
    assert result.code == 124
    assert "timed out" in result.stderr
    assert process_gone(int((repo / "grandchild.pid").read_text()))
    unit = read_units(repo)["slow"]
    assert unit["status"] == "in_progress"
    failure = unit["last_failure"]
    assert failure["exit_code"] == 124  # type: ignore[index]
    assert str(failure["excerpt"]).endswith("timed out after 0.5s")  # type: ignore[index]
    log = sorted((repo / ".resume-kit" / "runs").glob("slow-*.log"))[0].read_text()
    log = log.split("\n", 1)[1]  # after the header line
    assert log.startswith("waiting\n") and "timed out after 0.5s" in log


def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    write_progress(
        repo,
        [
            {
                "id": "stubborn",
                "title": "S",
                "verify": "trap '' TERM; sleep 300 & echo $! > grandchild.pid; wait",
            }
        ],
    )
    (repo / ".resume-kit" / "config.yaml").write_text("verify:\n  timeout_s: 0.3\n")
    result = cli("verify-next", env=TRUST_ALL)  # the timeout comes from config.yaml
    assert result.code == 124
    assert process_gone(int((repo / "grandchild.pid").read_text()), within_s=1.0)


def test_log_is_capped_head_and_tail(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    big = 6 * 1024 * 1024
    write_progress(
        repo,
        [
            {
                "id": "big",
                "title": "B",
                "verify": f"echo FIRST; head -c {big} /dev/zero | tr '\\0' x; echo; echo LAST",
            }
        ],
    )
    assert cli("verify-next", env=TRUST_ALL).code == 0
    log = (repo / str(read_units(repo)["big"]["evidence"]["log"])).read_bytes()  # type: ignore[index]
    assert log.startswith(b"# resume-kit run: unit big, trace ")
    log = log.split(b"\n", 1)[1]  # the output after the header line is what is capped
    assert log.startswith(b"FIRST\n")
    assert log.endswith(b"\nLAST\n")
    assert b"bytes of output omitted here]" in log
    assert verify.HEAD_CAP + verify.TAIL_CAP < len(log) < verify.HEAD_CAP + verify.TAIL_CAP + 200


def test_prune_runs_keeps_the_newest(tmp_path: Path) -> None:
    for n in range(7):
        path = tmp_path / f"{'zyx'[n % 3]}-20261201T0000000{n:02d}Z.log"
        path.write_text(str(n))
        os.utime(path, ns=(n * 10**9, n * 10**9))
    (tmp_path / "notes.log").write_text("mine")  # not a name resume-kit gives a run log
    os.utime(tmp_path / "notes.log", ns=(0, 0))
    verify.prune_runs(tmp_path, keep=3)
    assert sorted(p.read_text() for p in tmp_path.glob("*.log")) == ["4", "5", "6", "mine"]


def test_background_writer_does_not_hang_the_run(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    # The shell exits at once; a background child keeps the output pipe open for 300 s.
    write_progress(
        repo, [{"id": "bg", "title": "B", "verify": "sleep 300 & echo $! > bg.pid; echo started"}]
    )
    began = time.monotonic()
    result = cli("verify-next", env=TRUST_ALL)
    assert result.code == 0, result.stderr
    assert time.monotonic() - began < 60
    assert process_gone(int((repo / "bg.pid").read_text()))


# --------------------------------------------------------------------------- signals, terminal


def wait_ready(fifo: Path, proc: subprocess.Popen[str], limit_s: float = 60.0) -> str:
    """Read what the verify command writes into ``fifo`` (it opens it once it is running)."""
    import select

    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"verify-next exited early: {proc.communicate()}")
            readable, _, _ = select.select([fd], [], [], 0.2)
            if readable:
                data = os.read(fd, 4096).decode()
                if data.strip():
                    return data.strip()
        raise AssertionError("the verify command never became ready")
    finally:
        os.close(fd)


def start_verify(repo: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "resume_kit", "verify-next", *args],
        cwd=repo,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **TRUST_ALL},
    )


@pytest.mark.parametrize("signum", [2, 15])  # SIGINT (Ctrl-C), SIGTERM
def test_signal_stops_the_command_and_marks_nothing(repo: Path, signum: int) -> None:
    os.mkfifo(repo / "ready.fifo")
    os.mkfifo(repo / "gate.fifo")
    path = write_progress(
        repo, [{"id": "a", "title": "A", "verify": "echo $$ > ready.fifo; cat gate.fifo; exit 0"}]
    )
    before = path.read_text()
    proc = start_verify(repo)
    shell_pid = int(wait_ready(repo / "ready.fifo", proc))
    try:
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell_pid, 9)  # never leave the command behind if the test fails
    assert proc.returncode == 130, err
    assert "interrupted" in err and "nothing was marked" in err
    assert path.read_text() == before
    assert process_gone(shell_pid)


def test_live_progress_on_a_terminal(repo: Path) -> None:
    write_progress(
        repo,
        [
            {
                "id": "a",
                "title": "A",
                "verify": "echo 'token=ghp_abcdefghijklmnopqrstuvwxyz0123456789'; sleep 0.3; echo done",
            }
        ],
    )
    result = run_cli_on_terminal("verify-next", cwd=repo, env=TRUST_ALL)
    assert result.code == 0
    assert "resume-kit: running" not in result.shown  # the spinner replaces the plain lines
    assert "ghp_abcdef" not in result.shown
    assert result.stdout.startswith(b"passed: a")


def test_the_header_line_waits_for_the_first_output() -> None:
    """A run log stays empty until the command prints (the drill kills at "first output" by
    watching the size); a command that prints nothing still gets its header at the end."""
    import io

    quiet = io.BytesIO()
    sink = verify.OutputSink(quiet, b"# head\n")
    assert quiet.getvalue() == b""
    sink.close()
    assert quiet.getvalue() == b"# head\n"
    chatty = io.BytesIO()
    sink = verify.OutputSink(chatty, b"# head\n")
    sink.feed(b"one\n")
    sink.feed(b"two\n")
    sink.close()
    assert chatty.getvalue() == b"# head\none\ntwo\n"
