"""One rule for the SQLite-backed indexes: an unreadable database is stale, never a crash.

A file garbled behind the engine's back can open cleanly and fail only on a
later read; every public method of the catalog and the vector store turns
such a failure into :class:`IndexStale`, which callers answer by rebuilding
from the markdown files.  A full disk and a database busy in another process
are not damage: they become one-line errors (:class:`VaultBusy` for the lock,
a retry message) and nothing is rebuilt for them.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from ..errors import IndexNewer, IndexStale, VaultBusy, VaultError
from ..invocation import upgraded_since_start

P = ParamSpec("P")
R = TypeVar("R")


class HasPath(Protocol):
    path: Path


S = TypeVar("S", bound=HasPath)


_NUMBER_AT_END = re.compile(r"(\d+)$")


def newer(found: str | None, ours: str) -> bool:
    """Whether schema version ``found`` (as an index records it: "8", "memvault-fulltext-5") is newer than
    ``ours``: the numbers they end with compared, with the same text before them."""
    if found is None:
        return False
    a, b = _NUMBER_AT_END.search(found), _NUMBER_AT_END.search(ours)
    if a is None or b is None or found[: a.start()] != ours[: b.start()]:
        return False
    return int(a.group(1)) > int(b.group(1))


def written_by_newer(what: str, found: str, ours: str, path: Path) -> IndexNewer:
    """The error for an index of schema ``found`` that a newer memvault wrote (this one reads ``ours``)."""
    if upgraded_since_start():  # a long-running process of the old install: the upgrade rebuilt the indexes
        return IndexNewer(f"the {what} was written by a newer memvault (version {found}; this process reads "
                          f"{ours}): memvault was upgraded since this process started; restart it (an agent's "
                          "MCP server: start a new session)", path=path)
    return IndexNewer(f"the {what} was written by a newer memvault (version {found}; this one reads {ours}): "
                      "run the newer memvault, or rebuild the indexes for this one with `memvault sync --full`",
                      path=path)


_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_IOERR, _SQLITE_FULL = 5, 6, 10, 13


def _disk_full(path: Path) -> bool:
    """Whether the disk holding ``path`` has no room left (SQLite reports some ENOSPC as an I/O error)."""
    try:
        return shutil.disk_usage(path.parent).free < 64 * 1024
    except OSError:
        return False


def failure(exc: Exception, what: str, path: Path) -> VaultError:
    """The error a failed SQLite call stands for: only damage is :class:`IndexStale` (rebuilt)."""
    if isinstance(exc, sqlite3.OperationalError):
        code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
        text = str(exc)
        if code in (_SQLITE_BUSY, _SQLITE_LOCKED) or "locked" in text:
            return VaultBusy(f"the {what} is busy in another process ({text}); try again", path=path)
        if code == _SQLITE_FULL or "disk is full" in text or (code == _SQLITE_IOERR and _disk_full(path)):
            return VaultError(f"cannot write the {what}: disk is full; free some space, then run `memvault sync`",
                              path=path)
        if code == _SQLITE_IOERR:
            return VaultError(f"cannot read or write the {what} ({text})", path=path)
    return IndexStale(f"{what} is unreadable ({exc}); it will be rebuilt", path=path)


def stale_on_error(what: str) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    def decorate(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(method)
        def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return method(self, *args, **kwargs)
            except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
                raise failure(exc, what, self.path) from None

        return wrapper

    return decorate


class IndexDb:
    """A SQLite file of derived state: WAL mode, a ``meta`` table that must match, one place to open it.

    Subclasses set ``what`` (for messages) and pass their table definitions and
    expected meta values; a file from another schema, model or version raises
    :class:`IndexStale`, as does one SQLite cannot read; a file a newer memvault wrote (a higher
    ``version``) raises :class:`IndexNewer` and is left as it is.
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
            if not found:  # in one transaction: a failed write never leaves half a meta table
                with self.writing():
                    self._db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", sorted(meta.items()))
        except sqlite3.DatabaseError as exc:
            if hasattr(self, "_db"):
                self._db.close()
            raise failure(exc, self.what, path) from None
        if found and found != dict(meta):
            self._db.close()
            if newer(found.get("version"), meta["version"]):
                raise written_by_newer(self.what, found["version"], meta["version"], path)
            raise IndexStale(self.mismatch(found), path=path)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One write transaction: committed when the block ends, rolled back when it raises."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:  # SQLite may have rolled back already (a full disk does)
                self._db.execute("ROLLBACK")
            raise

    def mismatch(self, found: Mapping[str, str]) -> str:
        return f"{self.what} is version {found.get('version')}; it will be rebuilt"

    def close(self) -> None:
        self._db.close()

    def data_version(self) -> int:
        """Changes whenever another connection commits (SQLite's own counter)."""
        try:
            return int(self._db.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise failure(exc, self.what, self.path) from None


class ModelIndexDb(IndexDb):
    """An :class:`IndexDb` of vectors from one embedding model: a file written with another
    model, dimension or schema version is stale."""

    def __init__(self, path: Path, tables: Sequence[str], version: str, model: str, dim: int):
        self.model = model
        self.dim = dim
        super().__init__(path, tables, {"version": version, "model": model, "dim": str(dim)})

    def mismatch(self, found: Mapping[str, str]) -> str:
        return (f"{self.what} was built for {found.get('model')} (dim {found.get('dim')}, "
                f"version {found.get('version')}); it will be rebuilt")
