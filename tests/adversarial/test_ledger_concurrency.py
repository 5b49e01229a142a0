"""Tool hooks of several agent sessions write the ledger at once (issue 15 point 3): each
attempt is appended under the progress lock, so none is lost and the file stays valid."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from resume_kit.infra.paths import find_layout
from resume_kit.progress_file import io as progress_io

pytestmark = pytest.mark.slow

WRITERS = 4
ATTEMPTS = 8

# One process per session: a pre-event (unknown attempt) then its post-event (settled), the
# way the tool hook calls the ledger; both keys are shared by every writer.
WRITER = r"""
import sys
from pathlib import Path
from resume_kit.infra.paths import find_layout
from resume_kit.model.progress import Attempt, now_iso
from resume_kit.progress_file import ledger

session, count = sys.argv[1], int(sys.argv[2])
layout = find_layout(Path.cwd())
print("ready", flush=True)
sys.stdin.readline()  # the go signal: every writer starts at once
for n in range(count):
    key = "git-push-shared" if n % 2 else "npm-publish-shared"
    call = f"{session}-{n}"
    ledger.record(layout, key, Attempt("unknown", now_iso(), session, "git push", call))
    status = "success" if n % 3 else "failed"
    assert ledger.settle(layout, key, status, call=call, session=session, result="exit 0",
                         at=now_iso())
"""


def test_concurrent_hooks_lose_no_attempt(repo: Path) -> None:
    subprocess.run([sys.executable, "-m", "resume_kit", "init", "--goal", "g"], cwd=repo,
                   check=True, capture_output=True)  # fmt: skip
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"s{w}", str(ATTEMPTS)],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # what is tested is that no attempt is lost, not how long a loaded machine makes
            # a writer wait for the lock (5 s by default)
            env={**os.environ, "RESUME_KIT_LOCK_TIMEOUT": "120"},
        )
        for w in range(WRITERS)
    ]
    for proc in writers:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in writers:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in writers:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    actions = progress_io.load(find_layout(repo)).progress.actions
    calls = sorted(a.call or "" for action in actions for a in action.attempts)
    assert calls == sorted(f"s{w}-{n}" for w in range(WRITERS) for n in range(ATTEMPTS))
    assert all(a.status != "unknown" for action in actions for a in action.attempts)
