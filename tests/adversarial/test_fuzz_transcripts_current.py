"""Hypothesis over the parsers issue 21 added to the transcript readers: the Task tools'
replay and files, the request filters, Codex's new records, and .zst files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import zstandard
from hypothesis import given
from hypothesis import strategies as st

from resume_kit.facts.transcripts import claude_tasks, read_transcript, tail, zst
from resume_kit.facts.transcripts.claude_code import person_text, read_session
from resume_kit.facts.transcripts.codex import read_rollout, request_text
from tests.adversarial.test_fuzz_parsers import FAST, JSON, SLOW, check_transcript_shape, write_tmp

STATUS = st.one_of(JSON, st.sampled_from(["pending", "in_progress", "completed", "deleted"]))
EVENT = st.tuples(
    st.sampled_from(["TaskCreate", "TaskUpdate"]),
    st.one_of(JSON, st.fixed_dictionaries({}, optional={"subject": JSON, "taskId": JSON, "status": STATUS})),
    st.one_of(JSON, st.fixed_dictionaries({}, optional={"task": JSON, "taskId": JSON, "statusChange": JSON})),
)  # fmt: skip
NEW_RECORDS = st.one_of(
    st.fixed_dictionaries({"type": st.just("last-prompt")}, optional={"lastPrompt": JSON}),
    st.fixed_dictionaries({"type": st.just("system"), "subtype": st.just("compact_boundary")},
                          optional={"compactMetadata": JSON}),
    st.fixed_dictionaries({"type": st.just("event_msg"), "payload": st.fixed_dictionaries(
        {"type": st.sampled_from(["item_completed", "turn_aborted", "task_complete"])},
        optional={"item": JSON})}),
    st.fixed_dictionaries({"type": st.just("response_item"), "payload": st.fixed_dictionaries(
        {"type": st.just("function_call"), "name": st.sampled_from(["create_goal", "update_goal"])},
        optional={"arguments": st.one_of(JSON, JSON.map(json.dumps))})}),
)  # fmt: skip


@FAST
@given(st.lists(EVENT, max_size=8))
def test_task_replay_never_fails(events: list[tuple[str, Any, Any]]) -> None:
    items = claude_tasks.replay(events)
    assert items is None or all(
        t["status"] in ("pending", "in_progress", "completed") for t in items
    )


@FAST
@given(st.lists(st.binary(max_size=80), max_size=4))
def test_task_files_never_fail(contents: list[bytes]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        for n, data in enumerate(contents):
            (Path(folder) / f"{n}.json").write_bytes(data)
        items = claude_tasks.read_task_files(Path(folder))
        assert items is None or len(items) <= len(contents)


@FAST
@given(st.text(max_size=120))
def test_request_filters_never_fail(text: str) -> None:
    for result in (person_text(text), request_text(text)):
        assert result is None or (isinstance(result, str) and result.strip())


@SLOW
@given(st.lists(st.one_of(NEW_RECORDS.map(json.dumps), JSON.map(json.dumps)), max_size=10))
def test_readers_never_fail_on_the_new_records(lines: list[str]) -> None:
    path = write_tmp("\n".join(lines).encode() + b"\n", ".jsonl")
    try:
        for reader in (read_session, read_rollout):
            check_transcript_shape(reader(path, cap=4096, min_bytes=0))
    finally:
        path.unlink()


@SLOW
@given(st.binary(max_size=200), st.booleans())
def test_zst_files_never_fail(data: bytes, compress: bool) -> None:
    payload = zstandard.ZstdCompressor().compress(data) if compress else data
    path = write_tmp(payload, ".jsonl.zst")
    try:
        result = read_transcript(path.parent, transcript_path=path)
        assert result is not None
        check_transcript_shape(result)
        tail.first_record(path)
        tail.tail_records(path)
        if compress:
            window, _ = zst.tail_file(path, 64)
            assert len(window.getvalue()) <= 64
    finally:
        path.unlink()
