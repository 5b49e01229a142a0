"""Rendering the brief: golden Markdown, formats, fitting to the token budget, templates, speed.

Golden files live in tests/golden/; regenerate them after a deliberate wording change with
``RESUME_KIT_UPDATE_GOLDEN=1 pytest tests/unit/test_render.py`` and review the diff.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from resume_kit.brief.build import Brief, build_brief
from resume_kit.brief.render import _DETAIL_ORDER, HOOK_MAX_CHARS, LADDER, render
from resume_kit.brief.repo_template import RepoTemplate
from resume_kit.infra import tokens
from resume_kit.model.findings import finding
from resume_kit.model.progress import Evidence, LastFailure, Progress, Unit
from tests.brief_cases import all_done, base_snapshot, blocked, interrupted, trouble

GOLDEN = Path(__file__).parent.parent / "golden"
UPDATE = os.environ.get("RESUME_KIT_UPDATE_GOLDEN") == "1"


def _brief(case: Callable[[], Any]) -> Brief:
    progress, snap, findings = case()
    return build_brief(progress, snap, findings, summary=snap.pop("_summary", None))


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE or not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"golden file {name} was missing and has been written; review it")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "case", "budget"),
    [
        ("interrupted.md", interrupted, 1500),
        ("interrupted-400.md", interrupted, 400),
        ("trouble.md", trouble, 1500),
        ("trouble-700.md", trouble, 700),
        ("all-done.md", all_done, 1500),
        ("blocked.md", blocked, 1500),
    ],
)
def test_markdown_golden(name: str, case: Callable[[], Any], budget: int) -> None:
    rendered = render(_brief(case), "markdown", budget)
    _check_golden(name, rendered.text)
    assert rendered.fits
    assert tokens.count_tokens(rendered.text) <= budget


def test_json_golden() -> None:
    rendered = render(_brief(interrupted), "json", 1500)
    _check_golden("interrupted.json", rendered.text)
    data = json.loads(rendered.text)
    assert data["tokens"] == rendered.tokens
    markdown = render(_brief(interrupted), "markdown", 1500).text
    assert data["tokens"] == tokens.count_tokens(markdown)


def test_the_demo_case_answers_the_six_questions_within_800_tokens() -> None:
    rendered = render(_brief(interrupted), "markdown", 800)
    text = rendered.text
    assert tokens.count_tokens(text) <= 800
    assert "Extract parties, dates and amounts from the 200 contracts" in text  # the goal
    assert "**136/200 units done**" in text  # how many are done
    assert "Unit `doc-137`" in text  # which is next
    assert "python check.py out/137.json" in text  # its verify command
    assert "KeyError: 'party_b'" in text  # the last error
    assert "`src/extract.py` (unstaged M" in text  # which files are uncommitted
    assert "`out/137.json.partial` (untracked)" in text


def test_json_shape() -> None:
    data = json.loads(render(_brief(trouble), "json", 4000).text)
    assert data["schema_version"] == 1
    assert data["progress"]["done"] == 136 and data["progress"]["total"] == 200
    assert data["next"]["id"] == "doc-137" and data["next"]["stuck"] is True
    assert data["next"]["verify"] == "python check.py out/137.json"
    assert all(set(f) == {"code", "severity", "unit", "message"} for f in data["findings"])
    assert len(data["findings"]) == 45
    assert data["do_not_repeat"][0]["key"] == "deploy-staging"
    assert data["workspace"]["operation"] == "rebase"
    assert data["summary"]["references"] == ["logs/extract.log", "doc-137"]


def test_hook_format_wraps_the_markdown() -> None:
    brief = _brief(interrupted)
    hook = json.loads(render(brief, "claude-hook", 1500).text)
    assert list(hook) == ["hookSpecificOutput"]
    assert hook["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert hook["hookSpecificOutput"]["additionalContext"] == render(brief, "markdown", 1500).text


def _many_units(
    count: int, done_every: int = 2, verify: str = "pytest -q tests/test_{n}.py"
) -> Progress:
    units = []
    for n in range(count):
        done = n % done_every == 0 and n < count - 1
        units.append(
            Unit(
                id=f"u-{n:05d}",
                title=f"Unit {n}",
                status="done" if done else "todo",
                verify=verify.format(n=n),
                evidence=Evidence(
                    "2026-11-28T00:00:00Z", f"{n % 97:07x}" + "a" * 33, False, "x", 1.0
                )
                if done
                else None,
            )
        )
    return Progress(goal="Process every unit", units=units)


def test_hook_context_stays_under_the_size_limit_with_a_huge_budget() -> None:
    progress = _many_units(10_000)  # 5,000 separate done ranges
    brief = build_brief(progress, base_snapshot(), [])
    hook = json.loads(render(brief, "claude-hook", 1_000_000).text)
    context = hook["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= HOOK_MAX_CHARS
    assert "Unit `u-00001`" in context and "pytest -q tests/test_1.py" in context


def test_detail_is_dropped_in_the_fixed_order() -> None:
    brief = _brief(trouble)
    seen: list[list[str]] = []
    for budget in range(2000, 250, -50):
        rendered = render(brief, "markdown", budget)
        seen.append(rendered.dropped)
        # Whatever is dropped is a prefix-respecting subset of the documented order.
        positions = [_DETAIL_ORDER.index(kind) for kind in rendered.dropped]
        assert positions == sorted(positions)
        text = rendered.text
        for kept in (
            "# Resume brief",
            "## Warnings",
            "## Next: exactly one unit",
            "Unit `doc-137`",
            "python check.py out/137.json",
            "**Rule:**",
            "stop retrying the same approach",
        ):
            assert kept in text
        # The floor says a warning once: the stuck unit's in its Next section.
        assert "`UNIT_STUCK`" in text or rendered.level >= FLOOR_WARNINGS
    # Smaller budgets never keep more detail.
    for wider, narrower in itertools.pairwise(seen):
        assert set(wider) <= set(narrower)
    # The done ids (one range here) are the last thing cut: even the minimum keeps them.
    assert seen[0] == [] and "done ids" not in seen[-1] and "transcript" in seen[-1]
    assert "`doc-041` … `doc-136`" in text  # the verified ones; doc-001…040 are only claimed


FLOOR_WARNINGS = [name for name, _ in LADDER].index("warnings")


def test_the_ladder_shrinks_level_by_level() -> None:
    brief = _brief(trouble)
    sizes = [tokens.count_tokens(render_level(brief, level)) for level in range(len(LADDER))]
    # Replacing a last item by an "… N more" line may cost a token or two more; never more.
    assert all(b <= a + 5 for a, b in itertools.pairwise(sizes)), sizes
    assert sizes[-1] < sizes[0] * 0.7


def render_level(brief: Brief, level: int) -> str:
    from resume_kit.brief.render import _markdown

    return _markdown(None, brief, LADDER[level][1])[0]


def test_an_impossible_budget_returns_the_minimum_marked_as_not_fitting() -> None:
    brief = _brief(trouble)
    rendered = render(brief, "markdown", 50)
    assert not rendered.fits
    assert rendered.level == len(LADDER) - 1
    assert "Unit `doc-137`" in rendered.text and "## Warnings" in rendered.text


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    size=st.integers(1, 10_000),
    budget=st.integers(300, 4000),
    done_every=st.integers(1, 5),
    findings_every=st.sampled_from([0, 1, 3, 50]),
    failing=st.booleans(),
)
@example(size=10_000, budget=300, done_every=1, findings_every=1, failing=True)
@example(size=10_000, budget=4000, done_every=2, findings_every=3, failing=False)
@example(size=1, budget=300, done_every=1, findings_every=0, failing=False)
@example(size=9_999, budget=1500, done_every=5, findings_every=50, failing=True)
def test_any_size_fits_any_budget_and_keeps_the_next_unit(
    size: int, budget: int, done_every: int, findings_every: int, failing: bool
) -> None:
    progress = _many_units(size, done_every)
    nxt = next(u for u in progress.units if u.status != "done")
    if failing:
        nxt.status = "in_progress"
        nxt.last_failure = LastFailure(
            "2026-11-28T00:00:00Z", 1, "sig", 3, "E   assert 1 == 2\n" * 20
        )
    findings = []
    if findings_every:
        findings = [
            finding("DONE_BUT_CHANGED", f"{u.id} changed since it was verified", u.id)
            for u in progress.units[::findings_every]
            if u.status == "done"
        ]
    brief = build_brief(progress, base_snapshot(), findings)
    rendered = render(brief, "markdown", budget, exact_tokens=True)
    text = rendered.text
    assert f"Unit `{nxt.id}`" in text
    assert nxt.verify is not None and f"```sh\n{nxt.verify}\n```" in text
    if rendered.fits:
        assert tokens.count_tokens(text) <= budget
    else:
        assert rendered.level == len(LADDER) - 1  # only the minimum may be over


def test_ten_thousand_units_build_and_render_quickly() -> None:
    progress = _many_units(10_000, done_every=3)
    findings = [
        finding("DONE_BUT_CHANGED", f"{u.id} changed", u.id)
        for u in progress.units[::7]
        if u.status == "done"
    ]
    tokens.encoding()  # loading the encoding is measured by test_tokens
    start = time.perf_counter()
    brief = build_brief(progress, base_snapshot(), findings)
    built = time.perf_counter()
    rendered = render(brief, "markdown", 1500)
    done = time.perf_counter()
    assert rendered.fits
    # Generous bounds for a shared 2-core CI machine; typically 0.05 s and 0.05 s.
    assert built - start < 2.0
    assert done - built < 2.0


def _repo_template(source: str) -> RepoTemplate:
    import hashlib

    from resume_kit.brief.repo_template import REL_PATH

    return RepoTemplate(REL_PATH, source, hashlib.sha256(source.encode()).hexdigest())


def test_a_repository_template_overrides_the_shipped_one() -> None:
    custom = _repo_template(
        "CUSTOM {{ progress.line }}\n{% if next %}NEXT {{ next.id }}\n{{ next.verify_fence }}{% endif %}\n"
    )
    text = render(_brief(interrupted), "markdown", 1500, custom).text
    assert text.startswith("CUSTOM **136/200 units done**")
    assert "NEXT `doc-137`" in text
    # Without the override the shipped template is used.
    assert render(_brief(interrupted), "markdown", 1500, None).text.startswith("# Resume brief")


def test_override_templates_run_sandboxed() -> None:
    from resume_kit.infra.errors import ResumeKitError

    hostile = _repo_template("{{ progress.line.__class__.__mro__[1].__subclasses__() }}")
    # the sandbox refuses, and the refusal is the user's one-line error naming the template
    with pytest.raises(ResumeKitError, match=r"brief\.md\.j2:.*SecurityError"):
        render(_brief(interrupted), "markdown", 1500, hostile)


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError):
        render(_brief(all_done), "html", 1500)


# --------------------------------------------------------------------------- issue 14: 1, 10, 11


@pytest.mark.parametrize("budget", [300, 400, 600, 800, 1000, 1500, 2500, 5000])
@pytest.mark.parametrize("case", [interrupted, trouble, all_done, blocked])
def test_done_ids_are_the_last_thing_cut_and_every_cut_is_named(
    case: Callable[[], Any], budget: int
) -> None:
    rendered = render(_brief(case), "markdown", budget, exact_tokens=True)
    text = rendered.text
    assert "`doc-001` … " in text or "`doc-001`" in text  # which units not to redo
    assert "done ids" not in rendered.dropped
    if rendered.dropped:
        line = next(x for x in text.splitlines() if x.startswith("Left out to fit"))
        for kind in rendered.dropped:
            assert kind in line
        assert "(`" in line or "(see `" in line  # where to find it: a command or the log
    else:
        assert "Left out to fit" not in text
    if rendered.fits:
        assert tokens.count_tokens(text) <= budget


@pytest.mark.parametrize("case", [interrupted, trouble, all_done, blocked])
def test_the_smallest_briefs_fit_300_tokens(case: Callable[[], Any]) -> None:
    brief = _brief(case)
    rendered = render(brief, "markdown", 300, exact_tokens=True)
    assert rendered.fits and tokens.count_tokens(rendered.text) <= 300
    assert json.loads(render(brief, "json", 300).text)["fits"] is True
    if brief.next is not None:  # 705 tokens for interrupted and ~500 for trouble before
        unit = brief.next.unit
        assert f"Unit `{unit.id}`" in rendered.text
        assert f"```sh\n{unit.verify}\n```" in rendered.text


def test_the_floor_is_terse_but_honest() -> None:
    text = render(_brief(trouble), "markdown", 300).text
    assert text.count("Left out to fit") == 1
    line = next(x for x in text.splitlines() if x.startswith("Left out to fit"))
    assert "`resume-kit status`" in line and "`resume-kit brief --max-tokens 5000`" in line
    assert "`doc-041` … `doc-136`" in text and "`doc-001` … `doc-040`" in text
    assert "`KeyError: 'party_b'`" in text  # the cause line of the failure
    assert "stop retrying the same approach" in text
    workspace = text.split("## Workspace", 1)[1].split("## Warnings", 1)[0].strip()
    assert workspace.startswith("- **A rebase is in progress**") and "\n" not in workspace
    # Nothing said twice: the rebase, the stuck unit, the claimed ids are each said once.
    assert "`OPERATION_IN_PROGRESS`" not in text and "`UNIT_STUCK`" not in text
    assert "`DONE_UNVERIFIED`" not in text


def test_repetitive_material_is_cut_before_the_done_evidence() -> None:
    order = list(_DETAIL_ORDER)
    assert order.index("log lines") < order.index("done evidence")
    assert order.index("warning ids") < order.index("done evidence")
    last = [name for name, _ in LADDER][-1]
    assert last == "done ids"


def test_say_it_once() -> None:
    text = render(_brief(trouble), "markdown", 1500).text
    assert text.count("tests/test_extract.py::test_party_b") == 1
    assert "- Failing tests" not in text
    assert "(`doc-137`): failed 3 times" in text  # not "(`doc-137`): doc-137 failed"
    assert "Text in code spans and fenced blocks is" not in text
    assert "the commands they name are resume-kit's instructions" in text


def test_no_next_heading_without_a_next_unit_and_no_all_1_units() -> None:
    progress, snap, findings = all_done()
    progress.units = progress.units[:1]
    text = render(build_brief(progress, snap, findings), "markdown", 1500).text
    assert "All 1 units" not in text and "The only unit is done and verified" in text
    assert "## Next" not in text and "## Finished" in text
    assert "## Next" not in render(_brief(blocked), "markdown", 1500).text


def test_hook_answer_fits_both_agents_caps_by_the_same_order() -> None:
    from resume_kit.brief.render import HOOK_MAX_TOKENS

    assert HOOK_MAX_CHARS <= 10_000 and HOOK_MAX_TOKENS <= 2_500
    progress = _many_units(3_000, done_every=2)
    findings = [finding("DONE_BUT_CHANGED", f"{u.id} changed", u.id) for u in progress.units[::4]]
    hook = render(build_brief(progress, base_snapshot(), findings), "claude-hook", 100_000)
    context = json.loads(hook.text)["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= HOOK_MAX_CHARS
    assert tokens.count_tokens(context) <= HOOK_MAX_TOKENS
    assert "brief cut at the hook's size limit" not in context  # cut by the ladder, not the end
    assert "Left out to fit" in context and "**Rule:**" in context


def test_the_resource_meter_is_one_line_and_json_fields() -> None:
    brief = _brief(trouble)  # transcript: 180,000 tokens, 2 compactions, the last at 07:40
    rendered = render(brief, "markdown", 1500, exact_tokens=True)
    lines = [x for x in rendered.text.splitlines() if "Resources:" in x]
    assert len(lines) == 1
    assert "session 180,000 tokens (context 150,000)" in lines[0]
    assert "compacted 2x" in lines[0] and "after `doc-041` passed" in lines[0]
    assert f"this brief {rendered.tokens:,} tokens" in lines[0]
    assert "Context compacted" not in rendered.text  # said once, in the meter
    data = json.loads(render(brief, "json", 1500).text)
    assert data["meter"] == {
        "transcript_tokens": 180_000,
        "context_tokens": 150_000,
        "compactions": 2,
        "last_compaction_at": "2026-11-29T07:40:00Z",
        "compacted_since_last_pass": True,
        "last_pass_unit": "doc-041",
        "since": None,  # this transcript was read without a count since the pass
        "tokens_since": None,
        "compactions_since": None,
        "since_complete": None,
        "brief_tokens": data["tokens"],
    }
    assert "Resources:" not in render(_brief(interrupted), "markdown", 1500).text  # no transcript


def _metered(since: dict[str, Any] | None, verified: bool = True) -> Brief:
    from resume_kit.core.timeutil import format_utc
    from resume_kit.model.progress import latest_pass

    progress, snap, findings = trouble()
    if not verified:
        for unit in progress.units:
            unit.evidence = None
    passed = latest_pass(progress)
    if since is not None:
        since = {**since, "at": format_utc(passed[0]) if passed else None}
    snap["transcript"]["tokens"]["since"] = since
    return build_brief(progress, snap, findings)


def test_the_meter_counts_tokens_and_compactions_since_the_last_verified_unit() -> None:
    brief = _metered({"tokens": 42_000, "compactions": 1, "complete": True})
    rendered = render(brief, "markdown", 1500, exact_tokens=True)
    line = next(x for x in rendered.text.splitlines() if "Resources:" in x)
    assert line == (
        "- Resources: 42,000 tokens and 1 compaction since `doc-041` passed (session 180,000; "
        "context 150,000); last compacted 30 min ago (details from before it may be missing); "
        f"this brief {rendered.tokens:,} tokens."
    )
    meter = json.loads(render(brief, "json", 1500).text)["meter"]
    assert (meter["since"], meter["tokens_since"], meter["compactions_since"]) == (
        "last_pass",
        42_000,
        1,
    )
    assert meter["since_complete"] is True and meter["last_pass_unit"] == "doc-041"


def test_the_meter_says_since_the_session_started_when_nothing_is_verified() -> None:
    brief = _metered({"tokens": 180_000, "compactions": 2, "complete": True}, verified=False)
    line = next(x for x in render(brief, "markdown", 1500).text.splitlines() if "Resources:" in x)
    assert "180,000 tokens and 2 compactions since the session started (context 150,000)" in line
    meter = json.loads(render(brief, "json", 1500).text)["meter"]
    assert meter["since"] == "session_start" and meter["last_pass_unit"] is None


def test_the_meter_marks_a_lower_bound_and_ignores_a_count_against_another_pass() -> None:
    capped = _metered({"tokens": 9_000, "compactions": 0, "complete": False})
    text = render(capped, "markdown", 1500).text
    assert "at least 9,000 tokens and no compaction since `doc-041` passed" in text
    progress, snap, findings = trouble()
    snap["transcript"]["tokens"]["since"] = {
        "at": "2020-01-01T00:00:00Z", "tokens": 9_000, "compactions": 0, "complete": True
    }  # fmt: skip
    text = render(build_brief(progress, snap, findings), "markdown", 1500).text
    assert "9,000" not in text and "session 180,000 tokens" in text  # the totals, said as such
