"""One model per verify-next: a transaction starts from the document this process holds only
while progress.yaml still has its bytes; another writer's change is always read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from resume_kit.infra.paths import find_layout
from resume_kit.progress_file.io import Reusing, load, transaction


@pytest.fixture
def layout(repo: Path, cli: Any) -> Any:
    assert cli("init", "--goal", "g").code == 0
    for name in ("a", "b"):
        assert cli("add", name, "--id", name, "--verify", "true").code == 0
    return find_layout(repo)


def test_unchanged_bytes_reuse_the_held_model(layout: Any) -> None:
    doc = load(layout)
    held = Reusing(doc)
    with held.transaction(layout) as inside:
        assert inside is doc  # read again under the lock: same bytes, same model
        inside.progress.units[0].status = "in_progress"
    assert held.doc is doc
    assert "in_progress" in layout.progress.read_text()
    assert held.load(layout) is doc  # the report: the saved bytes are still there
    assert load(layout).progress.units[0].status == "in_progress"


def test_another_writers_change_is_read_under_the_lock(layout: Any) -> None:
    doc = load(layout)
    held = Reusing(doc)
    with transaction(layout) as other:  # another process, between the pick and the record
        other.progress.units[1].notes = "written by someone else"
    with held.transaction(layout) as inside:
        assert inside is not doc
        assert inside.progress.units[1].notes == "written by someone else"
        inside.progress.units[0].status = "in_progress"
    after = load(layout).progress
    assert after.units[0].status == "in_progress"
    assert after.units[1].notes == "written by someone else"  # nothing lost


def test_a_transaction_that_raised_is_not_held(layout: Any) -> None:
    doc = load(layout)
    held = Reusing(doc)
    with pytest.raises(RuntimeError), held.transaction(layout) as inside:
        inside.progress.units[0].status = "blocked"  # changed, never saved
        raise RuntimeError("stop")
    assert held.doc is None
    fresh = held.load(layout)
    assert fresh is not doc and fresh.progress.units[0].status == "todo"


def test_a_later_change_on_disk_is_seen_by_the_report(layout: Any) -> None:
    held = Reusing(load(layout))
    with held.transaction(layout) as inside:
        inside.progress.units[0].status = "in_progress"
    saved = held.doc
    text = layout.progress.read_text().replace("goal: g", "goal: changed by hand")
    layout.progress.write_text(text)
    assert held.load(layout) is not saved
    assert held.load(layout).progress.goal == "changed by hand"


def test_a_change_in_one_unit_said_so_writes_what_the_whole_model_writes(layout: Any) -> None:
    """record() says which unit it changed (ProgressDoc.changed_only): the other units' data is
    taken as loaded, and the file and the data are what making it all again gives."""
    from resume_kit.progress_file.roundtrip import to_data

    with transaction(layout) as doc:
        unit = doc.progress.units[1]
        unit.status = "done"
        unit.notes = "checked"
        doc.changed_only("b")
        said = doc.changed_data()
        assert said == to_data(doc.progress)
        assert said["units"][0] is doc.data["units"][0]  # not made again
        doc.changed_only("b")
    assert load(layout).data == said
    with transaction(layout) as doc:
        doc.changed_only("no-such-unit")  # a hint that names nothing: the whole model
        doc.progress.units[0].notes = "n"
        assert doc.changed_data() == to_data(doc.progress)


def test_a_checkpoint_appends_to_the_cache_only_while_it_holds_the_model_read(
    layout: Any,
) -> None:
    """A checkpoint adds a tail line to the progress cache only when the file still holds the
    model of the version it read: after another process wrote the cache of another version
    (a brief still reading an older progress.yaml), the whole text is written, so no line is
    ever applied to another version's units."""
    from resume_kit.core.digest import file_key
    from resume_kit.progress_file import io
    from resume_kit.progress_file.cache import cache_file
    from resume_kit.progress_file.cache_json import data_of, digest_of
    from resume_kit.progress_file.roundtrip import to_data

    cache = cache_file(layout)

    def checkpoint(unit_id: str, note: str) -> None:
        io._LOADED.clear()  # as a new process: the units read from the cache's lines
        doc = load(layout, units_when_read=True)
        assert doc._rows is not None
        if note == "another version meanwhile":
            text = cache.read_text()
            cache.write_text(text.replace(digest_of(text) or "?", "0" * 64))
        held = Reusing(doc)
        with held.transaction(layout) as inside:
            inside.progress.require_unit(unit_id).notes = note
            inside.changed_only(unit_id)

    checkpoint("a", "first")  # written whole: the cache `add` wrote does not know the blocks
    checkpoint("a", "appended")
    appended = cache.read_text()
    assert not appended.endswith("]}\n") and digest_of(appended) == file_key(
        layout.progress.read_bytes()
    )
    checkpoint("b", "another version meanwhile")
    whole = cache.read_text()
    assert whole.endswith("]}\n")  # written whole, not appended to the other version's text
    assert digest_of(whole) == file_key(layout.progress.read_bytes())
    assert data_of(whole) == to_data(load(layout).progress)
    assert [u.notes for u in load(layout).progress.units] == [
        "appended",
        "another version meanwhile",
    ]


def test_a_checkpoint_splices_ascii_bytes_and_patches_any_other_text(layout: Any) -> None:
    """A checkpoint of one unit rewrites it in the file's bytes while they are ASCII (its text
    is then never made); a file holding other characters is patched as text. Either way the
    file reads back as the model saved, and the cache holds that model."""
    from resume_kit.progress_file import io
    from resume_kit.progress_file.cache import cache_file
    from resume_kit.progress_file.cache_json import data_of, digest_of
    from resume_kit.progress_file.roundtrip import to_data

    def checkpoint(unit_id: str, note: str) -> io.ProgressDoc:
        io._LOADED.clear()  # as a new process: the units read from the cache's lines
        held = Reusing(load(layout, units_when_read=True))
        with held.transaction(layout) as inside:
            inside.progress.require_unit(unit_id).notes = note
            inside.changed_only(unit_id)
        assert held.doc is not None
        return held.doc

    checkpoint("a", "first")  # the cache `add` wrote does not know the blocks yet
    steps = [
        ("b", "ascii", True),
        ("a", "café ✓", False),  # our emitter writes ASCII only: ruamel writes this block
        ("b", "again", False),  # the file is not ASCII
        ("a", "x", False),
        ("b", "ascii again", True),
    ]
    for unit_id, note, spliced in steps:
        doc = checkpoint(unit_id, note)
        assert (doc._text is None) is spliced  # the bytes spliced, or the text patched
        written = layout.progress.read_bytes()
        assert doc._bytes == written and doc.text == written.decode("utf-8")
        fresh = io.parse_and_validate(written.decode("utf-8"))
        assert fresh.require_unit(unit_id).notes == note
        cached = cache_file(layout).read_text()
        assert data_of(cached) == to_data(fresh)
        held = doc._cache_text  # the text and the tail lines appended, joined when asked for
        assert held is not None and held.digest() == digest_of(cached) and held.whole() == cached
    assert [u.notes for u in load(layout).progress.units] == ["x", "ascii again"]


def test_checkpoints_in_one_process_append_to_the_cache_text_they_hold(layout: Any) -> None:
    """A batch checkpoints unit after unit from the document it holds: each appends its tail
    line to the cache file and to the text held (not joined until asked for), and the text
    held is the file's each time."""
    from resume_kit.progress_file import io
    from resume_kit.progress_file.cache import cache_file
    from resume_kit.progress_file.cache_json import digest_of

    io._LOADED.clear()
    held = Reusing(load(layout, units_when_read=True))
    with held.transaction(layout) as inside:  # written whole: the cache `add` wrote has no blocks
        inside.progress.require_unit("a").notes = "0"
        inside.changed_only("a")
    for step in range(1, 4):
        with held.transaction(layout) as inside:
            inside.progress.require_unit("ab"[step % 2]).notes = str(step)
            inside.changed_only("ab"[step % 2])
        assert held.doc is not None and held.doc._cache_text is not None
        text = cache_file(layout).read_text()
        assert text.count('{"digest": ') == step  # a tail line a checkpoint
        assert held.doc._cache_text.digest() == digest_of(text)
    assert held.doc._cache_text.whole() == cache_file(layout).read_text()
    assert [u.notes for u in load(layout).progress.units] == ["2", "3"]
