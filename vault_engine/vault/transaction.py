"""One write transaction: lock, check, write atomically, journal, then one sync.

Every writer of memory files goes through :class:`Transactions.begin`
(``vault.transaction()``): it takes the writer lock, checks each file is still
what was read (a change made meanwhile is refused, not overwritten), writes
atomically (each file read back as the memory meant before it replaces
anything: what would not is never written), appends the journal events, and
once the lock is released brings the search indexes up to date for just the
touched files, when the vault syncs automatically.  The write has happened by then, so a failing sync becomes the
vault's ``index_warning``, never an error that would hide a saved memory.

An operation that calls another inside its transaction joins it: the lock is
re-entrant and only the outermost transaction syncs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from .. import fsio, locks, store
from ..format.memory import Memory, ParsedFile
from ..journal import Event, Journal


class Host(Protocol):
    """What a transaction needs of the vault it writes to."""

    root: Path
    journal: Journal
    lock: locks.WriterLock

    def after_write(self, touched: Iterable[Path]) -> None: ...


class Transaction:
    """The writes of one operation, made while the writer lock is held."""

    def __init__(self, host: Host):
        self.host = host
        self.root = host.root
        self.touched: set[Path] = set()

    def check(self, rel: str, original: ParsedFile) -> None:
        """Refuse (``FileChanged``) when the file at ``rel`` is no longer what was read."""
        store.ensure_unchanged(self.root, rel, original)

    def write(self, rel: str, memory: Memory, original: ParsedFile | None = None) -> bool:
        """Write ``memory`` at ``rel`` (checked against ``original`` when given); False: unchanged."""
        return store.write(self.root, rel, memory, original)

    def write_many(self, files: Sequence[tuple[str, Memory, ParsedFile | None]]) -> None:
        """Write many new or checked-out files, each atomically and read back, with one flush for all (when one
        would not read back, none is written)."""
        store.write_many(self.root, files)

    def move(self, source: str, dest: str, memory: Memory, original: ParsedFile | None = None) -> None:
        """Write ``memory`` at ``dest``, then remove ``source`` (a crash between leaves both, never neither)."""
        store.move(self.root, source, dest, memory, original)

    def remove(self, rel: str) -> None:
        """Delete the file at ``rel`` for good."""
        fsio.remove(store.inside(self.root, rel))

    def record(self, *events: Event) -> list[Event]:
        """Append ``events`` to the journal; returns the ones written (ids already there are skipped)."""
        return self.host.journal.append(events)


class Transactions:
    """The open transaction of each thread of one vault."""

    def __init__(self, host: Host):
        self.host = host
        self._open = threading.local()

    def current(self) -> Transaction | None:
        """The transaction this thread has open on the vault, if any."""
        tx: Transaction | None = getattr(self._open, "tx", None)
        return tx

    @contextlib.contextmanager
    def begin(self, *, hold: bool = True, sync: bool = True, sync_on_error: bool = False) -> Iterator[Transaction]:
        """Open a transaction, or join the one this thread has open.

        Args:
            hold: take the writer lock for the body (a batch of transactions that each take it
                does not: other writers get their turn between them).
            sync: sync the touched files at the end (False: the body journals only, say).
            sync_on_error: sync also when the body raises (what it wrote before stays written).
        """
        lock = self.host.lock.hold() if hold else contextlib.nullcontext()
        outer = self.current()
        if outer is not None:
            with lock:
                yield outer
            return
        tx = Transaction(self.host)
        self._open.tx = tx
        failed = False
        try:
            with fsio.recording() as tx.touched, lock:
                yield tx
        except BaseException:
            failed = True
            raise
        finally:
            self._open.tx = None
            if sync and (not failed or sync_on_error):  # after the lock is released: writers never wait for it
                self.host.after_write(tx.touched)
