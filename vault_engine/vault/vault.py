"""One open vault: its settings, journal, locks and models, and one method per operation.

Each operation lives in a module named for what it does (``remember``,
``revise``, ``trash``, ``undo``, ``replay``, ``reading``, ``indexes``,
``status``); every write goes through one :mod:`.transaction`, so each change
is locked, checked, written atomically, journalled (to be explained, replayed
and undone) and indexed once.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .. import config as config_mod
from .. import copies, locks, store
from ..config import VaultConfig
from ..errors import VaultError
from ..format.memory import Memory
from ..journal import DAMAGED_DIR, PURGE_DECLINED, Event, Journal
from ..store import Entry, Scan
from . import indexes, reading, remember, repair, replay, revise, trash, undo
from .results import (
    AddResult,
    ChangeResult,
    FeedbackResult,
    ImportResult,
    NewMemory,
    ReplayDiff,
    RunRollback,
    Status,
)
from .status import status
from .transaction import Transaction, Transactions

if TYPE_CHECKING:
    from typing import Any

    from ..governance.audit import Audit
    from ..governance.maintain import MaintainReport
    from ..index.change_feed import ChangeFeed
    from ..index.embedder import Embedder
    from ..index.filling import FillReport
    from ..index.freshness import RecordedStats
    from ..index.prefetch import QueryPrefetch
    from ..index.sync import Progress, SyncReport
    from ..llm.base import Llm
    from ..retrieval.searcher import Searcher, SearchQuery, SearchResult


class Vault:
    """One open vault."""

    def __init__(self, root: Path, config: VaultConfig | None = None, *, auto_sync: bool = False,
                 embedder: Embedder | None = None, progress: Progress | None = None):
        self.root = root
        self.config = config if config is not None else config_mod.load(root)
        self.lock = locks.WriterLock(root / store.STATE_DIR / "lock", self.config.vault.lock_timeout)
        # Unreadable journal lines (a crash mid-append) are moved aside, once, by whoever meets them.
        self.journal = Journal(root / store.JOURNAL_DIR, lock=self.lock, aside=root / store.STATE_DIR / DAMAGED_DIR)
        # Syncs exclude each other, not writers: a writer never waits for the model.  A sync waits for
        # another as long as that one makes progress (a minute of none: busy), and a background fill
        # of vectors makes way for it (see vault.indexes.fill).
        self.index_lock = locks.WriterLock(root / store.STATE_DIR / "index.lock",
                                           max(60.0, self.config.vault.lock_timeout),
                                           what="updating the search indexes", patient=True)
        self.auto_sync = auto_sync
        self.progress = progress
        # Called when a write leaves more than a few memories waiting for their vectors (None: they
        # are embedded before the write returns): a command starts a background filler, a server
        # wakes its watcher.
        self.fill_in_background: Callable[[], object] | None = None
        self.index_warning: str | None = None
        self._transactions = Transactions(self)
        self.kept_searcher: Searcher | None = None  # open while the indexes stay as they were (vault/indexes.py)
        self.kept_stats: RecordedStats | None = None  # the stat cache as last read: every read compares the files to it
        # A long-lived process's kernel feed of changed files: a read walks only after one (index/change_feed.py).
        self.change_feed: ChangeFeed | None = None
        self.last_sync: SyncReport | None = None
        self._embedder = embedder
        self._llm: Llm | None = None
        self._parsed: store.ParseCache = {}  # unchanged files are not parsed twice by one process
        self._purged: tuple[tuple[tuple[str, int], ...], dict[str, str]] | None = None  # see purged()
        self._sender: tuple[str | None] | None = None

    @classmethod
    def open(cls, explicit: Path | None = None, *, auto_sync: bool = False,
             progress: Progress | None = None) -> Vault:
        """Discover and open the vault (see :func:`store.discover`).

        With ``auto_sync`` (and ``vault.auto_sync`` on in the config) every
        write leaves the search indexes current.
        """
        root = store.discover(explicit)
        config = config_mod.load(root)
        # A fresh clone of a shared vault: git's merge drivers are registered on the first command.
        from ..gitclone import ensure_registered
        from ..invocation import memvault_command

        ensure_registered(root, memvault_command())
        return cls(root, config, auto_sync=auto_sync and config.vault.auto_sync, progress=progress)

    def embedder(self) -> Embedder:
        """The embedding model (loaded once per process, on first use)."""
        if self._embedder is None:
            from ..index.embedder import vault_embedder

            self._embedder = vault_embedder(self.root, self.config)
        return self._embedder

    def take_vector_from(self, prefetch: QueryPrefetch) -> None:
        """Let the next search take its query's vector from ``prefetch`` (a child embedding it
        meanwhile, see :mod:`~vault_engine.index.prefetch`) rather than load the model for it."""
        from ..index.prefetch import PrefetchedEmbedder

        self._embedder = PrefetchedEmbedder(self.embedder(), prefetch)

    def llm(self) -> Llm:
        """The language model of this vault (``[llm]``; offline without a key), chosen once per vault."""
        if self._llm is None:
            from ..llm.select import select

            self._llm = select(self.config.llm, load_chars=self.config.ingest.load_chars)
        return self._llm

    @property
    def sender(self) -> str | None:
        """Who this vault writes as (``MEMVAULT_VAULT_SENDER``, else git's user.name, else ``[vault]
        sender``; see :mod:`vault_engine.senders`), looked up once; None: unknown."""
        if self._sender is None:
            from ..config import environment
            from ..senders import current_sender

            here = any(name == "MEMVAULT_VAULT_SENDER" for name, _value in environment().settings)
            self._sender = (current_sender(self.root, self.config.vault.sender, from_environment=here),)
        return self._sender[0]

    def after_write(self, touched: Iterable[Path]) -> None:
        """Sync the indexes for files just written (when the vault syncs automatically)."""
        if not self.auto_sync:
            return
        rels = []
        for path in touched:
            try:
                rels.append(path.relative_to(self.root).as_posix())
            except ValueError:
                continue
        try:
            self.last_sync = indexes.sync_soon(self, paths=rels)
        except VaultError as exc:
            self.index_warning = f"warning: search indexes not updated ({exc.one_line()}); run `memvault sync`"


    # ------------------------------------------------------------ writing

    def transaction(self, *, sync: bool = True) -> AbstractContextManager[Transaction]:
        """Hold the writer lock for a group of writes; the outermost transaction syncs the touched files
        (see :mod:`.transaction`).  ``sync=False``: the body writes what the indexes do not hold."""
        return self._transactions.begin(sync=sync)

    def batch(self, *, sync_on_error: bool = False) -> AbstractContextManager[Transaction]:
        """Transactions that sync once, at the end, the writer lock held only inside each (other writers
        get their turn between them); with ``sync_on_error`` also when the batch fails part-way."""
        return self._transactions.begin(hold=False, sync_on_error=sync_on_error)

    @staticmethod
    def add_event(memory: Memory, kind: str = "add", **details: Any) -> Event:
        """The journal event of a new memory: what replay needs of it, plus ``details``."""
        return remember.add_event(memory, kind, **details)

    # ------------------------------------------------------------ reading

    def scan(self) -> Scan:
        """Every memory file of the vault, parsed (unchanged files from this vault's cache); of several files
        with one id the one the indexes hold keeps it (see :mod:`vault_engine.copies`); a file holding a
        permanently forgotten id is left out and reported."""
        return store.scan(self.root, self._parsed,
                          lambda ids: copies.known(self.root, ids, reading.catalog_paths(self, ids)),
                          self.purged())

    def purged(self) -> dict[str, str]:
        """Each permanently forgotten memory id, mapped to its purge event (read again only when the journal
        changed): a file that holds one again (a git checkout, a backup restored) is not that memory come
        back, and is neither read nor indexed."""
        signature = self.journal.signature()
        if self._purged is None or self._purged[0] != signature:
            events = list(self.journal.events(("purge", PURGE_DECLINED)))
            # Purges a sync declined (the memory changed after the purger saw it: sharing.reconcile).
            declined = {str(e.payload.get("purge")) for e in events if e.kind == PURGE_DECLINED}
            found = {e.memory: e.id for e in events
                     if e.kind == "purge" and e.payload.get("permanent") and e.id not in declined}
            self._purged = (signature, found)
        return self._purged[1]

    def entry(self, memory_id: str, scan: Scan | None = None) -> Entry:
        """The memory with ``memory_id``.

        Raises:
            MemoryNotFound: no file has that id.
            MemoryFileError: the file holding that id is invalid (its own error, with path and line).
        """
        return reading.entry(self, memory_id, scan)

    def find(self, memory_id: str) -> Entry:
        """:meth:`entry` for readers, without reading the whole vault when the catalog knows the file."""
        return reading.find(self, memory_id)

    def links_of(self, memory: Memory) -> builtins.list[dict[str, str | None]]:
        """:meth:`resolve_links` from the catalog (no scan), each resolved id checked on disk."""
        return reading.links_of(self, memory)

    def list(self, *, type: str | None = None, scope: str | None = None, project: str | None = None,
             lifecycle: str | None = None, tier: str | None = None, trust: str | Iterable[str] | None = None,
             include_trash: bool = False) -> tuple[builtins.list[Entry], builtins.list[VaultError]]:
        """Memories matching every given filter, ordered by path (``trust``: one level, several, or ``any``)."""
        return reading.matching(self, type=type, scope=scope, project=project, lifecycle=lifecycle, tier=tier,
                                trust=trust, include_trash=include_trash)

    # `builtins.list` here and below: inside this class `list` names the method Vault.list.
    def resolve_links(self, memory: Memory, scan: Scan) -> builtins.list[dict[str, str | None]]:
        """Each link of ``memory`` with the id it points to (None when dangling)."""
        return reading.resolve_links(self, memory, scan)

    # ------------------------------------------------------------ operations

    def add(self, request: NewMemory, *, allow_one_off: bool = False, allow_forgotten: bool = False) -> AddResult:
        """Remember one memory; the same text twice adds evidence instead of a duplicate (see :mod:`.remember`).

        Raises:
            InvalidInput: empty text, a one-off instruction, or bad field values.
            ForgottenContent: the text was permanently forgotten.
        """
        return remember.add(self, request, allow_one_off=allow_one_off, allow_forgotten=allow_forgotten)

    def import_jsonl(self, lines: Iterable[str], source_name: str = "<stdin>") -> ImportResult:
        """Bulk add: one JSON object per line; valid lines are imported even when others fail."""
        return remember.import_jsonl(self, lines, source_name)

    def correct(self, memory_id: str, text: str, title: str | None = None) -> ChangeResult:
        """Write a new version of a memory; the old one becomes superseded (history kept)."""
        return revise.correct(self, memory_id, text, title)

    def finish_corrections(self, scan: Scan, memory_id: str | None = None) -> builtins.list[str]:
        """Complete the corrections a crash cut short (of ``memory_id`` alone, when given); returns the
        new versions' ids (see :func:`.revise.finish_corrections`)."""
        return revise.finish_corrections(self, scan, memory_id)

    def feedback(self, memory_id: str, outcome: str, *, application: str | None = None) -> FeedbackResult:
        """Record how a delivered memory worked out (see :func:`.revise.feedback`).

        Raises:
            InvalidInput: an unknown outcome, a plain note, a trashed or superseded
                memory, or an application that did not deliver this memory.
            MemoryNotFound: no memory has that id.
        """
        return revise.feedback(self, memory_id, outcome, application=application)

    def rollback(self, memory_id: str | None = None, *, event_id: str | None = None) -> ChangeResult:
        """Undo the last correct, forget, superseding feedback or governance action of ``memory_id``
        (or exactly the journal event ``event_id``; see :func:`.undo.rollback`)."""
        return undo.rollback(self, memory_id, event_id=event_id)

    def rollback_run(self, run_id: str) -> RunRollback:
        """Undo every action of one ``maintain`` run, the last first (see :func:`.undo.rollback_run`)."""
        return undo.rollback_run(self, run_id)

    # ------------------------------------------------------------ trash

    def trash_path(self, entry: Entry, taken: set[str] | None = None) -> str:
        """A free path in the trash for ``entry`` (its file name when free), not among ``taken``."""
        return trash.trash_path(self, entry, taken)

    def move_to_trash(self, entry: Entry, stamp: datetime, reason: str, dest: str | None = None) -> str:
        """Move ``entry`` to the trash (``dest`` from :meth:`trash_path`, else a free one); returns the new path."""
        return trash.move_to_trash(self, entry, stamp, reason, dest)

    def move_out_of_trash(self, entry: Entry, stamp: datetime, dest: str | None = None) -> str:
        """Move a trashed ``entry`` back to where it came from (``dest`` when given); returns the new path."""
        return trash.move_out_of_trash(self, entry, stamp, dest)

    def forget(self, memory_id: str, *, permanent: bool = False) -> ChangeResult:
        """Move a memory to the trash with a tombstone, or purge every trace of it."""
        return trash.forget(self, memory_id, permanent=permanent)

    def trash_list(self) -> builtins.list[Entry]:
        """The trashed memories, by path."""
        return trash.trash_list(self)

    def forget_vectors(self, memory: Memory) -> int:
        """Drop ``memory``'s vectors from the embedding cache (see :func:`.indexes.forget_vectors`)."""
        return indexes.forget_vectors(self, memory)

    def restore(self, memory_id: str) -> ChangeResult:
        """Bring a memory back from the trash to where it was."""
        return trash.restore(self, memory_id)

    def trash_empty(self, *, expired_only: bool = False) -> builtins.list[str]:
        """Delete trashed memories for good (only expired ones with ``expired_only``)."""
        return trash.trash_empty(self, expired_only=expired_only)

    # ------------------------------------------------------------ journal replay

    def replay_diff(self) -> builtins.list[ReplayDiff]:
        """Where the files' lifecycle and counters differ from what the journal tells."""
        return replay.diff(self)

    def replay_apply(self) -> builtins.list[ReplayDiff]:
        """Rewrite lifecycle and counters of every file that disagrees with the journal."""
        return replay.apply(self)

    # ------------------------------------------------------------ governance

    def maintain(self, *, dry_run: bool = False, now: datetime | None = None,
                 embedder: Embedder | None = None, replan: bool = False) -> MaintainReport:
        """Run the governance pipeline (see :mod:`vault_engine.governance.maintain`)."""
        from ..governance.maintain import maintain

        with self.batch():
            return maintain(self, dry_run=dry_run, now=now, embedder=embedder, replan=replan, choose_llm=self.llm)

    def repair(self, *, dry_run: bool = False) -> builtins.list[repair.Reid]:
        """Give each file holding an id another file keeps an id of its own (see :mod:`.repair`)."""
        return repair.repair(self, dry_run=dry_run)

    def audit(self, *, now: datetime | None = None) -> Audit:
        """A read-only health report (see :mod:`vault_engine.governance.audit`)."""
        from ..governance.audit import audit

        return audit(self, now=now)

    # ------------------------------------------------------------ indexes and status

    def sync(self, *, full: bool = False, embedder: Embedder | None = None,
             paths: Iterable[str] | None = None, vectors: bool = True) -> SyncReport:
        """Bring the search indexes in line with the files (only ``paths``, relative, when given);
        without ``vectors`` the changed memories wait for their vectors (:meth:`fill_vectors`)."""
        return indexes.sync(self, full=full, embedder=embedder, paths=paths, vectors=vectors)

    def fill_vectors(self, *, embedder: Embedder | None = None, stop: Callable[[], bool] | None = None,
                     rounds: int | None = None, progress: Progress | None = None,
                     yielding: bool = False) -> FillReport:
        """Embed the memories waiting for their vectors (all, or ``rounds`` rounds of them); with
        ``yielding``, stop as soon as another process wants the indexes (see :func:`.indexes.fill`)."""
        return indexes.fill(self, embedder=embedder, progress=progress, stop=stop, rounds=rounds, yielding=yielding)

    def search(self, request: SearchQuery) -> SearchResult:
        """Hybrid search; builds the indexes first when they are missing or unreadable."""
        return indexes.search(self, request)

    def searcher(self) -> Searcher:
        """A searcher kept open while the indexes stay as they were (loaded once per long-lived process)."""
        return indexes.searcher(self)

    def status(self) -> Status:
        """How many memories of each kind, the hot tier's use, the journal and the indexes."""
        return status(self)
