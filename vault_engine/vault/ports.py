"""The open vault as its operation modules see it (they call back through it, never around it)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .. import locks
    from ..config import VaultConfig
    from ..format.memory import Memory
    from ..index.change_feed import ChangeFeed
    from ..index.embedder import Embedder
    from ..index.freshness import RecordedStats
    from ..index.sync import Progress, SyncReport
    from ..journal import Journal
    from ..retrieval.searcher import Searcher
    from ..store import Entry, Scan
    from .results import AddResult, ChangeResult, NewMemory
    from .transaction import Transaction


class Open(Protocol):
    """One open vault: its files, settings, journal, locks, models and the operations that call others."""

    root: Path
    config: VaultConfig
    journal: Journal
    lock: locks.WriterLock
    index_lock: locks.WriterLock
    progress: Progress | None
    fill_in_background: Callable[[], object] | None
    kept_searcher: Searcher | None
    kept_stats: RecordedStats | None
    change_feed: ChangeFeed | None

    @property
    def sender(self) -> str | None: ...

    def scan(self) -> Scan: ...

    def purged(self) -> dict[str, str]: ...

    def entry(self, memory_id: str, scan: Scan | None = None) -> Entry: ...

    def resolve_links(self, memory: Memory, scan: Scan) -> list[dict[str, str | None]]: ...

    def transaction(self, *, sync: bool = True) -> AbstractContextManager[Transaction]: ...

    def embedder(self) -> Embedder: ...

    def sync(self, *, full: bool = False, embedder: Embedder | None = None,
             paths: Iterable[str] | None = None, vectors: bool = True) -> SyncReport: ...

    def searcher(self) -> Searcher: ...

    def add(self, request: NewMemory, *, allow_one_off: bool = False, allow_forgotten: bool = False) -> AddResult: ...

    def forget(self, memory_id: str, *, permanent: bool = False) -> ChangeResult: ...

    def forget_vectors(self, memory: Memory) -> int: ...

    def finish_corrections(self, scan: Scan, memory_id: str | None = None) -> list[str]: ...

    def trash_path(self, entry: Entry, taken: set[str] | None = None) -> str: ...

    def move_to_trash(self, entry: Entry, stamp: datetime, reason: str, dest: str | None = None) -> str: ...

    def move_out_of_trash(self, entry: Entry, stamp: datetime, dest: str | None = None) -> str: ...
