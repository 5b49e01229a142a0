"""The shipped template's compiled code is cached in the user's cache folder; a repository
template never is, and the cached code renders the same text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from resume_kit.brief import render as render_mod
from resume_kit.brief.build import Brief, build_brief
from resume_kit.brief.repo_template import RepoTemplate
from resume_kit.infra.cachedir import user_cache_root
from tests.brief_cases import interrupted, trouble


def _brief(case: Callable[[], Any]) -> Brief:
    progress, snap, findings = case()
    return build_brief(progress, snap, findings, summary=snap.pop("_summary", None))


def _cached_files() -> list[Path]:
    return sorted(Path(user_cache_root()).glob("jinja-*/*"))


@pytest.mark.parametrize("budget", [300, 800, 1500, 4000])
def test_cached_code_renders_what_a_fresh_compile_renders(
    budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = render_mod.render(_brief(trouble), "markdown", budget).text  # compiles, caches
    assert len(_cached_files()) >= 1
    assert render_mod.render(_brief(trouble), "markdown", budget).text == first  # from cache
    monkeypatch.setattr(render_mod, "_shipped_bytecode_cache", lambda: None)
    assert render_mod.render(_brief(trouble), "markdown", budget).text == first  # no cache


def test_a_repository_template_is_never_cached() -> None:
    repo = RepoTemplate(rel_path=".resume-kit/templates/brief.md.j2", source="# {{ 1 + 1 }}\n",
                        sha256="0" * 64)  # fmt: skip
    render_mod._template(repo)
    assert _cached_files() == []


def test_an_unusable_cache_folder_still_renders(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert render_mod.render(_brief(interrupted), "markdown", 1500).text
