"""The one escape for untrusted text that is printed: terminal output and prompt text alike.

A title, file name, commit field or failure line from the repository could otherwise clear
the screen (``ESC [2J``), rename the terminal window (``ESC ]0;``), forge a new line of
output (``\\n``, ``\\r``, U+2028) or show text in another order than it runs (bidi overrides
and isolates) or hide characters (zero-width ones). Each such character is shown as an
escape: ``\\n``, ``\\r``, ``\\t`` by name, the rest as ``\\x1b`` or ``\\u202e``.
"""

from __future__ import annotations

import re

# C0 controls, DEL and C1 controls; the Arabic letter mark; the Mongolian vowel separator;
# zero-width space/joiners, LRM/RLM; line and paragraph separators; bidi embeddings and
# overrides; word joiner and invisible operators; bidi isolates; BOM; interlinear annotation.
UNSAFE_CHARS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064"
    "\u2066-\u2069\ufeff\ufff9-\ufffb]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` with every character of :data:`UNSAFE_CHARS` escaped, except those in ``keep``
    (``"\\t"`` where a tab is fine); the result is one line unless ``keep`` holds a newline."""
    if not UNSAFE_CHARS.search(text):
        return text
    if keep:
        return UNSAFE_CHARS.sub(
            lambda m: m.group() if m.group() in keep else _escape(m.group()), text
        )
    return UNSAFE_CHARS.sub(lambda m: _escape(m.group()), text)
