"""The brief's "do not repeat" section (issue 15 point 6): ledger entries newest first, each
with its status, attempts and age; an entry that succeeded once is done, whatever came after;
within the budget the section shrinks like everything else."""

from __future__ import annotations

import json

from resume_kit.brief.build import build_brief
from resume_kit.brief.render import render
from resume_kit.model.progress import Action, Attempt
from tests.brief_cases import interrupted


def section(text: str) -> list[str]:
    body = text.split("## Do not repeat", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.startswith("- ")]


def test_newest_first_with_status_attempts_and_age() -> None:
    progress, snap, findings = interrupted()  # notify-reviewer-pr-42 at 07:30, success
    progress.actions += [
        Action("git-push-1a2b3c4d5e", "git-push: git push origin main", "failed",
               "2026-11-29T08:05:00Z",
               [Attempt("success", "2026-11-29T07:50:00Z", "s1", "git push origin main"),
                Attempt("failed", "2026-11-29T08:05:00Z", "s2", "git push origin main")]),
        Action("npm-publish-0f0f0f0f0f", "npm-publish: npm publish", "unknown",
               "2026-11-29T07:00:00Z"),
    ]  # fmt: skip
    brief = build_brief(progress, snap, findings)
    lines = section(render(brief, "markdown", 4000).text)
    assert [line.split("`")[1] for line in lines] == [
        "git-push-1a2b3c4d5e",
        "notify-reviewer-pr-42",
        "npm-publish-0f0f0f0f0f",
    ]
    assert "(failed, 2 attempts, 5 min ago): it succeeded before: done already" in lines[0]
    assert "(unknown, 70 min ago): outcome unknown" in lines[2]
    data = json.loads(render(brief, "json", 4000).text)["do_not_repeat"]
    assert data[0]["attempts"] == 2 and "attempts" not in data[1]


def test_the_section_fits_the_budget() -> None:
    progress, snap, findings = interrupted()
    progress.actions += [
        Action(f"git-push-{n:010d}", f"git-push: git push origin b{n}", "success",
               f"2026-11-29T06:{n:02d}:00Z")
        for n in range(40)
    ]  # fmt: skip
    brief = build_brief(progress, snap, findings)
    small = render(brief, "markdown", 700)
    assert small.fits
    lines = section(small.text)
    assert len(lines) < 10
    assert lines[0].startswith("- `notify-reviewer-pr-42`")  # the newest kept first
