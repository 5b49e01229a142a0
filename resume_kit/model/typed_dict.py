"""``TypedDict`` for the type checker; at run time a plain ``dict`` subclass.

The snapshot's types are only read by mypy (values are the dicts readers build and
``json.loads`` returns; nothing constructs or inspects these classes). ``typing.TypedDict``
turns each field's annotation string into a compiled ``ForwardRef`` when the class is made,
about 6 ms for the snapshot's ~20 types at every brief."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the point is to stay light (mypy reads the guard)
if TYPE_CHECKING:
    from typing import TypedDict as TypedDict
else:

    class TypedDict(dict):
        def __init_subclass__(cls, total: bool = True) -> None:
            super().__init_subclass__()
