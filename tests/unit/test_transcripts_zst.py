"""Codex rollouts compressed to ``.jsonl.zst`` and moved to ``archived_sessions/`` (issue 21
point 8): found, read tail-first and bounded, never raising on a corrupt file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import zstandard

from resume_kit.facts.transcripts import codex, read_transcript, tail, zst
from tests.unit.test_transcripts import codex_meta, cx, rollout_path


def _write_zst(path: Path, records: list[dict[str, object]], filler: int = 0) -> Path:
    lines = [json.dumps(records[0])]
    lines += [json.dumps(cx("event_msg", {"type": "agent_reasoning", "text": "x" * 500}))] * filler
    lines += [json.dumps(r) for r in records[1:]]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()))
    return path


def _user(text: str) -> dict[str, object]:
    return cx("event_msg", {"type": "user_message", "message": text})


def test_compressed_and_archived_rollouts_are_found(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    packed = _write_zst(
        rollout_path(name="rollout-a.jsonl.zst"), [codex_meta(root, "packed"), _user("zipped")]
    )
    os.utime(packed, (1_000, 1_000))
    t = read_transcript(root, kinds=["codex"])
    assert t is not None and t["session_id"] == "packed" and t["last_request"] == "zipped"
    assert t["notes"] == []
    archived = Path(os.environ["CODEX_HOME"]) / "archived_sessions" / "rollout-b.jsonl.zst"
    _write_zst(archived, [codex_meta(root, "archived"), _user("archived words")])
    os.utime(archived, (2_000, 2_000))
    t = read_transcript(root, kinds=["codex"])
    assert t is not None and t["session_id"] == "archived"
    t = read_transcript(root, transcript_path=archived)
    assert t is not None and t["agent"] == "codex" and t["last_request"] == "archived words"


def test_a_large_compressed_rollout_is_read_from_the_end_only(tmp_path: Path) -> None:
    path = _write_zst(
        tmp_path / "rollout-big.jsonl.zst", [codex_meta(tmp_path, "big"), _user("last")], 4000
    )
    t = codex.read_rollout(path, cap=64 * 1024)
    assert t["last_request"] == "last"
    assert t["session_id"] == "big"  # from the first record, read separately
    assert any(note.startswith("read the last 0.1 MiB") for note in t["notes"])
    assert not any("unreadable" in note for note in t["notes"])  # no fragment at the cut
    data, complete = zst.tail_file(path, 1024, limit=10_000)
    assert not complete and len(data.getvalue()) <= 1024


def test_a_corrupt_or_hostile_zst_never_raises(tmp_path: Path) -> None:
    bad = tmp_path / "rollout-bad.jsonl.zst"
    bad.write_bytes(b"\x28\xb5\x2f\xfd garbage" * 10)
    t = read_transcript(tmp_path, transcript_path=bad)
    assert t is not None and t["last_request"] is None
    assert any("zstd" in note for note in t["notes"])
    assert tail.first_record(bad) is None and tail.tail_records(bad) == []
    # a bomb: a few KB that expand far beyond the limit are cut at the limit
    bomb = tmp_path / "rollout-bomb.jsonl.zst"
    bomb.write_bytes(zstandard.ZstdCompressor(level=19).compress(b"\n" * (64 * tail.MIB)))
    data, complete = zst.tail_file(bomb, 4096, limit=tail.MIB)
    assert not complete and len(data.getvalue()) <= 4096
