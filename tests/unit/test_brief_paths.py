"""The brief folds many changes in one folder into one line and flags possibly stale logs."""

from __future__ import annotations

import datetime as dt

from resume_kit.brief import build as brief
from resume_kit.brief.build import PathItem, group_paths
from resume_kit.model.progress import Evidence, Progress, Unit


def _item(path: str, kind: str = "untracked", next_unit: bool = False) -> PathItem:
    return PathItem(path=path, kind=kind, status="?", next_unit=next_unit, md=f"`{path}`")


def test_four_or_more_changes_of_one_kind_in_a_folder_become_one_line() -> None:
    items = [_item("extract.py", "unstaged")] + [
        _item(f"out/{n:03d}.json") for n in range(121, 137)
    ]
    grouped = group_paths(items)
    assert [g.path for g in grouped] == ["extract.py", "out/"]
    assert grouped[1].count == 16
    assert grouped[1].md == "`out/` (16 untracked files: `out/121.json` … `out/136.json`)"


def test_small_folders_mixed_kinds_and_the_next_units_files_stay_listed() -> None:
    items = [
        _item("out/a.json"),
        _item("out/b.json"),
        _item("out/c.json"),
        _item("src/a.py", "unstaged"),
        _item("src/b.py", "unstaged"),
        _item("src/c.py"),
        _item("src/d.py"),
        _item("docs/1.md", next_unit=True),
        _item("docs/2.md"),
        _item("docs/3.md"),
        _item("docs/4.md"),
    ]
    grouped = group_paths(items)
    assert [g.path for g in grouped] == [i.path for i in items]


def test_a_log_last_written_before_a_later_pass_is_flagged() -> None:
    progress = Progress(
        goal="g",
        units=[
            Unit(
                id="a",
                title="A",
                status="done",
                verify="true",
                evidence=Evidence("2026-11-29T10:00:00Z", "abc", False, "sha256:x", 1.0),
            ),
        ],
    )
    now = dt.datetime(2026, 11, 29, 11, 0, tzinfo=dt.timezone.utc)
    snapshot = {
        "logs": [
            {
                "path": "build.log",
                "size": 10,
                "mtime": "2026-11-29T09:00:00Z",
                "error_lines": ["KeyError: 'x'"],
            }
        ]
    }
    part, _ = brief._log_part(snapshot, now, brief.latest_pass(progress))
    assert part is not None and "last written before `a` passed, so possibly stale" in (
        part.age or ""
    )
    snapshot["logs"][0]["mtime"] = "2026-11-29T10:30:00Z"
    part, _ = brief._log_part(snapshot, now, brief.latest_pass(progress))
    assert part is not None and "stale" not in (part.age or "")
