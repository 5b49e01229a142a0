"""Hypothesis on the Markdown checklist importer: it never crashes, never invents a unit (one
unit per checkbox line outside comments and code blocks, and no more), and ids are unique;
spec-kit lines and Task Master testStrategy texts likewise."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.infra.errors import ProgressFileError
from resume_kit.model import progress as pm
from resume_kit.progress_file import roundtrip as progress_yaml
from resume_kit.progress_file import validate as progress_validate
from resume_kit.progress_file.importers.checklist import parse_checklist
from resume_kit.progress_file.importers.taskmaster import shell_command

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzÜüé0123456789 ", min_size=1, max_size=12).filter(
    lambda w: w.strip() != ""
)
INDENT = st.sampled_from(["", "  ", "    ", "\t", "      "])
MARK = st.sampled_from(" xX~/-")
BULLET = st.sampled_from(["-", "*", "+", "1.", "2)", "10."])


@st.composite
def checkbox(draw: st.DrawFn) -> tuple[str, str]:
    """A checkbox line and its title."""
    title = " ".join(draw(WORD).split())
    line = f"{draw(INDENT)}{draw(BULLET)} [{draw(MARK)}] {title}"
    return line, title


NOISE = st.one_of(
    st.builds(lambda i, b, w: f"{i}{b} {w}", INDENT, BULLET, WORD),  # plain bullets
    st.builds(lambda n, w: f"{'#' * n} {w}", st.integers(1, 6), WORD),  # headings
    WORD,  # text
    st.just(""),
    st.builds(lambda w: f"<!-- - [ ] {w} -->", WORD),  # a task in a comment is none
)


@st.composite
def document(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A checklist with noise, comments and code blocks; the titles of the real tasks."""
    lines: list[str] = []
    titles: list[str] = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["task", "task", "noise", "fence", "comment"]))
        if kind == "task":
            line, title = draw(checkbox())
            lines.append(line)
            titles.append(title)
        elif kind == "noise":
            lines.append(draw(NOISE))
        elif kind == "fence":
            fence = draw(st.sampled_from(["```", "~~~"]))
            lines += [fence, draw(checkbox())[0], fence]
        else:
            lines += ["<!--", draw(checkbox())[0], "-->"]
    return "\n".join(lines), titles


def check_valid(units: list[pm.Unit]) -> None:
    try:
        progress_validate.validate(progress_yaml.to_data(pm.Progress(goal="g", units=units)))
    except ProgressFileError as exc:  # nesting cannot make a cycle: nothing else may fail
        raise AssertionError(exc.message) from None


@FAST
@given(document())
def test_one_unit_per_real_checkbox_line_and_no_other(doc: tuple[str, list[str]]) -> None:
    text, titles = doc
    imported = parse_checklist(text)
    assert [u.title for u in imported.units] == titles
    ids = [u.id for u in imported.units]
    assert len(set(ids)) == len(ids)
    check_valid(imported.units)
    for unit in imported.units:  # a parent waits only for units of this list
        assert set(unit.after) <= set(ids) and unit.id not in unit.after


@FAST
@given(st.text(max_size=300))
def test_any_text_gives_valid_units_and_never_more_than_its_lines(text: str) -> None:
    imported = parse_checklist(text)
    boxes = len(re.findall(r"\[[ xX~/-]\]", text))
    assert len(imported.units) <= boxes
    ids = [u.id for u in imported.units]
    assert len(set(ids)) == len(ids)
    check_valid(imported.units)


SPEC_LINE = st.builds(
    lambda mark, n, p, us, w, dep: (
        f"- [{mark}] T{n:03d}{' [P]' if p else ''}{f' [US{us}]' if us else ''} {w}"
        + (f" (depends on T{dep:03d})" if dep is not None else "")
    ),
    st.sampled_from(" xX"),
    st.integers(0, 30),
    st.booleans(),
    st.one_of(st.none(), st.integers(1, 4)),
    st.one_of(WORD, st.builds(lambda w, p: f"{w} in {p}", WORD, st.sampled_from(["src/a.py", "../x.py", "/etc/passwd", "docs/", "a b"]))),
    st.one_of(st.none(), st.integers(0, 30)),
)  # fmt: skip


@FAST
@given(st.lists(st.one_of(SPEC_LINE, NOISE), max_size=12))
def test_speckit_lines_give_valid_units(lines: list[str]) -> None:
    imported = parse_checklist("\n".join(lines), speckit=True)
    ids = [u.id for u in imported.units]
    assert len(set(ids)) == len(ids)
    try:
        progress_validate.validate(
            progress_yaml.to_data(pm.Progress(goal="g", units=imported.units))
        )
    except ProgressFileError as exc:  # "depends on" may be circular in the list itself
        assert "dependency cycle" in exc.message, exc.message


@FAST
@given(st.text(max_size=200))
def test_a_test_strategy_command_is_one_line_of_the_text(text: str) -> None:
    command = shell_command(text)
    if command is not None:
        assert "\n" not in command and command.strip() == command and command
        assert command in text


def test_test_strategy_prose_is_not_a_command() -> None:
    assert shell_command("pytest -q tests/test_api.py") == "pytest -q tests/test_api.py"
    assert shell_command("`npm test -- --watch=false`") == "npm test -- --watch=false"
    assert shell_command("$ make check") == "make check"
    assert shell_command("pytest .") == "pytest ."
    for prose in (
        "Deploy and call the endpoint to confirm 'Hello World' response.",
        "Unit tests for the parser; integration test against the staging API",
        "make sure the page loads.",
        "test the login flow by hand",
        "Run `pytest` and check the output.\nThen deploy.",
        "",
    ):
        assert shell_command(prose) is None, prose
