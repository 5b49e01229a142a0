"""The optional summariser, through the real anthropic SDK against a loopback Messages API."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.brief import summarize as sm
from resume_kit.brief.summarize import (
    MALFORMED_NOTE,
    LogExcerpt,
    SummaryInputs,
    parse_reply,
    should_summarize,
    summarize,
)
from resume_kit.model.facts import Snapshot, parse_snapshot
from resume_kit.progress_file.config import Config
from tests.messages_server import Behaviour, MessagesServer

AWS_KEY = "AKIAQ3EGRPL7XJ5WZK4M"
AWS_SECRET = "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"
GITHUB_TOKEN = "ghp_R8kL2mN4pQ6sT8vX0zB3dF5hJ7kM9nP1rS3u"
SECRETS = (AWS_KEY, AWS_SECRET, GITHUB_TOKEN)

REPLY = {
    "done": ["doc-001 … doc-136 extracted"],
    "key_results": ["extract.py:88 ValueError: bad xref table in docs/137.pdf"],
    "todo": ["fix the xref handling, then doc-137 … doc-200"],
    "references": ["logs/extract.log", "doc-137"],
}
ON = Config(summarize="anthropic")
OFF = Config()


def planted_inputs(extra: str = "") -> SummaryInputs:
    return SummaryInputs(
        goal="Extract every PDF in docs/ to out/*.json" + extra,
        logs=(
            LogExcerpt(
                "logs/extract.log",
                (
                    f"boto: using AWS_ACCESS_KEY_ID={AWS_KEY}",
                    f"aws_secret_access_key = {AWS_SECRET}",
                    'File "extract.py", line 88, in parse',
                    "ValueError: bad xref table in docs/137.pdf",
                ),
            ),
        ),
        todos=(("completed", "extract doc-001 … doc-136"), ("in_progress", "extract doc-137")),
        last_request=f"push with token {GITHUB_TOKEN} and carry on",
        tool_errors=(f"Bash: git push https://x:{GITHUB_TOKEN}@github.com/o/r failed",),
        references=("doc-137", "out/136.json"),
    )


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[MessagesServer]:
    with MessagesServer([Behaviour.ok(json.dumps(REPLY))]) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-a-secret")
        yield srv


def run(
    tmp_path: Path,
    inputs: SummaryInputs | None = None,
    *,
    config: Config = ON,
    force: bool | None = None,
    timeout: float = 5.0,
    retries: int = 0,
) -> sm.SummaryResult:
    return summarize(
        planted_inputs() if inputs is None else inputs,
        config=config,
        cache_dir=tmp_path / "cache",
        force=force,
        timeout=timeout,
        max_retries=retries,
    )


# --- success and cache --------------------------------------------------------------------


def test_success_returns_the_validated_summary_and_usage(
    server: MessagesServer, tmp_path: Path
) -> None:
    result = run(tmp_path)
    assert result.note is None
    assert result.summary == REPLY
    assert result.usage == {"input_tokens": 321, "output_tokens": 54}
    assert result.cached is False
    (request,) = server.requests
    assert request["model"] == ON.summarize_model
    assert request["max_tokens"] == sm.MAX_OUTPUT_TOKENS
    assert set(request) == {"model", "max_tokens", "system", "messages"}
    headers = server.headers[0]  # the header carrying the key differs between SDK versions
    assert "test-key-not-a-secret" in headers.get("x-api-key", "") + headers.get(
        "authorization", ""
    )
    content = request["messages"][0]["content"]
    assert "ValueError: bad xref table in docs/137.pdf" in content
    assert "<data>" in content


def test_second_call_is_served_from_the_cache(server: MessagesServer, tmp_path: Path) -> None:
    first = run(tmp_path)
    second = run(tmp_path)
    assert len(server.bodies) == 1
    assert second.cached is True
    assert second.summary == first.summary
    assert second.usage == first.usage
    # named by the sha256 of exactly what was sent (as the server received it)
    digest = sm.request_digest(server.requests[0])
    entry = json.loads((tmp_path / "cache" / "summaries" / f"{digest}.json").read_text())
    assert entry["usage"] == {"input_tokens": 321, "output_tokens": 54}
    assert entry["summary"] == REPLY
    assert entry["model"] == ON.summarize_model


def test_changed_inputs_or_model_ask_again(server: MessagesServer, tmp_path: Path) -> None:
    run(tmp_path)
    run(tmp_path, planted_inputs(extra=" (and 3 more)"))
    run(tmp_path, config=Config(summarize="anthropic", summarize_model="claude-other"))
    assert len(server.bodies) == 3
    assert server.requests[2]["model"] == "claude-other"


def test_corrupt_cache_entry_is_replaced(server: MessagesServer, tmp_path: Path) -> None:
    run(tmp_path)
    (entry,) = (tmp_path / "cache" / "summaries").glob("*.json")
    entry.write_text('{"schema_version": 1, "summary": {"done": 3')
    result = run(tmp_path)
    assert result.cached is False and result.summary == REPLY
    assert len(server.bodies) == 2
    assert json.loads(entry.read_text())["summary"] == REPLY


def test_cache_hit_needs_neither_key_nor_network(
    server: MessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{_closed_port()}")
    assert run(tmp_path).cached is True


# --- what is sent ---------------------------------------------------------------------------


def test_planted_secrets_never_reach_the_wire_or_the_cache(
    server: MessagesServer, tmp_path: Path
) -> None:
    run(tmp_path)
    run(tmp_path, planted_inputs(extra=f" key {AWS_KEY}"))  # even a secret in the goal
    assert len(server.bodies) == 2
    for body in server.bodies:
        text = body.decode("utf-8")
        for secret in SECRETS:
            assert secret not in text
        assert "[REDACTED:" in text
    for entry in (tmp_path / "cache" / "summaries").glob("*.json"):
        for secret in SECRETS:
            assert secret not in entry.read_text()


def test_a_secret_echoed_in_the_reply_is_redacted(server: MessagesServer, tmp_path: Path) -> None:
    reply = dict(REPLY, key_results=[f"push failed with {GITHUB_TOKEN}"])
    server.behaviours = [Behaviour.ok(json.dumps(reply))]
    result = run(tmp_path)
    assert result.summary is not None
    assert GITHUB_TOKEN not in json.dumps(result.summary)


def test_request_is_bounded_and_keeps_the_newest_lines(
    server: MessagesServer, tmp_path: Path
) -> None:
    lines = tuple(f"ERROR step {i}: " + "x" * 2000 for i in range(5000))
    todos = (*(("completed", f"old {i}") for i in range(100)), ("pending", "the open one"))
    inputs = SummaryInputs(
        logs=tuple(LogExcerpt(f"logs/{n}.log", lines) for n in range(50)),
        todos=todos,
        references=tuple(f"out/{i}.json" for i in range(1000)),
    )
    run(tmp_path, inputs)
    content = server.requests[0]["messages"][0]["content"]
    assert len(server.bodies[0]) < 40_000
    assert "ERROR step 4999" in content and "ERROR step 4000" not in content
    assert "the open one" in content


def test_from_snapshot_picks_logs_transcript_tests_and_references() -> None:
    snapshot: Snapshot = {
        "logs": [
            {"path": "logs/a.log", "error_lines": ["E  boom"]},
            {"path": "b.log", "error_lines": []},
        ],
        "artifacts": [{"path": "out/1.json", "exists": True}],
        "tests": {"pytest_last_failed": ["tests/test_x.py::test_y"]},
        "transcript": {
            "todos": [{"content": "write x", "status": "in_progress"}, {"status": "pending"}],
            "tool_errors": [
                {"tool": "Bash", "message": "exit 1", "at": None},
                {"tool": None, "message": "bad", "at": None},
            ],
            "last_request": "continue",
        },
    }
    inputs = SummaryInputs.from_snapshot(snapshot, goal="g", references=["doc-1", "logs/a.log"])
    assert inputs.logs == (LogExcerpt("logs/a.log", ("E  boom",)),)
    assert inputs.todos == (("in_progress", "write x"),)
    assert inputs.tool_errors == ("Bash: exit 1", "bad")
    assert inputs.failing_tests == ("tests/test_x.py::test_y",)
    assert inputs.last_request == "continue"
    assert inputs.references == ("doc-1", "logs/a.log", "out/1.json")
    assert SummaryInputs.from_snapshot({"transcript": None, "logs": []}, goal=None).is_empty()


@pytest.mark.parametrize(
    "odd",
    [
        {"logs": [{"path": "logs/a.log", "error_lines": ["E"]}, "junk"]},
        {"transcript": {"todos": [{"content": 3, "status": "pending"}]}},
        {"transcript": None, "logs": None},
    ],
)
def test_odd_shapes_never_reach_the_summariser(odd: dict[str, Any]) -> None:
    """The summariser takes typed facts: the shape check, not from_snapshot, refuses junk."""
    snapshot, problem = parse_snapshot(odd)
    assert snapshot is None and problem is not None and "is not what a snapshot holds" in problem


def test_nothing_to_summarise_makes_no_call(server: MessagesServer, tmp_path: Path) -> None:
    result = run(tmp_path, SummaryInputs(goal="only a goal"))
    assert result.summary is None and result.note is not None
    assert server.bodies == []


# --- failures: a note, never an exception --------------------------------------------------


def test_5xx_is_retried_then_falls_back(server: MessagesServer, tmp_path: Path) -> None:
    server.behaviours = [Behaviour.error(503, "overloaded_error")]
    result = run(tmp_path, retries=1)
    assert result.summary is None
    assert result.note == "summary skipped: the API answered 503 (overloaded_error)"
    assert len(server.bodies) == 2  # the SDK's one retry
    assert not (tmp_path / "cache" / "summaries").exists()


def test_5xx_then_success_on_retry(server: MessagesServer, tmp_path: Path) -> None:
    server.behaviours = [Behaviour.error(500), Behaviour.ok(json.dumps(REPLY))]
    result = run(tmp_path, retries=1)
    assert result.summary == REPLY and result.note is None
    assert len(server.bodies) == 2


def test_4xx_is_not_retried(server: MessagesServer, tmp_path: Path) -> None:
    server.behaviours = [Behaviour.error(401, "authentication_error")]
    result = run(tmp_path, retries=1)
    assert result.note == "summary skipped: the API answered 401 (authentication_error)"
    assert len(server.bodies) == 1


def test_timeout_falls_back_quickly(server: MessagesServer, tmp_path: Path) -> None:
    server.behaviours = [Behaviour.stall()]
    started = time.monotonic()
    result = run(tmp_path, timeout=0.5)
    elapsed = time.monotonic() - started
    assert result.summary is None
    assert result.note == "summary skipped: the API did not answer within 0.5s"
    assert elapsed < 4.0, elapsed  # the server would stall for 10 s


def test_timeout_from_environment(
    server: MessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.behaviours = [Behaviour.stall()]
    monkeypatch.setenv(sm.TIMEOUT_ENV, "0.3")
    result = summarize(planted_inputs(), config=ON, cache_dir=tmp_path, force=None, max_retries=0)
    assert result.note == "summary skipped: the API did not answer within 0.3s"


@pytest.mark.parametrize(
    "text",
    [
        "Here is the summary: the job failed.",
        json.dumps(REPLY) + " Hope this helps!",
        json.dumps(dict(REPLY, extra=["x"])),
        json.dumps({k: v for k, v in REPLY.items() if k != "todo"}),
        json.dumps(dict(REPLY, done=3)),
        json.dumps(dict(REPLY, done=[["nested"]])),
        json.dumps(dict(REPLY, done=["x" * (sm.MAX_ITEM_CHARS + 1)])),
        json.dumps(dict(REPLY, todo=["t"] * (sm.MAX_ITEMS + 1))),
        json.dumps({k: [] for k in sm.FIELDS}),
        json.dumps([REPLY]),
        json.dumps(REPLY)[:-10],
        "",
        "[" * 100_000,
    ],
)
def test_malformed_reply_is_ignored(server: MessagesServer, tmp_path: Path, text: str) -> None:
    server.behaviours = [Behaviour.ok(text)]
    result = run(tmp_path)
    assert result.summary is None
    assert result.note == MALFORMED_NOTE
    assert result.usage == {"input_tokens": 321, "output_tokens": 54}  # the call still cost
    assert not (tmp_path / "cache" / "summaries").exists()


def test_reply_cut_by_max_tokens_is_ignored(server: MessagesServer, tmp_path: Path) -> None:
    server.behaviours = [Behaviour.ok(json.dumps(REPLY), stop_reason="max_tokens")]
    assert run(tmp_path).note == MALFORMED_NOTE


def test_a_body_that_is_not_the_messages_api(server: MessagesServer, tmp_path: Path) -> None:
    server.behaviours = [Behaviour.garbage()]
    result = run(tmp_path)
    assert result.summary is None
    assert result.note is not None and result.note.startswith("summary ")
    assert "\n" not in result.note


def test_no_key_makes_no_call(
    server: MessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = run(tmp_path)
    assert result.summary is None
    assert result.note == "summary skipped: ANTHROPIC_API_KEY is not set"
    assert server.bodies == []


def test_unreachable_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-a-secret")
    result = run(tmp_path)
    assert result.summary is None
    assert result.note == "summary skipped: cannot reach the API (offline?)"


def test_missing_package(
    server: MessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # `import anthropic` now fails
    result = run(tmp_path)
    assert result.summary is None
    assert result.note == f"summary skipped: {sm.INSTALL_HINT}"
    assert "resume-kit[anthropic]" in result.note
    assert server.bodies == []


def test_internal_error_becomes_a_note(
    server: MessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str) -> str:
        raise RuntimeError("redactor bug")

    monkeypatch.setattr(sm, "redact", broken)
    result = run(tmp_path)
    assert result.summary is None
    assert result.note == "summary skipped: internal error (RuntimeError)"
    assert server.bodies == []  # nothing unredacted is ever sent


# --- switching it on and off ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "force", "hook_mode", "expected"),
    [
        (OFF, None, False, False),
        (ON, None, False, True),
        (OFF, True, False, True),
        (ON, False, False, False),
        (ON, None, True, False),
        (OFF, True, True, False),
    ],
)
def test_should_summarize(
    config: Config, force: bool | None, hook_mode: bool, expected: bool
) -> None:
    assert should_summarize(config, force, hook_mode) is expected


def test_off_and_no_summarize_make_no_call(server: MessagesServer, tmp_path: Path) -> None:
    assert run(tmp_path, config=OFF) == sm.SummaryResult()
    assert run(tmp_path, config=ON, force=False) == sm.SummaryResult()
    assert run(tmp_path, config=OFF, force=True).summary == REPLY
    assert len(server.bodies) == 1


def test_anthropic_is_not_imported_unless_a_call_is_made(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from resume_kit.progress_file.config import Config\n"
        "from resume_kit.brief.summarize import SummaryInputs, should_summarize, summarize\n"
        "assert should_summarize(Config(), None, False) is False\n"
        "assert should_summarize(Config(summarize='anthropic'), True, True) is False\n"
        "r = summarize(SummaryInputs(last_request='x'), config=Config(), "
        f"cache_dir=Path({str(tmp_path)!r}), force=None)\n"
        "assert r.summary is None and r.note is None\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in {'anthropic', 'httpx', 'httpx2'})\n"
        "print(loaded)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# --- the reply parser ------------------------------------------------------------------------


def test_reply_in_a_code_fence_and_string_fields_are_accepted() -> None:
    text = "```json\n" + json.dumps(dict(REPLY, done="all of\n  chapter 1")) + "\n```"
    assert parse_reply(text) == dict(REPLY, done=["all of chapter 1"])


_item = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
_field = st.one_of(_item, st.lists(_item, max_size=sm.MAX_ITEMS))


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({k: _field for k in sm.FIELDS}))
def test_any_well_formed_reply_round_trips(obj: dict[str, str | list[str]]) -> None:
    parsed = parse_reply(json.dumps(obj))
    expected = {
        k: [" ".join(s.split()) for s in ([v] if isinstance(v, str) else v) if s.split()]
        for k, v in obj.items()
    }
    if not any(expected.values()):
        assert parsed is None
    else:
        assert parsed is not None
        assert set(parsed) == set(sm.FIELDS)
        for key, items in parsed.items():
            assert len(items) == len(expected[key])
            assert all("\n" not in item for item in items)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(st.text(max_size=12), inner, max_size=5)
            ),
            max_leaves=20,
        ).map(json.dumps),
    )
)
def test_parse_reply_never_raises(text: str) -> None:
    result = parse_reply(text)
    assert result is None or set(result) == set(sm.FIELDS)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
