"""A loopback HTTP server speaking enough of the Anthropic Messages API for tests.

``POST /v1/messages`` answers according to ``server.behaviours`` (one per request, the last
one repeating): a normal message with a given text, an HTTP error status, a body that is not
JSON, or a stall that outlasts the client's timeout. Every request body is recorded, so tests
can check what was sent. Loopback only; every wait is bounded and ``close()`` releases stalls.

    with MessagesServer([Behaviour.ok('{"done": [...], ...}')]) as server:
        env ANTHROPIC_BASE_URL=server.url ...
        server.bodies  # raw request bodies (bytes); server.requests: parsed JSON
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback import Loopback, StateServer

MAX_BODY = 8 << 20
MAX_STALL_S = 10.0


@dataclass(frozen=True)
class Behaviour:
    kind: str = "ok"  # ok | status | garbage | stall
    text: str = ""  # the assistant's reply text (ok, stall)
    status: int = 200
    stop_reason: str = "end_turn"
    usage: tuple[int, int] = (321, 54)
    stall_s: float = MAX_STALL_S
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def ok(cls, text: str, **kw: Any) -> Behaviour:
        return cls("ok", text=text, **kw)

    @classmethod
    def error(cls, status: int, error_type: str = "api_error", **kw: Any) -> Behaviour:
        # retry-after-ms keeps the SDK's retry back-off short in tests
        headers = (("retry-after-ms", "10"),)
        return cls("status", text=error_type, status=status, headers=headers, **kw)

    @classmethod
    def garbage(cls) -> Behaviour:
        return cls("garbage")

    @classmethod
    def stall(cls, stall_s: float = MAX_STALL_S) -> Behaviour:
        return cls("stall", stall_s=min(stall_s, MAX_STALL_S))


@dataclass
class _State:
    behaviours: list[Behaviour]
    bodies: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    released: threading.Event = field(default_factory=threading.Event)


def _message(behaviour: Behaviour, model: str) -> dict[str, Any]:
    return {
        "id": "msg_test_0001",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": behaviour.text}],
        "stop_reason": behaviour.stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": behaviour.usage[0], "output_tokens": behaviour.usage[1]},
    }


class _Handler(BaseHTTPRequestHandler):
    server: StateServer[_State]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def _send(self, status: int, payload: bytes, headers: tuple[tuple[str, str], ...] = ()) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass  # the client gave up (timeout): nothing to do

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(min(length, MAX_BODY))
        state = self.server.state
        if self.path.split("?")[0] != "/v1/messages":
            self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"no"}}')
            return
        with state.lock:
            index = len(state.bodies)
            state.bodies.append(body)
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            behaviour = state.behaviours[min(index, len(state.behaviours) - 1)]
        try:
            model = str(json.loads(body).get("model", "unknown"))
        except (ValueError, AttributeError):
            model = "unknown"
        if behaviour.kind == "status":
            error = {"type": "error", "error": {"type": behaviour.text, "message": "test error"}}
            self._send(behaviour.status, json.dumps(error).encode(), behaviour.headers)
        elif behaviour.kind == "garbage":
            self._send(200, b"<html>this is not the Messages API</html>")
        else:
            if behaviour.kind == "stall":
                state.released.wait(behaviour.stall_s)
            self._send(200, json.dumps(_message(behaviour, model)).encode(), behaviour.headers)


class MessagesServer(Loopback[_State]):
    def __init__(self, behaviours: list[Behaviour] | None = None) -> None:
        super().__init__(_Handler, _State(behaviours or [Behaviour.ok("{}")]))

    @property
    def behaviours(self) -> list[Behaviour]:
        return self._server.state.behaviours

    @behaviours.setter
    def behaviours(self, value: list[Behaviour]) -> None:
        with self._server.state.lock:
            self._server.state.behaviours = list(value)

    @property
    def bodies(self) -> list[bytes]:
        with self._server.state.lock:
            return list(self._server.state.bodies)

    @property
    def requests(self) -> list[dict[str, Any]]:
        return [json.loads(body) for body in self.bodies]

    @property
    def headers(self) -> list[dict[str, str]]:
        with self._server.state.lock:
            return list(self._server.state.headers)

    def release(self) -> None:
        self._server.state.released.set()
