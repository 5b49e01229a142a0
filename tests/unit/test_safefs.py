"""The safe-open and containment primitives every reader and writer of repository paths uses."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from resume_kit.infra.safefs import (
    NotARegularFile,
    UnsafePath,
    contained,
    contained_lstat,
    contained_lstats,
    contained_text,
    holds_bytes,
    open_regular,
    read_regular,
)
from tests.hostile import hostile_clone, plant_user_secrets


def test_contained_refuses_a_committed_symlink_anywhere_on_the_path(
    tmp_path: Path, isolated_home: Path
) -> None:
    secrets = plant_user_secrets(isolated_home)
    clone = hostile_clone(
        tmp_path,
        {"README.md": "hi\n"},
        symlinks={
            ".resume-kit/templates": str(secrets["aws"].parent),
            "docs/creds": str(secrets["aws"]),
        },
    )
    assert (clone / "docs" / "creds").is_symlink()
    with pytest.raises(UnsafePath, match="templates is a symlink"):
        contained(clone, ".resume-kit/templates/credentials")
    with pytest.raises(UnsafePath, match="docs/creds is a symlink"):
        contained(clone, "docs/creds")
    with pytest.raises(UnsafePath, match="climbs out"):
        contained(clone, "x/../../other")
    with pytest.raises(UnsafePath, match="outside the work tree"):
        contained(clone, "/etc/passwd")
    assert contained(clone, "README.md") == clone / "README.md"
    assert contained(clone, "new/dir/file") == clone / "new" / "dir" / "file"


def test_open_regular_never_follows_a_final_symlink_nor_blocks_on_a_fifo(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("secret\n")
    (tmp_path / "link").symlink_to(target)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotARegularFile, match="symlink"):
        open_regular(tmp_path / "link")
    with pytest.raises(NotARegularFile, match="FIFO"):
        open_regular(tmp_path / "fifo")
    with pytest.raises(NotARegularFile, match="device"):
        open_regular("/dev/null")
    assert read_regular(tmp_path / "link", 100, follow=True) == b"secret\n"
    assert read_regular(target, 100) == b"secret\n"


def test_holds_bytes_says_whether_a_regular_file_has_exactly_these_bytes(tmp_path: Path) -> None:
    path = tmp_path / "progress.yaml"
    data = bytes(range(256)) * 4096  # 1 MiB: several chunks
    path.write_bytes(data)
    assert holds_bytes(path, data)
    assert not holds_bytes(path, data[:-1] + b"x")  # the last chunk differs
    assert not holds_bytes(path, b"x" + data[1:])  # the first
    assert not holds_bytes(path, data + b"\n")  # the size
    assert not holds_bytes(path, b"")
    (tmp_path / "link").symlink_to(path)
    os.mkfifo(tmp_path / "fifo")
    assert not holds_bytes(tmp_path / "link", data)  # never followed
    assert not holds_bytes(tmp_path / "fifo", b"")  # never waited on
    assert not holds_bytes(tmp_path / "missing", b"")
    assert holds_bytes(path.with_name("empty"), b"") is False
    path.with_name("empty").write_bytes(b"")
    assert holds_bytes(path.with_name("empty"), b"")


def test_escapes_names_absolute_and_climbing_patterns() -> None:
    from resume_kit.infra.safefs import escapes

    for bad in ("/etc/shadow", "x/../../other/*.log", "../a", "**/../x", "*/../../y"):
        assert escapes(bad) is not None, bad
    for good in (
        "*.log",
        "logs/**/*.log",
        "a/../b",
        "./out/x.json",
        "~/.aws/credentials",
        "x..",
        "\\",
    ):
        assert escapes(good) is None, good


def test_inside_refuses_symlinked_folders_and_escapes_but_not_a_final_link(
    tmp_path: Path, isolated_home: Path
) -> None:
    from resume_kit.infra.safefs import inside

    secrets = plant_user_secrets(isolated_home)
    clone = hostile_clone(
        tmp_path,
        {"src/a.py": "a\n", "deep/er/b.py": "b\n"},
        symlinks={"aws": str(secrets["aws"].parent), "src/link.py": "a.py"},
    )
    root = str(clone)
    memo: dict[str, bool] = {}
    assert inside(root, "src/a.py", memo) == f"{root}/src/a.py"
    assert inside(root, "deep/er/b.py", memo) == f"{root}/deep/er/b.py"
    assert inside(root, "src/link.py", memo) == f"{root}/src/link.py"  # the final link is lstat'ed
    assert inside(root, "top.txt", memo) == f"{root}/top.txt"
    for bad in ("aws/credentials", "/etc/shadow", "src/../../x", "x/../../y", "..", "aws/x/y"):
        assert inside(root, bad, memo) is None, bad
    assert inside(root, "missing/x.py", memo) is None  # nothing exists below a missing folder


def test_contained_with_a_memo_of_checked_folders_still_checks_every_last_component(
    tmp_path: Path,
) -> None:
    (tmp_path / "out" / "deep").mkdir(parents=True)
    (tmp_path / "out" / "deep" / "a.json").write_text("{}")
    os.symlink("/etc/passwd", tmp_path / "out" / "deep" / "b.json")
    os.symlink("/etc", tmp_path / "out" / "etc")
    checked: set[str] = set()
    assert contained(tmp_path, "out/deep/a.json", checked=checked) == tmp_path / "out/deep/a.json"
    assert checked == {str(tmp_path / "out"), str(tmp_path / "out" / "deep")}
    with pytest.raises(UnsafePath):  # the folders are known safe; the file itself is a link
        contained(tmp_path, "out/deep/b.json", checked=checked)
    with pytest.raises(UnsafePath):  # a linked folder is never remembered as safe
        contained(tmp_path, "out/etc/passwd", checked=checked)
    assert str(tmp_path / "out" / "etc") not in checked


_NAMES = ["a", "b", "link", "fifo", "missing", "..", ".", ""]


def _tree(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "a").write_text("x")
    (root / "b").write_text("y")
    os.symlink("a", root / "link")
    os.symlink("/etc", root / "a" / "link")
    os.mkfifo(root / "a" / "fifo")


def _outcome(call: Callable[[], object]) -> object:
    try:
        return call()
    except (UnsafePath, OSError) as exc:
        return type(exc)


@given(st.lists(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5), max_size=12))
@settings(max_examples=60, deadline=None)
def test_contained_lstat_equals_contained_then_lstat(paths: list[list[str]]) -> None:
    """contained_lstat reuses the walk's lstat of the path itself: the same path, the same
    file and the same refusals as contained_text followed by os.lstat, memo or not."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _tree(root)
        memo_a: set[str] = set()
        memo_b: set[str] = set()
        for parts in paths:
            rel = "/".join(parts)

            def plain(memo: set[str] = memo_a, rel: str = rel) -> tuple[str, int, int]:
                full = contained_text(root, rel, missing_ok=False, checked=memo)
                info = os.lstat(full)
                return full, info.st_mode, info.st_ino

            def reused(memo: set[str] = memo_b, rel: str = rel) -> tuple[str, int, int]:
                full, info = contained_lstat(root, rel, checked=memo)
                return full, info.st_mode, info.st_ino

            assert _outcome(reused) == _outcome(plain), rel
        assert memo_a == memo_b


@given(st.lists(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5), max_size=12))
@settings(max_examples=60, deadline=None)
def test_a_memo_of_checked_folders_changes_no_answer(paths: list[list[str]]) -> None:
    """A path in a folder the memo holds takes a shorter way (one lstat): the same path, the
    same file and the same refusals as the full walk with no memo, whatever the spelling."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _tree(root)
        memo: set[str] = set()
        for parts in paths * 2:  # the second time round, the folders are in the memo
            rel = "/".join(parts)

            def walked(rel: str = rel, memo: set[str] | None = None) -> tuple[str, int]:
                full, info = contained_lstat(root, rel, checked=memo)
                return full, info.st_ino

            assert _outcome(lambda: walked(memo=memo)) == _outcome(walked), rel
            fast = _outcome(lambda rel=rel: contained(root, rel, checked=memo))
            assert fast == _outcome(lambda rel=rel: contained(root, rel)), rel


@given(st.lists(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5), max_size=12))
@example([["a", "link"], ["a", "fifo"], ["a", "missing"], ["a", "b", "a"]])  # a known folder
@settings(max_examples=60, deadline=None)
def test_a_batch_of_paths_gets_each_paths_answer(paths: list[list[str]]) -> None:
    """contained_lstats answers as contained_lstat does for each path on its own: the same
    file, refused (UnsafePath) or missing (another OSError), in the order given."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _tree(root)
        rels = ["/".join(parts) for parts in paths] * 2  # the second time, the folders are known

        def alone(rel: str) -> object:
            try:
                full, info = contained_lstat(root, rel)
            except UnsafePath:
                return "refused"
            except OSError:
                return "missing"
            return full, info.st_ino

        batch = [
            "refused" if full is None else "missing" if info is None else (full, info.st_ino)
            for _, full, info in contained_lstats(str(root), rels)
        ]
        assert batch == [alone(rel) for rel in rels]
        assert [rel for rel, _, _ in contained_lstats(str(root), rels)] == rels
