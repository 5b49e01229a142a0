"""Our own emitter for one unit's block (progress_file/unit_block.py) against the ruamel path it
replaces: byte for byte the same block and file, reading back to the same model."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from resume_kit.progress_file import patch, unit_block
from resume_kit.progress_file.io import parse_and_validate
from resume_kit.progress_file.roundtrip import dump, merge_into, to_data

DIFF = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TRICKY = st.sampled_from(
    ["yes", "No", "on", "1:20", "2026-01-01", "2026-11-29T08:00:00Z", "a: b", "a #b", "a#b",
     "-x", "- x", "'q'", '"q"', "", "null", "~", "12", "0755", "1e5", "0x1f", ".5", "x,y", "x:",
     "sha256:ab", "a\nb", "KeyError: 'party_b' (src/extract.py:88)", "it's", "a  b", " a", "b ",
     "pytest -q && echo ok", "a | b", "*.py", "!x", "&x", "%x", "@x", "`x`", "?x", ":x", "---x",
     "...", "é", "x\ty", "line one\nline two", "one\n  two", "trailing \nx", "x\n", "[x]", "{a}",
     "true", "False", ".inf", "=", "<<", "0b101", "+1", "-1.5", "1_000"]
)  # fmt: skip
SIMPLE = st.text(alphabet="abcxyz0129 ._/-:'\"#,&|*\\", min_size=1, max_size=24)
TEXT = st.one_of(
    SIMPLE,
    SIMPLE,
    TRICKY,
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30),
    st.text(alphabet="abc019 :#-'\",.\n/_", max_size=20),
)
ID = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
HEX = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)
EVIDENCE = st.fixed_dictionaries(
    {
        "verified_at": st.sampled_from(["2026-12-01T23:55:04Z", "2026-11-29T08:00:00Z"]),
        "commit": st.one_of(st.none(), HEX),
        "dirty": st.booleans(),
        "fingerprint": HEX.map(lambda h: "sha256:" + h),
        "duration_s": st.floats(0, 1e4, allow_nan=False).map(lambda f: round(f, 2)),
    },
    optional={"log": st.sampled_from([".resume-kit/runs/a-20261201T235504165Z.log", "x y"])},
)
FAILURE = st.fixed_dictionaries(
    {
        "at": st.just("2026-11-29T08:00:00Z"),
        "exit_code": st.integers(1, 255),
        "signature": st.one_of(HEX, st.just("9c1e0b7d2f4a"), st.just("1234")),
        "repeats": st.integers(1, 9),
        "excerpt": TEXT,
    },
    optional={"state": HEX.map(lambda h: "sha256:" + h), "reruns": st.integers(1, 5)},
)
PATHS = st.lists(st.one_of(TEXT.filter(bool), st.just("src/a.py")), min_size=1, max_size=3)


@st.composite
def units(draw: Any, uid: str | None = None) -> dict[str, Any]:
    unit: dict[str, Any] = {
        "id": uid or draw(ID),
        "title": draw(TEXT),
        "status": draw(st.sampled_from(["todo", "in_progress", "done", "blocked"])),
    }
    optional = {
        "verify": TEXT,
        "files": PATHS,
        "artifacts": PATHS,
        "parallel": st.just(True),
        "notes": TEXT,
        "evidence": EVIDENCE,
        "last_failure": FAILURE,
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            unit[key] = draw(strategy)
    return unit


def styled(draw: Any, node: Any) -> Any:
    """``node`` (ruamel's round-trip data) with some strings quoted and some lists in flow
    style, as a person or another tool may have written them (ruamel keeps those styles)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    if isinstance(node, CommentedMap):
        for key in list(node):
            node[key] = styled(draw, node[key])
        return node
    if isinstance(node, CommentedSeq):
        if draw(st.booleans()):
            node.fa.set_flow_style()
        for index in range(len(node)):
            node[index] = styled(draw, node[index])
        return node
    if isinstance(node, str) and "\n" not in node:
        kind = draw(st.sampled_from(["fresh", "fresh", "single", "double"]))
        if kind == "single":
            return SingleQuotedScalarString(node)
        if kind == "double":
            return DoubleQuotedScalarString(node)
    return node


def block_of(draw: Any, unit: dict[str, Any], dash: int) -> str:
    raw = styled(draw, merge_into(None, [unit]))
    return dump(raw, (dash + 2, dash))


def reads_back(block: str) -> Any:
    return patch.normalise(yaml.safe_load(block))


@DIFF
@given(units(), st.sampled_from([0, 2, 4]))
@example({"id": "a", "title": "t", "status": "todo", "files": ["src/a.py"]}, 2)
def test_a_new_units_block_is_what_ruamel_writes(unit: dict[str, Any], dash: int) -> None:
    ours = unit_block.emit_unit(unit, dash)
    event("ruamel" if ours is None else "our emitter")
    if ours is None:
        return
    assert ours == patch._render_items([unit], dash)
    assert reads_back(ours) == [unit]  # every scalar reads back equal through yaml.safe_load


@DIFF
@given(st.data(), st.sampled_from([0, 2, 4]))
def test_a_rewritten_block_is_what_ruamel_writes(data: Any, dash: int) -> None:
    old = data.draw(units())
    block = block_of(data.draw, old, dash)
    new = data.draw(st.one_of(units(uid=old["id"]), st.just(dict(old, status="done"))))
    if "notes" in new and data.draw(st.booleans()):
        del new["notes"]
    ours = unit_block.rewrite(block, old, new, dash)
    event("ruamel" if ours is None else "our emitter")
    if ours is None:
        return
    assert ours == patch._rewrite_block(block, new, dash, old["id"], "id")
    assert reads_back(ours) == [new]


def test_a_block_scalar_ending_in_a_hash_line_keeps_that_line_once() -> None:
    """Hypothesis found it in CI (2026-12-02): the ruamel path took a literal block's last line
    ``#`` for a comment leading into the next unit, wrote the scalar whole and then put that
    line back after it (``notes`` read back with a second ``#``; the whole-file check then
    sent the change to the full round trip)."""
    old = {"id": "a", "title": "0", "status": "todo", "notes": "0\n#"}
    new = dict(old, status="done")
    block = "- id: a\n  title: '0'\n  status: todo\n  notes: |-\n    0\n    #\n"
    assert reads_back(block) == [old]
    ours = unit_block.rewrite(block, old, new, 0)
    assert ours == patch._rewrite_block(block, new, 0, "a", "id")
    assert ours is not None and reads_back(ours) == [new]


def test_the_bench_block_passing_takes_the_fast_path() -> None:
    """verify-next's common case: the unit in progress with a failure passes (the excerpt was
    double-quoted by hand, the lists are in flow style)."""
    block = (
        "  - id: doc-01500\n"
        "    title: Extract contract 01500\n"
        "    status: in_progress\n"
        "    verify: grep -q party_b out/01500.json\n"
        "    files: [src/pkg0007/mod100.py]\n"
        "    artifacts: [out/01500.json]\n"
        "    last_failure:\n"
        "      at: '2026-11-29T08:00:00Z'\n"
        "      exit_code: 1\n"
        "      signature: 9c1e0b7d2f4a\n"
        "      repeats: 1\n"
        "      excerpt: \"KeyError: 'party_b' (src/extract.py:88)\"\n"
    )
    old = patch.normalise(yaml.safe_load(block))[0]
    new = {k: v for k, v in old.items() if k != "last_failure"}
    new["status"] = "done"
    new["evidence"] = {
        "verified_at": "2026-12-01T23:55:04Z",
        "commit": "1172a62ac151893234176207066adee1f85498e4",
        "dirty": True,
        "fingerprint": "sha256:" + "5d" * 32,
        "duration_s": 0.03,
        "log": ".resume-kit/runs/doc-01500-20261201T235504165Z.log",
    }
    ours = unit_block.rewrite(block, old, new, 2)
    assert ours is not None
    assert ours == patch._rewrite_block(block, new, 2, old["id"], "id")


@pytest.mark.parametrize(
    "block",
    [
        "  - id: a  # a comment\n    title: t\n    status: todo\n",
        "  - id: a\n    # a comment\n    title: t\n    status: todo\n",
        "  - id: a\n    title: t   \n    status: todo\n",
        "  - id: a\n    title: &x t\n    status: todo\n",
        "  - id: a\n    title: !!str t\n    status: todo\n",
        "  - id: a\n    status: todo\n    title: t\n",  # another key order
        "  - {id: a, title: t, status: todo}\n",
        "  - id: a\n    title:   t\n    status: todo\n",
        "  - id: a\n    title: t\n    status: todo\n    files: []\n",
    ],
)
def test_a_block_we_do_not_write_ourselves_goes_to_ruamel(block: str) -> None:
    old = {"id": "a", "title": "t", "status": "todo"}
    assert unit_block.rewrite(block, old, dict(old, status="done"), 2) is None


@st.composite
def progress_files(draw: Any) -> tuple[str, list[dict[str, Any]], int]:
    ids = draw(st.lists(ID, min_size=1, max_size=4, unique=True))
    dash = draw(st.sampled_from([0, 2]))
    doc: dict[str, Any] = {
        "schema_version": 2,
        "goal": "g",
        "units": [draw(units(uid=i)) for i in ids],
    }
    raw = styled(draw, merge_into(None, doc))
    return "# header\n" + dump(raw, (dash + 2, dash)), ids, dash


def patched_both_ways(
    text: str, name: str, old: list[dict[str, Any]], new: list[dict[str, Any]]
) -> tuple[str | None, str | None]:
    """patch_list's result with our emitter, and with the ruamel path alone."""
    ours = patch.patch_list(text, name, old, new)
    fast = patch._rewrite_fast
    patch._rewrite_fast = lambda *args: None  # type: ignore[assignment]  # the ruamel path alone
    try:
        theirs = patch.patch_list(text, name, old, new)
    finally:
        patch._rewrite_fast = fast  # type: ignore[assignment]
    return ours, theirs


@DIFF
@given(progress_files(), st.data())
def test_the_patched_file_is_what_the_ruamel_path_writes(
    made: tuple[str, list[dict[str, Any]], int], data: Any
) -> None:
    text = made[0]
    try:
        old = to_data(parse_and_validate(text))
    except Exception:
        return  # not a valid progress file: never patched
    new_units = [dict(u) for u in old["units"]]
    index = data.draw(st.integers(0, len(new_units) - 1))
    changed = data.draw(units(uid=new_units[index]["id"]))
    new_units[index] = changed
    ours, theirs = patched_both_ways(text, "units", old["units"], new_units)
    assert ours == theirs
    if ours is None or changed == old["units"][index]:
        return
    try:
        back = yaml.safe_load(ours)
    except yaml.YAMLError:
        return  # another unit's text only ruamel reads (the changed block was checked alone)
    assert patch.normalise(back)["units"][index] == changed


@DIFF
@given(progress_files(), st.data())
def test_a_unit_spliced_into_ascii_bytes_is_the_text_patch_encoded(
    made: tuple[str, list[dict[str, Any]], int], data: Any
) -> None:
    """verify-next's checkpoint splices the rewritten unit into the file's bytes when they are
    ASCII (the cache's character offsets are then byte offsets): the bytes and the blocks after
    it are what patching the text gives, whatever the new unit holds (non-ASCII included)."""
    text = made[0].encode("ascii", "replace").decode("ascii")  # the strategy's text, as ASCII
    try:
        old = to_data(parse_and_validate(text))
    except Exception:
        return  # not a valid progress file: never patched
    blocks = patch.blocks_of(text, "units")
    if blocks is None:
        return
    units_old = old["units"]
    index = data.draw(st.integers(0, len(units_old) - 1))
    changed = data.draw(units(uid=units_old[index]["id"]))
    count = len(units_old)
    spliced = patch.patch_item_ascii(
        text.encode("ascii"), index, count, units_old[index], changed, blocks
    )
    patched = patch.patch_item(text, "units", index, count, units_old[index], changed, blocks)
    if spliced is None:  # our emitter did not take the block: the text path decides
        return
    assert patched is not None
    assert spliced == (patched[0].encode("utf-8"), patched[1])


LAYOUT_TEXT = st.lists(
    st.sampled_from(
        ["units:", "units: # c", "units: []", "goal: g", "goal: g", "schema_version: 2", "- id: a",
         "  - id: a", "  - id: b", "    title: t", "    files:", "      - x", "  -", "# c", "",
         "---", "...", "\tx: 1", "units:", "  -x", " - y", "notes: |", "  - not a unit", "-",
         "a b: c", "\r", "x\u2028y: 1", "\x0c"]
    ),
    max_size=14,
).map("\n".join)  # fmt: skip


@DIFF
@given(st.one_of(LAYOUT_TEXT, LAYOUT_TEXT.map(lambda t: t + "\n")))
@example("schema_version: 2\ngoal: g\nunits:\n  - id: a\n    title: t\n  - id: b\nnotes: n")
def test_the_units_layout_by_regex_is_the_line_scan(text: str) -> None:
    assert patch.list_layout(text, "units") == patch._layout_by_lines(text, "units")


STATUS = st.sampled_from(["success", "unknown", "failed"])
ATTEMPT = st.fixed_dictionaries(
    {"status": STATUS, "at": st.sampled_from(["2026-12-01T23:55:04Z", "2026-11-29T08:00:00Z"])},
    optional={"session": TEXT, "command": TEXT, "call": TEXT, "result": TEXT},
)


@st.composite
def ledger_entries(draw: Any, key: str | None = None) -> dict[str, Any]:
    attempts = draw(st.lists(ATTEMPT, min_size=1, max_size=4))
    return {
        "key": key or draw(ID),
        "description": draw(TEXT),
        "status": attempts[-1]["status"],
        "at": attempts[-1]["at"],
        "attempts": attempts,
    }


@DIFF
@given(st.lists(ID, min_size=1, max_size=3, unique=True), st.sampled_from([0, 2]), st.data())
def test_a_patched_ledger_entry_is_what_the_ruamel_path_writes(
    keys: list[str], dash: int, data: Any
) -> None:
    """A tool hook appends or settles one attempt: the entry's block is rewritten by our
    emitter exactly as ruamel rewrites it (the attempts list without identity anew)."""
    doc = {
        "schema_version": 2,
        "goal": "g",
        "units": [{"id": "a", "title": "t", "status": "todo"}],
        "actions": [data.draw(ledger_entries(key=k)) for k in keys],
    }
    text = dump(styled(data.draw, merge_into(None, doc)), (dash + 2, dash))
    try:
        old = to_data(parse_and_validate(text))
    except Exception:
        return
    new_actions = [dict(a) for a in old["actions"]]
    index = data.draw(st.integers(0, len(new_actions) - 1))
    attempts = [dict(a) for a in new_actions[index]["attempts"]]
    if data.draw(st.booleans()):
        attempts.append(data.draw(ATTEMPT))
    else:
        attempts[-1]["status"] = data.draw(STATUS)
        attempts[-1]["result"] = data.draw(TEXT)
    new_actions[index] = dict(new_actions[index], attempts=attempts, status=attempts[-1]["status"])
    ours, theirs = patched_both_ways(text, "actions", old["actions"], new_actions)
    assert ours == theirs
    event("patched" if ours is not None else "full round trip")
    if ours is not None:
        assert to_data(parse_and_validate(ours))["actions"] == new_actions


@pytest.mark.parametrize("ending", ["\n", "x\n\n", "x\n\n\n"])
@pytest.mark.parametrize("added", [False, True])
def test_a_value_that_keeps_blank_lines_never_ends_the_file(ending: str, added: bool) -> None:
    """ruamel writes a block scalar that keeps its trailing blank lines (``|+``) at the end of a
    unit and then ends its document with "...": spliced into progress.yaml, that line ended
    the whole file (CI found it, 2026-12-06). A unit rewritten or added so is left to the full
    round trip."""
    text = (
        "schema_version: 2\ngoal: g\nunits:\n  - id: a\n    title: A\n  - id: b\n    title: B\n"
        "actions:\n  - key: k\n    description: d\n    status: success\n"
    )
    old = [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}]
    unit = {"id": "c" if added else "a", "title": "C", "notes": ending}
    new = [*old, unit] if added else [unit, old[1]]
    patched = patch.patch_list(text, "units", old, new)
    if patched is not None:
        assert yaml.safe_load(patched)["units"] == new
