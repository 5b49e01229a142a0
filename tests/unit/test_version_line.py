"""The schema_version line is found where its literal start occurs, not by a regex scan of the
whole file: the same matches as the scan, for any mix of lines."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.progress_file.io import _VERSION_LINE, _version_lines

PIECE = st.sampled_from(
    ["\n", "\r\n", "schema_version:", "schema_version: 2", " 1", "\t", "# c", "x", "3", " "]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECE, max_size=16))
def test_the_found_lines_are_the_scan_s(pieces: list[str]) -> None:
    text = "".join(pieces)  # the first line too: a file starts with its version line
    scanned = [(m.span(), m.group(1)) for m in re.finditer(_VERSION_LINE, text, re.MULTILINE)]
    assert [(m.span(), m.group(1)) for m in _version_lines(text)] == scanned, text
    found_in_bytes = _version_lines(text.encode("ascii"))  # a checkpoint's spliced bytes
    assert [(m.span(), m.group(1).decode()) for m in found_in_bytes] == scanned, text
