"""Claude Code as it writes sessions today (issue 21 points 1-6): the earlier session on a fresh
start, the Task tools and their files, failed calls, ``last-prompt``, error lines, and the
context left by a compaction."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from resume_kit.core.reconcile import reconcile
from resume_kit.facts.transcripts import claude_code, read_transcript
from resume_kit.facts.transcripts.records import error_line
from resume_kit.model.progress import Progress, Unit
from tests.unit.test_transcripts import Claude, claude_projects, new_rule, write_jsonl


def _session(root: Path, name: str, records: list[Any], mtime: float) -> Path:
    path = write_jsonl(claude_projects() / new_rule(root) / f"{name}.jsonl", records)
    os.utime(path, (mtime, mtime))
    return path


def _task_calls(c: Claude) -> list[dict[str, Any]]:
    create = {"subject": "Extract contract 001", "description": "d", "activeForm": "Extracting"}
    return [
        c.tool_use("t1", "TaskCreate", create),
        c.tool_result(
            "t1", "Task #1 created successfully", error=False, toolUseResult={"task": {"id": "1"}}
        ),
        c.tool_use("t2", "TaskCreate", {"subject": "Extract contract 002", "description": "d"}),
        c.tool_result("t2", "ok", error=False, toolUseResult={"task": {"id": "2"}}),
        c.tool_use("t3", "TaskUpdate", {"taskId": "1", "status": "completed"}),
        c.tool_result(
            "t3",
            "Updated task #1 status",
            error=False,
            toolUseResult={
                "success": True,
                "taskId": "1",
                "statusChange": {"from": "pending", "to": "completed"},
            },
        ),
        c.tool_use("t4", "TaskUpdate", {"taskId": "2", "status": "in_progress"}),
        c.tool_result("t4", "<tool_use_error>No such tool available</tool_use_error>", error=True),
    ]


# ------------------------------------------------------------------ point 1: the session before


def test_fresh_start_reads_the_newest_other_session(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    old = Claude(root, session="old-1")
    _session(root, "old-1", [old.user("the work before the crash")], 1_000)
    older = Claude(root, session="older-0")
    _session(root, "older-0", [older.user("ancient")], 500)
    new = Claude(root, session="new-2")
    # the new session's file holds only metadata (Codex) or is not written yet (Claude Code)
    given = _session(root, "new-2", [{"type": "atis-latch", "sessionId": "new-2"}], 2_000)
    for source in ("startup", "clear", "fork"):
        t = read_transcript(root, transcript_path=given, source=source, session_id="new-2")
        assert t is not None
        assert t["session_id"] == "old-1" and t["last_request"] == "the work before the crash"
        assert t["earlier_session"] == {"reason": source, "replaces": "new-2"}
    missing = given.with_name("not-yet.jsonl")
    t = read_transcript(root, transcript_path=missing, source="resume")
    assert t is not None and t["session_id"] == "old-1"
    assert t["earlier_session"]["reason"] == "missing"
    t = read_transcript(root, transcript_path=given, source="resume")
    assert t is not None and t["earlier_session"]["reason"] == "empty"
    # a resumed session with its own conversation is read as it is
    _session(root, "new-2", [new.user("resumed work")], 2_000)
    t = read_transcript(root, transcript_path=given, source="resume")
    assert t is not None and t["session_id"] == "new-2" and "earlier_session" not in t
    # on startup even a session with content is the new one: the one before is read
    t = read_transcript(root, transcript_path=given, source="startup", session_id="new-2")
    assert t is not None and t["session_id"] == "old-1"
    # no transcript_path (Codex may send null) on startup: the newest other session
    t = read_transcript(root, source="startup", session_id="new-2")
    assert t is not None and t["session_id"] == "old-1"


def test_fresh_start_with_no_other_session_keeps_the_given_one(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    given = tmp_path / "nope.jsonl"
    t = read_transcript(root, transcript_path=given, source="startup")
    assert t is not None and "earlier_session" not in t
    assert any("does not exist" in note for note in t["notes"])
    assert read_transcript(root, source="startup") is None


def test_brief_names_the_earlier_session_and_its_age(tmp_path: Path) -> None:
    import datetime as dt

    from resume_kit.brief.build import _transcript_part

    snapshot: Any = {
        "transcript": {
            "agent": "claude-code",
            "session_id": "old-1",
            "updated_at": "2026-03-01T10:00:00Z",
            "earlier_session": {"reason": "startup", "replaces": "new-2"},
            "interrupted": True,
            "notes": [],
        }
    }
    now = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc)
    part = _transcript_part(snapshot, now)
    assert part is not None
    lines = [item.md for item in part.items]
    assert lines[0].startswith("Read the earlier session `old-1` (last written 2")
    assert lines[0].endswith("ago): this session has just started.")
    assert lines[1] == "The last turn was interrupted."


# ------------------------------------------------------------------ point 2: the Task tools


def test_task_tools_in_the_transcript(tmp_path: Path) -> None:
    c = Claude(tmp_path, session="s-tasks")
    path = write_jsonl(tmp_path / "s.jsonl", [c.user("go"), *_task_calls(c)])
    t = claude_code.read_session(path)
    # the failed TaskUpdate does not count: task 2 stays pending
    assert t["todos"] == [
        {"content": "Extract contract 001", "status": "completed"},
        {"content": "Extract contract 002", "status": "pending"},
    ]


def test_task_files_are_the_source_of_truth(tmp_path: Path) -> None:
    c = Claude(tmp_path, session="s-files")
    path = write_jsonl(tmp_path / "s.jsonl", [c.user("go"), *_task_calls(c)])
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "tasks" / "s-files"
    folder.mkdir(parents=True)
    for n, subject, status in ((10, "Tenth", "pending"), (2, "Second", "in_progress")):
        task = {"id": str(n), "subject": subject, "status": status, "blocks": []}
        (folder / f"{n}.json").write_text(json.dumps(task))
    (folder / "3.json").write_text("{broken")
    (folder / ".lock").write_text("")
    t = claude_code.read_session(path)
    assert t["todos"] == [
        {"content": "Second", "status": "in_progress"},
        {"content": "Tenth", "status": "pending"},
    ]


def test_task_folder_never_leaves_the_config_dir(tmp_path: Path) -> None:
    from resume_kit.facts.transcripts.claude_tasks import tasks_dir

    assert tasks_dir(tmp_path, "../../etc") is None
    assert tasks_dir(tmp_path, "a/b") is None
    assert tasks_dir(tmp_path, None) is None
    assert tasks_dir(tmp_path, "6b9d3ed8-4d01") == tmp_path / "tasks" / "6b9d3ed8-4d01"


def test_transcript_disagrees_with_tasks(tmp_path: Path) -> None:
    c = Claude(tmp_path, session="s-dis")
    path = write_jsonl(tmp_path / "s.jsonl", [c.user("go"), *_task_calls(c)])
    transcript = claude_code.read_session(path)
    progress = Progress(
        goal="g",
        units=[Unit(id="c1", title="Extract contract 001", status="pending", verify="true")],
    )
    snapshot: Any = {"transcript": transcript}
    codes = [f.code for f in reconcile(progress, snapshot)]
    assert "TRANSCRIPT_DISAGREES" in codes


# ------------------------------------------------------------------ point 3: failed calls


def test_failed_todowrite_does_not_count_and_new_todos_win(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    records = [
        c.user("go"),
        c.todo_write("w1", [("first", "in_progress")]),
        c.tool_result(
            "w1",
            "ok",
            error=False,
            toolUseResult={"newTodos": [{"content": "recorded", "status": "in_progress"}]},
        ),
        c.todo_write("w2", [("never applied", "completed")]),
        c.tool_result(
            "w2", "<tool_use_error>No such tool available: TodoWrite</tool_use_error>", error=True
        ),
    ]
    t = claude_code.read_session(write_jsonl(tmp_path / "s.jsonl", records))
    assert t["todos"] == [{"content": "recorded", "status": "in_progress"}]


# ------------------------------------------------------------------ point 4: the last request


def test_last_prompt_record_and_wrappers(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    records = [
        c.user("older words"),
        {"type": "last-prompt", "lastPrompt": "the person's last words", "sessionId": "sess-1"},
        c.user("<task-notification>agent finished</task-notification>"),
    ]
    t = claude_code.read_session(write_jsonl(tmp_path / "a.jsonl", records))
    assert t["last_request"] == "the person's last words"
    records = [
        c.user("older words"),
        c.user(
            "<command-message>orchestrator is running…</command-message>\n"
            "<command-name>/orchestrator</command-name>\n"
            "<command-args>update CLAUDE.md with the new rules</command-args>"
        ),
        c.user("<local-command-stdout>done</local-command-stdout>"),
        c.user("<task-notification>x</task-notification>"),
        c.user("<command-name>/compact</command-name>\n<command-args></command-args>"),
    ]
    t = claude_code.read_session(write_jsonl(tmp_path / "b.jsonl", records))
    assert t["last_request"] == "/orchestrator update CLAUDE.md with the new rules"
    records = [c.user("real"), {"type": "last-prompt", "lastPrompt": "/clear"}]
    t = claude_code.read_session(write_jsonl(tmp_path / "c.jsonl", records))
    assert t["last_request"] == "real"


# ------------------------------------------------------------------ point 5: error lines


def test_error_line_strips_ansi_and_prefers_the_cause() -> None:
    assert error_line("\x1b[31mError: boom\x1b[0m\nmore") == "Error: boom"
    git = (
        "Exit code 128\n"
        "fatal: The current branch w has no upstream branch.\n"
        "To push the current branch and set the remote as upstream, use\n\n"
        "    git push --set-upstream origin w\n\n"
        "To have this happen automatically for branches without a tracking\n"
        "upstream, see 'push.autoSetupRemote' in 'git help config'.\n"
    )
    assert error_line(git) == "Exit code 128: fatal: The current branch w has no upstream branch."
    assert error_line("hint: try this\nerror: it failed") == "error: it failed"
    assert error_line("Exit code 1\nsomething at the end") == "Exit code 1: something at the end"


def test_a_rejected_tool_call_is_not_a_tool_error(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected "
        "(eg. if it was a file edit, the new_string was NOT written to the file)."
    )
    records = [
        c.user("go"),
        c.tool_use("b1", "Bash", {"command": "rm -rf build"}),
        c.tool_result("b1", rejected, error=True),
        c.tool_use("b2", "Bash", {"command": "ls"}),
        c.tool_result("b2", "\x1b[1mExit code 2\x1b[0m\nls: x: No such file", error=True),
    ]
    t = claude_code.read_session(write_jsonl(tmp_path / "s.jsonl", records))
    assert [(e["tool"], e["message"]) for e in t["tool_errors"]] == [
        ("Bash", "Exit code 2: ls: x: No such file")
    ]


# ------------------------------------------------------------------ point 6: after a compaction


def test_context_after_a_compaction_is_post_tokens(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    boundary, summary = c.compaction()
    boundary["compactMetadata"] = {"trigger": "manual", "preTokens": 155000, "postTokens": 2696}
    records = [c.user("go"), c.assistant(usage={"input_tokens": 155000, "output_tokens": 5})]
    t = claude_code.read_session(write_jsonl(tmp_path / "a.jsonl", [*records, boundary, summary]))
    assert t["tokens"]["last_context"] == 2696
    # a response after the compaction is newer than the boundary: its usage is the figure
    later = c.assistant(usage={"input_tokens": 4000, "output_tokens": 5})
    t = claude_code.read_session(
        write_jsonl(tmp_path / "b.jsonl", [*records, boundary, summary, later])
    )
    assert t["tokens"]["last_context"] == 4000
