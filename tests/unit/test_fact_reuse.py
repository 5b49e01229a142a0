"""The log and transcript facts reused from the last snapshot (facts/fact_reuse.py): after any
change to a log, a log folder or an agent session, the snapshot's facts with reuse equal a fresh
computation without it; with nothing changed they are reused (their readers do not run)."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.facts import fact_reuse
from tests.conftest import git


def _session_record(cwd: Path, n: int, text: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": f"u{n}",
            "sessionId": "sess-1",
            "timestamp": f"2026-03-01T10:00:{n % 60:02d}.000Z",
            "cwd": str(cwd),
            "message": {"role": "user", "content": text},
        }
    )


class Workspace:
    def __init__(self, base: Path) -> None:
        self.root = base / "repo"
        self.root.mkdir()
        git(self.root, "init", "-q", "-b", "main")
        (self.root / "README.md").write_text("hello\n")
        git(self.root, "add", "README.md")
        git(self.root, "commit", "-q", "-m", "initial")
        (self.root / ".resume-kit").mkdir()
        (self.root / "logs").mkdir()
        (self.root / "logs" / "run.log").write_text("ok\nerror: it broke\n")
        (self.root / "build.log").write_text("Traceback (most recent call last):\nValueError: x\n")
        from resume_kit.facts.transcripts.claude_code import escaped_names

        name = sorted(escaped_names(self.root))[0]
        self.project = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / name
        self.project.mkdir(parents=True)
        self.session = self.project / "sess-1.jsonl"
        self.session.write_text(_session_record(self.root, 1, "first request") + "\n")
        self.outside = base / "outside"
        self.outside.mkdir()
        (self.outside / "secret.log").write_text("error: AKIA-OUTSIDE-SECRET\n")
        self.n = 0

    def facts(self, reuse: bool) -> dict[str, Any]:
        from resume_kit.facts.snapshot import take_snapshot
        from resume_kit.infra.paths import find_layout
        from resume_kit.progress_file.config import Config

        with _env(fact_reuse.DISABLE_ENV, None if reuse else "1"):
            snapshot = take_snapshot(find_layout(self.root), Config(), "brief")
        return {key: snapshot[key] for key in ("logs", "transcript", "notes")}  # type: ignore[literal-required]


@contextmanager
def _env(name: str, value: str | None) -> Iterator[None]:
    old = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


# --------------------------------------------------------------------------- the changes


def _targets(ws: Workspace) -> dict[str, Path]:
    return {
        "log": ws.root / "logs" / "run.log",
        "root log": ws.root / "build.log",
        "session": ws.session,
    }


def _line(ws: Workspace, target: str) -> str:
    ws.n += 1
    if target == "session":
        return _session_record(ws.root, ws.n + 1, f"request {ws.n}")
    return f"error: failure number {ws.n}"


def append(ws: Workspace, target: str) -> None:
    path = _targets(ws)[target]
    if path.is_symlink() or not path.exists():
        path.unlink(missing_ok=True)
    with path.open("a") as handle:
        handle.write(_line(ws, target) + "\n")


def rewrite_same_size(ws: Workspace, target: str) -> None:
    path = _targets(ws)[target]
    if path.is_symlink() or not path.is_file():
        return append(ws, target)
    data = path.read_bytes()
    swapped = data.replace(b"1", b"7") if b"1" in data else data.replace(b"o", b"0")
    path.write_bytes(swapped)


def touch(ws: Workspace, target: str) -> None:
    path = _targets(ws)[target]
    if path.exists() and not path.is_symlink():
        info = path.stat()
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))


def symlink(ws: Workspace, target: str) -> None:
    path = _targets(ws)[target]
    path.unlink(missing_ok=True)
    path.symlink_to(ws.outside / "secret.log")


def delete(ws: Workspace, target: str) -> None:
    _targets(ws)[target].unlink(missing_ok=True)


def new_file(ws: Workspace, target: str) -> None:
    ws.n += 1
    if target == "session":
        (ws.project / f"sess-new-{ws.n}.jsonl").write_text(
            _session_record(ws.root, 30, f"newer session {ws.n}") + "\n"
        )
    else:
        folder = ws.root if target == "root log" else ws.root / "logs"
        (folder / f"new-{ws.n}.log").write_text(f"fatal: new file {ws.n}\n")


def new_folder(ws: Workspace, target: str) -> None:
    ws.n += 1
    if target == "session":
        folder = ws.project.parent / (ws.project.name + f"-sub{ws.n}")  # a subfolder's project
        folder.mkdir()
        (folder / "other.jsonl").write_text(_session_record(ws.root, 40, "from a subfolder") + "\n")
    else:
        folder = ws.root / "logs" / f"nested{ws.n}" / "deeper"
        folder.mkdir(parents=True)
        (folder / "x.log").write_text(f"panic: nested {ws.n}\n")


def nothing(ws: Workspace, target: str) -> None:
    pass


CHANGES: dict[str, Callable[[Workspace, str], None]] = {
    "append": append,
    "rewrite same size": rewrite_same_size,
    "touch": touch,
    "replace by symlink": symlink,
    "delete": delete,
    "new file matching the glob": new_file,
    "new folder": new_folder,
    "nothing": nothing,
}
TARGETS = ("log", "root log", "session")


@pytest.fixture
def racy_free(monkeypatch: pytest.MonkeyPatch) -> None:
    # A test cannot wait 2 s per change: the record's own mtime (the file system's clock)
    # still keeps an input changed within the record's tick from being trusted.
    monkeypatch.setattr(fact_reuse, "RACY_NS", 0)


@pytest.fixture
def reader_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    import resume_kit.facts.logs as logs
    import resume_kit.facts.transcripts as transcripts

    calls = {"logs": 0, "transcript": 0}
    real_logs, real_transcript = logs.read_logs, transcripts.read_transcript

    def counted_logs(*args: Any, **kwargs: Any) -> Any:
        calls["logs"] += 1
        return real_logs(*args, **kwargs)

    def counted_transcript(*args: Any, **kwargs: Any) -> Any:
        calls["transcript"] += 1
        return real_transcript(*args, **kwargs)

    monkeypatch.setattr(logs, "read_logs", counted_logs)
    monkeypatch.setattr(transcripts, "read_transcript", counted_transcript)
    return calls


def _check_step(ws: Workspace, name: str, target: str) -> None:
    CHANGES[name](ws, target)
    reused = ws.facts(reuse=True)
    fresh = ws.facts(reuse=False)
    assert reused == fresh, f"{name} of {target}"
    assert "AKIA-OUTSIDE-SECRET" not in json.dumps(reused)


@pytest.mark.usefixtures("racy_free")
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(CHANGES))
def test_each_change_gives_the_fresh_facts(
    tmp_path: Path, name: str, target: str, reader_calls: dict[str, int]
) -> None:
    ws = Workspace(tmp_path)
    first = ws.facts(reuse=True)
    assert first == ws.facts(reuse=False)
    assert first["transcript"] and first["logs"]
    _check_step(ws, name, target)
    _check_step(ws, "nothing", target)  # and after it, reused or not, still the fresh facts


@pytest.mark.usefixtures("racy_free")
def test_unchanged_inputs_are_reused_without_their_readers(
    tmp_path: Path, reader_calls: dict[str, int]
) -> None:
    ws = Workspace(tmp_path)
    first = ws.facts(reuse=True)
    record = next((Path(os.environ["XDG_CACHE_HOME"]) / "resume-kit").rglob("facts.json"))
    stored = json.loads(record.read_text())["facts"]
    assert set(stored) == {"logs", "transcript"}
    assert record.stat().st_mode & 0o777 == 0o600
    calls = dict(reader_calls)
    again = ws.facts(reuse=True)
    assert again == first
    # a hit needs the inputs' timestamps older than the record's: true unless the whole
    # snapshot ran within one timestamp tick of the file system
    if any(t >= record.stat().st_mtime_ns for t in _input_times(stored)):
        pytest.skip("the file system's clock did not move during the snapshot")
    assert reader_calls == calls  # neither reader ran: both facts came from the record
    (ws.root / "logs" / "run.log").write_text("error: changed\n")
    changed = ws.facts(reuse=True)
    assert reader_calls["logs"] == calls["logs"] + 1
    assert reader_calls["transcript"] == calls["transcript"]
    assert changed == ws.facts(reuse=False) != first


def _input_times(stored: dict[str, Any]) -> Iterator[int]:
    for entry in stored.values():
        for _, kind, sig in entry["inputs"]:
            yield from fact_reuse._times(kind, sig)


def test_the_switch_disables_reuse_and_the_record(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.facts(reuse=False)
    assert not list((Path(os.environ["XDG_CACHE_HOME"]) / "resume-kit").rglob("facts.json"))


def test_racy_inputs_are_not_recorded(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)  # everything was just written: within RACY_NS of the snapshot
    ws.facts(reuse=True)
    records = list((Path(os.environ["XDG_CACHE_HOME"]) / "resume-kit").rglob("facts.json"))
    assert not records or json.loads(records[0].read_text())["facts"] == {}


STEPS = st.lists(
    st.tuples(st.sampled_from(sorted(CHANGES)), st.sampled_from(TARGETS)), min_size=1, max_size=5
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS)
def test_any_sequence_of_changes_gives_the_fresh_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, str]]
) -> None:
    monkeypatch.setattr(fact_reuse, "RACY_NS", 0)
    base = Path(tempfile.mkdtemp(dir=tmp_path))
    cache = base / "cache"
    with _env("XDG_CACHE_HOME", str(cache)), _env("CLAUDE_CONFIG_DIR", str(base / "claude")):
        ws = Workspace(base)
        assert ws.facts(reuse=True) == ws.facts(reuse=False)
        for name, target in steps:
            _check_step(ws, name, target)


def test_signatures_see_each_kind_of_change(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    log = folder / "a.log"
    log.write_text("one\n")
    inputs = [(str(folder), "L"), (str(log), "l")]
    before = fact_reuse.signatures(inputs)
    assert before == fact_reuse.signatures(inputs)
    (folder / "b.log").write_text("two\n")
    assert fact_reuse.signatures(inputs) != before
    before = fact_reuse.signatures(inputs)
    log.unlink()
    log.symlink_to(tmp_path / "elsewhere")
    after = fact_reuse.signatures(inputs)
    assert after != before and after[1][2] is not None
    link = tmp_path / "linked"
    link.symlink_to(folder)
    seen = fact_reuse.signature("L", str(link))  # never listed through
    assert seen[0] == "not a folder" and seen[1] == stat.S_IFLNK
