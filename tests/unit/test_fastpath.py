"""The served brief's pieces: the argv it serves, the receipt file, how long ages read the same,
and what a recorded build is seen to read (resume_kit.brief.fastpath, infra.deps, timeutil)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resume_kit.brief import fastpath
from resume_kit.core import timeutil
from resume_kit.infra import deps
from tests.conftest import git


@pytest.mark.parametrize(
    ("argv", "request_"),
    [
        (["brief"], {"max_tokens": None, "summarize": None}),
        (["brief", "--max-tokens", "800"], {"max_tokens": 800, "summarize": None}),
        (["brief", "--max-tokens=0800"], {"max_tokens": 800, "summarize": None}),
        (["brief", "--format", "markdown"], {"max_tokens": None, "summarize": None}),
        (
            ["brief", "--format=markdown", "--no-summarize"],
            {"max_tokens": None, "summarize": False},
        ),
        (["brief", "--format=claude-hook"], {"max_tokens": None, "format": "claude-hook"}),
        (
            ["brief", "--format", "copilot-hook", "--max-tokens", "900", "--no-summarize"],
            {"max_tokens": 900, "format": "copilot-hook"},
        ),
    ],
)
def test_the_argv_it_serves(argv: list[str], request_: dict[str, object]) -> None:
    assert fastpath.parse_request(argv) == request_


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["status"],
        ["brief", "--format", "json"],
        ["brief", "--format", "codex-hook"],
        ["brief", "--format", "claude-hook", "-o", "brief.md"],
        ["brief", "-o", "brief.md"],
        ["brief", "--output=brief.md"],
        ["brief", "--summarize"],
        ["brief", "--max-tokens", "49"],
        ["brief", "--max-tokens", "١٠٠"],  # digits, but not ASCII ones
        ["brief", "--max-tokens"],
        ["brief", "--help"],
        ["brief", "--debug"],
        ["brief", "extra"],
        ["brief", "--no-summarize=yes"],
    ],
)
def test_everything_else_is_built(argv: list[str]) -> None:
    assert fastpath.parse_request(argv) is None


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
receipts = st.fixed_dictionaries(
    {
        "key": st.text(),
        "stdout": st.text(),
        "stderr": st.text(),
        "stderr_before_stdout": st.integers(),
        "code": st.integers(),
        "created": st.integers(),
        "ages_steady": st.floats(allow_nan=False),
        "until": st.floats(allow_nan=False),
        "status": st.dictionaries(st.text(), plain, max_size=4),
        "deps": st.lists(plain, max_size=4),
        "hook": st.dictionaries(st.text(), plain, max_size=4),
    }
)


@given(receipts)
def test_a_receipt_reads_back_as_written(receipt: dict[str, object]) -> None:
    assert fastpath.decode_receipt(fastpath.encode_receipt(receipt)) == receipt


@given(receipts, st.data())
def test_a_damaged_receipt_is_no_receipt(receipt: dict[str, object], data: st.DataObject) -> None:
    body = bytearray(fastpath.encode_receipt(receipt))
    if data.draw(st.booleans()):
        del body[data.draw(st.integers(0, len(body) - 1)) :]
    else:
        at = data.draw(st.integers(0, len(body) - 1))
        body[at] ^= data.draw(st.integers(1, 255))
    assert fastpath.decode_receipt(bytes(body)) is None


@given(receipts, st.sampled_from(sorted(fastpath.RECEIPT_TYPES)), plain)
def test_a_receipt_of_another_shape_is_no_receipt(
    receipt: dict[str, object], field: str, value: object
) -> None:
    if type(value) is fastpath.RECEIPT_TYPES[field]:
        return
    odd = dict(receipt, **{field: value})
    assert fastpath.decode_receipt(fastpath.encode_receipt(odd)) is None
    del odd[field]
    assert fastpath.decode_receipt(fastpath.encode_receipt(odd)) is None


def test_a_receipt_holding_code_is_no_receipt() -> None:
    import marshal

    from resume_kit.core.digest import sha256_hex

    receipt = {name: kind() for name, kind in fastpath.RECEIPT_TYPES.items()}
    assert fastpath.decode_receipt(fastpath.encode_receipt(receipt)) == receipt
    payload = marshal.dumps(dict(receipt, stdout=compile("1", "x", "eval")))
    data = fastpath.RECEIPT_MAGIC + sha256_hex(payload).encode() + b"\n" + payload
    assert fastpath.decode_receipt(data) is None


@given(st.floats(min_value=-3600, max_value=40 * 86400, allow_nan=False))
def test_an_age_reads_the_same_exactly_as_long_as_tracked(seconds: float) -> None:
    import datetime as dt

    now = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    then = now - dt.timedelta(seconds=seconds)
    timeutil.track_steadiness()
    text = timeutil.age(then.isoformat(), now)
    found = timeutil.tracked_steadiness()
    assert found is not None
    good = int(found[0])
    for later in {0, good // 3, good // 2, good}:
        assert timeutil.age(then.isoformat(), now + dt.timedelta(seconds=later)) == text
    if good < timeutil.STEADY_CAP_S:
        assert timeutil.age(then.isoformat(), now + dt.timedelta(seconds=good + 1)) != text


@given(st.lists(st.floats(min_value=0, max_value=40 * 86400, allow_nan=False), min_size=1))
def test_a_span_of_ages_reads_the_same_exactly_as_long_as_tracked(ages: list[float]) -> None:
    timeutil.track_steadiness()
    text = timeutil.age_span(ages)
    found = timeutil.tracked_steadiness()
    assert found is not None
    good = int(found[0])
    for later in {0, good // 2, good}:
        assert timeutil.age_span([a + later for a in ages]) == text
    if good < timeutil.STEADY_CAP_S:
        assert timeutil.age_span([a + good + 1 for a in ages]) != text


def test_steadiness_is_tracked_only_while_recording() -> None:
    assert timeutil.tracked_steadiness() is None
    timeutil.steady_until(1.0)  # no recording: nothing happens
    timeutil.track_steadiness()
    timeutil.steady_until(50.0)
    timeutil.steady_until(90.0)
    timeutil.steady_base(7)
    assert timeutil.tracked_steadiness() == (timeutil.STEADY_CAP_S, 50.0, 7)


def test_a_watched_build_is_seen_to_read_open_list_and_look(tmp_path: Path) -> None:
    (tmp_path / "read.txt").write_text("x")
    (tmp_path / "listed").mkdir()
    with deps.Watch() as rec:
        (tmp_path / "read.txt").read_text()
        os.path.exists(tmp_path / "looked-for")
        list(os.scandir(tmp_path / "listed"))
        (tmp_path / "written.txt").write_text("y")
        with contextlib.suppress(FileNotFoundError):
            (tmp_path / "missing.txt").read_text()
        with deps.not_an_input():
            list(os.scandir(tmp_path))
    for name in ("read.txt", "looked-for", "listed", "written.txt", "missing.txt"):
        assert str(tmp_path / name) in rec.paths, name
    assert str(tmp_path / "listed") in rec.listed
    assert str(tmp_path) not in rec.listed  # the clean-up scan is no input
    assert str(tmp_path / "written.txt") in rec.written
    assert str(tmp_path / "read.txt") not in rec.written
    assert os.stat is deps._real_stat  # put back


def test_a_signature_tells_what_changed(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    looked, listed = deps.signature(str(folder), listed=False), deps.signature(str(folder))
    (folder / "new").write_text("")
    assert deps.signature(str(folder), listed=False) == looked  # what it is: the same
    assert deps.signature(str(folder)) != listed  # what it holds: changed
    target = tmp_path / "target"
    target.write_text("one")
    link = tmp_path / "link"
    link.symlink_to(target)
    before = deps.signature(str(link))
    target.write_text("two, longer")
    assert deps.signature(str(link)) != before  # a symlink's target counts too
    assert deps.signature(str(tmp_path / "nothing")) is None


def test_new_session_sources_are_the_transcript_readers_fresh_sources() -> None:
    from resume_kit.facts.transcripts import FRESH_SOURCES

    assert fastpath.NEW_SESSION_SOURCES == FRESH_SOURCES


def _stored(**over: object) -> dict[str, object]:
    hook: dict[str, object] = {"session": "s0", "transcript": "/nowhere/s0.jsonl",
                               "transcript_sig": None, "earlier": True,
                               "transcript_session": "e1", "session_skipped": False}  # fmt: skip
    hook.update(over)
    return hook


@pytest.mark.parametrize(
    ("payload", "stored", "serves"),
    [
        ({"session_id": "s0", "transcript_path": "/nowhere/s0.jsonl"}, {}, True),
        (
            {"session_id": "s1", "transcript_path": "/nowhere/s1.jsonl", "source": "startup"},
            {},
            True,
        ),
        (
            {"session_id": "s1", "transcript_path": "/nowhere/s1.jsonl", "source": "resume"},
            {},
            True,
        ),
        ({"session_id": "e1", "transcript_path": "/nowhere/e1.jsonl"}, {}, False),  # the one read
        ({"session_id": "s1", "transcript_path": "/nowhere/s1.jsonl"}, {"earlier": False}, False),
        (
            {"session_id": "s1", "transcript_path": "/nowhere/s1.jsonl"},
            {"session_skipped": True},
            False,
        ),
        (
            {"session_id": "s1", "transcript_path": "/nowhere/s1.jsonl"},
            {"transcript_sig": [1, 2, 3]},
            False,
        ),
        ({"session_id": "s1"}, {}, False),  # one has a transcript path, the other not
        ({"session_id": "s1"}, {"transcript": None, "earlier": False}, True),  # discovery
        ({"session_id": "s1", "source": "startup"}, {"transcript": None, "earlier": False}, True),
        (
            {"session_id": "s1", "source": "clear"},
            {"transcript": None, "session_skipped": True},
            False,
        ),
        ({"session_id": "e1", "source": "startup"}, {"transcript": None}, False),
        ({"session_id": "e1", "source": "resume"}, {"transcript": None}, True),  # not looked at
    ],
)
def test_which_sessions_read_the_same_transcript_facts(
    payload: dict[str, object], stored: dict[str, object], serves: bool
) -> None:
    assert (fastpath._hook_matches(_stored(**stored), payload) is None) is serves


def test_an_existing_transcript_of_a_new_session_is_not_served(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_text("{}\n")
    payload = {"session_id": "s1", "transcript_path": str(path), "source": "startup"}
    assert fastpath._hook_matches(_stored(), payload) == "another session, whose transcript exists"
    same = _stored(session="s1", transcript=str(path), transcript_sig=None)
    assert fastpath._hook_matches(same, payload) == "the hook's transcript changed"


def test_only_tracked_regular_files_status_vouches_for_leave_the_receipt(repo: Path) -> None:
    """What a served git status already compares is not stat-checked again: a tracked regular
    file with no flag that hides it from status. Everything else the brief read stays a
    dependency of the receipt (real git: flags, a symlink, an untracked and a listed file)."""
    names = ["plain.txt", "caf\u00e9.txt", "tab\tname.txt", "hidden.txt", "sparse.txt"]
    for name in names:
        (repo / name).write_text(name)
    (repo / "link.txt").symlink_to("plain.txt")
    (repo / ".resume-kit").mkdir()
    (repo / ".resume-kit" / "progress.yaml").write_text("units: []\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    git(repo, "update-index", "--assume-unchanged", "hidden.txt")
    git(repo, "update-index", "--skip-worktree", "sparse.txt")
    (repo / "untracked.txt").write_text("new")
    raw = os.fsdecode(b"raw\xff.txt")  # a name that is not UTF-8, as os.listdir gives it
    (repo / raw).write_text("raw")
    git(repo, "add", "--", raw)
    root = str(repo)
    seen = [os.path.join(root, name) for name in [*names, "link.txt", "untracked.txt", raw]]
    seen += [os.path.join(root, ".resume-kit", "progress.yaml"), root + "x/plain.txt"]
    listed = {os.path.join(root, "README.md"): None}  # a path status lists is compared in full
    seen.append(os.path.join(root, "README.md"))

    clean = fastpath._clean_tracked_files(root, seen, listed)

    expected = ["plain.txt", "caf\u00e9.txt", "tab\tname.txt", raw]
    assert clean == {os.path.join(root, name) for name in expected}
    # a name that no file system encoding writes stays a dependency, and nothing breaks
    assert fastpath._clean_tracked_files(root, [os.path.join(root, "\ud800")], {}) == set()
