"""A loopback model server for the real agent binaries (tests/e2e/agents).

Speaks, streaming (SSE), the two wire protocols the agents use:

- the Anthropic Messages API (``POST /v1/messages``, Claude Code), plus ``count_tokens``;
- the OpenAI Responses API (``POST /v1/responses``, Codex), plus an empty ``GET /v1/models``.

Every request is recorded (method, path, headers, raw and parsed body) so a test can check
what the agent sent the model, e.g. that the brief's text reached the prompt. What the model
answers is decided by ``server.script``: a callable given the protocol ("anthropic" or
"openai") and the parsed request, returning a list of :class:`Text` and :class:`ToolCall`
parts. The default answers every request with the text "OK.". Loopback only; no waits.

    with AgentServer() as server:
        env ANTHROPIC_BASE_URL=server.url ...
        server.requests_to("/v1/messages")  # parsed bodies, in order
"""

from __future__ import annotations

import gzip
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback import Loopback, StateServer

MAX_BODY = 32 << 20


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]


Part = Text | ToolCall
Script = Callable[[str, dict[str, Any]], list[Part]]


def answer_ok(protocol: str, request: dict[str, Any]) -> list[Part]:
    return [Text("OK.")]


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class _State:
    script: Script
    recorded: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def next_id(self) -> int:
        with self.lock:
            return next(self.ids)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_events(parts: list[Part], model: str, n: int) -> Iterator[bytes]:
    usage = {"input_tokens": 1200, "output_tokens": 1, "cache_read_input_tokens": 0}
    message = {
        "id": f"msg_mock_{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield _sse("message_start", {"type": "message_start", "message": message})
    for index, part in enumerate(parts):
        if isinstance(part, Text):
            block: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": part.text}
        else:
            block = {"type": "tool_use", "id": f"toolu_mock_{n:04d}_{index}", "name": part.name}
            block["input"] = {}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(part.input)}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    stop = "tool_use" if any(isinstance(p, ToolCall) for p in parts) else "end_turn"
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def openai_events(parts: list[Part], n: int) -> Iterator[bytes]:
    response_id = f"resp_mock_{n:04d}"
    yield _sse("response.created", {"type": "response.created", "response": {"id": response_id}})
    for index, part in enumerate(parts):
        item: dict[str, Any]
        if isinstance(part, Text):
            item = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_mock_{n:04d}_{index}",
                "content": [{"type": "output_text", "text": part.text}],
            }
        else:
            item = {
                "type": "function_call",
                "id": f"fc_mock_{n:04d}_{index}",
                "call_id": f"call_mock_{n:04d}_{index}",
                "name": part.name,
                "arguments": json.dumps(part.input),
            }
        yield _sse(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": index, "item": item},
        )
        if isinstance(part, Text):
            yield _sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "output_index": index,
                    "item_id": item["id"],
                    "content_index": 0,
                    "delta": part.text,
                },
            )
        yield _sse(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": index, "item": item},
        )
    usage = {
        "input_tokens": 1200,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1220,
    }
    yield _sse(
        "response.completed",
        {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
    )


class _Handler(BaseHTTPRequestHandler):
    server: StateServer[_State]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def _record(self, body: bytes) -> Recorded:
        entry = Recorded(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        with self.server.state.lock:
            self.server.state.recorded.append(entry)
        return entry

    def _read_body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(min(length, MAX_BODY))
        if self.headers.get("content-encoding", "").lower() == "gzip":
            body = gzip.decompress(body)
        return body

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass

    def _send_stream(self, chunks: Iterator[bytes]) -> None:
        try:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)
            self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    def do_GET(self) -> None:
        self._record(b"")
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            self._send_json(200, {"data": [], "models": []})
        else:
            self._send_json(404, {"error": {"type": "not_found_error", "message": path}})

    def do_HEAD(self) -> None:
        self._record(b"")
        try:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()
        except OSError:
            pass

    def do_POST(self) -> None:
        entry = self._record(self._read_body())
        path = self.path.split("?")[0]
        request = entry.json if isinstance(entry.json, dict) else {}
        state = self.server.state
        if path.endswith("/v1/messages/count_tokens"):
            self._send_json(200, {"input_tokens": 1200})
        elif path.endswith("/v1/messages"):
            parts = state.script("anthropic", request)
            model = str(request.get("model", "mock"))
            n = state.next_id()
            if request.get("stream"):
                self._send_stream(anthropic_events(parts, model, n))
            else:
                self._send_json(200, _anthropic_message(parts, model, n))
        elif path.endswith("/responses"):
            self._send_stream(openai_events(state.script("openai", request), state.next_id()))
        else:
            self._send_json(404, {"error": {"type": "not_found_error", "message": path}})


def _anthropic_message(parts: list[Part], model: str, n: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for index, part in enumerate(parts):
        if isinstance(part, Text):
            content.append({"type": "text", "text": part.text})
        else:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_mock_{n:04d}_{index}",
                    "name": part.name,
                    "input": part.input,
                }
            )
    stop = "tool_use" if any(isinstance(p, ToolCall) for p in parts) else "end_turn"
    return {
        "id": f"msg_mock_{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1200, "output_tokens": 20},
    }


class AgentServer(Loopback[_State]):
    def __init__(self, script: Script = answer_ok) -> None:
        super().__init__(_Handler, _State(script))

    @property
    def script(self) -> Script:
        return self._server.state.script

    @script.setter
    def script(self, value: Script) -> None:
        self._server.state.script = value

    @property
    def recorded(self) -> list[Recorded]:
        with self._server.state.lock:
            return list(self._server.state.recorded)

    def requests_to(self, suffix: str) -> list[dict[str, Any]]:
        """Parsed JSON bodies of the POSTs whose path ends with ``suffix``, in order."""
        return [
            r.json
            for r in self.recorded
            if r.method == "POST"
            and r.path.split("?")[0].endswith(suffix)
            and isinstance(r.json, dict)
        ]

    def clear(self) -> None:
        with self._server.state.lock:
            self._server.state.recorded.clear()
