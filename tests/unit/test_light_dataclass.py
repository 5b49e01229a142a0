"""resume_kit.core.light_dataclass against the standard dataclasses it stands in for: the same
constructor, repr, equality, hashing, frozen refusal, replace and asdict."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resume_kit.core import light_dataclass as light


def pair(frozen: bool) -> tuple[type[Any], type[Any]]:
    """The same class body under each decorator."""

    def body(module: Any) -> type[Any]:
        class Unit:
            """A unit."""

            id: str
            count: int = 0
            tags: list[str] = module.field(default_factory=list)
            line: int | None = module.field(default=None, compare=False, repr=False)

            def label(self) -> str:
                return f"{self.id}:{self.count}"

        return module.dataclass(frozen=frozen)(Unit)  # type: ignore[no-any-return]

    return body(dataclasses), body(light)


VALUES = st.tuples(
    st.text(max_size=5), st.integers(), st.lists(st.text(max_size=3), max_size=3),
    st.none() | st.integers(),
)  # fmt: skip


@given(st.booleans(), VALUES, VALUES, st.sampled_from(["positional", "keyword", "defaults"]))
def test_the_light_class_behaves_as_the_standard_one(
    frozen: bool, one: tuple[Any, ...], two: tuple[Any, ...], call: str
) -> None:
    standard, ours = pair(frozen)

    def make(cls: type[Any], values: tuple[Any, ...]) -> Any:
        if call == "positional":
            return cls(*values)
        if call == "keyword":
            return cls(id=values[0], count=values[1], tags=values[2], line=values[3])
        return cls(values[0])

    a, b = make(standard, one), make(standard, two)
    x, y = make(ours, one), make(ours, two)
    assert repr(x) == repr(a)
    assert (x == y) == (a == b) and (x != y) == (a != b)
    assert x.label() == a.label()
    assert light.replace(x, count=7).count == 7 and light.replace(x, count=7).id == x.id
    assert light.asdict(x) == dataclasses.asdict(a)
    assert ours.__match_args__ == standard.__match_args__
    assert hashed(x) == hashed(a)  # the same hash, or the same refusal (a list in a field)
    if frozen:
        with pytest.raises(AttributeError):
            x.count = 1
        with pytest.raises(light.FrozenInstanceError):
            del x.id
    else:
        x.count = 5
        assert x.count == 5


def hashed(instance: Any) -> object:
    try:
        return hash(instance)
    except TypeError as exc:
        return type(exc)


def test_each_instance_gets_its_own_default_list() -> None:
    _, ours = pair(frozen=False)
    first, second = ours("a"), ours("b")
    first.tags.append("t")
    assert second.tags == []


def test_a_missing_argument_is_a_type_error_as_with_the_standard_class() -> None:
    standard, ours = pair(frozen=True)
    with pytest.raises(TypeError):
        standard()
    with pytest.raises(TypeError):
        ours()
    with pytest.raises(TypeError):
        ours("a", nope=1)


def test_post_init_runs_after_the_fields_are_set() -> None:
    @light.dataclass
    class Counted:
        items: list[int]
        total: int = 0

        def __post_init__(self) -> None:
            self.total = sum(self.items)

    assert Counted([1, 2, 3]).total == 6
    assert Counted([4], 0) == Counted([4], 99)  # both recomputed to 4


def test_asdict_reaches_nested_instances_in_lists_and_dicts() -> None:
    @light.dataclass(frozen=True)
    class Leaf:
        name: str

    @light.dataclass
    class Tree:
        leaves: list[Leaf]
        index: dict[str, Leaf]

    tree = Tree([Leaf("a")], {"b": Leaf("b")})
    assert light.asdict(tree) == {"leaves": [{"name": "a"}], "index": {"b": {"name": "b"}}}


def test_the_package_inits_compiled_ahead_are_current_and_the_same_functions() -> None:
    """light_inits.py and light_inits_hook.py are what the generator writes now, the hook's
    table holds the classes of its modules and only those, and each factory makes the function
    that compiling the class's source makes (same signature, defaults and body)."""
    import inspect

    from resume_kit.core import light_dataclass, light_inits, light_inits_gen, light_inits_hook

    for path, text in light_inits_gen.generate().items():
        assert text == path.read_text(encoding="utf-8"), f"run {light_inits_gen.COMMAND}"
    classes = light_inits_gen.light_classes()
    assert len(classes) > 50
    for name, cls in classes:
        source, scope = light_dataclass.init_source(cls, cls.__dict__["__light_frozen__"])
        hook = cls.__module__ in light_inits_gen.HOOK_MODULES
        assert (source in light_inits_hook.FACTORIES) == hook, name
        assert light_dataclass._precompiled(source) is not None, name
        table = light_inits_hook.FACTORIES if hook else light_inits.FACTORIES
        made = table[source](dict(scope))
        exec(source, scope)
        compiled = scope["__init__"]
        assert inspect.signature(made) == inspect.signature(compiled), name
        assert made.__defaults__ == compiled.__defaults__, name
        assert _steps(made) == _steps(compiled), name


def _steps(function: Any) -> list[tuple[str, Any]]:
    """The function's instructions, a name read from its closure and one read from its globals
    alike (the factory's function closes over what the compiled one finds in its globals)."""
    import dis

    steps = []
    for step in dis.get_instructions(function):
        if step.opname in ("COPY_FREE_VARS", "PUSH_NULL", "MAKE_CELL"):
            continue
        name = "LOAD_NAME" if step.opname in ("LOAD_DEREF", "LOAD_GLOBAL") else step.opname
        jump = step.opcode in dis.hasjrel or step.opcode in dis.hasjabs  # offsets differ
        steps.append((name, None if jump else step.argval))
    return steps


def test_a_class_outside_the_package_is_compiled_as_before() -> None:
    @light.dataclass(frozen=True)
    class Outside:
        first: int
        second: list[int] = light.field(default_factory=list)

    made = Outside(1)
    assert made == Outside(1, []) and made.second == [] and made.second is not Outside(1).second
