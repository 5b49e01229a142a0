"""Atomic writes, the lock file, history: real processes, real files."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.infra.errors import LockError, ResumeKitError
from resume_kit.infra.store import FileLock, atomic_write, keep_history
from tests.conftest import run_cli


def test_atomic_write_replaces_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "f.yaml"
    atomic_write(target, "one\n")
    atomic_write(target, "two\n")
    assert target.read_text() == "two\n"
    assert sorted(os.listdir(tmp_path)) == ["f.yaml"]


def test_atomic_write_refuses_to_replace_a_fifo_a_folder_or_a_socket(tmp_path: Path) -> None:
    # Renaming over them would replace them; as root the same would replace /dev/null.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    sock_path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    try:
        for target, kind in ((fifo, "a FIFO"), (folder, "a directory"), (sock_path, "a socket")):
            with pytest.raises(ResumeKitError, match=f"is {kind}: resume-kit writes only regular"):
                atomic_write(target, "x")
            assert not target.is_file()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "folder", "sock"]
    finally:
        server.close()


def test_brief_output_to_a_device_is_refused_in_one_line(repo: Path) -> None:
    run_cli("init", "--goal", "g", cwd=repo)
    result = run_cli("brief", "--output", os.devnull, cwd=repo)
    assert result.code == 2
    assert f"{os.devnull} is a device" in result.stderr
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


def test_lock_is_exclusive_and_names_a_live_holder(tmp_path: Path) -> None:
    target = tmp_path / "progress.yaml"
    with FileLock(target):
        holder = json.loads((tmp_path / "progress.yaml.lock").read_text())
        assert holder["pid"] == os.getpid()
        with pytest.raises(LockError) as info:
            FileLock(target, timeout=0.05).acquire()
    assert f"pid {os.getpid()} on {socket.gethostname()} (alive)" in info.value.message
    assert "delete" in (info.value.hint or "")
    assert not (tmp_path / "progress.yaml.lock").exists()


def test_a_lock_left_by_a_dead_process_is_broken(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    lock = tmp_path / "progress.yaml.lock"
    lock.write_text(
        json.dumps({"pid": int(dead.stdout), "host": socket.gethostname(), "created": 0})
    )
    with FileLock(tmp_path / "progress.yaml", timeout=0.5):
        assert json.loads(lock.read_text())["pid"] == os.getpid()


def test_a_lock_from_another_host_is_never_broken_silently(tmp_path: Path) -> None:
    lock = tmp_path / "progress.yaml.lock"
    lock.write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "created": 0}))
    with pytest.raises(LockError) as info:
        FileLock(tmp_path / "progress.yaml", timeout=0.05).acquire()
    assert "elsewhere.example (on another host)" in info.value.message
    assert lock.exists()


def _rewrite(target: Path, history: Path, text: str) -> None:
    """What the progress file's writers do: the current version to the history, then the
    file replaced."""
    keep_history(target, history)
    atomic_write(target, text)


def test_history_keeps_the_newest_twenty(tmp_path: Path) -> None:
    target = tmp_path / "progress.yaml"
    history = tmp_path / "history"
    for n in range(301):  # a tight loop: many copies share a clock second, some a tick
        _rewrite(target, history, f"version {n}\n")
    kept = sorted(history.iterdir())
    assert [p.read_text() for p in kept] == [f"version {n}\n" for n in range(280, 300)]


def test_a_history_copy_is_a_link_that_later_writes_leave_alone(tmp_path: Path) -> None:
    """The copy is the replaced file itself, under a second name: no bytes copied, and neither
    the replace nor an editor writing the new file in place reaches it."""
    target = tmp_path / "progress.yaml"
    history = tmp_path / "history"
    target.write_text("version 0\n")
    os.chmod(target, 0o600)
    before = os.lstat(target)
    _rewrite(target, history, "version 1\n")
    (kept,) = history.iterdir()
    assert (os.lstat(kept).st_ino, os.lstat(kept).st_nlink) == (before.st_ino, 1)
    assert oct(os.lstat(kept).st_mode & 0o777) == "0o600"
    with target.open("w") as in_place:  # as an editor that keeps the inode writes
        in_place.write("version 2\n")
    assert kept.read_text() == "version 0\n"


def test_a_file_with_another_name_is_copied_not_linked(tmp_path: Path) -> None:
    """A progress file that is also a name of some other file (a hard link made by hand) is
    copied: the history never holds a third name of that file."""
    target = tmp_path / "progress.yaml"
    elsewhere = tmp_path / "elsewhere.yaml"
    history = tmp_path / "history"
    elsewhere.write_text("shared\n")
    os.link(elsewhere, target)
    kept = keep_history(target, history)
    assert kept is not None and kept.read_text() == "shared\n"
    assert os.lstat(kept).st_ino != os.lstat(elsewhere).st_ino
    assert os.lstat(elsewhere).st_nlink == 2


def test_no_history_copy_of_a_symlink_or_a_fifo(tmp_path: Path) -> None:
    from resume_kit.infra.safefs import NotARegularFile

    history = tmp_path / "history"
    secret = tmp_path / "secret"
    secret.write_text("not ours\n")
    link = tmp_path / "progress.yaml"
    link.symlink_to(secret)
    with pytest.raises(NotARegularFile):
        keep_history(link, history)
    fifo = tmp_path / "other.yaml"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile):
        keep_history(fifo, history)
    assert not history.exists() or list(history.iterdir()) == []


def test_history_names_sort_in_write_order_whatever_the_clock_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy's name comes from one clock reading, moved past the newest copy when the clock
    has not moved on: readings that cross a second between two reads, or a clock set back
    (NTP), never make a newer copy sort first and be pruned (issue 12 item 16)."""
    import time

    base = 1_800_000_000 * 10**9
    readings: list[int] = []
    for n in range(30):  # two readings per copy: 0.5 s into a second, then 0.1 s past the next
        readings += [base + n * 10**9 + 500_000_000, base + (n + 1) * 10**9 + 100_000_000]
    readings[40:] = [r - 30 * 10**9 for r in readings[40:]]  # the clock is set back 30 s
    clock = iter(readings)
    real_gmtime = time.gmtime

    def fake_time_ns() -> int:
        return next(clock)

    def fake_gmtime(seconds: float | None = None) -> time.struct_time:
        return real_gmtime(next(clock) / 10**9 if seconds is None else seconds)

    target = tmp_path / "progress.yaml"
    history = tmp_path / "history"
    with monkeypatch.context() as patched:
        patched.setattr(time, "time_ns", fake_time_ns)
        patched.setattr(time, "gmtime", fake_gmtime)
        for n in range(26):
            _rewrite(target, history, f"version {n}\n")
    kept = sorted(history.iterdir())
    assert [p.read_text() for p in kept] == [f"version {n}\n" for n in range(5, 25)]


def test_a_held_lock_gives_a_clear_message_not_a_hang(repo: Path) -> None:
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    lock = repo / ".resume-kit" / "progress.yaml.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        lock.write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname(), "created": 0}))
        result = run_cli(
            "add", "x", "--verify", "true", cwd=repo, env={"RESUME_KIT_LOCK_TIMEOUT": "0.3"}
        )
        assert result.code == 2
        assert f"progress.yaml is locked by pid {holder.pid}" in result.stderr
        assert "(alive)" in result.stderr
    finally:
        holder.communicate(b"")
    assert (
        run_cli("add", "x", "--verify", "true", cwd=repo).code == 0
    )  # the dead holder's lock is stale now


def test_three_processes_writing_at_once_lose_no_update(repo: Path) -> None:
    assert run_cli("init", "--goal", "concurrency", cwd=repo).code == 0
    script = (
        "import sys\n"
        "from resume_kit.cli.app import main\n"
        "for i in range(8):\n"
        "    try:\n"
        "        main(['add', f'w{sys.argv[1]} unit {i}', '--verify', 'true', '--id', f'w{sys.argv[1]}-{i}'])\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0, exc.code\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(w)],
            cwd=repo,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "RESUME_KIT_LOCK_TIMEOUT": "30"},
        )
        for w in range(3)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    from resume_kit.progress_file import roundtrip as progress_yaml
    from resume_kit.progress_file import validate as progress_validate

    model = progress_validate.validate(
        progress_yaml.parse_text((repo / ".resume-kit" / "progress.yaml").read_text())
    )
    ids = sorted(u.id for u in model.units)
    assert ids == sorted(f"w{w}-{i}" for w in range(3) for i in range(8))


def test_temporary_names_are_what_the_stale_sweep_removes(tmp_path: Path) -> None:
    """A temporary's name carries this pid and fresh random hex, the form the sweep of a
    killed write's leftovers recognises (and nothing else)."""
    import re

    from resume_kit.infra.atomic_file import remove_stale_temporaries, temporary_path

    target = tmp_path / "progress.json"
    names = {os.path.basename(temporary_path(target)) for _ in range(20)}
    assert os.path.dirname(temporary_path(target)) == str(tmp_path)
    assert len(names) == 20
    for name in names:
        assert re.fullmatch(rf"\.progress\.json\.{os.getpid()}\.[0-9a-f]{{8}}\.tmp", name), name
    dead = os.path.basename(temporary_path(target)).replace(f".{os.getpid()}.", ".999999999.")
    (tmp_path / dead).write_text("half")
    (tmp_path / "other.tmp").write_text("kept")
    assert remove_stale_temporaries(tmp_path, "progress.json") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.tmp"]


_NAME_PARTS = st.sampled_from(
    [".", "..", "a", "json", "7", "12", "ab", "f0", "tmp", ".tmp", "\n", "Z"]
)
_SOME_NAME = st.lists(_NAME_PARTS, max_size=5).map("".join)


@settings(max_examples=500)
@given(
    name=_SOME_NAME.filter(bool),
    around=st.one_of(st.just(("", "")), st.tuples(_SOME_NAME, _SOME_NAME)),
    pid=st.sampled_from(["42", "1", "x", "", "4.2"]),
    hex_=st.sampled_from(["ab", "0f", "", "g", "a.b"]),
    end=st.sampled_from([".tmp", ".tmp\n", ".tmp.tmp", "tmp"]),
    other=st.one_of(st.none(), _SOME_NAME),
)
def test_a_temporary_is_recognised_as_by_its_own_pattern(
    name: str, around: tuple[str, str], pid: str, hex_: str, end: str, other: str | None
) -> None:
    """The sweep's one pattern for every name picks out exactly the files that the pattern of
    ``temporary_path``'s form for that one name matches, with the same process id: for names
    like ``name``'s temporaries, with text around the name or in its other parts, and others."""
    import re

    from resume_kit.infra.atomic_file import temporary_pid

    before, after = around
    file_name = f".{before}{name}{after}.{pid}.{hex_}{end}" if other is None else other
    own = re.fullmatch(rf"\.{re.escape(name)}\.([0-9]+)\.[0-9a-f]+\.tmp", file_name)
    assert temporary_pid(file_name, name) == (int(own.group(1)) if own else None)


def test_a_history_name_that_is_no_date_is_passed_over(tmp_path: Path) -> None:
    """A copy named like ours but with no real date in it (put there by hand or by a clone)
    neither stops the save nor decides the next copy's name."""
    target = tmp_path / "progress.yaml"
    history = tmp_path / "history"
    history.mkdir()
    (history / "progress-20261399T999999-000000000.yaml").write_text("x")
    (history / "progress-20261202T032247-886594080.yaml").write_text("x")
    target.write_text("a")
    dest = keep_history(target, history)
    assert dest is not None and dest.name > "progress-20261202T032247-886594080.yaml"
