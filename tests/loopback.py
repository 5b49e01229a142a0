"""A threaded HTTP server on 127.0.0.1 with a port of its own, for the mock model APIs
(tests/messages_server.py, tests/agent_server.py): start, URL, close, ``with`` support."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Generic, TypeVar

S = TypeVar("S")
L = TypeVar("L", bound="Loopback")


class StateServer(ThreadingHTTPServer, Generic[S]):
    """The server; its handlers reach the test's shared ``state`` as ``self.server.state``."""

    daemon_threads = True
    state: S


class Loopback(Generic[S]):
    def __init__(self, handler: type[BaseHTTPRequestHandler], state: S) -> None:
        self._server: StateServer[S] = StateServer(("127.0.0.1", 0), handler)
        self._server.state = state
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self: L) -> L:
        self._thread.start()
        return self

    def release(self) -> None:
        """Called first by :meth:`close`: let requests that wait on the test go."""

    def close(self) -> None:
        self.release()
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self: L) -> L:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
