"""typerfast: every value it coerces itself comes out exactly as typer's own coercion makes it."""

from __future__ import annotations

import enum
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer._coercion import build_runtime_param

from resume_kit.cli import app
from resume_kit.typerfast import _DELEGATE, LazyCoercion, _parameters, fast_value, install

try:
    from typer import _click as click
except ImportError:  # pragma: no cover
    import click  # type: ignore[no-redef,import-not-found,unused-ignore]


def _command() -> Any:
    return typer.main.get_command(app)


def _params() -> list[tuple[str, Any]]:
    out = []

    def walk(command: Any, prefix: str) -> None:
        for param in command.params:
            out.append((f"{prefix}{command.name}.{param.name}", param))
        for sub in (getattr(command, "commands", None) or {}).values():
            walk(sub, f"{prefix}{command.name} ")

    walk(_command(), "")
    return out


def _samples(param: Any) -> list[Any]:
    annotation = param.type_descriptor.annotation
    values: list[Any] = [None, param.default, "", "x", "0", "007", "12", "50", "49", "1", "-3",
                         " 8", "1e3", "2.5", ("a", "b"), (), ["c"], 7, 0, 1.5]  # fmt: skip
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values += [m.value for m in annotation] + [m for m in annotation]
        values += [str(m.value).upper() for m in annotation] + [m.name for m in annotation]
    return values


def _outcome(coercer: Any, param: Any, value: Any) -> tuple[str, Any]:
    ctx = click.Context(_command())
    try:
        return "ok", coercer.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # the same error, message and all
        return "error", (type(exc).__name__, str(exc))


@pytest.mark.parametrize(("name", "param"), _params(), ids=[n for n, _ in _params()])
def test_lazy_coercion_matches_typer(name: str, param: Any) -> None:
    for value in _samples(param):
        if isinstance(value, bool) and param.type_descriptor.annotation is bool:
            continue  # typer itself never coerces a bool flag's bool
        real = _outcome(build_runtime_param(param.type_descriptor), param, value)
        lazy = _outcome(LazyCoercion(param.type_descriptor, build_runtime_param), param, value)
        assert lazy == real, (name, value)
        if real[0] == "ok":
            assert type(lazy[1]) is type(real[1]), (name, value)


_REAL: dict[int, Any] = {}
_ALL = _params()


@settings(deadline=None, max_examples=150)
@given(
    st.text(max_size=12)
    | st.from_regex(r"[0-9]{1,4}", fullmatch=True)
    | st.integers()
    | st.lists(st.text(max_size=5), max_size=3)
)
def test_fast_value_is_typer_value_or_delegates(value: Any) -> None:
    for _, param in _ALL:
        descriptor = param.type_descriptor
        fast = fast_value(descriptor.annotation, value, descriptor.parameter_info)
        if fast is _DELEGATE:
            continue
        real_param = _REAL.setdefault(id(param), build_runtime_param(descriptor))
        real = _outcome(real_param, param, value)
        assert real == ("ok", fast)


def test_install_covers_every_parameter_and_delegates_the_rest() -> None:
    command = _command()
    params = _parameters(command)
    assert install(command) == len(params)
    assert install(command) == 0  # already installed: left alone
    brief = command.commands["brief"]
    output = next(p for p in brief.params if p.name == "output")
    ctx = click.Context(command)
    assert output.get_runtime_param().coerce("x.md", param=output, ctx=ctx) == Path("x.md")


def test_usage_errors_are_typers(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", "brief", "--max-tokens", "10"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "--max-tokens" in proc.stderr and "50" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", "snapshot", "--trigger", "nope"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2 and "nope" in proc.stderr
