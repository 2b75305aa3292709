"""Selectors: where a memory applies (path globs for now; tasks, operations and phases later).

Path globs follow the gitignore conventions people expect: ``*`` and ``?``
stay within one folder, ``**`` spans folders (``src/**`` is everything under
``src/``; ``**/*.py`` is every Python file at any depth), and a pattern with
no ``/`` matches a name at any depth (``*.tf`` matches ``modules/vpc/main.tf``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(char))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _clean(path: str) -> str:
    text = path.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text.lstrip("/")


def path_matches(selectors: Sequence[str], path: str) -> bool:
    """Whether ``path`` matches one of the glob ``selectors``."""
    target = _clean(path)
    for selector in selectors:
        pattern = _clean(selector)
        anchored = selector.strip().replace("\\", "/").startswith("/") or "/" in pattern.rstrip("/")
        if pattern and not anchored:
            pattern = "**/" + pattern
        if pattern and _compile(pattern).match(target):
            return True
        if pattern.endswith("/**") and target == pattern[:-3]:
            return True
    return False
