"""resume_kit.cli.fast_start: `brief` and `verify-next` parsed without typer, exactly as typer
parses them, or declined (then typer parses, as before).

Three checks: the parser's option tables match the typer declarations (so the two cannot
drift); over generated argv lists, whenever the parser accepts, the command is called with the
values typer's parse gives; and real runs in a real repository print the same and exit the
same either way.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from resume_kit.cli.fast_start import BRIEF_FORMATS, DEFAULTS, OPTIONS, invoke, parse
from tests.conftest import Result, git, run_cli_in_process

COMMANDS = tuple(OPTIONS)


@cache
def typer_group(name: str) -> Any:
    """The click group typer builds for ``resume-kit NAME ...`` (as cli.app's main does)."""
    import typer

    from resume_kit.cli.app import _build_app
    from resume_kit.cli.params import plain_usage

    return plain_usage(typer.main.get_command(_build_app(only=name)))


def command_module(name: str) -> Any:
    from resume_kit.cli.commands import brief, verify

    return brief if name == "brief" else verify


# --------------------------------------------------------------------------- one source


@pytest.mark.parametrize("name", COMMANDS)
def test_the_tables_hold_every_option_typer_declares_and_no_other(name: str) -> None:
    command = typer_group(name).commands[name]
    declared: dict[str, Any] = {}
    for param in command.params:
        assert param.param_type_name == "option", f"{name}: an argument the parser cannot read"
        for spelling in (*param.opts, *param.secondary_opts):
            declared[spelling] = param
    assert set(OPTIONS[name]) == set(declared)
    for spelling, (dest, action) in OPTIONS[name].items():
        param = declared[spelling]
        assert dest == param.name, spelling
        if param.is_flag:
            assert action is (spelling in param.opts), spelling  # --no-x is the False one
        else:
            assert callable(action), spelling
    defaults = {p.name: getattr(p.default, "value", p.default) for p in command.params}
    assert DEFAULTS[name] == defaults


def test_the_brief_formats_are_typer_choices() -> None:
    (fmt,) = [p for p in typer_group("brief").commands["brief"].params if p.name == "fmt"]
    assert tuple(fmt.type.choices) == BRIEF_FORMATS


@pytest.mark.parametrize(
    "argv",
    [
        ["brief"],
        ["brief", "--format", "claude-hook"],
        ["brief", "--format=json", "--max-tokens", "800", "-o", "out.md"],
        ["brief", "--no-summarize", "--output=brief.md", "--max-tokens=50"],
        ["verify-next"],
        ["verify-next", "--unit", "alpha", "--timeout", "2.5", "--json", "--force"],
        ["verify-next", "--stale", "--dry-run", "--timeout=10"],
    ],
)
def test_the_common_forms_are_parsed(argv: list[str]) -> None:
    assert parse(argv) is not None


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["status"],
        ["brief", "--help"],
        ["brief", "-h"],
        ["brief", "--max-tokens", "49"],
        ["brief", "--max-tokens", "1e3"],
        ["brief", "--max-tokens"],
        ["brief", "--format", "JSON"],
        ["brief", "-ofile"],
        ["brief", "--form", "json"],
        ["brief", "extra"],
        ["brief", "--", "x"],
        ["brief", "--format", "json", "--format", "markdown"],
        ["verify-next", "--timeout", "nan"],
        ["verify-next", "--timeout", "0.001"],
        ["verify-next", "--stale=1"],
        ["verify-next", "--unit", "--stale"],
        ["verify-next", "--unit="],
    ],
)
def test_what_typer_should_say_is_declined(argv: list[str]) -> None:
    assert parse(argv) is None


def test_a_completion_request_is_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_RESUME_KIT_COMPLETE", "bash_complete")
    assert parse(["brief"]) is None


# --------------------------------------------------------------------------- the same values

LONG = sorted(s for table in OPTIONS.values() for s in table if s.startswith("--"))
WORDS = [
    *sorted({s for table in OPTIONS.values() for s in table}),
    "--help", "-h", "--", "-", "--bogus", "--max", "-x", "--version", "extra",
]  # fmt: skip
VALUES = st.sampled_from(
    ["49", "50", "0050", "1500", "1e3", "nan", "inf", "-5", "+60", "0.01", "0.009", ".5",
     "5.", "1_000", "٥٠", " 60", "", "x", "markdown", "json", "JSON", "claude-hook",
     "copilot-hook", "a b", "é", "out.md", "alpha", "/", "."]
) | st.text(max_size=6)  # fmt: skip
WORD = st.one_of(
    st.sampled_from(WORDS),
    VALUES,
    st.builds(lambda option, value: f"{option}={value}", st.sampled_from(LONG), VALUES),
)
ARGV = st.builds(
    lambda name, rest: [name, *rest], st.sampled_from(COMMANDS), st.lists(WORD, max_size=6)
)


def called_with(name: str, call: Callable[[], object]) -> dict[str, Any]:
    """The arguments ``call`` passes to the command's ``run``, by parameter name."""
    module = command_module(name)
    signature = inspect.signature(module.run)
    seen: list[dict[str, Any]] = []

    def record(*args: Any, **kwargs: Any) -> int:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        seen.append(dict(bound.arguments))
        return 0

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "run", record)
        call()
    assert len(seen) == 1
    return seen[0]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argv=ARGV)
@example(argv=["brief", "--max-tokens", "50", "--format=copilot-hook", "--summarize"])
@example(argv=["verify-next", "--unit=é", "--timeout", "5.", "--stale", "--dry-run"])
def test_what_the_parser_accepts_typer_reads_the_same(argv: list[str]) -> None:
    parsed = parse(argv)
    if parsed is None:
        return
    name, values = parsed
    group = typer_group(name)
    through_typer = called_with(
        name, lambda: group.main(args=argv, prog_name="resume-kit", standalone_mode=False)
    )
    assert called_with(name, lambda: invoke(name, dict(values))) == through_typer


# --------------------------------------------------------------------------- the same runs


@pytest.fixture
def project(repo: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    assert cli("init", "--goal", "Parse the same").code == 0
    assert cli("add", "Alpha", "--verify", "echo alpha-ran", "--id", "alpha").code == 0
    assert cli("add", "Beta", "--verify", "false", "--id", "beta").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "units")
    monkeypatch.setenv("RESUME_KIT_NOW", "1796000000")  # relative ages cannot differ
    monkeypatch.setenv("RESUME_KIT_NO_FASTPATH", "1")  # both build the brief
    return repo


def both_ways(root: Path, argv: list[str], reset: Callable[[], None] = lambda: None) -> None:
    fast = run_cli_in_process(*argv, cwd=root)
    reset()
    slow = run_cli_in_process(*argv, cwd=root, fast_start=False)
    reset()
    assert (normal(fast), fast.code) == (normal(slow), slow.code), argv


def scrub(text: str) -> str:
    """``text`` without what differs between any two runs: durations, the times in snapshot
    ids and run logs' names, and the time a JSON brief was generated at."""
    text = re.sub(r"\d{8}T\d{9}Z(-[0-9a-f]+\b)?", "<time>", text)
    text = re.sub(r'"generated_at": "[^"]*"', '"generated_at": "<time>"', text)
    return re.sub(r"\d+(\.\d+)?s\b|\"duration_s\": [\d.]+", "<t>", text)


def normal(result: Result) -> tuple[str, str]:
    """The output, scrubbed (:func:`scrub`)."""
    return scrub(result.stdout), scrub(result.stderr)


def brief_argv(out: Path) -> st.SearchStrategy[list[str]]:
    pairs = st.sampled_from(
        [("--max-tokens", "49"), ("--max-tokens", "50"), ("--max-tokens", "400"),
         ("--max-tokens", "x"), ("--format", "markdown"), ("--format", "json"),
         ("--format", "claude-hook"), ("--format", "JSON"), ("-o", str(out)),
         ("--output", str(out))]
    )  # fmt: skip
    word = st.one_of(
        pairs.map(lambda p: [p[0], p[1]]),
        pairs.filter(lambda p: p[0].startswith("--")).map(lambda p: [f"{p[0]}={p[1]}"]),
        st.sampled_from(["--no-summarize", "--bogus", "extra", "--max-tokens"]).map(lambda w: [w]),
    )
    return st.lists(word, max_size=3).map(
        lambda words: ["brief", *(w for pair in words for w in pair)]
    )


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_brief_prints_the_same_either_way(project: Path, tmp_path: Path, data: Any) -> None:
    out = tmp_path / "brief-out.md"
    argv = data.draw(brief_argv(out))
    results = []
    for fast in (True, False):
        out.unlink(missing_ok=True)
        result = run_cli_in_process(*argv, cwd=project, fast_start=fast)
        written = scrub(out.read_text()) if out.exists() else None  # -o FILE
        results.append((normal(result), result.code, written))
    assert results[0] == results[1], argv


VERIFY_WORDS = st.sampled_from(
    [["--unit", "alpha"], ["--unit", "beta"], ["--unit=nope"], ["--stale"], ["--json"],
     ["--force"], ["--timeout", "5"], ["--timeout=0.001"], ["--timeout", "x"], ["--bogus"],
     ["--unit"]]
)  # fmt: skip


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=st.lists(VERIFY_WORDS, max_size=3))
def test_verify_next_dry_runs_print_the_same_either_way(
    project: Path, words: list[list[str]]
) -> None:
    both_ways(project, ["verify-next", *(w for pair in words for w in pair), "--dry-run"])


@pytest.mark.parametrize(
    "argv",
    [
        ["verify-next"],
        ["verify-next", "--json"],
        ["verify-next", "--unit", "beta"],  # fails: exit 1
        ["verify-next", "--unit", "beta", "--json", "--timeout", "30"],
        ["verify-next", "--unit", "nope"],  # an error line, exit 2
    ],
)
def test_verify_next_runs_the_same_either_way(project: Path, argv: list[str]) -> None:
    progress = project / ".resume-kit" / "progress.yaml"
    before = progress.read_bytes()

    def reset() -> None:
        progress.write_bytes(before)

    both_ways(project, argv, reset)


def test_ctrl_c_while_a_stored_brief_is_served_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The served path runs before the handlers the built one has: Ctrl-C there (its `git
    status`, the stats) ends it as typer's main ends a built brief, 130 and nothing printed."""
    from resume_kit.brief import fastpath
    from resume_kit.cli.app import main

    def interrupted(args: list[str]) -> int | None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fastpath, "_print_stored", interrupted)
    with pytest.raises(SystemExit) as stopped:
        main(["brief"])
    assert stopped.value.code == 130
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
