"""Regular expressions compiled when first used, not when their module is imported.

memvault's modules hold about 140 patterns; compiling them all costs about 25 ms (a Unicode
character class alone takes 3 ms), paid by every process at import, although a prompt hook or
``memvault show`` uses a handful.  :func:`lazy_pattern` returns an object that compiles on its first
use and then hands out the compiled pattern's own methods: after that first call a ``search`` is
the compiled ``search``, with nothing in between.
"""

from __future__ import annotations

import re
from typing import Any, cast

_FORWARDED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "groupindex",
              "groups", "scanner")


class _LazyPattern:
    def __init__(self, source: str, flags: int | re.RegexFlag) -> None:
        self.pattern = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # called only for what the instance does not hold yet
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags)
        for method in _FORWARDED:
            setattr(self, method, getattr(compiled, method))
        self.flags = compiled.flags
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self.pattern!r})"


def lazy_pattern(source: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, done when the pattern is first used.  It has a compiled
    pattern's methods and ``pattern`` and ``flags``; it is not a :class:`re.Pattern` to
    ``isinstance`` and cannot be passed to ``re.search`` and the like: call its methods."""
    return cast("re.Pattern[str]", _LazyPattern(source, flags))
