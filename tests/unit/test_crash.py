"""The crash log itself: where it goes, how many stay, what happens when it cannot be written."""

from __future__ import annotations

import io
import os
import stat
from contextlib import redirect_stderr
from datetime import datetime, timezone
from pathlib import Path

import pytest

from resume_kit.cli import crash


def raised(message: str = "boom") -> BaseException:
    try:
        raise RuntimeError(message)
    except RuntimeError as exc:
        return exc


def report(exc: BaseException, argv: list[str] | None = None) -> tuple[int, str]:
    buffer = io.StringIO()
    with redirect_stderr(buffer):
        code = crash.report_crash(exc, argv or ["status"])
    return code, buffer.getvalue()


def cache_folder() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "resume-kit"


def logs() -> list[Path]:
    return sorted(p for p in cache_folder().glob("crash-*.log"))


def test_the_log_is_written_private_and_named_on_one_line() -> None:
    code, err = report(raised("it broke\nsecond line"), ["verify-next", "--json"])
    assert code == 70
    (path,) = logs()
    assert err == (
        f"resume-kit: error: unexpected RuntimeError: it broke (crash log: {path})\n"
        f"hint: {crash.LOG_HINT}\n"
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache_folder().stat().st_mode) == 0o700
    text = path.read_text()
    assert "\nargv: resume-kit verify-next --json\n" in text
    assert "\nerror: unexpected RuntimeError: it broke\n" in text
    assert "\nRuntimeError: it broke\nsecond line\n" in text
    assert "in raised" in text  # the traceback's frame


def test_two_crashes_in_the_same_process_get_two_logs() -> None:
    report(raised())
    report(raised())
    assert len(logs()) == 2


def test_only_the_newest_logs_stay() -> None:
    folder = cache_folder()
    folder.mkdir(parents=True)
    old = [folder / f"crash-2020010{d}T000000.000000Z-{100 + d}.log" for d in range(1, 10)]
    old += [folder / f"crash-202002{d:02d}T000000.000000Z-7.log" for d in range(10, 26)]
    for path in old:
        path.write_text("old\n")
    other = folder / "crash-notes.txt"
    other.write_text("not a crash log\n")
    report(raised())
    kept = logs()
    assert len(kept) == crash.KEEP
    assert kept[:-1] == sorted(old)[-(crash.KEEP - 1) :]
    assert kept[-1].read_text().startswith("# resume-kit crash log\n")
    assert other.exists()


def test_an_existing_name_is_never_reused_or_followed(tmp_path: Path) -> None:
    folder = cache_folder()
    folder.mkdir(parents=True)
    target = tmp_path / "target"
    target.write_text("keep\n")
    stamp = datetime.now(timezone.utc)
    (folder / crash.log_name(stamp)).symlink_to(target)
    path = Path(crash.write_log(raised(), ["status"], stamp))
    assert path.name == crash.log_name(stamp, 2)
    assert not path.is_symlink()
    assert target.read_text() == "keep\n"


def test_secrets_and_terminal_controls_stay_out_of_the_log() -> None:
    secret = "ghp_" + "A1b2" * 9
    code, err = report(raised(f"token {secret} \x1b]0;owned\x07"), ["add", f"--verify={secret}"])
    assert code == 70
    text = logs()[0].read_text()
    assert secret not in text and secret not in err
    assert "\x1b" not in text and "\x1b" not in err
    assert "[REDACTED:github-token]" in text


@pytest.mark.parametrize("how", ["a file", "relative"])
def test_a_log_that_cannot_be_written_still_gives_the_one_line(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if how == "a file":
        blocker = tmp_path / "cache-is-a-file"
        blocker.write_text("")
        monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    else:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("XDG_CACHE_HOME", "relative-cache")
    code, err = report(raised())
    assert code == 70
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith("resume-kit: error: unexpected RuntimeError: boom (no crash log:")
    assert lines[1] == f"hint: {crash.HINT}"
    assert "Traceback" not in err
    assert not list(tmp_path.rglob("crash-*.log"))
