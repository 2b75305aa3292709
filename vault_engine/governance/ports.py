"""What governance needs of an open vault: a narrow view, so governance never imports the vault package."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..config import VaultConfig
    from ..format.memory import Memory, ParsedFile
    from ..index.embedder import Embedder
    from ..journal import Event, Journal
    from ..store import Entry, Scan


class Writes(Protocol):
    """The writes of one transaction (see ``vault_engine.vault.transaction``)."""

    def check(self, rel: str, original: ParsedFile) -> None: ...

    def write(self, rel: str, memory: Memory, original: ParsedFile | None = None) -> bool: ...

    def move(self, source: str, dest: str, memory: Memory, original: ParsedFile | None = None) -> None: ...

    def remove(self, rel: str) -> None: ...

    def record(self, *events: Event) -> list[Event]: ...


class Governed(Protocol):
    """The vault as the planners, the executor and the audit see it."""

    root: Path
    config: VaultConfig
    journal: Journal

    def scan(self) -> Scan: ...

    def transaction(self, *, sync: bool = True) -> AbstractContextManager[Writes]: ...

    def sync(self, *, full: bool = False, embedder: Embedder | None = None,
             paths: Iterable[str] | None = None) -> Any: ...

    def embedder(self) -> Embedder: ...

    def finish_corrections(self, scan: Scan, memory_id: str | None = None) -> list[str]: ...

    def trash_path(self, entry: Entry, taken: set[str] | None = None) -> str: ...

    def move_to_trash(self, entry: Entry, stamp: datetime, reason: str, dest: str | None = None) -> str: ...

    def move_out_of_trash(self, entry: Entry, stamp: datetime, dest: str | None = None) -> str: ...
