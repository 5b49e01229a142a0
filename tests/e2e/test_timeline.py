"""`resume-kit timeline`: real runs into the state library, the HTML report opened in a real
headless Chromium (a screenshot, and the chart's elements in the rendered DOM)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli_subprocess

pytestmark = pytest.mark.subprocess
TRUST = {"RESUME_KIT_TRUST": "all"}


def _history(repo: Path) -> None:
    assert run_cli_subprocess("init", "--goal", "g", cwd=repo).code == 0
    check = "test -f ok.txt || { echo nope >&2; exit 1; }"
    assert run_cli_subprocess("add", "First", "--verify", check, cwd=repo).code == 0
    assert run_cli_subprocess("add", "Second", "--verify", "true", cwd=repo).code == 0
    run_cli_subprocess("brief", cwd=repo)
    assert run_cli_subprocess("verify-next", cwd=repo, env=TRUST).code == 1
    run_cli_subprocess("snapshot", "--trigger", "pre-compact", "--quiet", cwd=repo)
    (repo / "ok.txt").write_text("")
    assert run_cli_subprocess("verify-next", cwd=repo, env=TRUST).code == 0
    assert run_cli_subprocess("verify-next", cwd=repo, env=TRUST).code == 0


def test_timeline_counts_and_burn_down(repo: Path, tmp_path: Path) -> None:
    _history(repo)
    data = json.loads(run_cli_subprocess("timeline", "--json", cwd=repo).stdout)
    assert data["counts"] == {"sessions": 1, "compactions": 1, "verified": 2, "failures": 1}
    assert [left for _, left in data["burn"]] == [2, 1, 0]
    text = run_cli_subprocess("timeline", cwd=repo).stdout
    assert "2 verified, 1 failure; 2 units" in text and "left: " in text


def test_the_html_report_renders_in_headless_chromium(repo: Path, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")
    _history(repo)
    page = tmp_path / "timeline.html"
    assert run_cli_subprocess("timeline", "--html", str(page), cwd=repo).code == 0
    text = page.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "<script" not in text
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    flags += [f"--user-data-dir={tmp_path / 'profile'}", "--window-size=900,700"]
    shot = tmp_path / "shot.png"
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 2000
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    for element in (
        'id="burndown"',
        'class="burn"',
        'class="verified"',
        'class="failure"',
        'class="session"',
        'class="compaction"',
    ):
        assert element in dom, element
