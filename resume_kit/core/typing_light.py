"""The ``typing`` names resume-kit's modules use, without importing ``typing`` at run time.

Importing ``typing`` costs ~2 ms (CPython 3.11, 2026-12-03), paid by every brief, verify and
hook although the names serve only the type checker. mypy reads the ``TYPE_CHECKING`` branch
(it takes any name ``TYPE_CHECKING`` as true), so it sees the real ones; at run time each name
is a stand-in that does what resume-kit's code does with it at run time: ``cast`` returns its
value, ``TypeVar`` makes a placeholder, and ``Generic``, ``Protocol``, ``Literal`` and ``Union``
accept a subscript (``class Later(Generic[T])``, ``Status = Literal[...]``). The typer commands keep
``typing`` itself: typer reads their ``Annotated`` parameters at run time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO as IO
    from typing import Any as Any
    from typing import BinaryIO as BinaryIO
    from typing import Generic as Generic
    from typing import Literal as Literal
    from typing import NoReturn as NoReturn
    from typing import Protocol as Protocol
    from typing import TypeVar as TypeVar
    from typing import Union as Union
    from typing import cast as cast
else:

    class _Subscriptable:
        """A stand-in a subscript leaves as it is (``Generic[T]`` is ``Generic``)."""

        __slots__ = ()

        def __class_getitem__(cls, _item: object) -> type:
            return cls

    class Any(_Subscriptable):
        __slots__ = ()

    class Generic(_Subscriptable):
        __slots__ = ()

    class Literal(_Subscriptable):
        __slots__ = ()

    class Union(_Subscriptable):
        __slots__ = ()

    class Protocol(_Subscriptable):
        __slots__ = ()

    class IO(_Subscriptable):
        __slots__ = ()

    class BinaryIO(IO):
        __slots__ = ()

    class NoReturn:
        __slots__ = ()

    class TypeVar:
        __slots__ = ("__name__",)

        def __init__(self, name: str, *_constraints: object, **_options: object) -> None:
            self.__name__ = name

    def cast(_type: object, value: object) -> object:
        return value
