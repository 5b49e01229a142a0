"""Skip typer's Pydantic coercion for parameter values that need none.

Typer (0.2x) coerces every parameter value through a Pydantic ``TypeAdapter`` that it builds on
first use, even for an option left at its default ``None``: importing Pydantic and building
the adapters costs 100-200 ms per command, more than the rest of a ``status`` call. The
commands on the hot paths (``brief``, ``snapshot``, ``status``, ``verify-next``, the hooks)
mostly pass defaults, plain strings and enum choices, whose coerced values are known.

``install(command)`` gives each typer parameter a lazy coercer that returns those values
directly and hands anything else (paths, floats, out-of-range numbers, unknown choices, any
error) to typer's own coercion, built then, so results and error messages stay typer's. When
typer's internals differ from what this expects, nothing is installed.
"""

from __future__ import annotations

import enum
from typing import Any, get_args, get_origin

_DELEGATE = object()


def fast_value(annotation: Any, value: Any, param_info: Any) -> Any:
    """The value typer's coercion would return for ``value``, or ``_DELEGATE`` when unsure."""
    if isinstance(annotation, type):
        if annotation is str:
            return value if type(value) is str else _DELEGATE
        if annotation is int:
            if type(value) is str and value.isascii() and value.isdigit() and len(value) < 10:
                if value[0] == "0" and value != "0":
                    return _DELEGATE
                value = int(value)
            if type(value) is not int:
                return _DELEGATE
            low, high = getattr(param_info, "min", None), getattr(param_info, "max", None)
            if (low is not None and value < low) or (high is not None and value > high):
                return _DELEGATE
            return value
        if issubclass(annotation, enum.Enum):
            if isinstance(value, annotation):
                return value
            if type(value) is str:
                for member in annotation:
                    if member.value == value:
                        return member
            return _DELEGATE
    elif (
        get_origin(annotation) is list
        and get_args(annotation) == (str,)
        and isinstance(value, list | tuple)
        and all(type(item) is str for item in value)
    ):
        return list(value)
    return _DELEGATE


class LazyCoercion:
    """Stands in for typer's runtime parameter until a value needs the real one."""

    def __init__(self, descriptor: Any, build: Any) -> None:
        self._descriptor = descriptor
        self._build = build
        self._real: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if self._real is None:
            if value is None:  # what typer's RuntimeParam.coerce does before any adapter
                return () if (param.multiple or param.nargs == -1) else None
            fast = fast_value(self._descriptor.annotation, value, self._descriptor.parameter_info)
            if fast is not _DELEGATE:
                return fast
            self._real = self._build(self._descriptor)
        return self._real.coerce(value, param=param, ctx=ctx)


def _commands(command: Any) -> list[Any]:
    found = [command]
    for sub in (getattr(command, "commands", None) or {}).values():
        found.extend(_commands(sub))
    return found


def _parameters(command: Any) -> list[Any]:
    return [param for each in _commands(command) for param in getattr(each, "params", [])]


def install(command: Any) -> int:
    """Give every typer parameter of ``command`` and its subcommands (the ``--help`` options,
    made per invocation, included) a lazy coercer; returns how many parameters got one now."""
    try:
        from typer import core
        from typer._coercion import build_runtime_param
    except ImportError:
        return 0
    typer_param = getattr(core, "_TyperParameter", None)
    if typer_param is None or not hasattr(typer_param, "get_runtime_param"):
        return 0

    def make_lazy(param: Any) -> bool:
        if (
            isinstance(param, typer_param)
            and getattr(param, "_runtime_param", False) is None
            and hasattr(param, "type_descriptor")
        ):
            param._runtime_param = LazyCoercion(param.type_descriptor, build_runtime_param)
            return True
        return False

    def wrap_help_option(each: Any) -> None:
        original = getattr(each, "get_help_option", None)
        if original is None or getattr(original, "_lazy_help", False):
            return

        def get_help_option(ctx: Any) -> Any:
            option = original(ctx)
            if option is not None:
                make_lazy(option)
            return option

        get_help_option._lazy_help = True  # type: ignore[attr-defined]
        each.get_help_option = get_help_option

    count = 0
    for each in _commands(command):
        wrap_help_option(each)
        count += sum(make_lazy(param) for param in getattr(each, "params", []))
    return count
