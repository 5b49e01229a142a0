"""The part of :mod:`dataclasses` resume-kit uses, at a fraction of its start-up cost.

The brief runs at every agent session start and creates about forty classes. The standard
decorator imports :mod:`inspect` (~15 ms) and compiles five or six methods per class with
``exec`` (~1 ms a class). Here ``__repr__``, ``__eq__``, ``__hash__`` and the frozen
``__setattr__`` are shared functions reading the class's field list, and ``__init__`` is
compiled the first time a class is instantiated, so a class the run never builds costs
nothing. Instances behave as the standard ones do for everything resume-kit does with them:
the same ``__init__`` signature (positional or keyword, defaults, ``default_factory``),
``__post_init__``, equality and hashing by fields, ``frozen``, the same ``repr``,
:func:`replace` and :func:`asdict`. Not supported (and not used): inheritance between these
classes, ``ClassVar``/``InitVar``, ``kw_only``, ``slots``, ``order``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the served hook brief imports this without typing
if TYPE_CHECKING:
    from collections.abc import Callable

    from typing_extensions import dataclass_transform

    from resume_kit.core.typing_light import Any, TypeVar

    T = TypeVar("T")
    Factory = Callable[[dict[str, Any]], Callable[..., None]]
else:

    def dataclass_transform(**_: object) -> Callable[[T], T]:
        return lambda decorated: decorated


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """Assigning to or deleting a field of a frozen instance (as :mod:`dataclasses` raises)."""


class Field:
    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(self, default: Any, default_factory: Any, repr: bool, compare: bool) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field with a default value or a factory of one, and whether repr and == show it."""
    return Field(default, default_factory, repr, compare)


def _fields_of(cls: type) -> tuple[Field, ...]:
    found = []
    # the class's own annotations, names only: inspect.get_annotations would import inspect.
    # Python 3.14 may keep them behind __annotate__: the attribute then (on 3.10+ a class's
    # own, never a base's)
    own = cls.__dict__.get("__annotations__")  # noqa: RUF063
    for name in own if own is not None else getattr(cls, "__annotations__", {}):
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, Field):
            spec = value
            if spec.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        else:
            spec = Field(value, MISSING, True, True)
        spec.name = name
        found.append(spec)
    return tuple(found)


def init_source(cls: type, frozen: bool) -> tuple[str, dict[str, Any]]:
    """The source of ``cls.__init__`` made from its fields, and the names it uses."""
    specs = _fields(cls)
    scope: dict[str, Any] = {"_MISSING": MISSING, "_set": object.__setattr__}
    params, body = ["self"], []
    for number, spec in enumerate(specs):
        name, value = spec.name, spec.name
        if spec.default_factory is not MISSING:
            scope[f"_factory{number}"] = spec.default_factory
            params.append(f"{name}=_MISSING")
            value = f"_factory{number}() if {name} is _MISSING else {name}"
        elif spec.default is not MISSING:
            scope[f"_default{number}"] = spec.default
            params.append(f"{name}=_default{number}")
        else:
            params.append(name)
        body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    if "__post_init__" in cls.__dict__:
        body.append("self.__post_init__()")
    source = f"def __init__({', '.join(params)}):\n " + "\n ".join(body or ["pass"]) + "\n"
    return source, scope


# The __init__ sources compiled ahead (light_inits_gen writes both tables), searched in this
# order and each imported when first searched: the served hook brief builds only
# core.activity's classes, and its table alone costs that path ~0.1 ms where the whole
# package's costs ~0.8 ms.
TABLE_MODULES = ("resume_kit.core.light_inits_hook", "resume_kit.core.light_inits")
_tables: list[dict[str, Factory]] = []


def _precompiled(source: str) -> Factory | None:
    """The factory of ``source``'s function, compiled ahead into one of :data:`TABLE_MODULES`
    (their .pyc): exec-compiling one costs ~0.1 ms, and a brief builds about thirty classes."""
    for index, name in enumerate(TABLE_MODULES):
        if index == len(_tables):
            try:
                _tables.append(__import__(name, fromlist=["FACTORIES"]).FACTORIES)
            except ImportError:  # pragma: no cover - a broken install: compile as usual
                _tables.append({})
        factory = _tables[index].get(source)
        if factory is not None:
            return factory
    return None


def _compile_init(cls: type, frozen: bool) -> Callable[..., None]:
    source, scope = init_source(cls, frozen)
    factory = _precompiled(source)
    if factory is not None:
        init = factory(scope)
    else:
        exec(source, scope)  # our own source from the class's field names: no outside text
        init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _values(instance: Any, specs: tuple[Field, ...]) -> tuple[Any, ...]:
    return tuple(getattr(instance, spec.name) for spec in specs)


def _repr(self: Any) -> str:
    shown = ", ".join(
        f"{spec.name}={getattr(self, spec.name)!r}" for spec in _fields(type(self)) if spec.repr
    )
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    compared = type(self).__light_compared__
    return _values(self, compared) == _values(other, compared)


def _hash(self: Any) -> int:
    return hash(_values(self, type(self).__light_compared__))


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _process(cls: type[T], frozen: bool) -> type[T]:
    specs = _fields_of(cls)
    added: dict[str, Any] = {
        "__light_fields__": specs,
        "__light_frozen__": frozen,
        "__light_compared__": tuple(s for s in specs if s.compare),
        "__match_args__": tuple(s.name for s in specs),
    }
    own = cls.__dict__
    if "__init__" not in own:

        def first_init(self: Any, *args: Any, **kwargs: Any) -> None:
            init = _compile_init(cls, frozen)
            setattr(cls, "__init__", init)  # noqa: B010  # replaces this very function
            init(self, *args, **kwargs)

        added["__init__"] = first_init
    if "__repr__" not in own:
        added["__repr__"] = _repr
    if "__eq__" not in own:
        added["__eq__"] = _eq
    if own.get("__hash__") is None:  # absent, or None because the body defines __eq__
        added["__hash__"] = _hash if frozen else None
    if frozen:
        added["__setattr__"], added["__delattr__"] = _refuse_set, _refuse_delete
    for name, value in added.items():
        setattr(cls, name, value)
    return cls


@dataclass_transform(field_specifiers=(field,))
def dataclass(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """``@dataclass`` or ``@dataclass(frozen=True)``, as the standard decorator."""
    if cls is None:
        return lambda later: _process(later, frozen)
    return _process(cls, frozen)


def replace(instance: T, /, **changes: Any) -> T:
    """A copy of ``instance`` with ``changes`` (as :func:`dataclasses.replace`)."""
    values = {spec.name: getattr(instance, spec.name) for spec in _fields(type(instance))}
    values.update(changes)
    return type(instance)(**values)


def _fields(cls: type) -> tuple[Field, ...]:
    specs: tuple[Field, ...] = getattr(cls, "__light_fields__")  # noqa: B009
    return specs


def asdict(instance: Any) -> dict[str, Any]:
    """The instance as plain data, nested instances, lists, tuples and dicts included."""
    result: dict[str, Any] = _plain(instance)
    return result


def _plain(value: Any) -> Any:
    if hasattr(type(value), "__light_fields__"):
        return {spec.name: _plain(getattr(value, spec.name)) for spec in _fields(type(value))}
    if isinstance(value, list | tuple):
        return type(value)(_plain(item) for item in value)
    if isinstance(value, dict):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    import copy

    return copy.deepcopy(value)
