"""Entry point kept for git hooks installed before the package tree moved.

Hooks written by an older resume-kit import ``resume_kit.hookentry`` (or run
``python -I -m resume_kit.hookentry``); they keep working until ``resume-kit hook install``
rewrites them to import :mod:`resume_kit.integrations.hook_entry` directly.
"""

from __future__ import annotations

import sys

from resume_kit.integrations.hook_entry import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
