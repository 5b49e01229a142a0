"""A real crash of the real CLI (a subprocess) writes a crash log in the user's cache folder.

The trigger is a real bug, not an injected fault: ``brief --output`` with a file name longer
than the file system allows ends in an ENAMETOOLONG that no handler expects (exit 70). If that
ever becomes a user error, pick another unexpected exception here.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from tests.conftest import Result, run_cli

LONG_NAME = "a" * 300
SECRET = "ghp_" + "A1b2" * 9  # a GitHub token shape: redacted wherever it is kept
LINE = re.compile(r"resume-kit: error: unexpected OSError: .* \(crash log: (?P<path>/\S+\.log)\)")


def crash(repo: Path, name: str = LONG_NAME) -> Result:
    assert run_cli("init", "--goal", "Crash on purpose", cwd=repo).code == 0
    return run_cli("brief", "--output", name, cwd=repo)


def test_an_unexpected_exception_writes_a_crash_log_and_names_it(repo: Path) -> None:
    result = crash(repo)
    assert result.code == 70, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    match = LINE.fullmatch(lines[0])
    assert match, lines[0]
    assert lines[1].startswith("hint: this is a bug in resume-kit; please report it")

    path = Path(match["path"])
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "resume-kit"
    assert path.parent == cache
    assert re.fullmatch(r"crash-\d{8}T\d{6}\.\d{6}Z-\d+\.log", path.name)
    assert not path.is_symlink() and path.is_file()
    assert stat.S_IMODE(path.lstat().st_mode) == 0o600
    assert not any(p.name.startswith("crash-") for p in repo.rglob("*"))

    text = path.read_text()
    from resume_kit import __version__

    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    assert text.startswith("# resume-kit crash log\n")
    assert f"\nversion: resume-kit {__version__}\n" in text
    assert re.search(r"\npython: CPython 3\.\d+\.\d+", text)
    assert re.search(r"\nplatform: \S+", text)
    assert f"\ngit: {git_version.strip()}\n" in text
    assert f"\nargv: resume-kit brief --output {LONG_NAME}\n" in text
    assert "\nerror: unexpected OSError: [Errno 36] File name too long" in text
    assert "Traceback (most recent call last):" in text
    assert "in atomic_write" in text  # the frame that raised
    assert text.rstrip().splitlines()[-1].startswith("OSError: [Errno 36]")


def test_secrets_in_the_command_line_stay_out_of_the_log_and_the_terminal(repo: Path) -> None:
    result = crash(repo, f"{SECRET}-{LONG_NAME}")
    assert result.code == 70, result.stderr
    match = LINE.fullmatch(result.stderr.splitlines()[0])
    assert match, result.stderr
    text = Path(match["path"]).read_text()
    assert "[REDACTED:github-token]" in text
    assert SECRET not in text
    assert SECRET not in result.stderr


def test_debug_still_prints_the_traceback_and_writes_the_log(repo: Path) -> None:
    assert run_cli("init", "--goal", "Crash on purpose", cwd=repo).code == 0
    result = run_cli("--debug", "brief", "--output", LONG_NAME, cwd=repo)
    assert result.code == 70
    assert "Traceback (most recent call last):" in result.stderr
    line = result.stderr.splitlines()[-2]
    match = LINE.fullmatch(line)
    assert match, result.stderr
    assert Path(match["path"]).is_file()
