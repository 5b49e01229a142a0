"""hashcache: a remembered hash is only ever the hash of the file's current content."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from resume_kit.facts import hashcache
from resume_kit.facts.artifacts import read_artifacts
from resume_kit.facts.fingerprint import expand_globs, fingerprint
from resume_kit.facts.hashcache import HashCache


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(autouse=True)
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Caches are made a minute "later" than the files are written: nothing is racy."""
    made = hashcache.HashCache.__init__

    def init(self: HashCache, file: Path | None) -> None:
        made(self, file)
        self._now_ns += 60 * 10**9

    monkeypatch.setattr(hashcache.HashCache, "__init__", init)


def aged(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_hit_miss_and_change(tmp_path: Path) -> None:
    store = tmp_path / "hashes.json"
    file = aged(tmp_path / "a.txt", b"one")
    cache = HashCache(store)
    assert cache.digest(str(file), file.stat()) == sha(b"one")
    cache.save()
    assert str(file) in json.loads(store.read_text())["entries"]

    # same stat data: served from the cache, even though we now lie about the content
    entries = json.loads(store.read_text())
    entries["entries"][str(file)][-1] = "f" * 64
    store.write_text(json.dumps(entries))
    assert HashCache(store).digest(str(file), file.stat()) == "f" * 64

    # a write changes the stat data: hashed again
    file.write_bytes(b"three")
    assert HashCache(store).digest(str(file), file.stat()) == sha(b"three")
    replacement = tmp_path / "b.txt"
    replacement.write_bytes(b"thr33")
    before = file.stat()
    os.replace(replacement, file)  # same size, a new inode
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert HashCache(store).digest(str(file), file.stat()) == sha(b"thr33")


def test_racy_files_are_not_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "hashes.json"
    file = tmp_path / "fresh.txt"
    file.write_bytes(b"just written")
    old = file.stat().st_mtime - 3600
    os.utime(file, (old, old))  # an old mtime, but the ctime is now: still racy
    cache = HashCache(store)
    cache._now_ns = file.stat().st_ctime_ns + 10**9
    assert cache.digest(str(file), file.stat()) == sha(b"just written")
    cache.save()
    assert not store.exists() or str(file) not in json.loads(store.read_text())["entries"]


def test_damaged_or_missing_store_means_hashing(tmp_path: Path) -> None:
    file = aged(tmp_path / "a.txt", b"data")
    for content in ("not json", "[]", '{"format": 1, "entries": {"x": 3}}', ""):
        store = tmp_path / "hashes.json"
        store.write_text(content)
        assert HashCache(store).digest(str(file), file.stat()) == sha(b"data")
    entries = {"format": 1, "entries": {str(file): 7}}
    store.write_text(json.dumps(entries))
    assert HashCache(store).digest(str(file), file.stat()) == sha(b"data")
    assert HashCache(None).digest(str(file), file.stat()) == sha(b"data")
    HashCache(None).save()


def test_unused_entries_are_dropped(tmp_path: Path) -> None:
    store = tmp_path / "hashes.json"
    a, b = aged(tmp_path / "a", b"a"), aged(tmp_path / "b", b"b")
    first = HashCache(store)
    first.digest(str(a), a.stat())
    first.digest(str(b), b.stat())
    first.save()
    second = HashCache(store)
    second.digest(str(a), a.stat())
    second.save()
    assert list(json.loads(store.read_text())["entries"]) == [str(a)]


def test_fingerprint_and_artifacts_agree_with_and_without_cache(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "out").mkdir()
    aged(root / "src" / "a.py", b"print(1)\n")
    aged(root / "out" / "1.json", b"{}\n")
    (root / "link.py").symlink_to("src/a.py")
    (root / ".git").mkdir()
    aged(root / ".git" / "x", b"x")
    store = tmp_path / "hashes.json"
    cases = [
        (["src/a.py"], ["out/1.json"]),
        (["src/*.py", "link.py"], ["out/missing.json"]),
        (["./src//a.py", ".git/x", "src/"], []),
        (["**/*.py"], ["link.py"]),
        ([], []),
    ]
    for files, artifacts in cases:
        plain = fingerprint(root, files, artifacts)
        for _ in range(2):  # the first run fills the cache, the second reads it
            cache = HashCache(store)
            assert fingerprint(root, files, artifacts, cache) == plain, files
            cache.save()
    paths = ["out/1.json", "link.py", "src", "nope"]
    plain_artifacts = read_artifacts(root, paths)
    for _ in range(2):
        cache = HashCache(store)
        assert read_artifacts(root, paths, cache) == plain_artifacts
        cache.save()


def test_plain_paths_expand_as_globs_do(tmp_path: Path) -> None:
    import glob

    root = tmp_path
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_text("x")
    (root / "dl").symlink_to("d")
    (root / "broken").symlink_to("nowhere")
    (root / ".resume-kit").mkdir()
    (root / ".resume-kit" / "p.yaml").write_text("x")
    for pattern in ["d/f.txt", "./d/f.txt", "d//f.txt", "d", "dl", "dl/f.txt", "broken",
                    "missing", ".resume-kit/p.yaml", "d/./f.txt", "d/../d/f.txt", "d\\x"]:  # fmt: skip
        expected = set()
        for match in glob.iglob(pattern, root_dir=root, recursive=True):
            rel = Path(match).as_posix()
            full = root / rel
            through_link = any(p.is_symlink() for p in full.parents if root in p.parents)
            if (
                rel.split("/")[0] not in (".git", ".resume-kit")
                and (full.is_file() or full.is_symlink())
                and not through_link  # a symlinked folder is never entered (issue 12 item 11)
            ):
                expected.add(rel)
        assert expand_globs(root, [pattern]) == sorted(expected), pattern
