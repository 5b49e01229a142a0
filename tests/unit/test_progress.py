"""The progress model: validation messages, round trips, comments, migration."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.infra.errors import ProgressFileError
from resume_kit.infra.safefs import escapes
from resume_kit.model import progress as p
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file import roundtrip as progress_yaml
from resume_kit.progress_file import validate as progress_validate
from tests.conftest import run_cli

GOOD = """\
# A person's header comment
schema_version: 1
goal: Extract the contracts   # the goal never drifts
units:
  # first unit comment
  - id: doc-001
    title: Extract contract 001
    status: todo
    verify: python check.py out/001.json
  - id: doc-002
    title: Extract contract 002
    after: [doc-001]
notes: keep it short
"""


def _error(text: str) -> ProgressFileError:
    with pytest.raises(ProgressFileError) as info:
        progress_validate.validate(progress_yaml.parse_text(text))
    return info.value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a b\n",
            "progress.yaml:4: unit 'a b': id must match [a-z0-9][a-z0-9._-]*",
        ),
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a\n  - id: a\n",
            "progress.yaml:5: unit 'a': duplicate id (first on line 4)",
        ),
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    status: finished\n",
            "progress.yaml:5: unit 'a': status must be one of todo, in_progress, done, blocked, not 'finished'",
        ),
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    colour: red\n",
            "progress.yaml:5: unit 'a': unknown key 'colour'",
        ),
        ("schema_version: 1\ngoal: g\nextra: 1\n", "progress.yaml:3: unknown key 'extra'"),
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    after: [zz]\n",
            "progress.yaml:4: unit 'a': after names unknown unit 'zz'",
        ),
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    after: [b]\n  - id: b\n    after: [a]\n",
            "dependency cycle: a -> b -> a",
        ),
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    verify: true\n",
            "progress.yaml:5: unit 'a': verify is a boolean (True), not a command; quote it",
        ),
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    verify: 12\n",
            "verify is a number (12), not a command",
        ),
        ("schema_version: 1\ngoal: [1, 2]\n", "progress.yaml:2: goal must be a string"),
        ("schema_version: '1'\ngoal: g\n", "schema_version must be an integer"),
        ("schema_version: 1\ngoal: g\nunits: {a: 1}\n", "units must be a list"),
        (
            "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    files: 3\n",
            "files must be a list of strings",
        ),
        ("", "the file is empty"),
        ("- just\n- a list\n", "the top level must be a mapping"),
        ("schema_version: 1\ngoal: g\nunits: [\n", "not valid YAML"),
        ("schema_version: 1\ngoal: g\ngoal: h\n", "not valid YAML"),
        (
            "schema_version: 9\ngoal: g\n",
            "schema_version 9 is newer than this resume-kit understands",
        ),
    ],
)
def test_validation_messages(text: str, expected: str) -> None:
    assert expected in str(_error(text))


def test_every_validation_error_exits_2_and_leaves_the_file_untouched(repo: Path) -> None:
    state = repo / ".resume-kit"
    state.mkdir()
    bad = "schema_version: 1\ngoal: g\nunits:\n  - id: a b\n    verify: 'true'\n"
    (state / "progress.yaml").write_text(bad)
    before = (state / "progress.yaml").stat()
    for args in (["status"], ["add", "x", "--verify", "true"], ["start", "a"], ["verify-next"]):
        result = run_cli(*args, cwd=repo)
        assert result.code == 2, (args, result.stderr)
        assert result.stderr.startswith(
            "resume-kit: error: progress.yaml:4: unit 'a b': id must match"
        )
        assert "Traceback" not in result.stderr
        assert "\nhint: " in result.stderr
    after = (state / "progress.yaml").stat()
    assert (state / "progress.yaml").read_text() == bad
    assert after.st_mtime_ns == before.st_mtime_ns
    assert not (state / "history").exists()


def test_debug_shows_the_traceback(repo: Path) -> None:
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit" / "progress.yaml").write_text("")
    assert "Traceback" in run_cli("status", "--debug", cwd=repo).stderr
    assert "Traceback" in run_cli("status", cwd=repo, env={"RESUME_KIT_DEBUG": "1"}).stderr


def test_comments_order_and_quoting_survive_a_rewrite() -> None:
    model = progress_validate.validate(progress_yaml.parse_text(GOOD))
    doc = progress_io.ProgressDoc(
        path=Path("x"), progress=model, text=GOOD, data=progress_yaml.to_data(model)
    )
    unit = doc.progress.require_unit("doc-001")
    unit.status = "done"
    unit.evidence = p.Evidence("2026-11-29T08:00:00Z", "abc123", False, "sha256:00", 1.5, None)
    doc.progress.units.append(p.Unit(id="doc-003", title="Three", verify="true"))
    fast = doc.render_fast()
    assert progress_validate.validate(progress_yaml.parse_text(fast)) == doc.progress
    text = doc.render()
    assert progress_validate.validate(progress_yaml.parse_text(text)) == doc.progress
    assert (
        "status" not in fast.split("- id: doc-002")[1].split("- id:")[0]
    )  # untouched units stay as written
    for fragment in (
        "# A person's header comment",
        "# the goal never drifts",
        "# first unit comment",
        "after: [doc-001]",
        "notes: keep it short",
    ):
        assert fragment in text
    again = progress_validate.validate(progress_yaml.parse_text(text))
    assert again.require_unit("doc-001").evidence == unit.evidence
    assert [u.id for u in again.units] == ["doc-001", "doc-002", "doc-003"]


def test_older_schema_is_migrated_in_memory() -> None:
    old = "schema_version: 0\ngoal: g\ntasks:\n  - id: a\n    status: completed\n  - id: b\n    status: pending\n"
    model = progress_validate.validate(progress_yaml.parse_text(old))
    assert [(u.id, u.status) for u in model.units] == [("a", "done"), ("b", "todo")]
    assert model.schema_version == p.SCHEMA_VERSION


def test_pick_next_order() -> None:
    model = progress_validate.validate(
        progress_yaml.parse_text(
            "schema_version: 1\ngoal: g\nunits:\n"
            "  - {id: a, status: done}\n  - {id: b, status: blocked}\n"
            "  - {id: c, after: [b]}\n  - {id: d}\n  - {id: e, status: in_progress}\n"
        )
    )
    assert p.pick_next(model).id == "e"  # type: ignore[union-attr]
    model.require_unit("e").status = "done"
    assert p.pick_next(model).id == "d"  # type: ignore[union-attr]
    model.require_unit("d").status = "done"
    assert p.pick_next(model) is None  # c waits for the blocked b


def test_readiness_is_one_rule_for_pick_next_and_run() -> None:
    from resume_kit.core.batch import Batch, Limits

    model = progress_validate.validate(
        progress_yaml.parse_text(
            "schema_version: 1\ngoal: g\nunits:\n"
            "  - {id: a, verify: 'true'}\n"
            "  - {id: b, status: in_progress, verify: 'true', after: [a]}\n"
        )
    )
    assert [u.id for u in p.ready_units(model)] == ["a"]  # b waits for a, in progress or not
    assert p.pick_next(model).id == "a"  # type: ignore[union-attr]
    assert [u.id for u in Batch(Limits()).candidates(model)] == ["a"]
    model.require_unit("a").status = "done"
    assert p.pick_next(model).id == "b"  # type: ignore[union-attr]
    assert not p.is_ready(model.require_unit("a"), {"a"})  # done is not ready


ids = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=6).map(
    lambda s: "u" + s
)
safe_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85\ufeff"
    ),
    max_size=40,
)
multiline = st.lists(safe_text.map(str.strip).filter(bool), min_size=1, max_size=3).map("\n".join)


@st.composite
def models(draw: st.DrawFn) -> p.Progress:
    unit_ids = draw(st.lists(ids, unique=True, max_size=6))
    units = []
    for index, uid in enumerate(unit_ids):
        status = draw(st.sampled_from(p.STATUSES))
        evidence = None
        if status == "done" and draw(st.booleans()):
            evidence = p.Evidence(
                verified_at="2026-11-29T08:00:00Z",
                commit=draw(st.none() | st.just("3f2a9c1d")),
                dirty=draw(st.booleans()),
                fingerprint="sha256:ab",
                duration_s=draw(st.floats(0, 1e4, allow_nan=False)),
                log=draw(st.none() | st.just(".resume-kit/runs/x.log")),
            )
        failure = None
        if status == "in_progress" and draw(st.booleans()):
            failure = p.LastFailure(
                at="2026-11-29T08:00:00Z",
                exit_code=draw(st.integers(1, 255)),
                signature="9c1e",
                repeats=draw(st.integers(1, 9)),
                excerpt=draw(multiline | safe_text),
            )
        units.append(
            p.Unit(
                id=uid,
                title=draw(safe_text),
                status=status,
                verify=draw(st.none() | safe_text.filter(str.strip)),
                # paths that leave the work tree are invalid (issue 12 item 11)
                files=draw(st.lists(safe_text.filter(lambda t: escapes(t) is None), max_size=2)),
                artifacts=draw(
                    st.lists(safe_text.filter(lambda t: escapes(t) is None), max_size=2)
                ),
                after=draw(st.lists(st.sampled_from(unit_ids[:index]), unique=True, max_size=2))
                if index
                else [],
                evidence=evidence,
                last_failure=failure,
            )
        )
    actions = [
        p.Action(
            key=k,
            description=draw(safe_text),
            status=draw(st.sampled_from(p.ACTION_STATUSES)),
            at="2026-11-29T07:30:00Z",
        )
        for k in draw(st.lists(ids, unique=True, max_size=3))
    ]
    return p.Progress(
        goal=draw(safe_text), units=units, actions=actions, notes=draw(st.none() | safe_text)
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_any_valid_model_round_trips(model: p.Progress) -> None:
    text = progress_yaml.dump(progress_yaml.new_document(model))
    assert progress_validate.validate(progress_yaml.parse_text(text)) == model


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.data())
def test_comments_survive_any_rewrite(model: p.Progress, data: st.DataObject) -> None:
    text = progress_yaml.dump(progress_yaml.new_document(model))
    lines = text.splitlines()
    key_lines = [
        i
        for i, line in enumerate(lines)
        if line.lstrip().startswith(("- id:", "goal:", "units:", "schema_version:"))
    ]
    chosen = data.draw(st.lists(st.sampled_from(key_lines), unique=True, max_size=4))
    for n, index in enumerate(sorted(chosen, reverse=True)):
        indent = len(lines[index]) - len(lines[index].lstrip())
        lines.insert(index, " " * indent + f"# person-comment-{n}")
    commented = "\n".join(lines) + "\n"
    loaded = progress_validate.validate(progress_yaml.parse_text(commented))
    doc = progress_io.ProgressDoc(
        path=Path("x"), progress=loaded, text=commented, data=progress_yaml.to_data(loaded)
    )
    for unit in doc.progress.units:
        unit.status = "todo" if unit.status != "todo" else "in_progress"
        unit.evidence = None
    doc.progress.units.append(p.Unit(id="zz-new", title="new unit", verify="true"))
    expected = progress_yaml.to_data(doc.progress)
    for rewritten in (doc.render_fast(), doc.render()):
        for n in range(len(chosen)):
            assert f"# person-comment-{n}" in rewritten
        assert (
            progress_yaml.to_data(progress_validate.validate(progress_yaml.parse_text(rewritten)))
            == expected
        )


@pytest.mark.parametrize(
    "text",
    [
        "schema_version: 0\ngoal: g\nunits: 5\n",
        "schema_version: 0\ngoal: g\ntasks: {a: 1}\n",
        "schema_version: 0\ngoal: g\ntasks:\n  - 3\n",
    ],
)
def test_a_broken_old_file_is_a_validation_error_not_a_crash(text: str) -> None:
    with pytest.raises(ProgressFileError):
        progress_io.parse_and_validate(text)


def test_an_old_file_migrates_through_the_fast_parser_too() -> None:
    old = "schema_version: 0\ngoal: g\ntasks:\n  - {id: a, status: completed}\nnotes: n\n"
    model = progress_io.parse_and_validate(old)
    assert [(u.id, u.status) for u in model.units] == [("a", "done")]


@pytest.mark.parametrize("plain", ["yes", "on", "No", "off", "1:20", "2026-12-01"])
def test_a_string_yaml_1_1_reads_otherwise_stays_that_string(plain: str) -> None:
    """ruamel (YAML 1.2) writes these strings plain; read without the cache, through libyaml
    (YAML 1.1), they must not come back as ``True``, ``80`` or a date turned into text."""
    text = (
        "schema_version: 2\ngoal: g\nunits:\n  - id: a\n    title: t\n    status: todo\n"
        f"actions:\n  - key: k\n    description: {plain}\n    status: success\n"
        f"    at: '2026-12-01T23:55:04Z'\n    attempts:\n      - status: success\n"
        f"        command: {plain}\n"
    )
    action = progress_io.parse_and_validate(text).actions[0]
    assert action.description == plain
    assert action.attempts[0].command == plain


@pytest.mark.parametrize("plain", ["no", "off", "No"])
def test_a_description_yaml_1_1_reads_as_false_is_kept(plain: str) -> None:
    """Alone in the file (no other field sends it to ruamel), a description libyaml reads as
    false is neither dropped nor turned into text."""
    text = (
        "schema_version: 2\ngoal: g\nunits:\n  - id: a\n    title: t\n    status: todo\n"
        f"actions:\n  - key: k\n    description: {plain}\n    status: success\n"
    )
    assert progress_io.parse_and_validate(text).actions[0].description == plain


def _units_text(count: int) -> str:
    units = "".join(
        f"  - id: u{n}\n    title: Unit {n}\n    status: todo\n    verify: test -f out/{n}\n"
        f"    files: [src/{n}.py]\n"
        for n in range(count)
    )
    return f"schema_version: 2\ngoal: Many units\nunits:\n{units}"


def test_no_cyclic_collection_runs_while_libyaml_builds_a_progress_file() -> None:
    import gc

    collections: list[str] = []

    def seen(phase: str, _info: dict[str, int]) -> None:
        collections.append(phase)

    threshold = gc.get_threshold()
    gc.set_threshold(10)  # at this pace a collection would run every few objects
    gc.callbacks.append(seen)
    try:
        model = progress_io.parse_and_validate(_units_text(2_000))
        during = list(collections)
        with pytest.raises(ProgressFileError):
            progress_io.parse_and_validate("schema_version: 2\ngoal: x\nunits: [{id: 1}]\n")
        enabled_after_an_error = gc.isenabled()
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*threshold)
    assert len(model.units) == 2_000
    # only the few it owes once it is on again (unpaused: about ten thousand)
    assert during.count("start") <= 10
    assert gc.isenabled() and enabled_after_an_error


def test_a_paused_collector_stays_paused_for_a_caller_that_paused_it() -> None:
    import gc

    from resume_kit.infra.collector import paused_collections

    gc.disable()
    try:
        with paused_collections():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_quoted_attempt_status_is_plain_text_in_the_model() -> None:
    """ruamel reads a quoted scalar as a str subclass that carries its quoting; kept in the
    model, it made the ruamel path write a rewritten attempts list with the old quotes where
    our emitter writes fresh styles (found by test_unit_block's ledger property)."""
    text = (
        "schema_version: 2\ngoal: g\nunits: []\nactions:\n- key: b\n  description: yes\n"
        "  status: success\n  attempts:\n  - status: 'success'\n    at: '2026-12-01T23:55:04Z'\n"
    )
    action = progress_io.parse_and_validate(text).actions[0]
    assert type(action.attempts[0].status) is str
