"""The hidden `merge-driver BASE OURS THEIRS [SIZE]`: git's merge driver for progress.yaml."""

from __future__ import annotations


def run(base: str, ours: str, theirs: str, marker_size: int) -> int:
    from resume_kit.progress_file.merge_driver import merge_files

    return merge_files(base, ours, theirs, marker_size)
