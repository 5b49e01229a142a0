"""Read the JSON an agent hook (Claude Code, Codex CLI) sends on stdin, without ever hanging.

Hook mode must never block an agent: stdin is read only when it is not a terminal, only for
about a second, and anything odd (no data, garbage, a huge stream, a closed descriptor) gives an
empty dict. Stdlib only, and not even json (core/light_json): this sits on the hook path.
"""

from __future__ import annotations

import os
import sys
import time

from resume_kit.core.light_json import loads

TYPE_CHECKING = False  # typing costs milliseconds on the served hook path; mypy reads the guard
if TYPE_CHECKING:
    from resume_kit.core.typing_light import IO, Any

# The fields a hook's stdin carries that resume-kit uses; everything else is dropped.
_STRING_FIELDS = ("session_id", "transcript_path", "cwd", "source", "trigger", "hook_event_name")
_BOOL_FIELDS = ("stop_hook_active",)
_MAX_BYTES = 1 << 20  # a hook payload is a few hundred bytes; never buffer a runaway stream


def read_hook_input(timeout: float = 1.0, stream: IO[Any] | None = None) -> dict[str, Any]:
    """The hook's stdin JSON as ``{session_id, transcript_path, cwd, source|trigger, ...}``.

    Returns ``{}`` when stdin is a terminal, empty, not JSON, not an object, or silent for
    ``timeout`` seconds. Never raises, never waits much longer than ``timeout``.
    """
    try:
        raw = _read_available(sys.stdin if stream is None else stream, timeout)
        return parse_hook_payload(raw) if raw else {}
    except Exception:  # hook mode must never fail because of its input
        return {}


def read_hook_object(timeout: float = 1.0, stream: IO[Any] | None = None) -> dict[str, Any]:
    """The whole JSON object on stdin (the tool hooks need ``tool_input`` and
    ``tool_response``); ``{}`` in every case :func:`read_hook_input` gives ``{}``."""
    try:
        raw = _read_available(sys.stdin if stream is None else stream, timeout)
        data = loads(raw.decode("utf-8", errors="replace")) if raw else {}
    except Exception:  # hook mode must never fail because of its input
        return {}
    return data if isinstance(data, dict) else {}


def parse_hook_payload(raw: bytes) -> dict[str, Any]:
    """Pick the known fields out of a hook payload; ``{}`` for anything that is not an object."""
    try:
        data = loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    picked: dict[str, Any] = {}
    for key in _STRING_FIELDS:
        value = data.get(key)
        if isinstance(value, str) and value and "\x00" not in value:
            picked[key] = value
    for key in _BOOL_FIELDS:
        value = data.get(key)
        if isinstance(value, bool):
            picked[key] = value
    stamp = data.get("timestamp")  # Copilot CLI: milliseconds, names the invocation
    if isinstance(stamp, int) and not isinstance(stamp, bool):
        picked["timestamp"] = stamp
    session = data.get("sessionId")  # GitHub Copilot CLI's camelCase payloads
    if (
        "session_id" not in picked
        and isinstance(session, str)
        and session
        and "\x00" not in session
    ):
        picked["session_id"] = session
    return picked


def _read_available(stream: IO[Any] | None, timeout: float) -> bytes:
    if stream is None or stream.closed:
        return b""
    try:
        if stream.isatty():
            return b""
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return b""
    if os.name == "nt":  # select() does not work on pipes there
        return _read_with_thread(fd, timeout)
    return _read_with_select(fd, timeout)


def _read_with_select(fd: int, timeout: float) -> bytes:
    import select

    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    while size < _MAX_BYTES:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:  # EOF
            break
        chunks.append(chunk)
        size += len(chunk)
        if _is_complete_object(b"".join(chunks)):
            break  # the writer may keep the pipe open: a whole object is enough
    return b"".join(chunks)


def _read_with_thread(fd: int, timeout: float) -> bytes:  # pragma: no cover - Windows only
    import threading

    chunks: list[bytes] = []

    def pump() -> None:
        try:
            while sum(map(len, chunks)) < _MAX_BYTES:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                chunks.append(chunk)
                if _is_complete_object(b"".join(chunks)):
                    return
        except OSError:
            return

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    reader.join(timeout)
    return b"".join(chunks)


def _is_complete_object(raw: bytes) -> bool:
    text = raw.strip()
    if not text.endswith(b"}"):
        return False
    try:
        return isinstance(loads(text.decode("utf-8", errors="replace")), dict)
    except ValueError:
        return False
