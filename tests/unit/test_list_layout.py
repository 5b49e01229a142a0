"""The fast layout scan of a top-level list (regexes over the whole text) finds what the line
scan finds, for any mix of keys, items at several indents, comments and blank lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.progress_file.patch import _layout_by_lines, list_layout

LINE = st.one_of(
    st.sampled_from(["units:", "goal: g", "actions:", "# note", "", "---", "notes: |"]),
    st.builds(
        lambda indent, body: " " * indent + "-" + body,
        st.integers(0, 6),
        st.sampled_from(["", " id: a", " x", "-", "x"]),
    ),
    st.builds(lambda indent: " " * indent + "title: t", st.integers(1, 6)),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINE, max_size=14), st.booleans())
def test_the_fast_layout_is_the_line_scan(lines: list[str], final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    for name in ("units", "actions"):
        assert list_layout(text, name) == _layout_by_lines(text, name), (text, name)
