"""Schema version 2: the optional unit fields parallel, group, notes and blocked_reason, and
the migration of version-1 files (loaded as they are, rewritten as version 2 only on a write)."""

from __future__ import annotations

from pathlib import Path

import pytest

from resume_kit.infra.errors import ProgressFileError
from resume_kit.model import progress as p
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file import roundtrip as progress_yaml
from resume_kit.progress_file import validate as progress_validate
from tests.conftest import run_cli

V2 = """\
# header
schema_version: 2
goal: g
units:
  - id: a   # the first
    title: A
    status: todo
    verify: 'true'
    parallel: true
    group: US1 Sign in   # a story
    notes: half way through the parser
  # between units
  - id: b
    title: B
    status: blocked
    blocked_reason: waiting for the API key
"""

V1 = """\
# my header
schema_version: 1   # keep this comment
goal: g
units:
  # first unit
  - id: a
    title: A
    status: todo
    verify: 'true'
  - id: b
    title: B
    after: [a]   # flow list
notes: top
"""


def _doc(text: str) -> progress_io.ProgressDoc:
    model = progress_io.parse_and_validate(text)
    return progress_io.ProgressDoc(
        path=Path("progress.yaml"), progress=model, text=text, data=progress_yaml.to_data(model)
    )


def test_the_new_fields_load() -> None:
    model = progress_io.parse_and_validate(V2)
    a, b = model.units
    assert (a.parallel, a.group, a.notes, a.blocked_reason) == (
        True,
        "US1 Sign in",
        "half way through the parser",
        None,
    )
    assert (b.parallel, b.group, b.notes, b.blocked_reason) == (
        False,
        None,
        None,
        "waiting for the API key",
    )
    assert model.schema_version == p.SCHEMA_VERSION == 2


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("parallel", "'yes'", "unit 'a': parallel must be true or false, not 'yes'"),
        ("parallel", "1", "unit 'a': parallel must be true or false, not a number"),
        ("side_effects", "'yes'", "unit 'a': side_effects must be true or false, not 'yes'"),
        ("side_effects", "'true'", "unit 'a': side_effects must be true or false, not 'true'"),
        ("side_effects", "0", "unit 'a': side_effects must be true or false, not a number"),
        ("side_effects", "[true]", "unit 'a': side_effects must be true or false, not a list"),
        ("group", "[x]", "unit 'a': group must be a string, not a list"),
        ("notes", "{a: 1}", "unit 'a': notes must be a string, not a mapping"),
        ("blocked_reason", "12", "unit 'a': blocked_reason must be a string, not a number"),
    ],
)
def test_the_new_fields_are_validated(field: str, value: str, expected: str) -> None:
    text = f"schema_version: 2\ngoal: g\nunits:\n  - id: a\n    {field}: {value}\n"
    with pytest.raises(ProgressFileError) as info:
        progress_io.parse_and_validate(text)
    assert str(info.value).startswith(f"progress.yaml:5: {expected}")


def test_a_v2_file_round_trips_byte_for_byte() -> None:
    doc = _doc(V2)
    assert progress_yaml.dump(doc.raw, progress_yaml.detect_indent(V2)) == V2
    doc.progress.units[1].title = "B2"
    for text in (doc.render_fast(), doc.render()):
        assert text == V2.replace("title: B\n", "title: B2\n")


def test_new_fields_are_written_only_when_set() -> None:
    unit = p.Unit(id="x", title="X")
    assert list(progress_yaml.to_data(p.Progress(goal="g", units=[unit]))["units"][0]) == [
        "id",
        "title",
        "status",
    ]
    unit.parallel, unit.group, unit.notes, unit.blocked_reason = True, "G", "N", "R"
    unit.side_effects = True
    data = progress_yaml.to_data(p.Progress(goal="g", units=[unit]))["units"][0]
    assert data == {
        "id": "x",
        "title": "X",
        "status": "todo",
        "parallel": True,
        "side_effects": True,
        "group": "G",
        "notes": "N",
        "blocked_reason": "R",
    }
    assert progress_validate.model_from_cache(
        progress_yaml.to_data(p.Progress(goal="g", units=[unit]))
    ) == p.Progress(goal="g", units=[unit])


def test_a_v1_file_loads_and_is_rewritten_as_v2_on_a_write_with_comments_kept() -> None:
    doc = _doc(V1)
    assert doc.progress.schema_version == 2
    doc.progress.units[0].notes = "in the middle of it"
    expected = V1.replace("schema_version: 1", "schema_version: 2").replace(
        "    verify: 'true'\n", "    verify: 'true'\n    notes: in the middle of it\n"
    )
    assert doc.render_fast() == expected  # the fast path (only the changed unit re-rendered)
    # the full round trip (which also gives b its implicit status)
    assert doc.render() == expected.replace("# flow list\n", "# flow list\n    status: todo\n")


def test_a_v1_file_is_left_alone_until_something_is_written(repo: Path) -> None:
    state = repo / ".resume-kit"
    state.mkdir()
    progress = state / "progress.yaml"
    progress.write_text(V1)
    assert run_cli("status", cwd=repo).code == 0
    assert run_cli("status", "--json", cwd=repo).code == 0
    assert progress.read_text() == V1
    result = run_cli("start", "a", cwd=repo)
    assert result.code == 0, result.stderr
    text = progress.read_text()
    assert text.startswith("# my header\nschema_version: 2   # keep this comment\n")
    assert "  # first unit\n" in text and "after: [a]   # flow list\n" in text
    history = sorted((state / "history").iterdir())
    assert history and history[-1].read_text() == V1  # the version-1 file is kept


def test_a_version_line_inside_a_value_is_not_taken_for_the_key() -> None:
    text = 'schema_version: 1\ngoal: "a\n\nschema_version: 1"\nunits:\n  - id: a\n    title: A\n    status: todo\n'
    doc = _doc(text)
    doc.progress.units[0].status = "done"
    out = doc.render_fast()
    assert progress_io.parse_and_validate(out).goal == "a\nschema_version: 1"
    assert out.startswith("schema_version: 2\n")


def test_a_v1_file_with_crlf_line_ends_is_bumped_on_the_fast_path() -> None:
    text = V1.replace("   # keep this comment", "").replace("\n", "\r\n")
    doc = _doc(text)
    doc.progress.units[0].status = "done"
    out = doc.render_fast()
    assert out.startswith("# my header\r\nschema_version: 2\r\n")
    assert progress_io.parse_and_validate(out).units[0].status == "done"


def test_side_effects_loads_and_is_kept_by_a_rewrite_with_its_comment() -> None:
    text = (
        "schema_version: 2\ngoal: g\nunits:\n  - id: a\n    title: A\n    status: todo\n"
        "    verify: git push origin main\n    side_effects: true   # pushes\n"
    )
    doc = _doc(text)
    assert doc.progress.units[0].side_effects is True
    doc.progress.units[0].title = "A2"
    for rendered in (doc.render_fast(), doc.render()):
        assert rendered == text.replace("title: A\n", "title: A2\n")
    unmarked = progress_io.parse_and_validate(
        text.replace("    side_effects: true   # pushes\n", "")
    )
    assert unmarked.units[0].side_effects is False
