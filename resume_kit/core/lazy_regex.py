"""Regular expressions compiled on first use, not at import.

The brief and the hooks import modules holding a few hundred patterns (secret redaction, log
and transcript readers) of which one run uses a handful: compiling them all at import cost
tens of milliseconds at every agent session start. ``re`` itself is imported on first use too
(with enum, a few milliseconds): the served hook brief holds patterns it never uses."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs milliseconds (mypy reads the guard)
if TYPE_CHECKING:
    import re

    from resume_kit.core.typing_light import Any


class _LazyPattern:
    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            import re

            self._compiled = re.compile(self._source, self._flags)
        return getattr(self._compiled, name)


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)`` on the first use of any of its methods or attributes.
    Use its methods (``search``, ``sub``…); ``re.sub(pattern, …)`` needs a real pattern."""
    return _LazyPattern(source, flags)  # type: ignore[return-value]
