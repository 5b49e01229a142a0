"""`resume-kit demo`: the generated workspace, the folder rules, and the whole story run once
through the real CLI, with the facts that prove it went right (the demo only tells them)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from resume_kit.cli.commands.demo import _wait_for_orphans, prepare_folder
from resume_kit.demo import workspace as demo
from resume_kit.infra.errors import ResumeKitError
from tests.conftest import git, run_cli

# --------------------------------------------------------------------------- generated content


def test_contracts_are_deterministic_and_only_137_uses_another_label() -> None:
    assert demo.contract_text(5) == demo.contract_text(5)
    quirky = [n for n in range(1, demo.DOC_COUNT + 1) if "Party B:" not in demo.contract_text(n)]
    assert quirky == [demo.QUIRK_DOC]
    assert "\nCounterparty: " in demo.contract_text(demo.QUIRK_DOC)


def _extract(root: Path, n: int) -> subprocess.CompletedProcess[str]:
    name = demo.doc_name(n)
    return subprocess.run(
        [sys.executable, "extract.py", f"docs/{name}.txt"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )


def test_scripts_fail_on_137_with_a_logged_key_error_and_the_fix_works(tmp_path: Path) -> None:
    demo.write_workspace_files(tmp_path)
    ok = _extract(tmp_path, 136)
    assert ok.returncode == 0, ok.stderr
    assert _check(tmp_path, "out/136.json").returncode == 0
    record = json.loads((tmp_path / "out" / "136.json").read_text())
    assert record["party_a"] and record["party_b"] and record["amount"] > 0

    extract = tmp_path / "extract.py"
    extract.write_text(demo.extract_half_edited(extract.read_text()))
    assert "LABEL_ALIASES = {}" in extract.read_text()
    failed = _extract(tmp_path, demo.QUIRK_DOC)
    assert failed.returncode == 1
    assert "KeyError: 'party_b'" in failed.stderr
    log = (tmp_path / "logs" / "extract.log").read_text()
    assert "docs/137.txt: extraction failed" in log and "KeyError: 'party_b'" in log
    assert "docs/136.txt -> out/136.json" in log

    extract.write_text(demo.extract_fixed(extract.read_text()))
    assert 'LABEL_ALIASES = {"counterparty": "party_b"}' in extract.read_text()
    assert _extract(tmp_path, demo.QUIRK_DOC).returncode == 0
    assert _check(tmp_path, "out/137.json").returncode == 0


def _check(root: Path, record: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "check.sh", record], cwd=root, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("party_b", ""), ("amount", None), ("currency", None), ("party_a", "")],
)
def test_check_script_rejects_a_record_with_a_field_without_value(
    tmp_path: Path, field: str, value: str | None
) -> None:
    demo.write_workspace_files(tmp_path)
    good = {
        "party_a": "A",
        "party_b": "B",
        "effective_date": "2025-01-02",
        "term_end": "2026-01-01",
        "amount": 10.0,
        "currency": "EUR",
        "governing_law": None,
    }
    (tmp_path / "good.json").write_text(json.dumps(good, indent=2) + "\n")
    assert _check(tmp_path, "good.json").returncode == 0
    (tmp_path / "bad.json").write_text(json.dumps({**good, field: value}, indent=2) + "\n")
    result = _check(tmp_path, "bad.json")
    assert result.returncode == 1
    assert "bad.json: 5 of the 6 fields have a value" in result.stderr
    missing = {k: v for k, v in good.items() if k != field}
    (tmp_path / "short.json").write_text(json.dumps(missing, indent=2) + "\n")
    assert _check(tmp_path, "short.json").returncode == 1
    assert _check(tmp_path, "absent.json").returncode == 1


# --------------------------------------------------------------------------- the folder


def test_folder_rules(tmp_path: Path) -> None:
    fresh = tmp_path / "new" / "demo"
    assert prepare_folder(fresh) == (fresh.resolve(), False)
    assert prepare_folder(fresh) == (fresh.resolve(), False)  # empty: used as it is

    earlier = tmp_path / "earlier"
    (earlier / ".git").mkdir(parents=True)
    (earlier / ".git" / demo.MARKER_NAME).write_text("x")
    (earlier / "docs").mkdir()
    (earlier / "docs" / "001.txt").write_text("x")
    (earlier / "extract.py").write_text("x")
    assert prepare_folder(earlier) == (earlier.resolve(), True)
    assert list(earlier.iterdir()) == []

    # Looks like a demo, but holds something of the user's: refused, untouched.
    (earlier / ".git").mkdir()
    (earlier / ".git" / demo.MARKER_NAME).write_text("x")
    (earlier / "notes.txt").write_text("mine")
    with pytest.raises(ResumeKitError) as refused:
        prepare_folder(earlier)
    assert refused.value.exit_code == 2
    assert (earlier / "notes.txt").read_text() == "mine"

    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ResumeKitError):
        prepare_folder(a_file)


def test_cli_refuses_a_non_empty_folder_that_is_not_a_demo(tmp_path: Path) -> None:
    target = tmp_path / "project"
    target.mkdir()
    (target / "important.txt").write_text("keep me")
    result = run_cli("demo", str(target), cwd=tmp_path)
    assert result.code == 2
    assert "not empty and is not an earlier demo" in result.stderr
    assert "Traceback" not in result.stderr
    assert [p.name for p in target.iterdir()] == ["important.txt"]


def test_a_step_with_an_unexpected_exit_stops_the_demo_as_a_bug(repo: Path) -> None:
    assert demo.run_cli(repo, "init", "--goal", "g", expect=0).code == 0
    with pytest.raises(ResumeKitError) as off:
        demo.run_cli(repo, "verify-next", expect=0)  # nothing to verify: exit 3
    assert off.value.exit_code == demo.EXIT_OFF_SCRIPT
    assert "went off script: `resume-kit verify-next` exited 3, not 0" in off.value.message


# --------------------------------------------------------------------------- the killed run


def _poll(condition: str, check: object, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {condition}"
        time.sleep(0.01)


def test_resuming_waits_for_a_verify_command_that_outlived_the_killed_run(repo: Path) -> None:
    # The command runs until the test lets it go, then leaves a mark as it ends.
    slow = "touch started; while [ ! -e go ]; do sleep 0.01; done; touch finished"
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    assert run_cli("add", "Slow", "--id", "slow", "--verify", slow, cwd=repo).code == 0
    claim = repo / ".resume-kit" / "running" / "slow.lock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "resume_kit", "run"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _poll("the command to start", (repo / "started").exists)
        _poll("the claim to name its process group", lambda: '"pgid"' in claim.read_text())
        # The supervisor (the group's leader) would stop the command with the run: kill it
        # too, so the command outlives the run as it did before there was one.
        os.kill(json.loads(claim.read_text())["pgid"], signal.SIGKILL)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
        with pytest.raises(ResumeKitError) as still_running:  # no time to wait: refused
            _wait_for_orphans(repo, ["slow"], timeout_s=0)
        assert still_running.value.exit_code == demo.EXIT_OFF_SCRIPT
        assert "slow" in still_running.value.message
        (repo / "go").touch()
        _wait_for_orphans(repo, ["slow"])
        assert (repo / "finished").exists()  # it returned only once the command had ended
        assert not claim.exists()
    finally:
        (repo / "go").touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --------------------------------------------------------------------------- the whole story


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One run of `resume-kit demo DIR` for the module: (DIR, its plain output)."""
    folder = tmp_path_factory.mktemp("story")
    home = folder / "home"
    with pytest.MonkeyPatch.context() as env:  # conftest's isolation is per test; this is not
        env.setenv("HOME", str(home))
        for name, sub in (("DATA", "share"), ("CONFIG", "config"), ("CACHE", "cache")):
            env.setenv(f"XDG_{name}_HOME", str(home / sub))
        env.setenv("GIT_CONFIG_NOSYSTEM", "1")
        env.setenv("NO_COLOR", "1")
        for name in ("RESUME_KIT_TRUST", "RESUME_KIT_DEBUG", "GIT_DIR", "GIT_INDEX_FILE"):
            env.delenv(name, raising=False)
        result = run_cli("demo", str(folder / "demo"), cwd=folder, timeout=300)
        assert result.code == 0, f"{result.stdout}\n{result.stderr}"
        yield (folder / "demo").resolve(), result.stdout


def _step(out: str, title: str, occurrence: int = 1) -> str:
    """The text of the ``occurrence``-th step titled ``title`` (plain output)."""
    parts = re.split(r"^Step \d+ of \d+: ", out, flags=re.M)
    matching = [p for p in parts if p.startswith(title)]
    assert len(matching) >= occurrence, f"no step {title!r} #{occurrence} in:\n{out}"
    return matching[occurrence - 1]


def _flat(text: str) -> str:
    return " ".join(text.split())  # prose is wrapped


def _progress(root: Path):  # type: ignore[no-untyped-def]
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file.io import load

    return load(find_layout(root)).progress


def _run_logs(root: Path, unit_id: str) -> list[Path]:
    return sorted((root / ".resume-kit" / "runs").glob(f"{unit_id}-*.log"))


def test_the_story_has_its_nine_steps_in_plain_text(story: tuple[Path, str]) -> None:
    root, out = story
    assert "╭" not in out and "\x1b[" not in out  # piped: plain text
    titles = re.findall(r"^Step (\d+) of 9: (.+)$", out, flags=re.M)
    assert [t for _, t in titles] == [
        "what the interrupted session left behind",
        "resume-kit snapshot",
        "resume-kit brief",
        "resume-kit verify-next",
        "the fix",
        "resume-kit verify-next",
        "resume-kit run, killed, and resumed",
        "resume-kit brief",
        "what to try next",
    ]
    assert [int(n) for n, _ in titles] == list(range(1, 10))
    end = _flat(_step(out, "what to try next"))
    assert f"`cd {root}`" in end and "The workspace stays" in end


def test_the_workspace_was_planned_and_run_by_the_real_cli(story: tuple[Path, str]) -> None:
    root, out = story
    assert "$ resume-kit plan --each 'docs/*.txt'" in out
    assert "$ resume-kit run --jobs" in out and "--max-units 17   # exit 1" in out
    assert "verified 136 contracts" in _flat(_step(out, "what the interrupted session"))
    progress = _progress(root)
    assert len(progress.units) == 200
    quirk = progress.require_unit("docs-137")
    assert quirk.verify is not None and sys.executable in quirk.verify
    # Done only by real runs: extract.py logged every contract it wrote, and every done unit's
    # evidence names the run log of the verify run that passed.
    extract_log = (root / "logs" / "extract.log").read_text()
    done = [u for u in progress.units if u.status == "done"]
    assert len(done) > demo.QUIRK_DOC
    for unit in done:
        stem = unit.id.removeprefix("docs-")
        assert f"docs/{stem}.txt -> out/{stem}.json" in extract_log, unit.id
        assert unit.evidence is not None and unit.evidence.log is not None, unit.id
        assert (root / unit.evidence.log).is_file(), unit.id


def test_the_first_brief_answers_the_questions_within_its_budget(story: tuple[Path, str]) -> None:
    from resume_kit.infra.tokens import count_tokens

    root, out = story
    brief = _step(out, "resume-kit brief")
    assert demo.GOAL in brief
    assert "**136/200 units done**" in brief
    next_part = brief.split("## Next", 1)[1]
    assert "Unit `docs-137`" in next_part
    verify = _progress(root).require_unit("docs-137").verify
    assert verify is not None and verify in next_part
    assert "KeyError: 'party_b'" in brief
    assert "`extract.py` (unstaged M" in brief
    assert "`out/121.json` … `out/136.json`" in brief
    text = brief.split("$ resume-kit brief\n", 1)[1].split("\n  [exit 0", 1)[0]
    assert count_tokens(text.replace("\n  ", "\n")) <= 800


def test_verify_next_fails_then_the_fix_makes_it_pass_with_evidence(
    story: tuple[Path, str],
) -> None:
    root, out = story
    failing = _step(out, "resume-kit verify-next", 1)
    assert "$ resume-kit verify-next" in failing
    assert "[exit 1" in failing and "KeyError: 'party_b'" in failing
    assert '+LABEL_ALIASES = {"counterparty": "party_b"}' in _step(out, "the fix")
    passing = _step(out, "resume-kit verify-next", 2)
    assert "[exit 0" in passing and "passed: docs-137" in passing
    quirk = _progress(root).require_unit("docs-137")
    assert quirk.status == "done" and quirk.evidence is not None
    assert quirk.evidence.dirty  # the fix is not committed
    assert f"commit: {quirk.evidence.commit}" in passing
    assert "dirty: true" in passing and f"fingerprint: {quirk.evidence.fingerprint}" in passing


def test_the_killed_run_resumes_where_it_stopped_and_runs_nothing_twice(
    story: tuple[Path, str],
) -> None:
    root, out = story
    batch = _step(out, "resume-kit run, killed, and resumed")
    note = _flat(batch)
    assert "[exit 137" in batch and "Killed with SIGKILL" in note
    killed = re.search(r"(\d+) units had passed and were checkpointed at once: ([^.]*)\.", note)
    assert killed is not None, note
    passed = killed.group(2).split(", ")
    assert int(killed.group(1)) == len(passed) >= 1
    assert passed == [demo.unit_id(n) for n in range(138, 138 + len(passed))]
    progress = _progress(root)
    for unit_id in passed:  # checkpointed, and never run again by the resumed run
        assert progress.require_unit(unit_id).status == "done", unit_id
        assert len(_run_logs(root, unit_id)) == 1, unit_id
    resumed = re.search(
        r"^\s+passed: (.+)$", batch.split("$ resume-kit run --max-units 5")[1], re.M
    )
    assert resumed is not None, batch
    first_not_done = demo.unit_id(138 + len(passed))
    assert resumed.group(1).split(", ")[0] == first_not_done
    cut_short = re.search(r"(docs-\d+) was still running: not marked done", note)
    assert cut_short is None or cut_short.group(1) == first_not_done
    assert "none that passed before the kill ran again" in note


def test_the_later_brief_shows_progress_and_the_next_unit(story: tuple[Path, str]) -> None:
    _, out = story
    later = _step(out, "resume-kit brief", 2)
    assert "136/200" not in later
    done = re.search(r"\*\*(1[4-9]\d)/200 units done", later)
    assert done is not None
    assert f"Unit `docs-{int(done.group(1)) + 1}`" in later


def test_the_repository_left_behind_and_a_rerun(story: tuple[Path, str], tmp_path: Path) -> None:
    root, _ = story
    log = git(root, "log", "--format=%s").stdout
    assert "out: contracts 101-120 extracted and checked" in log
    committed = git(root, "ls-files", "out").stdout.split()
    assert committed == [f"out/{demo.doc_name(n)}.json" for n in range(1, 121)]
    status = git(root, "status", "--porcelain").stdout
    assert " M extract.py" in status and "?? out/121.json" in status
    # Running it again on the same folder rebuilds the earlier demo; a user's file stops it.
    (root / "mine.txt").write_text("x")
    again = run_cli("demo", str(root), cwd=tmp_path)
    assert again.code == 2 and (root / "mine.txt").exists()
    (root / "mine.txt").unlink()
