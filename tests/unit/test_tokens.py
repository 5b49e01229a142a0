"""Token counting: cl100k_base, offline, loaded only when a count is needed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.infra import tokens

COUNT_SCRIPT = (
    "import sys, resume_kit.infra.tokens as t\n"
    "print(t.count_tokens('hello world'), t.count_tokens('Résumé: doc-001 … doc-136'))\n"
    "print(sorted(m for m in sys.modules if m.startswith('tiktoken_ext.')))\n"
)


@pytest.fixture
def fresh_encoding() -> Iterator[None]:
    """Forget the loaded encoding for one test, and restore it afterwards."""
    saved = tokens._encoding, tokens._piece_ranks
    tokens._encoding = tokens._piece_ranks = None
    yield
    tokens._encoding, tokens._piece_ranks = saved


def test_counts_match_cl100k() -> None:
    assert tokens.count_tokens("") == 0
    assert tokens.count_tokens("hello world") == 2
    # Special-token text is counted as text, never refused.
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_short_text_fits_without_loading_the_encoding(fresh_encoding: None) -> None:
    assert tokens.fits("a short brief", 100)
    assert tokens.count_if_needed("a short brief", 100) == (13, False)
    assert tokens._encoding is None
    assert not tokens.fits("word " * 500, 100)  # counted from the ranks, piece by piece
    assert tokens._encoding is None and tokens._piece_ranks is not None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_byte_length_is_an_upper_bound(text: str) -> None:
    assert tokens.count_tokens(text) <= tokens.upper_bound(text)
    assert tokens.fits(text, tokens.count_tokens(text))


def test_tiktoken_cache_fallback_matches_the_bundled_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(tokens.data_file(), tmp_path / tokens.CL100K_CACHE_KEY)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    cached = tokens._from_tiktoken_cache()
    sample = "def f(x):\n    return x ** 2  # Résumé, naïve, 日本語 </context>"
    assert cached.encode(sample) == tokens._from_bundled_file().encode(sample)


def test_a_corrupt_cache_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / tokens.CL100K_CACHE_KEY).write_bytes(b"aGVsbG8= 0\n")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="SHA-256"):
        tokens._from_tiktoken_cache()


def test_no_source_is_a_clear_error_not_a_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_encoding: None
) -> None:
    missing = tmp_path / "installed" / tokens.DATA_FILE_NAME  # the shipped file is gone
    monkeypatch.setattr(tokens, "data_file", lambda: missing)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(tokens.TokenizerUnavailable) as caught:
        tokens.count_tokens("hello world " * 10)
    assert "offline" in caught.value.message
    assert tokens.CL100K_CACHE_KEY in (caught.value.hint or "")
    assert not any(tmp_path.iterdir())


def _no_network_command() -> tuple[list[str], dict[str, str]]:
    """A way to run Python with networking unavailable: a new network namespace, else dead proxies."""
    env = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    unshare = shutil.which("unshare")
    if unshare:
        probe = subprocess.run([unshare, "-rn", "true"], capture_output=True)
        if probe.returncode == 0:
            return [unshare, "-rn", sys.executable], env
    return [sys.executable], env


def test_counts_with_networking_unavailable_on_a_fresh_machine(tmp_path: Path) -> None:
    command, extra = _no_network_command()
    empty_cache = tmp_path / "tiktoken-cache"
    empty_cache.mkdir()
    env = dict(os.environ, **extra)
    env["TIKTOKEN_CACHE_DIR"] = str(empty_cache)
    env["TMPDIR"] = str(tmp_path)  # tiktoken's default cache folder is under the temp dir
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")  # no ranks cache yet
    network_probe = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 443), timeout=2)\n"
        "    print('online')\n"
        "except OSError:\n"
        "    print('offline')\n"
    )
    probe = subprocess.run(
        [*command, "-c", network_probe], env=env, capture_output=True, text=True, timeout=30
    )
    if "unshare" in command[0]:
        assert probe.stdout.strip() == "offline"
    ranks_cache = tmp_path / "user-cache" / "resume-kit" / tokens.RANKS_CACHE_NAME
    for run in ("cold", "warm"):  # parses the bundled file, then reads the ranks cache
        result = subprocess.run(
            [*command, "-c", COUNT_SCRIPT], env=env, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, (run, result.stderr)
        counts, plugins = result.stdout.splitlines()
        assert counts == "2 11", run
        assert plugins == "[]", run  # built directly, no tiktoken_ext plugin
        if sys.platform.startswith("linux"):
            assert ranks_cache.is_file(), run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiktoken-cache", "user-cache"]
    assert not any(empty_cache.iterdir())
