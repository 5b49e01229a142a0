"""The schema_version line bumped in place: at the document's start without a YAML parse,
elsewhere only when two parses agree it is the top-level key (else the full round trip)."""

from __future__ import annotations

import pytest

from resume_kit.progress_file.io import _with_version
from resume_kit.progress_file.patch import normalise, safe_load

UNITS = "units:\n  - id: a\n    title: A\n"


@pytest.mark.parametrize(
    "prefix",
    ["", "# a comment\n", "---\n", "\n  # indented comment\n\n", "--- # c\n"],
)
def test_first_line_is_bumped(prefix: str) -> None:
    text = f"{prefix}schema_version: 1\ngoal: g\n{UNITS}"
    bumped = _with_version(text, 2)
    assert bumped == text.replace("schema_version: 1", "schema_version: 2")
    assert normalise(safe_load(bumped))["schema_version"] == 2


def test_a_later_line_is_checked_by_parsing() -> None:
    text = f"goal: g\nschema_version: 1\n{UNITS}"
    assert _with_version(text, 2) == text.replace("schema_version: 1", "schema_version: 2")


def test_a_line_inside_a_string_is_never_bumped() -> None:
    # the only column-0 match is inside a quoted value: the key is spelled another way
    text = f'"schema_version": 1\ngoal: "x\nschema_version: 1\ny"\n{UNITS}'
    assert _with_version(text, 2) is None


def test_a_document_that_starts_otherwise_is_parsed() -> None:
    # `--- !!map` is not a bare marker: the parse decides (and agrees here)
    text = f"--- !!map\nschema_version: 1\ngoal: g\n{UNITS}"
    bumped = _with_version(text, 2)
    assert bumped is not None and normalise(safe_load(bumped))["schema_version"] == 2
