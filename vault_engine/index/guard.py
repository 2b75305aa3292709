"""One rule for the SQLite-backed indexes: an unreadable database is stale, never a crash.

A file garbled behind the engine's back can open cleanly and fail only on a
later read; every public method of the catalog and the vector store turns
such a failure into :class:`IndexStale`, which callers answer by rebuilding
from the markdown files.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from ..errors import IndexStale

P = ParamSpec("P")
R = TypeVar("R")


class HasPath(Protocol):
    path: Path


S = TypeVar("S", bound=HasPath)


def stale_on_error(what: str) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    def decorate(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(method)
        def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return method(self, *args, **kwargs)
            except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
                if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                    raise
                raise IndexStale(f"{what} is unreadable ({exc}); it will be rebuilt", path=self.path) from None

        return wrapper

    return decorate
