"""Hook mode's stdin reader: real pipes, a real terminal, a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.integrations.agent_input import parse_hook_payload, read_hook_input

PAYLOAD = {
    "session_id": "5f2b",
    "transcript_path": "/home/u/.claude/projects/-w/5f2b.jsonl",
    "cwd": "/w",
    "hook_event_name": "SessionStart",
    "source": "compact",
    "permission_mode": "default",
    "stop_hook_active": False,
}


def reader_for(data: bytes | None, close: bool = True):  # type: ignore[no-untyped-def]
    read_fd, write_fd = os.pipe()
    if data:
        os.write(write_fd, data)
    if close:
        os.close(write_fd)
    return os.fdopen(read_fd, "rb"), (None if close else write_fd)


def test_reads_the_known_fields_from_a_pipe() -> None:
    stream, _ = reader_for(json.dumps(PAYLOAD).encode())
    with stream:
        got = read_hook_input(stream=stream)
    assert got == {
        "session_id": "5f2b",
        "transcript_path": "/home/u/.claude/projects/-w/5f2b.jsonl",
        "cwd": "/w",
        "hook_event_name": "SessionStart",
        "source": "compact",
        "stop_hook_active": False,
    }


def test_empty_garbage_and_non_objects_give_nothing() -> None:
    for data in (None, b"", b"not json", b"[1, 2]", b'"text"', b"\xff\xfe\x00", b"{"):
        stream, _ = reader_for(data)
        with stream:
            assert read_hook_input(stream=stream) == {}, data


def test_a_silent_open_pipe_does_not_block() -> None:
    stream, write_fd = reader_for(None, close=False)
    try:
        started = time.monotonic()
        assert read_hook_input(timeout=0.3, stream=stream) == {}
        assert time.monotonic() - started < 3.0
    finally:
        stream.close()
        assert write_fd is not None
        os.close(write_fd)


def test_a_whole_object_on_a_pipe_left_open_is_enough() -> None:
    stream, write_fd = reader_for(json.dumps(PAYLOAD).encode(), close=False)
    try:
        started = time.monotonic()
        got = read_hook_input(timeout=20.0, stream=stream)
        assert got["session_id"] == "5f2b"
        assert time.monotonic() - started < 10.0  # did not wait for the 20 s timeout
    finally:
        stream.close()
        assert write_fd is not None
        os.close(write_fd)


def test_a_terminal_is_never_read() -> None:
    leader, follower = os.openpty()
    try:
        os.write(leader, json.dumps(PAYLOAD).encode() + b"\n")
        with os.fdopen(follower, "rb", closefd=False) as stream:
            assert read_hook_input(stream=stream) == {}
    finally:
        os.close(leader)
        os.close(follower)


def test_a_closed_stream_gives_nothing() -> None:
    stream, _ = reader_for(b"{}")
    stream.close()
    assert read_hook_input(stream=stream) == {}


def _subprocess_read(stdin: object, data: bytes | None = None) -> dict[str, object]:
    code = (
        "import json; from resume_kit.integrations.agent_input import read_hook_input;"
        "print(json.dumps(read_hook_input(timeout=0.5)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=data,
        stdin=None if data is not None else stdin,
        capture_output=True,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_real_process_stdin(tmp_path: Path) -> None:
    assert _subprocess_read(None, json.dumps(PAYLOAD).encode())["cwd"] == "/w"
    assert _subprocess_read(subprocess.DEVNULL) == {}
    assert _subprocess_read(None, b"\x00garbage") == {}
    payload_file = tmp_path / "payload.json"
    payload_file.write_text(json.dumps({"trigger": "auto", "cwd": "/x"}))
    with payload_file.open("rb") as handle:
        assert _subprocess_read(handle) == {"trigger": "auto", "cwd": "/x"}


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(
                    st.sampled_from(["cwd", "session_id", "trigger", "stop_hook_active", "x"]),
                    inner,
                    max_size=4,
                )
            ),
            max_leaves=8,
        ).map(lambda value: json.dumps(value).encode()),
    )
)
def test_parse_never_raises_and_keeps_only_typed_fields(raw: bytes) -> None:
    got = parse_hook_payload(raw)
    for key, value in got.items():
        if key == "stop_hook_active":
            assert isinstance(value, bool)
        else:
            assert isinstance(value, str) and value
