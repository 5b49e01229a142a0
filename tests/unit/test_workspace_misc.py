"""Artifacts (exists, size, hash; sampled hash of huge files) and pytest's last-failed cache."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from resume_kit.facts.artifacts import (
    FULL_HASH_LIMIT,
    SAMPLE_BYTES,
    read_artifacts,
)
from resume_kit.facts.pytest_cache import read_test_facts

MiB = 1024 * 1024


def test_artifacts_exist_missing_directory_and_symlinks(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "001.json").write_bytes(b'{"a": 1}')
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "link.json").symlink_to(tmp_path / "out" / "001.json")
    notes: list[str] = []
    result = read_artifacts(
        tmp_path,
        ["out/001.json", "out/002.json", "out", "dangling", "link.json", "out/001.json"],
        notes=notes,
    )
    digest = hashlib.sha256(b'{"a": 1}').hexdigest()
    # symlinks are never followed (issue 12 item 11): left out, with a note naming them
    assert result == [
        {"path": "out/001.json", "exists": True, "size": 8, "sha256": digest},
        {"path": "out/002.json", "exists": False, "size": None, "sha256": None},
        {"path": "out", "exists": True, "size": None, "sha256": None},
    ]
    (note,) = notes
    assert "dangling" in note and "link.json" in note
    assert read_artifacts(tmp_path, []) == []


def test_empty_file_and_file_at_the_limit_are_hashed_whole(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    (entry,) = read_artifacts(tmp_path, ["empty"])
    assert entry["sha256"] == hashlib.sha256(b"").hexdigest()


def test_huge_file_is_sampled_not_read_whole(tmp_path: Path) -> None:
    big = tmp_path / "model.bin"
    size = FULL_HASH_LIMIT + 3 * MiB + 17
    with big.open("wb") as handle:  # sparse: costs no disk, reads as zeros
        handle.truncate(size)
        handle.seek(0)
        handle.write(b"head")
        handle.seek(size - 4)
        handle.write(b"tail")
    (entry,) = read_artifacts(tmp_path, ["model.bin"])
    assert entry["size"] == size
    assert entry["sha256"].startswith("sampled:")

    expected = hashlib.sha256(str(size).encode() + b"\n")
    with big.open("rb") as handle:
        for offset in (0, (size - SAMPLE_BYTES) // 2, size - SAMPLE_BYTES):
            handle.seek(offset)
            expected.update(handle.read(SAMPLE_BYTES))
    assert entry["sha256"] == "sampled:" + expected.hexdigest()

    # a change in a sampled region changes the hash
    with big.open("r+b") as handle:
        handle.seek(size // 2)
        handle.write(b"x")
    assert read_artifacts(tmp_path, ["model.bin"])[0]["sha256"] != entry["sha256"]


def test_unreadable_file_exists_without_hash(tmp_path: Path) -> None:
    secret = tmp_path / "locked.bin"
    secret.write_bytes(b"x")
    secret.chmod(0)
    try:
        (entry,) = read_artifacts(tmp_path, ["locked.bin"])
    finally:
        secret.chmod(0o600)
    assert entry["exists"] is True and entry["size"] == 1
    if os.geteuid() != 0:  # root reads anything
        assert entry["sha256"] is None


def test_real_pytest_lastfailed(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "def test_fails():\n    assert 0\n\ndef test_passes():\n    pass\n\n"
        "class TestGroup:\n    def test_also_fails(self):\n        assert 0\n"
    )
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "test_x.py"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    facts = read_test_facts(tmp_path)
    assert facts["source"] == ".pytest_cache/v/cache/lastfailed"
    assert sorted(facts["pytest_last_failed"]) == [
        "test_x.py::TestGroup::test_also_fails",
        "test_x.py::test_fails",
    ]


def _write_cache(root: Path, text: str) -> None:
    cache = root / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "lastfailed").write_text(text)


def test_no_cache(tmp_path: Path) -> None:
    assert read_test_facts(tmp_path) == {"pytest_last_failed": [], "source": None}


def test_broken_or_odd_cache_is_tolerated(tmp_path: Path) -> None:
    for text in ("{not json", "[1, 2]", '"x"', "", "\x00\xff"):
        _write_cache(tmp_path, text)
        assert read_test_facts(tmp_path) == {"pytest_last_failed": [], "source": None}
    _write_cache(tmp_path, json.dumps({"a::b": True, "c::d": False, "e": 1}))
    assert read_test_facts(tmp_path)["pytest_last_failed"] == ["a::b", "e"]
    _write_cache(tmp_path, "{}")
    assert read_test_facts(tmp_path) == {
        "pytest_last_failed": [],
        "source": ".pytest_cache/v/cache/lastfailed",
    }


def test_cache_in_a_top_level_folder(tmp_path: Path) -> None:
    _write_cache(tmp_path / "backend", json.dumps({"tests/test_api.py::test_get": True}))
    assert read_test_facts(tmp_path) == {
        "pytest_last_failed": ["tests/test_api.py::test_get"],
        "source": "backend/.pytest_cache/v/cache/lastfailed",
    }
