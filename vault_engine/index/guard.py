"""One rule for the SQLite-backed indexes: an unreadable database is stale, never a crash.

A file garbled behind the engine's back can open cleanly and fail only on a
later read; every public method of the catalog and the vector store turns
such a failure into :class:`IndexStale`, which callers answer by rebuilding
from the markdown files.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Mapping, Sequence
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


class IndexDb:
    """A SQLite file of derived state: WAL mode, a ``meta`` table that must match, one place to open it.

    Subclasses set ``what`` (for messages) and pass their table definitions and
    expected meta values; a file from another schema, model or version raises
    :class:`IndexStale`, as does one SQLite cannot read.
    """

    what = "index"

    def __init__(self, path: Path, tables: Sequence[str], meta: Mapping[str, str]):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            for table in tables:
                self._db.execute(table)
            found = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise IndexStale(f"{self.what} is unreadable ({exc}); it will be rebuilt", path=path) from None
        if not found:
            self._db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
        elif found != dict(meta):
            raise IndexStale(self.mismatch(found), path=path)

    def mismatch(self, found: Mapping[str, str]) -> str:
        return f"{self.what} is version {found.get('version')}; it will be rebuilt"

    def close(self) -> None:
        self._db.close()

    def data_version(self) -> int:
        """Changes whenever another connection commits (SQLite's own counter)."""
        try:
            return int(self._db.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise IndexStale(f"{self.what} is unreadable ({exc}); it will be rebuilt", path=self.path) from None
