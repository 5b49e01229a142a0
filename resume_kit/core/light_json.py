"""``json.loads`` and ``json.dumps(value, ensure_ascii=False)`` (with json's ``sort_keys`` and
``default``, which the tool hooks' call signatures use) without importing json: CPython's own C
scanner and encoder (``_json``, which json itself runs on), set up as json sets them up.

The served SessionStart hook brief parses the hook's payload and the activity log and writes
the log back at every session start; ``import json`` brings ``re`` and ``enum`` with it: 12.5 ms
on top of a 16.9 ms ``python -c pass`` (2026-12-07, paired, a slow phase of this machine), where
that whole brief took 41 ms on the small bench tree. The results are json's (a Hypothesis
test compares them); a malformed text raises json's own ``JSONDecodeError`` (a ``ValueError``:
json is imported then, to say where). Where ``_json`` is missing (not CPython), json is used.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this is on the served hook brief's path
if TYPE_CHECKING:
    from collections.abc import Callable

    from resume_kit.core.typing_light import Any

_JSON_WHITESPACE = " \t\n\r"  # json.decoder.WHITESPACE
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}

try:
    from _json import encode_basestring as _encode_string
    from _json import make_encoder as _make_encoder
    from _json import make_scanner as _make_scanner

    _C_JSON = True
except ImportError:  # pragma: no cover - not CPython
    _C_JSON = False


class _DecoderSettings:
    """What json's C scanner reads from a ``json.JSONDecoder()``: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


def _skip_whitespace(text: str, index: int) -> int:
    while index < len(text) and text[index] in _JSON_WHITESPACE:
        index += 1
    return index


def _decode_error(message: str, text: str, index: int) -> ValueError:
    from json import JSONDecodeError

    return JSONDecodeError(message, text, index)


def loads(text: str) -> Any:
    """``json.loads(text)`` for a ``str``."""
    if not _C_JSON:  # pragma: no cover - not CPython
        import json

        return json.loads(text)
    if text.startswith("\ufeff"):
        raise _decode_error("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    settings: Any = _DecoderSettings()  # duck-typed: the scanner reads its attributes
    scan: Callable[[str, int], tuple[Any, int]] = _make_scanner(settings)
    start = _skip_whitespace(text, 0)
    try:
        value, end = scan(text, start)
    except StopIteration as missing:
        raise _decode_error("Expecting value", text, missing.value) from None
    end = _skip_whitespace(text, end)
    if end != len(text):
        raise _decode_error("Extra data", text, end)
    return value


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(
    value: object, *, sort_keys: bool = False, default: Callable[[Any], object] | None = None
) -> str:
    """``json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=default)``."""
    if not _C_JSON:  # pragma: no cover - not CPython
        import json

        return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=default)
    if isinstance(value, str):
        return str(_encode_string(value))
    # json.JSONEncoder(ensure_ascii=False).iterencode(value, _one_shot=True), in its order:
    # markers (circular references), default, encoder, indent, key and item separators,
    # sort_keys, skipkeys, allow_nan
    encode = _make_encoder(
        {}, default or _not_serializable, _encode_string, None, ": ", ", ", sort_keys, False, True
    )
    return "".join(encode(value, 0))
