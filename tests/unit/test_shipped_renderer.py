"""The shipped template's generated Python (resume_kit/brief/shipped_brief.py) renders the same
bytes as Jinja2's render of templates/brief.md.j2: for the golden cases, the golden scenarios'
real workspaces and Hypothesis' briefs and views, at every level of the ladder and in every
format. The generated module is the template's translation (shipped_gen), checked for drift."""

from __future__ import annotations

import copy
import dis
import functools
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_kit.brief import render as render_mod
from resume_kit.brief import shipped_brief, shipped_gen
from resume_kit.brief.build import Brief, build_brief
from resume_kit.brief.render import FORMATS, LADDER, _markdown, _view, render
from resume_kit.model.findings import finding
from resume_kit.model.progress import Evidence, LastFailure, Progress, Unit
from tests import brief_cases
from tests.scenarios import SCENARIOS

CASES: dict[str, Callable[[], Any]] = {
    "interrupted": brief_cases.interrupted,
    "all-done": brief_cases.all_done,
    "blocked": brief_cases.blocked,
    "trouble": brief_cases.trouble,
    "planted-secrets": brief_cases.planted_secrets,
}
BUDGETS = (50, 300, 400, 700, 800, 1500, 4000, 1_000_000)


@functools.cache
def _jinja() -> Any:
    """Jinja2's compile of the shipped template, with the options a repository's gets."""
    return render_mod._template(None)


def _case_brief(name: str, **options: Any) -> Brief:
    progress, snap, findings = CASES[name]()
    return build_brief(progress, snap, findings, summary=snap.pop("_summary", None), **options)


def _assert_same_at_every_level(brief: Brief) -> None:
    for level, (_, limits) in enumerate(LADDER):
        view = _view(brief, limits, {})
        assert shipped_brief.render(view) == _jinja().render(**view), level
        assert _markdown(None, brief, limits) == _markdown(_jinja(), brief, limits), level


def _assert_same_rendered(brief: Brief, budgets: tuple[int, ...], fmts: tuple[str, ...]) -> None:
    """``render`` through the generated code and through Jinja2: the same bytes and result."""
    jinja = _jinja()
    ours = {(b, f): render(brief, f, b) for b in budgets for f in fmts}
    generated = shipped_brief.render
    try:
        shipped_brief.render = lambda view: jinja.render(**view)  # type: ignore[assignment]
        theirs = {(b, f): render(brief, f, b) for b in budgets for f in fmts}
    finally:
        shipped_brief.render = generated
    for key, mine in ours.items():
        assert mine.text.encode("utf-8") == theirs[key].text.encode("utf-8"), key
        assert mine == theirs[key], key


def test_the_generated_module_is_the_templates_translation() -> None:
    """The template is the one source of the wording: the module is regenerated from it."""
    assert shipped_gen.generate() == Path(shipped_brief.__file__).read_text(encoding="utf-8"), (
        "run `python -m resume_kit.brief.shipped_gen` after changing templates/brief.md.j2"
    )
    assert shipped_gen.main(["--check"]) == 0


@pytest.mark.parametrize(
    "source",
    [
        "{{ 'a' ~ x }}",
        "{{ x|upper }}",
        "{% set y = 1 %}",
        "{% for i in xs %}{{ loop.index }}{% endfor %}",
        "{% include 'brief.md.j2' %}",
        "{{ x.items }}",
        "{% if x == 1 %}{% endif %}",
    ],
)
def test_a_construct_it_cannot_translate_is_refused(source: str) -> None:
    with pytest.raises(shipped_gen.Unsupported):
        shipped_gen.generate(source)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("approved", [True, False])
def test_the_golden_cases_render_the_same_at_every_level(name: str, approved: bool) -> None:
    _assert_same_at_every_level(_case_brief(name, next_approved=approved))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_golden_cases_render_the_same_in_every_format_and_budget(name: str) -> None:
    _assert_same_rendered(_case_brief(name), BUDGETS, FORMATS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_golden_scenarios_render_the_same(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The briefs of the real workspaces (tests/scenarios.py), built by the real CLI."""
    scenario = SCENARIOS[name](tmp_path)
    seen: list[Brief] = []
    real = render_mod.render

    def recording(brief: Brief, *args: Any, **kwargs: Any) -> Any:
        seen.append(brief)
        return real(brief, *args, **kwargs)

    monkeypatch.setattr(render_mod, "render", recording)
    from tests.scenarios import rk

    if scenario.hook_input is not None:
        import json

        rk(scenario.root, "brief", "--format", "claude-hook", input=json.dumps(scenario.hook_input))
    else:
        rk(scenario.root, "brief")
    monkeypatch.undo()
    assert len(seen) == 1
    _assert_same_at_every_level(seen[0])
    _assert_same_rendered(seen[0], (300, 800, 1500), FORMATS)


# --------------------------------------------------------------------------- Hypothesis


def _units(count: int, done_every: int, claimed_every: int) -> list[Unit]:
    units = []
    for n in range(count):
        done = n % done_every == 0 and n < count - 1
        claimed = done and claimed_every and n % claimed_every == 0
        units.append(
            Unit(
                id=f"u-{n:05d}",
                title=f"Unit {n}",
                status="done" if done else "todo",
                verify=f"pytest -q tests/test_{n}.py",
                files=["src/a.py"] if n % 2 else [],
                artifacts=[f"out/{n}.json"] if n % 3 == 0 else [],
                evidence=None
                if not done or claimed
                else Evidence("2026-11-28T00:00:00Z", f"{n % 97:07x}" + "a" * 33, False, "x", 1.0),
            )
        )
    return units


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    base=st.sampled_from(sorted(CASES)),
    size=st.integers(0, 600),
    done_every=st.integers(1, 4),
    claimed_every=st.sampled_from([0, 1, 5]),
    findings_every=st.sampled_from([0, 1, 7]),
    failing=st.sampled_from([None, 1, 2, 3, 5]),
    no_verify=st.booleans(),
    approved=st.booleans(),
    blocked=st.booleans(),
    notes=st.sampled_from([None, "", "a note", "line one\nline two ``` and\n# heading"]),
    budget=st.integers(50, 6000),
    fmt=st.sampled_from(FORMATS),
)
def test_any_brief_renders_the_same_at_any_budget(
    base: str,
    size: int,
    done_every: int,
    claimed_every: int,
    findings_every: int,
    failing: int | None,
    no_verify: bool,
    approved: bool,
    blocked: bool,
    notes: str | None,
    budget: int,
    fmt: str,
) -> None:
    progress, snap, findings = CASES[base]()
    summary = snap.pop("_summary", None)
    if size:
        units = _units(size, done_every, claimed_every)
        progress = Progress(goal=progress.goal, units=units, actions=progress.actions)
    if notes is not None:
        progress.notes = notes
    open_units = [u for u in progress.units if u.status != "done"]
    if open_units:
        nxt = open_units[0]
        if failing:
            nxt.status = "in_progress"
            nxt.last_failure = LastFailure(
                "2026-11-28T00:00:00Z", 1, "sig", failing, "E   assert 1 == 2\n" * 20
            )
        if no_verify:
            nxt.verify = None
        if blocked and len(open_units) > 1:
            open_units[-1].status = "blocked"
    if findings_every:
        findings = [
            *findings,
            *(
                finding("DONE_BUT_CHANGED", f"{u.id} changed since it was verified", u.id)
                for u in progress.units[::findings_every]
                if u.status == "done"
            ),
        ]
    brief = build_brief(progress, copy.deepcopy(snap), findings, summary=summary,
                        next_approved=approved)  # fmt: skip
    _assert_same_rendered(brief, (budget,), (fmt,))
    level = budget % len(LADDER)
    view = _view(brief, LADDER[level][1], {})
    assert shipped_brief.render(view) == _jinja().render(**view)


# Every key of the view the template reads, each value drawn so every branch is taken: text
# with newlines, quotes, braces and any code point, empty strings, None, True and False.
_text = st.text(max_size=40)
_maybe = st.one_of(st.none(), st.just(""), st.text(min_size=1, max_size=40))
_flag = st.one_of(st.booleans(), st.none(), st.just(0), st.just(1), st.just(""), _text)
_lines = st.lists(_text, max_size=4)

_next = st.fixed_dictionaries(
    {
        "id": _text, "title": _text, "why": _maybe, "files": _maybe, "artifacts": _maybe,
        "failure": _maybe, "failure_fence": _text, "verify_fence": _maybe, "stuck": _flag,
        "approved": _flag, "failure_short": _text, "cause": _text,
        "repeats": st.integers(0, 10),
    }
)  # fmt: skip
_workspace = st.fixed_dictionaries(
    {
        "facts": _lines,
        "paths": _lines,
        "paths_more": _maybe,
        "tests": _maybe,
        "tests_source": _maybe,
        "log": st.one_of(
            st.none(),
            st.fixed_dictionaries({"path": _text, "age": _maybe, "fence": _text, "same": _flag}),
        ),
        "transcript": st.one_of(
            st.none(),
            st.fixed_dictionaries({"agent": _text, "updated": _maybe, "items": _lines}),
        ),
        "summary": st.one_of(st.none(), st.lists(st.tuples(_text, _text), max_size=3)),
        "notes": _maybe,
    }
)
_views = st.fixed_dictionaries(
    {
        "data_label": _text,
        "terse": _flag,
        "goal_md": _text,
        "notes_md": _maybe,
        "progress": st.fixed_dictionaries(
            {"line": _text, "done_md": _maybe, "blocked_md": _maybe, "claimed_md": _maybe}
        ),
        "claimed_hint": _flag,
        "workspace": _workspace,
        "warnings": _lines,
        "ledger": _lines,
        "ledger_listed": _flag,
        "next": st.one_of(st.none(), _next),
        "no_next_md": _maybe,
        "no_next_heading": _text,
        "meter": _maybe,
        "left_out": _maybe,
    }
)


@settings(max_examples=300, deadline=None)
@given(view=_views)
def test_any_view_renders_the_same(view: dict[str, Any]) -> None:
    """Every branch of the template, with any text in every value: the same characters."""
    assert shipped_brief.render(view) == _jinja().render(**view)


# A seeded corpus of views for the coverage guard: each value drawn from a few hostile or
# empty strings, each flag from Python's true and false values.
_POOL = ("", "x", "a\nb", "{{ next.id }}", "{% if %}", "`c` **b**", "ü—\u2028\x00", "%s", "None")
_FLAGS = (True, False, None, 0, 1, "", "y")


def _random_view(rng: random.Random) -> dict[str, Any]:
    def text() -> str:
        return rng.choice(_POOL)

    def lines() -> list[str]:
        return [text() for _ in range(rng.randrange(3))]

    def maybe(value: Callable[[], Any]) -> Any:
        return None if rng.random() < 0.5 else value()

    flag = functools.partial(rng.choice, _FLAGS)
    nxt = {key: text() for key in ("id", "title", "why", "files", "artifacts", "failure",
                                   "failure_fence", "verify_fence", "failure_short", "cause")}  # fmt: skip
    nxt.update(stuck=flag(), approved=flag(), repeats=rng.randrange(5))
    return {
        "data_label": text(), "terse": flag(), "goal_md": text(), "notes_md": text(),
        "progress": {"line": text(), "done_md": text(), "blocked_md": text(), "claimed_md": text()},
        "claimed_hint": flag(),
        "workspace": {
            "facts": lines(), "paths": lines(), "paths_more": text(), "tests": text(),
            "tests_source": text(),
            "log": maybe(lambda: {"path": text(), "age": text(), "fence": text(), "same": flag()}),
            "transcript": maybe(lambda: {"agent": text(), "updated": text(), "items": lines()}),
            "summary": maybe(lambda: [(text(), text()) for _ in range(rng.randrange(3))]),
            "notes": text(),
        },
        "warnings": lines(), "ledger": lines(), "ledger_listed": flag(),
        "next": maybe(lambda: nxt), "no_next_md": text(), "no_next_heading": text(),
        "meter": text(), "left_out": text(),
    }  # fmt: skip


def _lines_run(work: Callable[[], None]) -> set[int]:
    """The lines of ``shipped_brief.render`` that ``work()`` executed."""
    code = shipped_brief.render.__code__
    seen: set[int] = set()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is not code:
            return None
        if event == "line":
            seen.add(frame.f_lineno)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(previous)
    return seen


def test_every_line_of_the_generated_renderer_is_held_to_jinja() -> None:
    """The guard against drift can fail only where the comparison reaches: the golden cases at
    every level and a seeded corpus of views together run every line of the generated code,
    each render compared with Jinja2's."""

    def corpus() -> None:
        for name in CASES:
            for approved in (True, False):
                _assert_same_at_every_level(_case_brief(name, next_approved=approved))
        rng = random.Random(18)
        for _ in range(3000):
            view = _random_view(rng)
            assert shipped_brief.render(view) == _jinja().render(**view), view

    body = {line for _, line in dis.findlinestarts(shipped_brief.render.__code__) if line}
    body.discard(shipped_brief.render.__code__.co_firstlineno)
    missed = sorted(body - _lines_run(corpus))
    assert missed == [], f"lines of shipped_brief.py no comparison runs: {missed}"
