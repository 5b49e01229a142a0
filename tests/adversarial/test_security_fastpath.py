"""The served brief (brief/fastpath.py) runs `git status` with the argv its recorded build ran:
a filter driver the repository's configuration gains afterwards must never run (docs/security.md,
row 21)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.adversarial.test_security_hooks import EVIL, PROGRESS
from tests.conftest import Result
from tests.e2e.test_brief_fastpath import Workspace, settling, workspace
from tests.hostile import hostile_clone, run_user

__all__ = ["workspace"]  # the fixture, imported for pytest

DEBUG = {"RESUME_KIT_DEBUG_FASTPATH": "1", "RESUME_KIT_TRUST": "all"}


def _stat_dirty(path: Path) -> None:
    stamp = time.time() + 5
    os.utime(path, (stamp, stamp))


def _stored(victim: Path, result: Result) -> None:
    """Build again while the last build stored no receipt because an input had only just
    changed (fastpath.RACY_NS: how soon a build starts after a test's write is the machine's
    speed; our records in the user cache keep changing for 2 s after a change)."""
    for _ in settling():
        if "changed while the brief was built" not in result.stderr:
            return
        result = run_user("brief", cwd=victim, env=DEBUG)
        assert "served the stored brief" not in result.stderr
    raise AssertionError(result.stderr)


def test_a_new_filter_driver_is_never_run_by_the_served_brief(tmp_path: Path) -> None:
    hits = tmp_path / "hits"
    files = {
        ".resume-kit/progress.yaml": PROGRESS,
        ".gitattributes": "*.txt filter=late\n",
        "data.txt": "data\n",
        "evil.sh": EVIL.format(stop=os.getpid(), hits=hits),
        "late.gitconfig": "# nothing yet\n",
    }
    victim = hostile_clone(tmp_path, files, executable=("evil.sh",))
    with (victim / ".git" / "config").open("a") as config:
        config.write("[include]\n\tpath = ../late.gitconfig\n")
    script = victim / "evil.sh"
    run_user("brief", cwd=victim, env=DEBUG)  # the first brief writes .resume-kit/.gitignore,
    _stored(victim, run_user("brief", cwd=victim, env=DEBUG))  # which the second sees
    assert "served the stored brief" in run_user("brief", cwd=victim, env=DEBUG).stderr

    # the included file (a tracked file of the repository) now defines the driver
    (victim / "late.gitconfig").write_text(f'[filter "late"]\n\tclean = {script} clean\n')
    _stat_dirty(victim / "data.txt")
    result = run_user("brief", cwd=victim, env=DEBUG)
    assert result.code == 0, result.stderr
    assert "served the stored brief" not in result.stderr
    assert not hits.exists(), hits.read_text()
    _stored(victim, result)
    assert "served the stored brief" in run_user("brief", cwd=victim, env=DEBUG).stderr

    # and straight in .git/config: a second driver
    (victim / ".gitattributes").write_text("*.txt filter=late2\n")
    with (victim / ".git" / "config").open("a") as config:
        config.write(f'[filter "late2"]\n\tclean = {script} clean2\n')
    _stat_dirty(victim / "data.txt")
    result = run_user("brief", cwd=victim, env=DEBUG)
    assert "served the stored brief" not in result.stderr
    assert not hits.exists(), hits.read_text()

    # the attack is live: plain git, started from a process named like resume-kit, runs it
    _stat_dirty(victim / "data.txt")
    code = "import subprocess, sys; subprocess.run(['git', 'status'], cwd=sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(victim), "resume_kit"], check=True)
    assert hits.exists()


def test_a_hostile_clone_s_receipt_is_stored_detached_without_hanging_or_escaping(
    tmp_path: Path,
) -> None:
    """Without the debug line the receipt is written by a child detached after the answer
    (infra/detach.py). In a clone whose unit artifact is a committed symlink to a FIFO outside
    the tree and whose file names hold shell text, that child looks at them by lstat only: it
    ends (never waits on the FIFO), runs nothing, writes nothing outside the user's folders,
    and the receipt it stores serves the next brief."""
    fifo = tmp_path / "outside" / "pipe"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    progress = PROGRESS.replace(
        "    title: Second\n", "    title: Second\n    artifacts: [out/a.json]\n"
    )
    files = {".resume-kit/progress.yaml": progress, "out/$(touch PWNED)`touch PWNED2`.txt": "x\n"}
    victim = hostile_clone(tmp_path, files, symlinks={"out/a.json": str(fifo)})
    wait = "from resume_kit.infra.detach import wait_for_detached; wait_for_detached()"
    for _ in settling():
        plain = run_user("brief", cwd=victim)
        assert plain.code == 0, plain.stderr
        subprocess.run([sys.executable, "-c", wait], check=True, timeout=60)
        served = run_user("brief", cwd=victim, env={"RESUME_KIT_DEBUG_FASTPATH": "1"})
        if "served the stored brief" in served.stderr:
            break
    else:
        raise AssertionError(served.stderr)
    assert served.stdout == plain.stdout
    assert not list(tmp_path.rglob("PWNED*"))
    assert sorted(p.name for p in fifo.parent.iterdir()) == ["pipe"]


def test_a_hostile_hook_payload_is_served_or_built_as_the_full_path_does(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The served hook brief reads stdin capped (1 MiB, known fields only) and only looks at
    the payload's transcript path (lstat: a FIFO there never hangs it, nothing is opened);
    the session id names files only through a hash (docs/security.md, row 21)."""
    from tests.e2e.test_brief_fastpath_hooks import differential, payload, served_once_stored

    monkeypatch.chdir(workspace.root)
    workspace.outlast_fresh_inputs()  # else a record still completing is the miss's reason
    served_once_stored(workspace, lambda: payload("first"), "a new session")  # a receipt
    fifo = workspace.root.parent / "transcript.fifo"
    os.mkfifo(fifo)
    hostile = json.loads(payload("../../../../etc/passwd"))
    hostile["transcript_path"] = str(fifo)
    done = differential(workspace, json.dumps(hostile).encode())
    assert not done.served and "whose transcript exists" in done.debug
    huge = b'{"session_id": "' + b"x" * (3 << 20) + b'", "source": "startup"}'
    differential(workspace, huge)
    outside = json.loads(payload("escape"))
    outside["cwd"] = "/"
    differential(workspace, json.dumps(outside).encode())
    cache = Path(os.environ["XDG_CACHE_HOME"])
    written = {
        p for p in workspace.root.parent.rglob("*") if p.is_file() and cache not in p.parents
    }
    assert not any("passwd" in p.name for p in written)
