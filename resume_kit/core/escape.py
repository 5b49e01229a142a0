"""The one escape for untrusted text that is printed: terminal output and prompt text alike.

A title, file name, commit field or failure line from the repository could otherwise clear
the screen (``ESC [2J``), rename the terminal window (``ESC ]0;``), forge a new line of
output (``\\n``, ``\\r``, U+2028) or show text in another order than it runs (bidi overrides
and isolates) or hide characters (zero-width ones). Each such character is shown as an
escape: ``\\n``, ``\\r``, ``\\t`` by name, the rest as ``\\x1b``, ``\\u202e`` or ``\\U000e0041``.
"""

from __future__ import annotations

import re

from resume_kit.core.lazy_regex import lazy

# C0 controls, DEL and C1 controls; the Arabic letter mark; the Mongolian vowel separator;
# zero-width space/joiners, LRM/RLM; line and paragraph separators; bidi embeddings and
# overrides; word joiner and invisible operators; bidi isolates; BOM; interlinear annotation;
# the other invisible format characters (soft hyphen, Arabic, Syriac, Kaithi, Egyptian and
# shorthand format controls, musical beams); blank fillers (Hangul, Khmer); and the tag
# characters, which spell out hidden ASCII text for a model to read.
UNSAFE_CHARS = lazy(
    "[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f]"
)
# what an ASCII text can hold of them: compiling the whole class takes ~0.6 ms (its characters
# beyond the BMP), so it is compiled only once some text is not ASCII
_UNSAFE_ASCII = re.compile("[\x00-\x1f\x7f]")
# Terminal escape sequences (CSI and OSC): stripped from command output and logs, whose
# colours and cursor moves carry no meaning once quoted.
ANSI_SEQUENCE = lazy(r"\x1b\[[0-9;?]{0,32}[A-Za-z]|\x1b\][^\x07]{0,256}\x07")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` with every character of :data:`UNSAFE_CHARS` escaped, except those in ``keep``
    (``"\\t"`` where a tab is fine); the result is one line unless ``keep`` holds a newline."""
    unsafe = _UNSAFE_ASCII if text.isascii() else UNSAFE_CHARS
    if not unsafe.search(text):
        return text
    if keep:
        return unsafe.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)
    return unsafe.sub(lambda m: _escape(m.group()), text)
