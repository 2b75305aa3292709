"""Sync applies the plan: bring every derived index in line with the files.

:func:`sync` reads the disk (:mod:`disk`), plans the changes (:func:`plan.plan_changes`, pure),
then applies them in named steps: the entries to index (and the thread neighbours whose
context changed), the vectors that must be embedded again, the full-text documents, the pages,
the catalog, the vocabulary and the stat cache.  :class:`Indexes` opens the parts, and rebuilds
any that is stale.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import store
from ..errors import IndexNewer, IndexStale, MemoryFileError, VaultError
from ..format import threads
from ..format.memory import content_digest
from ..fsio import remove_temps, write_atomic
from ..locks import WriterLock
from ..store import Entry
from . import details
from .catalog import Catalog, CatalogRow, row_from_entry
from .derived import embedding_texts, fulltext_document, gist, text_fingerprint
from .disk import STAT_CACHE, DiskState, load_stat_cache, read_disk, read_paths
from .embedder import Embedder
from .embedding_cache import EmbeddingCache
from .filling import FillReport, built_share, embed_distinct, fill
from .fulltext import FullTextIndex
from .pages import listed, write_pages
from .plan import ChangeSet, Located, plan_changes
from .vectors import Pending, VectorStore
from .vocabulary import Vocabulary, vocabulary_terms

EMBED_BATCH = 256
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class SyncReport:
    """What one sync did: ``embedded`` texts went through the model, ``cached`` came from the
    embedding cache; ``pending`` memories still wait for their vectors (a sync asked to leave
    them, or one cut short)."""

    plan: ChangeSet
    parsed: int
    embedded: int
    problems: list[VaultError]
    notice: str | None = None
    seconds_embedding: float = 0.0
    cached: int = 0
    pending: int = 0
    queued: int = 0  # memories this sync queued for new vectors

    def vectors_line(self) -> str:
        """What this sync did for the vectors, for people."""
        line = f"{self.embedded} texts embedded"
        if self.cached:
            line += f", {self.cached} from the cache"
        if self.pending:
            line += f"; {self.pending} memories wait for their vectors"
        return line

    def filled(self, report: FillReport) -> None:
        self.embedded += report.embedded
        self.cached += report.cached
        self.seconds_embedding += report.seconds
        self.pending = report.remaining


class Indexes:
    """The derived indexes of one vault, rebuilt automatically when any part is stale."""

    def __init__(self, root: Path, embedder: Embedder, *, vocabulary: bool = False,
                 cache: EmbeddingCache | None = None, max_tokens: int = 256, downgrade: bool = False):
        self.state_dir = root / store.STATE_DIR
        self.downgrade = downgrade  # a part a newer memvault wrote is rebuilt too (``sync --full``), not refused
        self.embedder = embedder
        self.cache = cache  # vectors by text, shared by every vault of this machine
        self.max_tokens = max_tokens
        self.keeps_vocabulary = vocabulary  # query expansion is on ([retrieval] weight_expansion > 0)
        self.notice: str | None = None
        self.fulltext, self.vectors, self.catalog = self._open()

    def _paths(self) -> tuple[Path, Path, Path]:
        return self.state_dir / "fulltext", self.state_dir / "vectors.sqlite", self.state_dir / "catalog.sqlite"

    def _try_open(self) -> tuple[FullTextIndex, VectorStore, Catalog]:
        try:
            return self._open_parts()
        except IndexNewer as exc:
            if not self.downgrade:
                raise
            raise IndexStale("written by a newer memvault; it is rebuilt for this one",
                             path=exc.path) from None

    def _open_parts(self) -> tuple[FullTextIndex, VectorStore, Catalog]:
        # Tantivy last: an index it holds open must not be deleted under it when another part is stale.
        ft_path, vec_path, cat_path = self._paths()
        catalog = Catalog(cat_path)
        try:
            catalog.records()
            vectors = VectorStore(vec_path, self.embedder.name, self.embedder.dim)
        except (IndexStale, IndexNewer):
            catalog.close()
            raise
        try:
            fulltext = FullTextIndex(ft_path)
        except (IndexStale, IndexNewer):
            vectors.close()
            catalog.close()
            raise
        return fulltext, vectors, catalog

    def _open(self) -> tuple[FullTextIndex, VectorStore, Catalog]:
        """Open every part; a stale part alone is dropped (the next sync refills it from the
        files: vectors whose text did not change are kept), anything else drops all."""
        stale: Path | None = None
        try:
            return self._try_open()
        except IndexStale as exc:
            self.notice = f"notice: {exc.one_line()}"
            stale = Path(exc.path) if exc.path else None
        # Outside the handler: its traceback would keep the half-opened parts alive.
        if stale is not None and stale in self._paths():
            self._remove(only=stale)
        else:
            self._remove()
        try:
            return self._try_open()
        except IndexStale as exc:  # a second part was stale too
            self.notice = f"notice: {exc.one_line()}"
        self._remove()
        return self._try_open()

    def _remove(self, only: Path | None = None) -> None:
        ft_path, vec_path, cat_path = self._paths()
        if only in (None, ft_path):
            FullTextIndex.remove(ft_path)
        for base in (vec_path, cat_path):
            if only not in (None, base):
                continue
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    Path(str(base) + suffix).unlink()
        if only is None:
            with contextlib.suppress(FileNotFoundError):
                (self.state_dir / STAT_CACHE).unlink()
            remove_vocabulary(self.state_dir)

    def rebuild(self) -> None:
        """Drop every index (and the stat cache) and start empty."""
        self.close()
        self._remove()
        self.fulltext, self.vectors, self.catalog = self._open()

    def close(self) -> None:
        self.vectors.close()
        self.catalog.close()

    def fill(self, *, progress: Progress | None = None, max_memories: int | None = None,
             stop: Callable[[], bool] | None = None) -> FillReport:
        """Embed what the vector index has queued (see :mod:`.filling`)."""
        return fill(self.vectors, self.embedder, self.cache, self.max_tokens, progress=progress,
                    max_memories=max_memories, stop=stop)

    def vocabulary(self) -> Vocabulary:
        """The vocabulary for query expansion; one from another model or damaged is started afresh."""
        path = self.state_dir / VOCABULARY
        try:
            return Vocabulary(path, self.embedder.name, self.embedder.dim)
        except IndexStale:
            remove_vocabulary(self.state_dir)
            return Vocabulary(path, self.embedder.name, self.embedder.dim)


VOCABULARY = "vocabulary.sqlite"


def remove_vocabulary(state_dir: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (state_dir / (VOCABULARY + suffix)).unlink()


def update_vocabulary(indexes: Indexes, rows: Sequence[CatalogRow]) -> int:
    """Embed the words of ``rows`` (titles, summaries, triggers, tags) the vocabulary lacks; an
    empty vocabulary beside a filled catalog (new, or dropped) takes every row's words.
    Returns how many words were added."""
    vocabulary = indexes.vocabulary()
    try:
        if not vocabulary.count():
            rows = [*indexes.catalog.listing(), *rows]
        words: set[str] = set()
        for row in rows:
            words |= vocabulary_terms(f"{row.title} {row.summary} {row.trigger} {' '.join(row.tags)}")
        missing = vocabulary.missing(words)
        for start in range(0, len(missing), EMBED_BATCH):
            part = missing[start : start + EMBED_BATCH]
            # Through the embedding cache too: a rebuilt vocabulary embeds no word twice.
            by_word, _cost = embed_distinct(indexes.embedder, indexes.cache, part, indexes.max_tokens)
            vocabulary.add(part, np.asarray([by_word[word] for word in part], dtype=np.float32))
        return len(missing)
    finally:
        vocabulary.close()


FRESHNESS_STATES = ("current", "stale", "missing", "unreadable")


def freshness(root: Path) -> tuple[str, str]:
    """How the indexes compare with the files, read-only (nothing is parsed twice or written):
    a state (one of :data:`FRESHNESS_STATES`) and a sentence for people."""
    state = root / store.STATE_DIR
    if not (state / "catalog.sqlite").exists():
        return "missing", "not built (run `memvault sync`, or any search builds it)"
    try:
        catalog = Catalog(state / "catalog.sqlite")
        try:
            records = catalog.records()
        finally:
            catalog.close()
    except IndexStale as exc:
        return "unreadable", f"unreadable ({exc.message}); the next sync or search rebuilds it"
    except IndexNewer as exc:
        return "unreadable", exc.message
    disk = read_disk(root, load_stat_cache(state / STAT_CACHE), records)
    indexed = {i: Located(path, digest) for i, (path, digest) in records.items()}
    plan = plan_changes({i: Located(f.path, f.digest) for i, f in disk.files.items()}, indexed)
    waiting = vectors_waiting(state)
    building = ""
    if waiting and records:
        share = built_share(len(records), waiting)
        building = f"; vectors {share}% built, {waiting} memories wait for theirs ({_filling(state)})"
    if plan.empty:
        return "current", f"current ({plan.unchanged} {'file' if plan.unchanged == 1 else 'files'} indexed{building})"
    return "stale", f"stale: {plan.summary()}{building} (run `memvault sync` or keep `memvault watch` running)"


FILL_LOCK = "fill.lock"  # held by a vault's background filler while it runs
FILL_LOG = "fill.log"  # what the last background filler that failed said


def _filling(state_dir: Path) -> str:
    """Who is computing the vectors that wait, for people."""
    if WriterLock(state_dir / FILL_LOCK, 0).held():
        return "being computed in the background"
    try:
        lines = (state_dir / FILL_LOG).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    failed = next((line.strip() for line in reversed(lines) if line.strip()), "")
    if failed:
        return f"the background fill failed: {failed[:200]}; run `memvault sync`"
    return "run `memvault sync`, or keep `memvault watch` running"


def vectors_waiting(state_dir: Path) -> int:
    """How many memories the vector index has queued for embedding (0 when it cannot say), read-only."""
    path = state_dir / "vectors.sqlite"
    if not path.exists():
        return 0
    # Without a write-ahead log no writer is at work, and the file is read as it is (immutable): opening
    # it otherwise would create the shared-memory file, and a read-only command writes nothing.
    mode = "ro" if Path(f"{path}-wal").exists() else "ro&immutable=1"
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode={mode}", uri=True, timeout=5)) as db:
            return int(db.execute("SELECT COUNT(*) FROM pending").fetchone()[0])
    except sqlite3.Error:
        return 0


Around = dict[str, tuple[threads.Turn | None, threads.Turn | None]]


def _thread_changes(root: Path, catalog: Catalog, entries: Mapping[str, tuple[Entry, str]],
                    deleted: Sequence[str], disk: DiskState) -> tuple[Around, dict[str, tuple[Entry, str]]]:
    """Neighbours of every turn in the threads this sync touches, and the untouched turns whose
    neighbours changed (read from disk here: their context lane and field must be redone)."""
    if not catalog.has_threads() and not any(threads.thread_of(e.memory.source) for e, _ in entries.values()):
        return {}, {}  # no conversation turns anywhere: nothing to look up
    old_rows = catalog.get([*entries, *deleted])
    keys = {row.thread for row in old_rows.values() if row.thread}
    new_turns: dict[str, threads.Turn] = {}
    for memory_id, (entry, _digest) in entries.items():
        placed = threads.thread_of(entry.memory.source)
        if placed is None:
            continue
        keys.add(placed[0])
        if not entry.in_trash and entry.memory.lifecycle != "superseded":
            new_turns[memory_id] = threads.Turn(
                memory_id, placed[1], gist(entry.memory))
    if not keys:
        return {}, {}
    around: Around = {}
    changed: set[str] = set()
    for key, members in catalog.threads(keys).items():
        before = threads.neighbours(members)
        kept = [t for t in members if t.id not in entries and t.id not in deleted]
        kept += [t for i, t in new_turns.items()
                 if (threads.thread_of(entries[i][0].memory.source) or ("", ""))[0] == key]
        after = threads.neighbours(kept)
        around.update(after)
        changed |= {i for i in after if i not in entries
                    and threads.context_of(i, after) != threads.context_of(i, before)}
    extra: dict[str, tuple[Entry, str]] = {}
    rows = catalog.get(changed)
    for memory_id in sorted(changed):
        known = disk.files.get(memory_id)
        rel = known.path if known else rows[memory_id].path if memory_id in rows else None
        if rel is None:
            continue
        try:
            data = store.read_bytes(root, rel)
            entry = store.entry_from_bytes(rel, data)
        except MemoryFileError as exc:
            disk.problems.append(exc)
            continue
        if entry.memory.id == memory_id:
            extra[memory_id] = (entry, content_digest(data))
    return around, extra


def _remove_temps(root: Path, state_dir: Path) -> None:
    """The temp files of pages and of the stat cache that a sync cut short left (the caller holds
    the index lock, which every writer of those files holds)."""
    folders = [root]
    projects = root / "memories" / "projects"
    if projects.is_dir() and not projects.is_symlink():
        folders += [p for p in projects.iterdir() if p.is_dir() and not p.is_symlink()]
    for folder in folders:
        remove_temps(folder, lambda name: name == store.INDEX_PAGE)
    remove_temps(state_dir, lambda name: name == STAT_CACHE)


@dataclass(slots=True)
class _Survey:
    """What the disk holds against the catalog's records, and what must be done about it."""

    disk: DiskState
    plan: ChangeSet
    vector_hashes: dict[str, str]  # memory id -> fingerprint of the texts its vectors embed
    repair: list[str]  # unchanged memories whose vectors or full-text document were lost


@dataclass(slots=True)
class _Batch:
    """What the touched memories give each index."""

    documents: list[dict[str, Any]]
    rows: list[CatalogRow]
    pending: list[Pending]  # the memories whose vectors must be computed again
    parsed: int


def _survey(root: Path, indexes: Indexes, old_cache: Mapping[str, Sequence[Any]],
            paths: Iterable[str] | None, held: Mapping[str, tuple[str, str]] | None = None,
            purged: Mapping[str, str] | None = None) -> _Survey:
    """Read the disk (only ``paths``, when given and the catalog has records) and plan against the catalog
    (``held``: the records of a catalog just rebuilt, which say which copy of an id keeps it); a file
    holding a ``purged`` id is reported and planned as absent (removed from the indexes if it was in)."""
    records = indexes.catalog.records()
    targeted = paths is not None and bool(records)
    if paths is not None and targeted:
        disk, indexed = read_paths(root, paths, old_cache, records)
    else:
        disk = read_disk(root, old_cache, {**(held or {}), **records})
        indexed = {memory_id: Located(path, digest) for memory_id, (path, digest) in records.items()}
    for memory_id in [i for i in disk.files if purged and i in purged]:
        back = disk.files.pop(memory_id)
        disk.problems.append(store.forgotten_problem(memory_id, (purged or {})[memory_id], back.path))
    plan = plan_changes({i: Located(f.path, f.digest) for i, f in disk.files.items()}, indexed)
    vector_hashes = indexes.vectors.hashes(disk.files) if targeted else indexes.vectors.hashes()
    touched = set(plan.added) | set(plan.modified) | set(plan.moved)
    repair: list[str] = []
    if not targeted:
        # Parts lost or torn while the catalog kept its rows (a crash, a deleted
        # folder) are redone too: missing vectors, or a full-text index out of step.
        repair = [i for i in disk.files if i in indexed and i not in touched and i not in vector_hashes]
        if indexes.fulltext.count() != len(indexed):
            repair = [i for i in disk.files if i in indexed and i not in touched]
    return _Survey(disk, plan, vector_hashes, repair)


def _entries(root: Path, survey: _Survey) -> tuple[dict[str, tuple[Entry, str]], int]:
    """The (entry, digest) of every memory to index again, and how many files were parsed in all."""
    plan, disk = survey.plan, survey.disk
    parsed = disk.parsed
    entries: dict[str, tuple[Entry, str]] = {}
    for memory_id in (*plan.added, *plan.modified, *plan.moved, *survey.repair):
        file = disk.files[memory_id]
        entry = file.entry
        if entry is None:
            try:
                entry = store.read_entry(root, file.path)
            except MemoryFileError as exc:
                disk.problems.append(exc)
                continue
            parsed += 1
        entries[memory_id] = (entry, file.digest)
    return entries, parsed


def _batch(root: Path, indexes: Indexes, survey: _Survey) -> _Batch:
    """Documents, rows and the texts to embed of the touched memories and of the turns beside them."""
    entries, parsed = _entries(root, survey)
    around, extra = _thread_changes(root, indexes.catalog, entries, survey.plan.deleted, survey.disk)
    vector_hashes = survey.vector_hashes
    if extra:
        vector_hashes.update(indexes.vectors.hashes(extra))
    entries.update(extra)
    batch = _Batch([], [], [], parsed + len(extra))
    for memory_id, (entry, digest) in entries.items():
        context = threads.context_of(memory_id, around)
        batch.documents.append(fulltext_document(entry, digest, context))
        batch.rows.append(row_from_entry(entry, digest))
        texts = embedding_texts(entry.memory, indexes.embedder, context)
        fingerprint = text_fingerprint(texts)
        if vector_hashes.get(memory_id) != fingerprint:
            batch.pending.append(Pending(memory_id, fingerprint, tuple(texts)))
    return batch


def _update_pages(root: Path, indexes: Indexes, plan: ChangeSet, rows: Sequence[CatalogRow],
                  stat_changed: bool) -> None:
    """Rewrite the pages when what they list changed (or may have: ``stat_changed``)."""
    before = indexes.catalog.get(row.id for row in rows) if rows else {}
    # Pages list titles and summaries: an edit to a body alone leaves them as they are.
    listed_change = bool(plan.added or plan.deleted or plan.moved) or any(
        row.id not in before or listed(before[row.id]) != listed(row) for row in rows
    )
    # Files whose stat changed while no record did: touched, or changed back since a sync that was cut
    # short after writing its pages; the pages are compared again (and rewritten only when they differ).
    unsettled = plan.empty and stat_changed
    if listed_change or unsettled or not (root / store.INDEX_PAGE).exists():
        # Before the catalog commit, from the rows about to be committed: a crash in between leaves
        # the catalog as it was, so the next sync plans the same changes and writes the pages again.
        listing = {row.id: row for row in indexes.catalog.listing()}
        listing.update((row.id, row) for row in rows)
        for memory_id in plan.deleted:
            listing.pop(memory_id, None)
        write_pages(root, listing.values())


def sync(root: Path, indexes: Indexes, *, full: bool = False, progress: Progress | None = None,
         paths: Iterable[str] | None = None, vectors: bool = True,
         purged: Mapping[str, str] | None = None) -> SyncReport:
    """Bring every index in line with the files (the caller holds the index lock).

    With ``paths`` (relative paths that changed), only those files are looked
    at; otherwise the whole vault is walked (cheaply: unchanged stats are not read).
    Order of writes: the vector queue, full text, pages, the detail cache, catalog, stat cache,
    then (with ``vectors``) the vectors of the queue.  The catalog is the record sync plans
    against, so a crash before its commit just re-plans the rest; a walk of the whole vault
    removes the temp files such a crash left.  Without ``vectors`` the memories are searchable
    by their words at once and wait for their vectors (:meth:`Indexes.fill`).  A file holding a
    ``purged`` id (id -> purge event: forgotten for good, then back from git or a backup) is never
    indexed; it is reported among the problems.
    """
    held: dict[str, tuple[str, str]] = {}  # of several files with one id, the one indexed keeps it, rebuilt or not
    if full:
        with contextlib.suppress(IndexStale):
            held = indexes.catalog.records()
        indexes.rebuild()
    if paths is None or full:
        _remove_temps(root, indexes.state_dir)
    cache_path = indexes.state_dir / STAT_CACHE
    old_cache = load_stat_cache(cache_path)
    survey = _survey(root, indexes, old_cache, None if full else paths, held, purged)
    plan, disk = survey.plan, survey.disk
    batch = _batch(root, indexes, survey)
    indexes.vectors.queue(batch.pending, plan.deleted)
    if batch.documents or plan.deleted:
        indexes.fulltext.apply(batch.documents, plan.deleted)
    _update_pages(root, indexes, plan, batch.rows, disk.stat_cache != old_cache)
    # Before the catalog too: the detailed summaries of memories gone (all of them, on a walk of the whole vault).
    if paths is None or full:
        details.prune(root, disk.files)
    elif plan.deleted:
        details.drop(root, plan.deleted)
    if batch.rows or plan.deleted:
        indexes.catalog.apply(batch.rows, plan.deleted)
    # After the catalog: derived from it, and refilled from it when lost.
    if indexes.keeps_vocabulary:
        update_vocabulary(indexes, batch.rows)
    if disk.stat_cache != old_cache:
        write_atomic(cache_path, json.dumps(disk.stat_cache, sort_keys=True, separators=(",", ":")))
    report = SyncReport(plan, batch.parsed, 0, disk.problems, indexes.notice, queued=len(batch.pending))
    if vectors:
        report.filled(indexes.fill(progress=progress))
    else:
        report.pending = indexes.vectors.pending_count()
    return report
