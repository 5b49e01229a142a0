"""Codex as it writes rollouts today (issue 21 points 9 and 10): item_completed messages, IDE
prompts, sub-agent rollouts, aborted turns, the goal tools as the plan."""

from __future__ import annotations

import json
import os
from pathlib import Path

from resume_kit.facts.transcripts import codex, read_transcript
from tests.unit.test_transcripts import codex_meta, cx, rollout_path, write_jsonl


def _user_item(text: str, second: int) -> dict[str, object]:
    item = {"type": "UserMessage", "id": "u", "content": [{"type": "text", "text": text}]}
    return cx("event_msg", {"type": "item_completed", "item": item}, second)


def test_item_completed_user_message_and_ide_request(tmp_path: Path) -> None:
    agent = {"type": "AgentMessage", "id": "a", "content": [{"type": "Text", "text": "reply"}]}
    records = [
        codex_meta(tmp_path),
        _user_item("first", 11),
        cx("event_msg", {"type": "item_completed", "item": agent}, 12),
    ]
    t = codex.read_rollout(write_jsonl(tmp_path / "a.jsonl", records))
    assert t["last_request"] == "first"
    ide = "# Context from my IDE setup:\n\n## Open tabs:\n- a.py\n\n## My request for Codex:\nfix the bug\n"
    t = codex.read_rollout(
        write_jsonl(tmp_path / "b.jsonl", [codex_meta(tmp_path), _user_item(ide, 11)])
    )
    assert t["last_request"] == "fix the bug"
    message = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ide}]}
    t = codex.read_rollout(
        write_jsonl(tmp_path / "c.jsonl", [codex_meta(tmp_path), cx("response_item", message)])
    )
    assert t["last_request"] == "fix the bug"
    event = cx("event_msg", {"type": "user_message", "message": ide})
    t = codex.read_rollout(write_jsonl(tmp_path / "d.jsonl", [codex_meta(tmp_path), event]))
    assert t["last_request"] == "fix the bug"


def test_subagent_rollouts_are_not_the_main_session(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    main = write_jsonl(
        rollout_path(name="rollout-main.jsonl"), [codex_meta(root, "main"), _user_item("main", 11)]
    )
    sub_meta = codex_meta(root, "sub")
    sub_meta["payload"]["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": "main"}}}  # type: ignore[index]
    sub = write_jsonl(rollout_path(name="rollout-sub.jsonl"), [sub_meta, _user_item("sub", 11)])
    os.utime(main, (1_000, 1_000))
    os.utime(sub, (2_000, 2_000))
    t = read_transcript(root, kinds=["codex"])
    assert t is not None and t["session_id"] == "main"


def test_turn_aborted_means_interrupted(tmp_path: Path) -> None:
    aborted = cx("event_msg", {"type": "turn_aborted", "reason": "interrupted"}, 12)
    done = cx("event_msg", {"type": "task_complete", "last_agent_message": "ok"}, 13)
    records = [codex_meta(tmp_path), _user_item("go", 11), aborted]
    t = codex.read_rollout(write_jsonl(tmp_path / "a.jsonl", records))
    assert t["interrupted"] is True
    t = codex.read_rollout(
        write_jsonl(tmp_path / "b.jsonl", [*records, _user_item("again", 12), done])
    )
    assert "interrupted" not in t


def _call(name: str, arguments: dict[str, object], second: int) -> dict[str, object]:
    payload = {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(arguments),
        "call_id": f"c{second}",
    }
    return cx("response_item", payload, second)


def test_goal_tools_are_the_plan_when_update_plan_is_absent(tmp_path: Path) -> None:
    records = [
        codex_meta(tmp_path),
        _call("create_goal", {"objective": "old goal"}, 10),
        _call("update_goal", {"status": "complete"}, 11),
        _call("create_goal", {"objective": "Extract every contract"}, 12),
    ]
    t = codex.read_rollout(write_jsonl(tmp_path / "a.jsonl", records))
    assert t["todos"] == [{"content": "Extract every contract", "status": "in_progress"}]
    done = [*records, _call("update_goal", {"status": "complete"}, 13)]
    t = codex.read_rollout(write_jsonl(tmp_path / "b.jsonl", done))
    assert t["todos"] == [{"content": "Extract every contract", "status": "completed"}]
    plan = _call("update_plan", {"plan": [{"step": "a step", "status": "pending"}]}, 14)
    t = codex.read_rollout(write_jsonl(tmp_path / "c.jsonl", [*done, plan]))
    assert t["todos"] == [{"content": "a step", "status": "pending"}]


def test_null_transcript_path_reads_the_newest_rollout(tmp_path: Path) -> None:
    from resume_kit.integrations.agent_input import parse_hook_payload

    root = tmp_path / "repo"
    root.mkdir()
    write_jsonl(rollout_path(name="rollout-x.jsonl"), [codex_meta(root, "x"), _user_item("hi", 11)])
    hook = parse_hook_payload(b'{"transcript_path": null, "source": "resume", "cwd": "/x"}')
    assert "transcript_path" not in hook
    t = read_transcript(root, kinds=["codex"], source=hook.get("source"))
    assert t is not None and t["session_id"] == "x"
