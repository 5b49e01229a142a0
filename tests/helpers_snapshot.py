"""Helpers for the command tests (snapshot, reconcile, status, verify-next, run, trust): real
progress files, real evidence."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from resume_kit.core.reconcile import reconcile
from resume_kit.facts.fingerprint import fingerprint
from resume_kit.facts.snapshot import take_snapshot
from resume_kit.infra.paths import find_layout
from resume_kit.model.findings import Finding
from resume_kit.progress_file.config import Config
from resume_kit.progress_file.io import load
from tests.conftest import git


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").stdout.strip()


def evidence(
    root: Path,
    files: list[str] | None = None,
    artifacts: list[str] | None = None,
    commit: str | None = None,
    hours_ago: float = 2.0,
) -> dict[str, Any]:
    """Evidence as verify-next writes it, for the workspace as it is now."""
    when = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=hours_ago)
    return {
        "verified_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit if commit is not None else head(root),
        "dirty": False,
        "fingerprint": fingerprint(root, files or [], artifacts or []),
        "duration_s": 0.5,
    }


def write_progress(
    root: Path,
    units: list[dict[str, Any]],
    actions: list[dict[str, Any]] | None = None,
    goal: str = "Finish the task",
) -> Path:
    data: dict[str, Any] = {"schema_version": 1, "goal": goal, "units": units}
    if actions:
        data["actions"] = actions
    path = root / ".resume-kit" / "progress.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def findings_for(
    root: Path, config: Config | None = None, transcript_path: Path | None = None
) -> list[Finding]:
    layout = find_layout(root)
    progress = load(layout).progress
    snapshot = take_snapshot(
        layout, config or Config(), "manual", progress=progress, transcript_path=transcript_path
    )
    return reconcile(progress, snapshot)


def codes(findings: list[Finding]) -> set[str]:
    return {f.code for f in findings}


def by_code(findings: list[Finding], code: str) -> Finding:
    matches = [f for f in findings if f.code == code]
    assert len(matches) == 1, findings
    return matches[0]


def commit_file(root: Path, name: str, text: str, message: str | None = None) -> str:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(root, "add", name)
    git(root, "commit", "-q", "-m", message or f"add {name}")
    return head(root)


def conflicting_branches(root: Path, branch: str) -> None:
    """``main`` and ``branch`` both change notes.md's only line, so merging or rebasing one onto
    the other stops on a conflict; ``main`` is left checked out."""
    commit_file(root, "notes.md", "base\n")
    git(root, "checkout", "-q", "-b", branch)
    commit_file(root, "notes.md", f"{branch}\n", f"{branch} edit")
    git(root, "checkout", "-q", "main")
    commit_file(root, "notes.md", "main\n", "main edit")
