"""Hypothesis over every parser (issue 6, part 6).

Two kinds of property for each reader of outside data:

* **robustness**: on arbitrary input (random bytes, random JSON, random YAML-ish text) it
  returns its documented shape or raises its documented user error, nothing else;
* **agreement**: where two implementations answer the same question, they agree (the porcelain
  parser and the records it was given; the libyaml fast path and the round-trip parser; the
  hook's line scanner and a real YAML parser; ``lines_backward`` and reading the file forwards;
  ``**`` globs and ``glob.glob``; a snapshot saved and loaded back).
"""

from __future__ import annotations

import glob as globmod
import io
import json
import os
import string
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from resume_kit.infra.errors import ConfigError, ProgressFileError, ResumeKitError
from resume_kit.infra.safefs import escapes
from resume_kit.model import progress as pm
from resume_kit.progress_file import config as config_mod
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file import roundtrip as progress_yaml
from resume_kit.progress_file import validate as progress_validate

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


def write_tmp(data: bytes, suffix: str = "") -> Path:
    with tempfile.NamedTemporaryFile(delete=False, suffix=suffix) as handle:
        handle.write(data)
    return Path(handle.name)


# --------------------------------------------------------------------------- git porcelain

PATH_BYTES = st.binary(min_size=1, max_size=30).filter(lambda b: b"\0" not in b)
XY = st.sampled_from([".M", "M.", "MM", "A.", "D.", ".D", "R.", "RM", "C.", "AM", "T."])
MODE = st.sampled_from(["100644", "100755", "120000", "160000", "000000"])
SHA = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)


@st.composite
def porcelain(draw: Any) -> tuple[bytes, list[dict[str, Any]], dict[str, Any]]:
    """A ``git status --porcelain=v2 -z --branch`` stream and what it holds."""
    header: dict[str, Any] = {}
    tokens: list[bytes] = []
    if draw(st.booleans()):
        oid = draw(st.one_of(SHA, st.just("(initial)")))
        tokens.append(f"# branch.oid {oid}".encode())
        header["oid"] = None if oid == "(initial)" else oid
    if draw(st.booleans()):
        head = draw(st.one_of(st.just("(detached)"), st.text(string.ascii_letters + "/-_", min_size=1, max_size=12)))  # fmt: skip
        tokens.append(f"# branch.head {head}".encode())
        header["head"] = None if head == "(detached)" else head
    if draw(st.booleans()):
        ahead, behind = draw(st.integers(0, 999)), draw(st.integers(0, 999))
        tokens.append(f"# branch.ab +{ahead} -{behind}".encode())
        header["ahead"], header["behind"] = ahead, behind
    entries: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["1", "2", "u", "?", "!"]))
        path = draw(PATH_BYTES)
        text = path.decode("utf-8", "surrogateescape")
        if kind in ("?", "!"):
            tokens.append(kind.encode() + b" " + path)
            entries.append({"kind": kind, "path": text})
        elif kind == "1":
            xy = draw(XY)
            modes = [draw(MODE) for _ in range(3)]
            hashes = [draw(SHA) for _ in range(2)]
            tokens.append(f"1 {xy} N... {' '.join(modes)} {' '.join(hashes)} ".encode() + path)
            entries.append({"kind": "1", "xy": xy, "sub": "N...", "modes": modes, "hashes": hashes, "path": text})  # fmt: skip
        elif kind == "2":
            xy = draw(XY)
            modes = [draw(MODE) for _ in range(3)]
            hashes = [draw(SHA) for _ in range(2)]
            orig = draw(PATH_BYTES)
            score = f"R{draw(st.integers(0, 100))}"
            tokens.append(
                f"2 {xy} N... {' '.join(modes)} {' '.join(hashes)} {score} ".encode() + path
            )
            tokens.append(orig)
            entries.append({"kind": "2", "xy": xy, "sub": "N...", "modes": modes, "hashes": hashes,
                            "path": text, "score": score,
                            "orig_path": orig.decode("utf-8", "surrogateescape")})  # fmt: skip
        else:
            modes = [draw(MODE) for _ in range(4)]
            hashes = [draw(SHA) for _ in range(3)]
            tokens.append(f"u UU N... {' '.join(modes)} {' '.join(hashes)} ".encode() + path)
            entries.append({"kind": "u", "xy": "UU", "sub": "N...", "modes": modes, "hashes": hashes, "path": text})  # fmt: skip
    return b"\0".join(tokens) + (b"\0" if tokens else b""), entries, header


@FAST
@given(porcelain())
def test_porcelain_records_round_trip(
    case: tuple[bytes, list[dict[str, Any]], dict[str, Any]],
) -> None:
    from resume_kit.facts.git import parse_status_v2

    data, entries, header = case
    parsed = parse_status_v2(data)
    assert parsed["entries"] == entries
    for key, value in header.items():
        assert parsed[key] == value


@FAST
@given(st.binary(max_size=400), st.integers(1, 300))
def test_porcelain_parsing_never_fails(data: bytes, max_paths: int) -> None:
    from resume_kit.facts.git import changes_from_status, parse_status_v2
    from resume_kit.facts.snapshot import json_safe

    parsed = parse_status_v2(data)
    assert set(parsed) == {"oid", "head", "upstream", "ahead", "behind", "stash", "entries"}
    changes, _conflicts, _ = changes_from_status(parsed, max_paths)
    counts = changes["counts"]
    assert all(len(changes[k]) == min(counts[k], max_paths) for k in counts)
    json.dumps(json_safe(changes))  # whatever the bytes, the snapshot can store them


@FAST
@given(st.lists(st.tuples(st.one_of(st.integers(0, 10**6), st.just("-")),
                          st.one_of(st.integers(0, 10**6), st.just("-")), PATH_BYTES,
                          st.one_of(st.none(), PATH_BYTES)), max_size=6))  # fmt: skip
def test_numstat_records_round_trip(records: list[tuple[Any, Any, bytes, bytes | None]]) -> None:
    from resume_kit.facts.git import parse_numstat_z

    tokens: list[bytes] = []
    expected: dict[str, tuple[int | None, int | None]] = {}
    for added, deleted, path, old in records:
        head = f"{added}\t{deleted}\t".encode()
        if old is None:
            tokens.append(head + path)
        else:  # a rename: empty path, then the old and the new path
            tokens += [head, old, path]
        key = path.decode("utf-8", "surrogateescape")
        expected[key] = (None if added == "-" else added, None if deleted == "-" else deleted)
    assert parse_numstat_z(b"\0".join(tokens) + b"\0") == expected


@FAST
@given(st.binary(max_size=300))
def test_numstat_parsing_never_fails(data: bytes) -> None:
    from resume_kit.facts.git import parse_numstat_z

    for path, (added, deleted) in parse_numstat_z(data).items():
        assert isinstance(path, str)
        assert added is None or isinstance(added, int)
        assert deleted is None or isinstance(deleted, int)


# --------------------------------------------------------------------------- transcripts

CLAUDE_RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "summary", "attachment", "other"])},
    optional={
        "message": st.one_of(JSON, st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                             "content": st.one_of(st.text(max_size=30), st.lists(st.one_of(JSON,
                                 st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use", "tool_result"])},
                                 optional={"text": JSON, "name": st.sampled_from(["TodoWrite", "Bash", 3]),
                                           "input": st.one_of(JSON, st.fixed_dictionaries({"todos": st.lists(JSON, max_size=3)})),
                                           "content": JSON, "is_error": JSON, "tool_use_id": JSON})), max_size=3))},
                             optional={"usage": JSON})),
        "timestamp": st.one_of(JSON, st.just("2026-11-29T08:00:00Z")),
        "sessionId": JSON, "cwd": JSON, "subtype": st.sampled_from(["compact_boundary", "x"]),
        "isCompactSummary": JSON, "todos": JSON,
    },
)  # fmt: skip
CODEX_RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["session_meta", "response_item", "event_msg", "turn_context", "x"])},
    optional={
        "timestamp": JSON,
        "payload": st.one_of(JSON, st.fixed_dictionaries(
            {"type": st.sampled_from(["function_call", "function_call_output", "message",
                                      "exec_command_end", "token_count", "user_message"])},
            optional={"name": st.sampled_from(["update_plan", "shell"]), "arguments": st.one_of(JSON,
                      st.builds(json.dumps, st.fixed_dictionaries({"plan": st.lists(JSON, max_size=3)}))),
                      "output": JSON, "exit_code": JSON, "info": JSON, "message": JSON, "call_id": JSON,
                      "content": JSON, "id": JSON, "cwd": JSON})),
    },
)  # fmt: skip
LINE = st.one_of(
    CLAUDE_RECORD.map(json.dumps),
    CODEX_RECORD.map(json.dumps),
    JSON.map(json.dumps),
    st.text(max_size=40),
)


def check_transcript_shape(result: dict[str, Any]) -> None:
    assert set(result) >= {"agent", "path", "session_id", "updated_at", "todos", "tool_errors",
                           "last_request", "tokens", "compactions", "notes"}  # fmt: skip
    assert result["todos"] is None or all(
        isinstance(t["content"], str) and t["status"] in ("pending", "in_progress", "completed")
        for t in result["todos"]
    )
    assert len(result["tool_errors"]) <= 5
    assert all(isinstance(e["message"], str) for e in result["tool_errors"])
    assert result["last_request"] is None or (
        isinstance(result["last_request"], str) and len(result["last_request"]) <= 300
    )
    assert all(isinstance(n, str) for n in result["notes"])
    json.dumps(result, default=str)


@SLOW
@given(st.lists(LINE, max_size=12), st.binary(max_size=40))
def test_transcript_readers_never_fail(lines: list[str], junk: bytes) -> None:
    from resume_kit.facts.transcripts import detect_agent
    from resume_kit.facts.transcripts.claude_code import read_session
    from resume_kit.facts.transcripts.codex import read_rollout

    path = write_tmp("\n".join(lines).encode() + b"\n" + junk, ".jsonl")
    try:
        for reader in (read_session, read_rollout):
            check_transcript_shape(reader(path, cap=4096, min_bytes=0))
        assert detect_agent(path) in (None, "claude-code", "codex")
    finally:
        path.unlink()


@FAST
@given(st.binary(max_size=600), st.integers(1, 64), st.integers(1, 700))
@example(b"a\n\nb", 1, 700)
@example(b"\n\n\nlast", 2, 3)
def test_lines_backward_agrees_with_reading_forwards(data: bytes, block: int, cap: int) -> None:
    from resume_kit.facts.transcripts.tail import TailStats, lines_backward

    stats = TailStats(size=len(data))
    got = list(lines_backward(io.BytesIO(data), stats, cap=cap, block=block))
    if cap >= len(data):
        assert stats.reached_start
        assert got == [line for line in reversed(data.split(b"\n")) if line.strip()]
    else:  # only whole lines from the window, newest first; the cut first line is dropped
        window = data[len(data) - stats.bytes_read :]
        whole = window.split(b"\n")[1:] if not stats.reached_start else window.split(b"\n")
        assert got == [line for line in reversed(whole) if line.strip()]
        assert stats.bytes_read <= cap


# --------------------------------------------------------------------------- hook stdin


@FAST
@given(st.one_of(st.binary(max_size=200), JSON.map(lambda v: json.dumps(v).encode()),
                 st.dictionaries(st.sampled_from(["cwd", "session_id", "transcript_path", "source",
                                                  "trigger", "stop_hook_active", "x"]), JSON)
                 .map(lambda v: json.dumps(v).encode())))  # fmt: skip
def test_hook_payloads_give_known_string_fields_or_nothing(raw: bytes) -> None:
    from resume_kit.integrations.agent_input import parse_hook_payload, read_hook_input

    picked = parse_hook_payload(raw)
    allowed = {"session_id", "transcript_path", "cwd", "source", "trigger", "hook_event_name"}
    for key, value in picked.items():
        if key == "stop_hook_active":
            assert isinstance(value, bool)
        else:
            assert key in allowed and isinstance(value, str) and value and "\0" not in value
    read_fd, write_fd = os.pipe()
    os.write(write_fd, raw)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as stream:
        assert read_hook_input(timeout=1.0, stream=stream) == picked


# --------------------------------------------------------------------------- progress.yaml

ID = st.from_regex(r"\A[a-z0-9][a-z0-9._-]{0,12}\Z")
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)


def inside_tree(text: str) -> bool:
    """A unit path a progress file may hold: not empty, not leaving the work tree."""
    return bool(text) and escapes(text) is None


STATUS = st.sampled_from(pm.STATUSES)


@st.composite
def progress_models(draw: Any) -> pm.Progress:
    ids = draw(st.lists(ID, max_size=6, unique=True))
    units = []
    for n, uid in enumerate(ids):
        status = draw(STATUS)
        evidence = None
        if status == "done" and draw(st.booleans()):
            evidence = pm.Evidence("2026-11-29T08:00:00Z", draw(st.one_of(st.none(), SHA)),
                                   draw(st.booleans()), "sha256:" + "0" * 64,
                                   round(draw(st.floats(0, 1e4, allow_nan=False)), 2), None)  # fmt: skip
        failure = None
        if status == "in_progress" and draw(st.booleans()):
            failure = pm.LastFailure("2026-11-29T08:00:00Z", draw(st.integers(1, 255)), "ab" * 8,
                                     draw(st.integers(1, 9)), draw(TEXT))  # fmt: skip
        units.append(pm.Unit(
            id=uid, title=draw(TEXT) or uid, status=status,
            verify=draw(st.one_of(st.none(), TEXT.filter(lambda t: bool(t.strip())))),
            files=draw(st.lists(TEXT.filter(inside_tree), max_size=2)),
            artifacts=draw(st.lists(TEXT.filter(inside_tree), max_size=2)),
            after=draw(st.lists(st.sampled_from(ids[:n]), max_size=2, unique=True)) if n else [],
            evidence=evidence, last_failure=failure,
        ))  # fmt: skip
    actions = [pm.Action(key, draw(TEXT), draw(st.sampled_from(pm.ACTION_STATUSES)), None)
               for key in draw(st.lists(ID, max_size=3, unique=True))]  # fmt: skip
    return pm.Progress(goal=draw(TEXT), units=units, actions=actions,
                       notes=draw(st.one_of(st.none(), TEXT)))  # fmt: skip


@SLOW
@given(progress_models())
def test_progress_written_by_the_tool_reads_back_the_same(model: pm.Progress) -> None:
    text = progress_yaml.dump(progress_yaml.new_document(model))
    assert progress_yaml.to_data(progress_io.parse_and_validate(text)) == progress_yaml.to_data(
        model
    )
    assert progress_yaml.to_data(
        progress_validate.validate(progress_yaml.parse_text(text))
    ) == progress_yaml.to_data(model)


@SLOW
@given(progress_models(), st.data())
def test_rewriting_some_units_keeps_the_rest_and_reads_back(model: pm.Progress, data: Any) -> None:
    """The incremental writer (only changed units re-rendered) against the full model.
    (Durations are rounded to 0.01 s, as verify-next writes them: ruamel.yaml may re-render a
    float in exponent notation one ulp off, e.g. 8.048548390692633e-123.)"""
    assume(model.units)
    text = "# a person's comment\n" + progress_yaml.dump(progress_yaml.new_document(model))
    doc = progress_io.ProgressDoc(path=Path("progress.yaml"), progress=progress_io.parse_and_validate(text),
                         text=text, data=progress_yaml.to_data(model))  # fmt: skip
    unit = data.draw(st.sampled_from(doc.progress.units))
    unit.status = data.draw(STATUS)
    unit.title = data.draw(TEXT) or unit.id
    if data.draw(st.booleans()):
        doc.progress.units.append(pm.Unit(id=unit.id + "-new", title="added", verify="true"))
    rendered = doc.render_fast()
    assert progress_yaml.to_data(progress_io.parse_and_validate(rendered)) == progress_yaml.to_data(
        doc.progress
    )
    assert rendered.startswith("# a person's comment\n")


YAMLISH = st.lists(st.sampled_from([*":- \n#'\"[]{}&*!|>%@`?,\t", "units", "id", "goal",
                   "schema_version", "status", "in_progress", "1", "a", "\\", "\u00e9"]),
                   max_size=60).map("".join)  # fmt: skip


@FAST
@given(st.one_of(YAMLISH, st.text(max_size=200),
                 st.builds(lambda d: yaml.safe_dump(d, default_flow_style=None), JSON)))  # fmt: skip
def test_progress_text_is_a_model_or_a_one_line_error(text: str) -> None:
    try:
        model = progress_io.parse_and_validate(text)
    except ProgressFileError as exc:
        assert exc.message and "\n" not in exc.message
        assert exc.message.startswith("progress.yaml")
        return
    assert (
        progress_validate.validate(progress_yaml.parse_text(text)) == model
    )  # both parsers agree it is valid


@st.composite
def progress_documents(draw: Any) -> str:
    """Progress files as people write them: valid or nearly, in different YAML styles."""
    doc: dict[str, Any] = {"schema_version": draw(st.sampled_from([1, 1, 1, 0, "1", 2]))}
    if draw(st.booleans()) or True:
        doc["goal"] = draw(st.one_of(TEXT, st.integers(), st.lists(TEXT, max_size=2)))
    units = []
    for uid in draw(st.lists(st.one_of(ID, TEXT), max_size=5)):
        unit: dict[str, Any] = {"id": uid}
        for key, value in (("status", st.one_of(STATUS, TEXT)), ("title", TEXT),
                           ("verify", st.one_of(TEXT, st.booleans(), st.integers())),
                           ("after", st.lists(ID, max_size=2)), ("files", st.one_of(TEXT, st.lists(TEXT, max_size=2))),
                           ("colour", TEXT)):  # fmt: skip
            if draw(st.integers(0, 3)) == 0:
                unit[key] = draw(value)
        units.append(unit)
    doc["units"] = draw(st.one_of(st.just(units), JSON))
    if draw(st.integers(0, 4)) == 0:
        doc[draw(st.text(max_size=6))] = draw(JSON)  # an unknown key, maybe with a newline
    style = draw(st.sampled_from([{}, {"default_flow_style": True}, {"indent": 4}, {"width": 20}]))
    return str(yaml.safe_dump(doc, sort_keys=draw(st.booleans()), allow_unicode=True, **style))


@SLOW
@given(progress_documents())
@example('schema_version: 1\ngoal: g\nunits: []\n"a\\nb": 1\n')
@example("schema_version: 1\ngoal: g\nunits: " + "[" * 300 + "]" * 300 + "\n")
def test_fast_and_round_trip_parsers_agree(text: str) -> None:
    try:
        fast: Any = progress_io.parse_and_validate(text)
    except ProgressFileError as exc:
        assert "\n" not in exc.message, exc.message  # one line, whatever the file holds
        fast = ("error", exc.message.split(":", 1)[0])
    try:
        slow: Any = progress_validate.validate(progress_yaml.parse_text(text))
    except ProgressFileError as exc:
        slow = ("error", exc.message.split(":", 1)[0])
    assert fast == slow


@SLOW
@given(progress_documents())
@example("schema_version: 1\ngoal: g\nunits:\n- id: 0\xa0\n  status: todo\n")  # NBSP is no space
def test_hook_scanner_agrees_with_a_yaml_parser(text: str) -> None:
    """The prepare-commit-msg hook reads progress.yaml with a line scanner (no YAML import);
    when it answers at all, it answers what a YAML parser would."""
    from resume_kit.integrations.hook_entry import (
        UnusualYaml,
        first_unit_in_progress,
        first_unit_in_progress_yaml,
    )

    text = text.replace("status: todo", "status: in_progress", 1)
    expected = first_unit_in_progress_yaml(text)
    try:
        found = first_unit_in_progress(text)
    except UnusualYaml:
        return
    assert found == expected


# --------------------------------------------------------------------------- config.yaml

CONFIG_VALUE = st.one_of(JSON, st.lists(st.text(max_size=10), max_size=3), st.integers(-5, 5000),
                         st.dictionaries(st.sampled_from(["max_tokens", "timeout_s", "x"]), JSON, max_size=2))  # fmt: skip
CONFIG_KEY = st.sampled_from(["logs", "artifacts", "keep_snapshots", "brief", "verify", "transcripts",
                              "summarize", "summarize_model", "colour"])  # fmt: skip


@FAST
@given(st.one_of(JSON, st.dictionaries(CONFIG_KEY, CONFIG_VALUE, max_size=4)))
def test_config_is_a_config_or_a_one_line_error(raw: Any) -> None:
    try:
        parsed = config_mod.parse(raw)
    except ConfigError as exc:
        assert exc.message.startswith("config.yaml") and "\n" not in exc.message
        return
    assert parsed.keep_snapshots > 0 and parsed.brief_max_tokens > 0 and parsed.verify_timeout_s > 0
    assert all(isinstance(g, str) for g in parsed.logs)


@FAST
@given(st.one_of(YAMLISH, st.binary(max_size=80).map(lambda b: b.decode("latin-1"))))
def test_config_text_is_a_config_or_a_one_line_error(text: str) -> None:
    from resume_kit.infra.paths import Layout

    root = Path(tempfile.mkdtemp())
    (root / ".resume-kit").mkdir()
    (root / ".resume-kit" / "config.yaml").write_text(
        text, encoding="utf-8", errors="surrogateescape"
    )
    try:
        config_mod.load(Layout(root=root, git_dir=root / ".git", git_common_dir=root / ".git"))
    except ConfigError as exc:
        assert "\n" not in exc.message


# --------------------------------------------------------------------------- snapshots


SNAPSHOT_KEYS = {"schema_version", "id", "created_at", "trigger", "repo", "changes", "recent_commits",
                 "logs", "tests", "artifacts", "transcript", "progress", "notes", "units", "checksum"}  # fmt: skip


@SLOW
@given(st.dictionaries(st.text(max_size=10).filter(lambda k: k not in SNAPSHOT_KEYS), JSON, max_size=5),
       st.text(max_size=20), st.binary(max_size=20))  # fmt: skip
def test_snapshots_save_and_load_back_intact(
    extra: dict[str, Any], name: str, raw_name: bytes
) -> None:
    from resume_kit.facts.snapshot import json_safe
    from resume_kit.facts.snapshot_store import load_latest, read_snapshot, save_snapshot
    from resume_kit.infra.paths import Layout

    root = Path(tempfile.mkdtemp())
    layout = Layout(root=root, git_dir=root / ".git", git_common_dir=root / ".git")
    odd = raw_name.decode("utf-8", "surrogateescape")  # a name git gave us as bytes
    snapshot = dict(json_safe({**extra, "schema_version": 1, "id": "20261129T080000000Z-abcdef",
                               "notes": [name, odd], "changes": {"untracked": [{"path": odd}]}}))  # fmt: skip
    path = save_snapshot(layout, snapshot, keep=3)
    loaded, problem = read_snapshot(path)
    assert problem is None and loaded == snapshot
    latest, warnings = load_latest(layout)
    assert latest == snapshot and warnings == []


@FAST
@given(st.one_of(st.binary(max_size=200), JSON.map(lambda v: json.dumps(v).encode())))
def test_any_file_in_the_snapshot_store_is_loaded_or_skipped(data: bytes) -> None:
    from resume_kit.facts.snapshot_store import read_snapshot

    path = write_tmp(data, ".json")
    try:
        loaded, problem = read_snapshot(path)
    finally:
        path.unlink()
    assert (loaded is None) != (problem is None)
    assert problem is None or isinstance(problem, str)


# --------------------------------------------------------------------------- imports, logs, tests

MARKDOWN_LINE = st.one_of(
    st.builds(lambda mark, text: f"- [{mark}] {text}", st.sampled_from(" xX~-"), st.text(max_size=30)),
    st.builds(lambda n, text: f"- [ ] T{n:03d} [P] [US1] {text}", st.integers(0, 999), st.text(max_size=20)),
    st.builds(lambda text: f"# {text}", st.text(max_size=20)),
    st.text(max_size=40),
)  # fmt: skip


def check_imported_units(units: list[pm.Unit]) -> None:
    """Imported units form a progress file: valid, or refused for a dependency cycle only."""
    try:
        progress_validate.validate(progress_yaml.to_data(pm.Progress(goal="g", units=units)))
    except ProgressFileError as exc:
        assert "dependency cycle" in exc.message, exc.message


@FAST
@given(st.lists(MARKDOWN_LINE, max_size=10))
def test_markdown_import_gives_valid_units_or_a_user_error(lines: list[str]) -> None:
    from resume_kit.progress_file.importers import parse_import

    try:
        imported = parse_import("\n".join(lines), "tasks.md")
    except ResumeKitError:
        return
    check_imported_units(imported.units)


TASK = st.fixed_dictionaries(
    {"id": st.one_of(st.integers(0, 20), st.text(max_size=6), JSON)},
    optional={"title": JSON, "status": st.sampled_from(["pending", "done", "in-progress", "x"]),
              "dependencies": st.one_of(st.lists(st.one_of(st.integers(0, 20), st.text(max_size=4)), max_size=3), JSON),
              "subtasks": st.one_of(st.lists(st.fixed_dictionaries({"id": st.integers(0, 5)},
                  optional={"dependencies": st.lists(st.integers(0, 5), max_size=2), "title": JSON}), max_size=3), JSON),
              "description": JSON, "testStrategy": JSON},
)  # fmt: skip


@FAST
@given(st.one_of(
    st.lists(TASK, max_size=6).map(lambda tasks: {"tasks": tasks}),
    st.dictionaries(st.text(max_size=6), st.lists(TASK, max_size=3).map(lambda t: {"tasks": t}), max_size=3),
    JSON,
))  # fmt: skip
def test_taskmaster_import_gives_valid_units_or_a_user_error(data: Any) -> None:
    from resume_kit.progress_file.importers import parse_import

    try:
        imported = parse_import(json.dumps(data), "tasks.json")
    except ResumeKitError:
        return
    check_imported_units(imported.units)


@FAST
@given(st.text(max_size=600))
def test_error_lines_are_lines_of_the_log(text: str) -> None:
    from resume_kit.facts.logs import error_lines
    from resume_kit.infra.redact import redact

    lines = error_lines(text)
    assert len(lines) <= 40 and len(set(lines)) == len(lines)
    sources = [redact(line).strip() for line in text.splitlines()]
    for line in lines:
        assert "\n" not in line
        assert any(line.rstrip("…") in s or s.startswith(line.rstrip("…")) for s in sources), line


@FAST
@given(st.one_of(st.text(max_size=100), JSON.map(json.dumps)))
def test_pytest_cache_is_ids_or_nothing(text: str) -> None:
    from resume_kit.facts.pytest_cache import parse_lastfailed

    ids = parse_lastfailed(text)
    assert ids is None or all(isinstance(i, str) for i in ids)


# --------------------------------------------------------------------------- globs


@SLOW
@given(st.sets(st.lists(st.sampled_from(["a", "b", ".h", "x.log", "y.txt", "c"]), min_size=1,
                        max_size=4).map("/".join), max_size=8),
       st.lists(st.sampled_from(["**", "*", "a", "b", ".h", "*.log", "x.log", "?.txt", "[ab]", "[!a]"]),
                min_size=1, max_size=4).map("/".join))  # fmt: skip
def test_recursive_globs_match_glob_without_symlinks(files: set[str], pattern: str) -> None:
    """The walker behind ``**`` (which never follows links into folders) finds what glob finds
    in a tree without symbolic links (except glob's quirk of yielding ``a/`` for ``a/**`` when
    ``a`` is a file: a file is not inside a folder of its own name)."""
    from resume_kit.facts.fingerprint import expand_globs

    root = Path(tempfile.mkdtemp())
    for rel in files:
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_dir():
                path.write_text("x")
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue
    expected = sorted(  # a set: glob repeats a match for "**/**"
        {
            Path(m).as_posix()
            for m in globmod.glob(pattern, root_dir=root, recursive=True)
            if (root / m).is_file() and not m.endswith("/")  # glob's "a/" for a file named a
        }
    )
    assert expand_globs(root, [pattern]) == expected


def _status_by_field(data: bytes) -> list[dict[str, Any]]:
    """The porcelain v2 entries with each field decoded on its own (the parser before it
    decoded the whole output once): the oracle of the test below."""

    def text(raw: bytes) -> str:
        return raw.decode("utf-8", "surrogateescape")

    def changed(fields: list[bytes], modes: int, hashes: int) -> dict[str, Any]:
        return {"kind": text(fields[0]), "xy": text(fields[1]), "sub": text(fields[2]),
                "modes": [text(f) for f in fields[3 : 3 + modes]],
                "hashes": [text(f) for f in fields[3 + modes : 3 + modes + hashes]],
                "path": text(fields[-1])}  # fmt: skip

    entries: list[dict[str, Any]] = []
    tokens = data.split(b"\0")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        kind = token[:1]
        if kind in (b"?", b"!") and token[1:2] == b" ":
            entries.append({"kind": text(kind), "path": text(token[2:])})
        elif kind == b"1" and len(fields := token.split(b" ", 8)) == 9:
            entries.append(changed(fields, 3, 2))
        elif kind == b"2" and len(fields := token.split(b" ", 9)) == 10 and i < len(tokens):
            entry = changed(fields, 3, 2)
            entry["score"], entry["orig_path"] = text(fields[8]), text(tokens[i])
            i += 1
            entries.append(entry)
        elif kind == b"u" and len(fields := token.split(b" ", 10)) == 11:
            entries.append(changed(fields, 4, 3))
    return entries


@FAST
@given(porcelain(), st.lists(st.tuples(st.integers(0, 10_000), st.binary(max_size=3))))
def test_porcelain_decoded_whole_equals_each_field_decoded_alone(
    case: tuple[bytes, list[dict[str, Any]], dict[str, Any]],
    splices: list[tuple[int, bytes]],
) -> None:
    from resume_kit.facts.git import parse_status_v2

    data = case[0]
    for at, raw in splices:  # stray bytes anywhere: broken UTF-8 next to spaces and NULs
        at %= len(data) + 1
        data = data[:at] + raw + data[at:]
    assert parse_status_v2(data)["entries"] == _status_by_field(data)
