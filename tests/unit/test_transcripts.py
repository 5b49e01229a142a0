"""Transcript readers (SPEC 6) and the TRANSCRIPT_DISAGREES matching, on real fixture files
and on generated sessions in the agents' own shapes."""

from __future__ import annotations

import io
import json
import os
import re
import time
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.facts.transcripts import (
    claude_code,
    completed_todos_matching,
    contains_id,
    read_transcript,
    tail,
)
from resume_kit.model.progress import Evidence, Unit

FIXTURES = Path(__file__).parent.parent / "fixtures"
CODEX_FIXTURE = (
    FIXTURES / "codex" / "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"
)
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


# --------------------------------------------------------------------------- builders


class Claude:
    """Records in Claude Code's session shape, with increasing timestamps."""

    def __init__(self, cwd: Path | str, session: str = "sess-1") -> None:
        self.cwd = str(cwd)
        self.session = session
        self.n = 0

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        self.n += 1
        minute, second = divmod(self.n, 60)
        record = {
            "type": kind,
            "uuid": f"u{self.n}",
            "parentUuid": f"u{self.n - 1}" if self.n > 1 else None,
            "sessionId": self.session,
            "timestamp": f"2026-03-01T10:{minute % 60:02d}:{second:02d}.123Z",
            "cwd": self.cwd,
            "isSidechain": False,
            "userType": "external",
            "version": "2.0.0",
        }
        record.update(extra)
        return record

    def user(self, text: str, **extra: Any) -> dict[str, Any]:
        return self._base("user", message={"role": "user", "content": text}, **extra)

    def assistant(
        self,
        text: str = "ok",
        *,
        usage: dict[str, int] | None = None,
        msg_id: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": msg_id or f"msg_{self.n + 1}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}],
            "usage": usage or {"input_tokens": 10, "output_tokens": 5},
        }
        return self._base("assistant", message=message, **extra)

    def tool_use(self, tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        message = {
            "id": f"msg_{self.n + 1}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 1000, "output_tokens": 7},
        }
        return self._base("assistant", message=message)

    def tool_result(
        self, tool_id: str, content: Any, *, error: bool, **extra: Any
    ) -> dict[str, Any]:
        block = {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": content,
            "is_error": error,
        }
        return self._base("user", message={"role": "user", "content": [block]}, **extra)

    def todo_write(self, tool_id: str, todos: list[tuple[str, str]]) -> dict[str, Any]:
        items = [{"content": c, "status": s, "activeForm": c + "ing"} for c, s in todos]
        return self.tool_use(tool_id, "TodoWrite", {"todos": items})

    def compaction(self) -> list[dict[str, Any]]:
        boundary = self._base(
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            compactMetadata={"trigger": "auto", "preTokens": 155000},
        )
        summary = self._base(
            "user",
            message={"role": "user", "content": "This session is being continued from a previous"},
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
        )
        return [boundary, summary]


def _totals(transcript: dict[str, Any]) -> dict[str, Any]:
    """The session totals; read with no verified unit, the count since is the whole session."""
    tokens = dict(transcript["tokens"])
    since = tokens.pop("since")
    assert since["at"] is None and since["tokens"] == tokens["total"], since
    return tokens


def write_jsonl(path: Path, records: list[Any], *, tail_text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(record if isinstance(record, str) else json.dumps(record))
            f.write("\n")
        f.write(tail_text)
    return path


def claude_projects() -> Path:
    return Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects"


def new_rule(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def old_rule(path: Path) -> str:
    return re.sub(r"[/.]", "-", str(path))


def codex_meta(
    cwd: Path | str, session: str = "22222222-2222-4222-8222-222222222222"
) -> dict[str, Any]:
    return {
        "timestamp": "2026-02-03T04:05:06.000Z",
        "type": "session_meta",
        "payload": {
            "id": session,
            "timestamp": "2026-02-03T04:05:06.000Z",
            "cwd": str(cwd),
            "originator": "codex_cli_rs",
            "cli_version": "0.50.0",
        },
    }


def cx(kind: str, payload: dict[str, Any], second: int = 10) -> dict[str, Any]:
    return {"timestamp": f"2026-02-03T04:06:{second:02d}.000Z", "type": kind, "payload": payload}


def rollout_path(
    day: str = "2026/02/03", name: str = "rollout-2026-02-03T04-05-06-x.jsonl"
) -> Path:
    return Path(os.environ["CODEX_HOME"]) / "sessions" / day / name


class CountingFile(io.RawIOBase):
    """Wraps a real file object and counts the bytes handed out by read()."""

    total = 0

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner

    def read(self, n: int = -1) -> bytes:
        data = self.inner.read(n)
        CountingFile.total += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.inner.seek(offset, whence)

    def close(self) -> None:
        self.inner.close()
        super().close()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> type[CountingFile]:
    real_open = tail.open_binary
    CountingFile.total = 0
    monkeypatch.setattr(tail, "open_binary", lambda p: CountingFile(real_open(p)))
    return CountingFile


# --------------------------------------------------------------------------- fixtures


def test_fixture_representative_messages() -> None:
    t = read_transcript(
        Path("/nowhere"), transcript_path=FIXTURES / "claude-code" / "representative_messages.jsonl"
    )
    assert t is not None
    assert t["agent"] == "claude-code"
    assert t["session_id"] == "test_session"
    assert t["last_request"] == (
        "This is really helpful! Let me try to implement a timing decorator myself. "
        "Can you help me if I get stuck?"
    )
    assert t["todos"] is None
    assert t["tool_errors"] == []
    # five assistant turns: (25+120) + (45+85) + (78+95) + (25+35) + (45+110)
    assert _totals(t) == {"total": 663, "last_context": 45}
    assert t["compactions"] == {"count": 0, "last_at": None}
    assert t["updated_at"] == "2025-06-14T10:04:00Z"
    assert t["notes"] == []


def test_fixture_todowrite_older_item_shape() -> None:
    t = read_transcript(
        Path("/nowhere"), transcript_path=FIXTURES / "claude-code" / "todowrite_examples.jsonl"
    )
    assert t is not None
    assert t["todos"] == [
        {"content": "Design the feature architecture", "status": "completed"},
        {"content": "Implement core functionality", "status": "completed"},
        {"content": "Add comprehensive tests", "status": "in_progress"},
        {"content": "Write user documentation", "status": "pending"},
        {"content": "Perform code review", "status": "pending"},
        {"content": "Conduct security review and penetration testing", "status": "pending"},
    ]
    assert t["last_request"] == "Can you add a task for security review as well?"


def test_fixture_codex_rollout_skips_future_record() -> None:
    t = read_transcript(Path("/nowhere"), transcript_path=CODEX_FIXTURE)
    assert t is not None
    assert t["agent"] == "codex"
    assert t["session_id"] == "11111111-1111-4111-8111-111111111111"
    assert t["last_request"] == "List the synthetic files."
    assert t["todos"] is None
    assert t["tool_errors"] == []
    assert _totals(t) == {"total": None, "last_context": None}
    assert t["updated_at"] == "2026-01-02T03:04:16Z"
    assert t["notes"] == []
    assert "SYNTHETIC_ENCRYPTED" not in json.dumps(t)


# --------------------------------------------------------------------------- Claude Code


def test_claude_generated_session_facts(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    records: list[Any] = [
        c.user("old request"),
        c.todo_write("t1", [("Extract doc-001", "completed"), ("Extract doc-002", "pending")]),
        c.tool_result("t1", "Todos have been modified successfully.", error=False),
        c.tool_use("b1", "Bash", {"command": "pytest"}),
        c.tool_result(
            "b1", "Exit code 1\n\nFAILED tests/test_x.py::test_a\nAssertionError: boom", error=True
        ),
        c.tool_use("e1", "Edit", {"file_path": "x.py"}),
        c.tool_result(
            "e1", "<tool_use_error>File has not been read yet.</tool_use_error>", error=True
        ),
        *c.compaction(),
        {"type": "future-record-kind", "blob": {"x": 1}, "timestamp": "2026-03-01T11:00:00Z"},
        "{this line is broken",
        "[1, 2, 3]",
        c.user(f"please continue, token {SECRET}", todos=[]),
        c.assistant(
            "sure",
            usage={
                "input_tokens": 5,
                "cache_read_input_tokens": 90000,
                "cache_creation_input_tokens": 500,
                "output_tokens": 40,
            },
        ),
    ]
    path = write_jsonl(tmp_path / "s.jsonl", records, tail_text='{"type": "assistant", "mess')
    t = claude_code.read_session(path)
    assert t["todos"] == [
        {"content": "Extract doc-001", "status": "completed"},
        {"content": "Extract doc-002", "status": "pending"},
    ]
    assert [e["tool"] for e in t["tool_errors"]] == ["Bash", "Edit"]  # newest last
    assert t["tool_errors"][0]["message"] == "Exit code 1: AssertionError: boom"
    assert t["tool_errors"][1]["message"] == "File has not been read yet."
    assert t["tool_errors"][1]["at"] is not None and t["tool_errors"][1]["at"].endswith("Z")
    assert t["last_request"].startswith("please continue, token [REDACTED:")
    assert SECRET not in json.dumps(t)
    assert t["compactions"]["count"] == 1
    assert t["compactions"]["last_at"] is not None
    assert t["tokens"]["last_context"] == 5 + 90000 + 500
    assert t["tokens"]["total"] == 3 * (3 + 1000 + 7) + (5 + 90000 + 500 + 40)
    # the broken line, the JSON array and the truncated last line
    assert t["notes"] == ["skipped 3 unreadable line(s) of the session"]


def test_claude_compaction_count_and_request_not_a_summary(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    records = [
        c.user("first"),
        *c.compaction(),
        c.assistant("a"),
        c.user("second"),
        *c.compaction(),
        c.assistant("b"),
    ]
    # an older session without boundaries: a lone compact summary still counts
    records.append(
        c._base("user", message={"role": "user", "content": "summary"}, isCompactSummary=True)
    )
    t = claude_code.read_session(write_jsonl(tmp_path / "s.jsonl", records))
    assert t["compactions"]["count"] == 3
    assert t["last_request"] == "second"


def test_claude_request_skips_tool_results_meta_commands_and_sidechains(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    records = [
        c.user([{"type": "text", "text": "the real one"}]),  # type: ignore[arg-type]
        c.user("Caveat: The messages below were generated by the user", isMeta=True),
        c.user("<command-name>/clear</command-name>"),
        c.user("<local-command-stdout></local-command-stdout>"),
        c.user("subagent prompt", isSidechain=True),
        c.tool_result("x", "ok", error=False),
        c.user("[Request interrupted by user for tool use]"),
    ]
    t = claude_code.read_session(write_jsonl(tmp_path / "s.jsonl", records))
    assert t["last_request"] == "the real one"


def test_claude_usage_of_one_response_split_over_records_counts_once(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    usage = {"input_tokens": 100, "output_tokens": 50}
    records = [
        c.assistant("part 1", usage=usage, msg_id="msg_same"),
        c.assistant("part 2", usage=usage, msg_id="msg_same"),
    ]
    t = claude_code.read_session(write_jsonl(tmp_path / "s.jsonl", records))
    assert _totals(t) == {"total": 150, "last_context": 100}


def test_claude_todos_from_user_records_and_new_todos(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    older = c.todo_write("t1", [("a", "pending")])
    on_user = c.user("go on", todos=[{"content": "b", "status": "completed", "activeForm": "b"}])
    t = claude_code.read_session(write_jsonl(tmp_path / "a.jsonl", [older, on_user]))
    assert t["todos"] == [{"content": "b", "status": "completed"}]

    c = Claude(tmp_path)
    call = c.todo_write("t2", [("x", "completed"), ("y", "completed")])
    # newer Claude Code clears the list once all is completed: the call still says what was done
    cleared = c.tool_result("t2", "ok", error=False, toolUseResult={"oldTodos": [], "newTodos": []})
    t = claude_code.read_session(write_jsonl(tmp_path / "b.jsonl", [call, cleared]))
    assert t["todos"] == [
        {"content": "x", "status": "completed"},
        {"content": "y", "status": "completed"},
    ]

    c = Claude(tmp_path)
    call = c.todo_write("t3", [("x", "pending")])
    result = c.tool_result(
        "t3",
        "ok",
        error=False,
        toolUseResult={"newTodos": [{"content": "x", "status": "in_progress"}]},
    )
    t = claude_code.read_session(write_jsonl(tmp_path / "c.jsonl", [call, result]))
    assert t["todos"] == [{"content": "x", "status": "in_progress"}]


def test_claude_odd_shapes_never_raise(tmp_path: Path) -> None:
    c = Claude(tmp_path)
    records: list[Any] = [
        {"type": "assistant", "message": "not a dict"},
        {
            "type": "assistant",
            "message": {"content": [1, None, {"type": "tool_use"}], "usage": "x"},
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "is_error": True, "content": [{"type": "image"}]}
                ]
            },
        },
        {"type": "user", "todos": "nope", "toolUseResult": "Error: x"},
        c.todo_write("t", [("", "completed"), ("ok", "weird-status"), ("done one", "done")]),
        {"type": "system", "subtype": "compact_boundary", "timestamp": 12},
        {"type": "user", "message": None, "timestamp": "not a time"},
        {"type": None},
    ]
    t = claude_code.read_session(write_jsonl(tmp_path / "s.jsonl", records))
    assert t["todos"] == [{"content": "done one", "status": "completed"}]
    assert t["tool_errors"] == [{"tool": None, "message": "(no message)", "at": None}]
    assert t["compactions"] == {"count": 1, "last_at": None}


def test_empty_and_unreadable_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    t = read_transcript(tmp_path, transcript_path=empty)
    assert t is not None and t["agent"] == "claude-code" and t["todos"] is None
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(os.urandom(4096).replace(b"\n", b"x") + b"\n\xff\xfe\n")
    t = read_transcript(tmp_path, transcript_path=binary)
    assert t is not None and t["tokens"]["total"] is None
    assert any("not recognised" in n for n in t["notes"])
    missing = read_transcript(tmp_path, transcript_path=tmp_path / "gone.jsonl")
    assert missing is not None and any("does not exist" in n for n in missing["notes"])
    folder = read_transcript(tmp_path, transcript_path=tmp_path)
    assert folder is not None and folder["notes"]


# --------------------------------------------------------------------------- discovery


@pytest.mark.parametrize("rule", [old_rule, new_rule])
def test_claude_found_under_both_escaping_rules(tmp_path: Path, rule: Any) -> None:
    root = tmp_path / "my.proj_dir" / "work.tree"
    root.mkdir(parents=True)
    c = Claude(root)
    write_jsonl(claude_projects() / rule(root) / "abc.jsonl", [c.user("hello from the session")])
    t = read_transcript(root)
    assert t is not None
    assert t["agent"] == "claude-code"
    assert t["session_id"] == "sess-1"
    assert t["last_request"] == "hello from the session"


def test_claude_confirmed_by_cwd_and_newest_wins(tmp_path: Path) -> None:
    root = tmp_path / "proj.a"
    root.mkdir()
    folder = claude_projects() / new_rule(root)
    # same folder name, another work tree (proj_a escapes the same): rejected by its cwd
    impostor = write_jsonl(
        folder / "impostor.jsonl", [Claude(tmp_path / "proj_a").user("not ours")]
    )
    older = write_jsonl(folder / "older.jsonl", [Claude(root).user("older session")])
    sub = write_jsonl(
        claude_projects() / new_rule(root / "src") / "sub.jsonl",
        [Claude(root / "src").user("started in a subfolder")],
    )
    side = write_jsonl(folder / "agent-123.jsonl", [Claude(root).user("a side chain")])
    os.utime(older, (1_000, 1_000))
    os.utime(sub, (2_000, 2_000))
    os.utime(side, (9_000, 9_000))
    os.utime(impostor, (10_000, 10_000))
    t = read_transcript(root)
    assert t is not None and t["last_request"] == "started in a subfolder"
    os.utime(older, (3_000, 3_000))
    t = read_transcript(root)
    assert t is not None and t["last_request"] == "older session"
    # a sibling whose name starts the same is not a subfolder
    other = tmp_path / "proj.a-b"
    other.mkdir()
    assert read_transcript(other) is None


def test_claude_long_folder_name_with_hash_suffix(tmp_path: Path) -> None:
    root = tmp_path / ("x" * 120) / ("y" * 120)
    root.mkdir(parents=True)
    name = new_rule(root)[:200] + "-1a2b3c"
    write_jsonl(claude_projects() / name / "s.jsonl", [Claude(root).user("long path")])
    t = read_transcript(root)
    assert t is not None and t["last_request"] == "long path"


def test_claude_config_dir_honoured_and_home_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    custom = tmp_path / "custom-claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(custom))
    write_jsonl(custom / "projects" / new_rule(root) / "s.jsonl", [Claude(root).user("custom dir")])
    t = read_transcript(root, kinds=["claude-code"])
    assert t is not None and t["last_request"] == "custom dir"

    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert read_transcript(root, kinds=["claude-code"]) is None
    write_jsonl(
        isolated_home / ".claude" / "projects" / new_rule(root) / "s.jsonl",
        [Claude(root).user("home dir")],
    )
    t = read_transcript(root, kinds=["claude-code"])
    assert t is not None and t["last_request"] == "home dir"


def test_nothing_found_is_none(tmp_path: Path) -> None:
    assert read_transcript(tmp_path) is None
    assert read_transcript(tmp_path, kinds=[]) is None


# --------------------------------------------------------------------------- Codex


def _plan_call(plan: list[tuple[str, str]], second: int) -> dict[str, Any]:
    arguments = json.dumps(
        {"explanation": "x", "plan": [{"step": s, "status": st_} for s, st_ in plan]}
    )
    return cx(
        "response_item",
        {
            "type": "function_call",
            "name": "update_plan",
            "arguments": arguments,
            "call_id": f"plan-{second}",
        },
        second,
    )


def test_codex_generated_rollout_facts(tmp_path: Path) -> None:
    records: list[Any] = [
        codex_meta(tmp_path),
        cx("turn_context", {"cwd": str(tmp_path), "model": "m"}, 1),
        cx("event_msg", {"type": "user_message", "message": "an old request"}, 2),
        _plan_call([("Extract doc-001", "pending")], 3),
        _plan_call([("Extract doc-001", "completed"), ("Extract doc-002", "in_progress")], 4),
        cx(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "c1",
                "arguments": json.dumps({"command": ["pytest"]}),
            },
            5,
        ),
        cx(
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": "c1",
                "exit_code": 2,
                "stdout": "",
                "stderr": "E   ImportError: no module x\n",
            },
            6,
        ),
        cx(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": json.dumps(
                    {"output": "E   ImportError: no module x", "metadata": {"exit_code": 2}}
                ),
            },
            7,
        ),
        cx(
            "response_item",
            {"type": "function_call", "name": "exec_command", "call_id": "c2", "arguments": "{}"},
            8,
        ),
        cx(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c2",
                "output": "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nmake: *** [all] Error 1\n",
            },
            9,
        ),
        cx(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c3",
                "output": "Process exited with code 0\nOutput:\nfine",
            },
            10,
        ),
        cx("compacted", {"message": "summary", "replacement_history": []}, 11),
        cx("event_msg", {"type": "context_compacted"}, 11),
        cx(
            "event_msg",
            {"type": "user_message", "message": f"now finish it, password={SECRET}"},
            12,
        ),
        cx(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context>x"}],
            },
            12,
        ),
        cx(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": {
                        "input_tokens": 9000,
                        "cached_input_tokens": 8000,
                        "output_tokens": 1000,
                        "total_tokens": 10000,
                    },
                    "last_token_usage": {
                        "input_tokens": 4000,
                        "output_tokens": 100,
                        "total_tokens": 4100,
                    },
                    "model_context_window": 272000,
                },
            },
            13,
        ),
        cx("event_msg", {"type": "token_count", "info": None}, 14),
        cx("brand_new_kind", {"type": "whatever"}, 15),
        "not json at all",
    ]
    path = write_jsonl(rollout_path(), records, tail_text='{"timestamp":"2026-02-03T04:07:00Z","ty')
    t = read_transcript(tmp_path, kinds=["codex"])
    assert t is not None and t["agent"] == "codex" and t["path"] == str(path)
    assert t["session_id"] == "22222222-2222-4222-8222-222222222222"
    assert t["todos"] == [
        {"content": "Extract doc-001", "status": "completed"},
        {"content": "Extract doc-002", "status": "in_progress"},
    ]
    assert t["tool_errors"] == [
        {
            "tool": "shell",
            "message": "exit code 2: E ImportError: no module x",
            "at": "2026-02-03T04:06:07Z",
        },
        {
            "tool": "exec_command",
            "message": "exit code 1: make: *** [all] Error 1",
            "at": "2026-02-03T04:06:09Z",
        },
    ]
    assert t["last_request"].startswith("now finish it, password=[REDACTED:")
    assert SECRET not in json.dumps(t)
    assert _totals(t) == {"total": 10000, "last_context": 4000}
    assert t["compactions"] == {"count": 1, "last_at": "2026-02-03T04:06:11Z"}
    assert t["notes"] == ["skipped 2 unreadable line(s) of the rollout"]


def test_codex_odd_shapes_and_plan_events(tmp_path: Path) -> None:
    records: list[Any] = [
        {"timestamp": "2026-02-03T04:05:06Z", "type": "session_meta", "payload": "not a dict"},
        cx(
            "event_msg",
            {"type": "plan_update", "plan": [{"step": "Extract doc-009", "status": "completed"}]},
            1,
        ),
        cx(
            "response_item",
            {"type": "function_call", "name": "update_plan", "arguments": "{not json"},
            2,
        ),
        cx("response_item", {"type": "function_call_output", "call_id": 5, "output": None}, 3),
        cx(
            "response_item",
            {"type": "function_call_output", "call_id": "k", "output": '{"metadata": 1}'},
            4,
        ),
        cx("event_msg", {"type": "exec_command_end", "exit_code": True}, 5),
        cx("event_msg", {"type": "error", "message": "stream disconnected before completion"}, 6),
        cx(
            "event_msg",
            {
                "type": "token_count",
                "info": {"total_token_usage": {"input_tokens": 5, "output_tokens": 2}},
            },
            7,
        ),
        {"type": "event_msg", "payload": None},
        cx(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "fallback request"}],
            },
            8,
        ),
    ]
    path = write_jsonl(
        tmp_path / "rollout-2026-02-03T04-05-06-33333333-3333-4333-8333-333333333333.jsonl", records
    )
    t = read_transcript(tmp_path, transcript_path=path)
    assert t is not None and t["agent"] == "codex"
    assert t["session_id"] == "33333333-3333-4333-8333-333333333333"  # from the file name
    assert t["todos"] == [{"content": "Extract doc-009", "status": "completed"}]
    assert t["tool_errors"] == [
        {
            "tool": None,
            "message": "stream disconnected before completion",
            "at": "2026-02-03T04:06:06Z",
        }
    ]
    assert _totals(t) == {"total": 7, "last_context": None}
    assert t["last_request"] == "fallback request"


def test_codex_home_honoured_cwd_matched_newest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    ours_old = write_jsonl(
        home / "sessions/2026/01/30/rollout-a.jsonl",
        [codex_meta(root, "old"), cx("event_msg", {"type": "user_message", "message": "old"})],
    )
    ours_sub = write_jsonl(
        home / "sessions/2026/02/01/rollout-b.jsonl",
        [
            codex_meta(root / "sub", "sub"),
            cx("event_msg", {"type": "user_message", "message": "sub"}),
        ],
    )
    theirs = write_jsonl(
        home / "sessions/2026/02/02/rollout-c.jsonl",
        [
            codex_meta(tmp_path / "elsewhere", "x"),
            cx("event_msg", {"type": "user_message", "message": "x"}),
        ],
    )
    write_jsonl(home / "sessions/2026/02/02/notes.jsonl", [codex_meta(root, "not-a-rollout")])
    os.utime(ours_old, (5_000, 5_000))
    os.utime(ours_sub, (1_000, 1_000))
    os.utime(theirs, (9_000, 9_000))
    t = read_transcript(root)
    assert t is not None and t["session_id"] == "old"  # the old day folder, newest by mtime
    os.utime(ours_sub, (6_000, 6_000))
    t = read_transcript(root)
    assert t is not None and t["session_id"] == "sub"
    assert read_transcript(root, kinds=["claude-code"]) is None


def test_newest_across_agents(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    claude = write_jsonl(
        claude_projects() / new_rule(root) / "s.jsonl", [Claude(root).user("claude")]
    )
    rollout = write_jsonl(
        rollout_path(),
        [codex_meta(root), cx("event_msg", {"type": "user_message", "message": "codex"})],
    )
    os.utime(claude, (2_000, 2_000))
    os.utime(rollout, (1_000, 1_000))
    t = read_transcript(root)
    assert t is not None and t["agent"] == "claude-code"
    os.utime(rollout, (3_000, 3_000))
    t = read_transcript(root)
    assert t is not None and t["agent"] == "codex"
    t = read_transcript(root, kinds=["claude-code"])
    assert t is not None and t["agent"] == "claude-code"


def test_transcript_path_wins_and_format_is_detected_from_content(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    write_jsonl(claude_projects() / new_rule(root) / "s.jsonl", [Claude(root).user("discovered")])
    # a Codex rollout under a name that says nothing, for another folder: the hook's path wins
    given = write_jsonl(
        tmp_path / "hook-says-this.jsonl",
        [
            codex_meta(tmp_path / "other"),
            cx("event_msg", {"type": "user_message", "message": "given"}),
        ],
    )
    t = read_transcript(root, transcript_path=given)
    assert t is not None and t["agent"] == "codex" and t["last_request"] == "given"
    given_claude = write_jsonl(
        tmp_path / "rollout-looking-name.jsonl", [Claude(tmp_path).user("claude given")]
    )
    t = read_transcript(root, transcript_path=given_claude)
    assert t is not None and t["agent"] == "claude-code" and t["last_request"] == "claude given"


# --------------------------------------------------------------------------- large files


def _filler_block(c: Claude, size: int) -> bytes:
    """Realistic bulk: assistant text turns and big tool results, about ``size`` bytes."""
    out = bytearray()
    i = 0
    while len(out) < size:
        i += 1
        out += (
            json.dumps(
                c.assistant(
                    "thinking " * 50,
                    usage={"input_tokens": 1, "output_tokens": 1},
                    msg_id=f"fill-{c.n}",
                )
            ).encode()
            + b"\n"
        )
        out += (
            json.dumps(c.tool_result(f"r{i}", "line of file content\n" * 400, error=False)).encode()
            + b"\n"
        )
    return bytes(out)


def _large_session(path: Path, root: Path, filler_bytes: int) -> Path:
    c = Claude(root)
    head = [c.user("the original request"), c.todo_write("t0", [("Extract doc-007", "completed")])]
    block = _filler_block(c, tail.MIB)
    end = [
        c.user("the last request"),
        c.assistant("working", usage={"input_tokens": 7, "output_tokens": 1}),
    ]
    with path.open("wb") as f:
        for record in head:
            f.write(json.dumps(record).encode() + b"\n")
        written = 0
        while written < filler_bytes:
            f.write(block)
            written += len(block)
        for record in end:
            f.write(json.dumps(record).encode() + b"\n")
    return path


def test_todo_list_far_back_within_the_cap_is_found(tmp_path: Path) -> None:
    path = _large_session(tmp_path / "s.jsonl", tmp_path, 5 * tail.MIB)
    t = claude_code.read_session(path)
    assert t["todos"] == [{"content": "Extract doc-007", "status": "completed"}]
    assert t["last_request"] == "the last request"
    assert t["tokens"]["last_context"] == 7
    assert not any("no todo list" in n for n in t["notes"])


def test_large_session_is_read_from_the_end_only(
    tmp_path: Path, counted: type[CountingFile]
) -> None:
    small = _large_session(tmp_path / "small.jsonl", tmp_path, 0)
    large = _large_session(tmp_path / "large.jsonl", tmp_path, 200 * tail.MIB)
    assert large.stat().st_size > 200 * tail.MIB

    counted.total = 0
    started = time.perf_counter()
    t_small = claude_code.read_session(small)
    small_seconds = time.perf_counter() - started
    small_bytes = counted.total

    counted.total = 0
    started = time.perf_counter()
    t_large = claude_code.read_session(large)
    large_seconds = time.perf_counter() - started
    large_bytes = counted.total

    assert small_bytes == small.stat().st_size  # a small file is read whole
    assert large_bytes <= tail.DEFAULT_CAP  # never more than the cap, whatever the size
    assert t_large["last_request"] == "the last request"
    assert t_large["tokens"]["last_context"] == 7
    # the todo list is 200 MB back: not found, and said so
    assert t_large["todos"] is None
    assert t_small["todos"] == [{"content": "Extract doc-007", "status": "completed"}]
    assert any("read the last 8.0 MiB of 2" in n for n in t_large["notes"])
    assert any("no todo list" in n for n in t_large["notes"])
    print(
        f"\nsmall {small.stat().st_size} B: read {small_bytes} B in {small_seconds * 1000:.1f} ms; "
        f"large {large.stat().st_size} B: read {large_bytes} B in {large_seconds * 1000:.1f} ms"
    )


def test_stops_early_once_everything_is_found(tmp_path: Path, counted: type[CountingFile]) -> None:
    c = Claude(tmp_path)
    path = tmp_path / "s.jsonl"
    with path.open("wb") as f:
        f.write(_filler_block(c, 12 * tail.MIB))
        for record in [c.todo_write("t", [("a", "pending")]), c.user("req"), c.assistant("x")]:
            f.write(json.dumps(record).encode() + b"\n")
    t = claude_code.read_session(path)
    assert t["todos"] == [{"content": "a", "status": "pending"}]
    assert tail.DEFAULT_MIN <= counted.total < tail.DEFAULT_MIN + tail.BLOCK


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    block=st.integers(min_value=1, max_value=64),
    trailing_newline=st.booleans(),
)
def test_lines_backward_yields_every_line_newest_first(
    lines: list[bytes], block: int, trailing_newline: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing_newline and lines else b"")
    stats = tail.TailStats(size=len(data))
    got = list(tail.lines_backward(io.BytesIO(data), stats, block=block))
    assert got == [ln for ln in reversed(lines) if ln.strip()]
    assert stats.reached_start and stats.bytes_read == len(data)


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(
        st.binary(min_size=1, max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=30
    ),
    block=st.integers(min_value=1, max_value=64),
    cap=st.integers(min_value=0, max_value=400),
)
def test_lines_backward_respects_the_cap_and_yields_only_whole_lines(
    lines: list[bytes], block: int, cap: int
) -> None:
    data = b"\n".join(lines) + b"\n"
    stats = tail.TailStats(size=len(data))
    got = list(tail.lines_backward(io.BytesIO(data), stats, cap=cap, block=block))
    assert stats.bytes_read <= cap
    expected = [ln for ln in reversed(lines) if ln.strip()]
    assert got == expected[: len(got)]  # a whole-line prefix of the newest lines, no fragment


# --------------------------------------------------------------------------- TRANSCRIPT_DISAGREES


def _evidence() -> Evidence:
    return Evidence(
        verified_at="2026-01-01T00:00:00Z",
        commit="abc",
        dirty=False,
        fingerprint="sha256:0",
        duration_s=1.0,
    )


def _todos(*items: tuple[str, str]) -> dict[str, Any]:
    return {"todos": [{"content": c, "status": s} for c, s in items]}


def test_matching_by_title_and_by_id() -> None:
    units = [
        Unit(id="doc-001", title="Extract contract 001", status="in_progress"),
        Unit(id="doc-002", title="Extract contract 002", status="done", evidence=_evidence()),
        Unit(id="doc-003", title="Extract contract 003", status="done"),  # done, never verified
        Unit(id="a.b_c", title="Dotted", status="blocked"),
        Unit(id="doc-004", title="Extract contract 004"),
    ]
    transcript = _todos(
        ("  extract CONTRACT 001 ", "completed"),
        ("Finish doc-002 and doc-003.", "completed"),
        ("(a.b_c) done", "completed"),
        ("doc-004", "in_progress"),
        ("doc-0041 and doc-004-b and xdoc-004", "completed"),
    )
    assert completed_todos_matching(units, transcript) == [
        ("doc-001", "  extract CONTRACT 001 "),
        ("doc-003", "Finish doc-002 and doc-003."),
        ("a.b_c", "(a.b_c) done"),
    ]


def test_matching_tolerates_missing_or_odd_transcripts() -> None:
    units = [Unit(id="u1", title="One")]
    assert completed_todos_matching(units, None) == []
    assert completed_todos_matching(units, {"todos": None}) == []
    assert completed_todos_matching(units, {"todos": "x"}) == []
    assert (
        completed_todos_matching(units, {"todos": [None, {"status": "completed"}, {"content": 3}]})
        == []
    )
    assert completed_todos_matching([], _todos(("u1", "completed"))) == []
    assert completed_todos_matching([Unit(id="u1", title="")], _todos(("", "completed"))) == []


def test_contains_id_examples() -> None:
    assert contains_id("Done: DOC-001.", "doc-001")
    assert contains_id("doc-001...", "doc-001")
    assert contains_id("see doc-001, doc-002", "doc-002")
    assert contains_id("-doc-001", "doc-001")
    assert not contains_id("doc-001.b", "doc-001")
    assert not contains_id("doc-001-2", "doc-001")
    assert not contains_id("doc-001_x", "doc-001")
    assert not contains_id("mydoc-001", "doc-001")
    assert not contains_id("x.doc-001", "doc-001")
    assert not contains_id("doc-0010 then doc-001a", "doc-001")
    assert contains_id("doc-0010 then doc-001", "doc-001")
    assert contains_id("a.b_c", "a.b_c")
    assert not contains_id("a.b_c.d", "a.b_c")
    assert not contains_id("axb_c", "a.b_c")  # the dot is literal


_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_ID_CHARS = _ALNUM + "._-"
ids = st.builds(lambda a, b: a + b, st.sampled_from(_ALNUM), st.text(_ID_CHARS, max_size=12))
# an extension of an id that is itself made of id characters and holds a letter or digit
extensions = st.builds(
    lambda sep, core, more: sep + core + more,
    st.text("._-", max_size=2),
    st.sampled_from(_ALNUM),
    st.text(_ID_CHARS, max_size=6),
)
prefixes = st.builds(lambda a, b: a + b, st.sampled_from(_ALNUM), st.text(_ID_CHARS, max_size=6))
surroundings = st.text(" ,;:()[]!?\"'\n\tÉé—#", max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    unit_id=ids,
    before=prefixes | st.just(""),
    after=extensions | st.just(""),
    left=surroundings,
    right=surroundings,
)
def test_ids_embedded_in_longer_ids_never_match(
    unit_id: str, before: str, after: str, left: str, right: str
) -> None:
    longer = before + unit_id + after
    if longer == unit_id:
        return
    text = left + longer + right
    # the id may still occur legitimately inside the longer one by chance (e.g. "a" in "a-a");
    # the property is about the embedding, so only look at texts where that is the sole occurrence
    if text.lower().count(unit_id) != 1:
        return
    assert not contains_id(text, unit_id)
    assert (
        completed_todos_matching([Unit(id=unit_id, title="unrelated")], _todos((text, "completed")))
        == []
    )


@settings(max_examples=200, deadline=None)
@given(unit_id=ids, left=surroundings, right=surroundings, upper=st.booleans())
def test_an_id_standing_alone_always_matches(
    unit_id: str, left: str, right: str, upper: bool
) -> None:
    if unit_id.rstrip("._-") != unit_id:
        return  # trailing punctuation in an id is indistinguishable from the sentence's
    text = f"{left} {unit_id.upper() if upper else unit_id}{right}."
    assert contains_id(text, unit_id)
    unit = Unit(id=unit_id, title="unrelated")
    assert completed_todos_matching([unit], _todos((text, "completed"))) == [(unit_id, text)]
    assert completed_todos_matching([unit], _todos((text, "pending"))) == []


@given(
    title=st.text(min_size=1, max_size=40).filter(lambda t: t.strip()),
    pad=st.text(" \t\n", max_size=3),
)
def test_title_match_ignores_case_and_surrounding_space(title: str, pad: str) -> None:
    unit = Unit(id="zz-unrelated-id", title=title)
    text = pad + title.upper() + pad
    if text.strip().casefold() != title.strip().casefold():
        return  # case mappings that change the text (ß → SS) are not the point here
    assert completed_todos_matching([unit], _todos((text, "completed"))) == [
        ("zz-unrelated-id", text)
    ]


def test_read_transcript_never_raises(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def boom(root: Path) -> None:
        raise RuntimeError("reader bug")

    monkeypatch.setattr(claude_code, "newest_session", boom)
    t = read_transcript(tmp_path)
    assert t is not None and any("reader bug" in n for n in t["notes"])
