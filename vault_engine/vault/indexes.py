"""The search indexes of a vault: brought in line with the files, and searched (rebuilt when unreadable)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .. import locks, store
from ..errors import IndexStale, VaultBusy, VaultError
from ..patterns import lazy_pattern
from .ports import Open as Vault

if TYPE_CHECKING:
    from ..format.memory import Memory
    from ..index.embedder import Embedder
    from ..index.embedding_cache import CacheStatus, EmbeddingCache
    from ..index.filling import FillReport, Progress
    from ..index.sync import Indexes, SyncReport
    from ..retrieval.searcher import Searcher, SearchQuery, SearchResult


def _cache(vault: Vault) -> EmbeddingCache:
    """The embedding cache of this user (``[cache]``); bound 0 when it is turned off."""
    from ..config import cache_place
    from ..index import notices
    from ..index.embedding_cache import EmbeddingCache

    settings = vault.config.cache
    place = cache_place(settings, vault.root)
    if place.refused is not None:
        notices.note("cache-folder", f"notice: {place.refused}")
    return EmbeddingCache(place.folder, max(0, settings.embeddings_mb) * 1_000_000)


def embedding_cache(vault: Vault) -> EmbeddingCache | None:
    """The embedding cache a sync reads and fills, or None when it is turned off."""
    return _cache(vault) if vault.config.cache.embeddings_mb > 0 else None


def embedding_cache_status(vault: Vault) -> CacheStatus:
    """What the embedding cache holds (a cache turned off reports its folder and what it still holds)."""
    from ..index.model_graph import graph_folder, graphs_in

    cache = _cache(vault)
    try:
        state = cache.status()
    finally:
        cache.close()
    return dataclasses.replace(state, graphs=graphs_in(graph_folder(cache.folder)))


def forget_vectors(vault: Vault, memory: Memory) -> int:
    """Delete from the embedding cache every vector made of ``memory``'s texts (a permanent forget); how many.

    The texts are the ones a sync embeds for it (:func:`~vault_engine.index.derived.embedding_texts`),
    read as the cache keys them; each model's vector of them goes.
    """
    from ..index.derived import embedded_parts, embedding_texts, parse_span
    from ..index.embedding_cache import model_text

    cache = _cache(vault)
    try:
        if not cache.status().vectors:  # nothing cached: no model loaded to find what is not there
            return 0
    finally:
        cache.close()
    window = vault.config.embedding.max_tokens
    texts: list[str] = []
    for lane, _, whole in embedding_texts(memory, vault.embedder()):
        for text in embedded_parts(lane, whole):
            span = parse_span(text)
            if span is not None and span[1]:  # keyed as it is, beside its host and what stood in for it
                host, ranges = span
                texts += [text, model_text(host, window), *(model_text(host[a:b], window) for a, b in ranges)]
            else:
                texts.append(model_text(text, window))
    cache = _cache(vault)
    try:
        return cache.forget(texts)
    finally:
        cache.close()


def clear_embedding_cache(vault: Vault) -> int:
    """Empty the embedding cache (turned off or not); how many vectors it held."""
    return _cache(vault).clear()


def open_indexes(vault: Vault, embedder: Embedder | None = None, *, downgrade: bool = False) -> Indexes:
    """The vault's indexes for writing (the caller holds the index lock and closes them); with
    ``downgrade``, parts a newer memvault wrote are rebuilt for this one instead of refused."""
    from ..index.sync import Indexes

    return Indexes(vault.root, embedder if embedder is not None else vault.embedder(),
                   vocabulary=vault.config.retrieval.weight_expansion > 0, cache=embedding_cache(vault),
                   max_tokens=vault.config.embedding.max_tokens, downgrade=downgrade)


FILL_ROUND = 256  # memories embedded per hold of the index lock: other syncs get their turn between rounds
INLINE_FILL = 64  # a write that leaves at most this many memories waiting embeds them before it returns
MADE_WAY_POLL = 0.25  # seconds between looks of a background fill that made way: is the lock still wanted?
_BEAT = lazy_pattern(r"vectors (\d+)/(\d+)")  # what a fill's beats say (see _Round)


def sync(vault: Vault, *, full: bool = False, embedder: Embedder | None = None,
         paths: Iterable[str] | None = None, vectors: bool = True) -> SyncReport:
    """Bring the search indexes in line with the files (only ``paths``, relative, when given).

    The catalog and the full text first, under the index lock; then (with ``vectors``) the
    vectors of what changed, a round at a time (:func:`fill`).  Without ``vectors`` the changed
    memories are searchable by their words and wait for their vectors.

    Another process's sync is waited for while it makes progress; a background fill makes way
    (it stops at the model's next batch), and this sync carries its work on: the bar shows the
    fill's progress, first the other's and then its own."""
    from ..index.sync import sync

    purged = vault.purged()  # files back from git or a backup: forgotten, not indexed
    shown = _Shown(vault.progress)
    with vault.index_lock.wanting():  # for all of it: a fill that made way does not come back in between
        with vault.index_lock.hold(on_wait=shown.other):
            indexes = open_indexes(vault, embedder, downgrade=full)
            try:
                try:
                    report = sync(vault.root, indexes, full=full, paths=paths, vectors=False, purged=purged)
                except IndexStale as exc:  # damage found past the open: rebuild from the files
                    indexes.notice = f"notice: {exc.one_line()}"
                    report = sync(vault.root, indexes, full=True, vectors=False, purged=purged)
            finally:
                _close(indexes)
        if vectors and report.pending:
            report.filled(fill(vault, embedder=embedder, progress=shown.own if vault.progress else None))
    return report


def sync_soon(vault: Vault, *, paths: Iterable[str] | None = None) -> SyncReport:
    """Sync for a command that must not wait long: the full text now; the vectors now when few
    memories wait for them (``INLINE_FILL``) or nothing fills in the background, else by the
    vault's background filler (``vault.fill_in_background``)."""
    report = vault.sync(paths=paths, vectors=False)
    if report.pending and (report.pending <= INLINE_FILL or vault.fill_in_background is None):
        report.filled(fill(vault, progress=vault.progress))
    elif report.pending and vault.fill_in_background is not None:
        vault.fill_in_background()
    return report


def fill(vault: Vault, *, embedder: Embedder | None = None, progress: Progress | None = None,
         stop: Callable[[], bool] | None = None, rounds: int | None = None, yielding: bool = False) -> FillReport:
    """Embed the memories waiting for their vectors, ``FILL_ROUND`` at a time, each round under
    the index lock (at most ``rounds`` rounds; ``stop`` is asked before each batch of the model).
    ``progress`` gets (memories done, memories waiting at the start); so do the lock's waiters,
    as its beats.

    ``yielding`` (a background fill): whenever another process wants the lock, stop at the
    model's next batch and return (``stopped``: the memories not done wait, what was embedded
    is in the embedding cache), so that a sync never waits for a whole round of long texts."""
    from ..index.filling import FillReport

    lock = vault.index_lock

    def halt() -> bool:
        return (yielding and lock.wanted()) or (stop is not None and stop())

    shown = _Shown(progress)
    report = FillReport()
    total: int | None = None
    done = 0
    while rounds is None or rounds > 0:
        if halt():
            report.stopped = True
            break
        with lock.hold(announce=not yielding):
            indexes = open_indexes(vault, embedder)
            try:
                waiting = indexes.vectors.pending_count()
                total = waiting if total is None else max(total, done + waiting)
                part = indexes.fill(max_memories=FILL_ROUND, stop=halt,
                                    progress=_Round(lock, shown, done, total, min(waiting, FILL_ROUND)))
            finally:
                _close(indexes)
        report.add(part)
        done += part.memories
        if total:
            shown(min(done, total) if part.remaining else total, total)
        if part.stopped or part.remaining == 0 or part.memories == 0:
            break
        if rounds is not None:
            rounds -= 1
    return report


class _Shown:
    """A progress bar fed only what changed; for a sync, first another process's fill (its
    beats, ``other``), then its own carried on from where that one left the queue (``own``)."""

    def __init__(self, bar: Progress | None):
        self.bar = bar
        self.whole = 0  # the memories the other fill had to do
        self.last: tuple[int, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is not None and total > 0 and (done, total) != self.last:
            self.last = (done, total)
            self.bar(done, total)

    def other(self, note: str) -> None:
        found = _BEAT.fullmatch(note)
        if found is not None:
            self.whole = int(found[2])
            self(int(found[1]), self.whole)

    def own(self, done: int, total: int) -> None:
        before = max(0, self.whole - total)  # what the other stored before it made way
        self(before + done, before + total)


class _Round:
    """The progress of one round of a fill (texts embedded of the round's), as memories done of
    the whole fill: shown, and said to the lock's waiters as a beat."""

    def __init__(self, lock: locks.WriterLock, shown: _Shown, before: int, total: int, size: int):
        self.lock, self.shown, self.before, self.total, self.size = lock, shown, before, total, size
        lock.beat(f"vectors {before}/{total}")

    def __call__(self, texts: int, of: int) -> None:
        done = self.before + (self.size * texts // of if of else 0)
        self.lock.beat(f"vectors {done}/{self.total}")
        if done < self.total:  # the round's end is shown once its vectors are stored
            self.shown(done, self.total)


def _close(indexes: Indexes) -> None:
    indexes.close()
    if indexes.cache is not None:
        indexes.cache.close()


def run_filler(vault: Vault) -> None:
    """Be the vault's background filler: embed what waits, round by round, until nothing does
    (a write meanwhile queues more, which this filler takes too); exit at once when another
    filler runs.  It makes way for every process that wants the index lock (a sync, a write, a
    search that builds the indexes) and carries on once none does: what is left then."""
    from ..index.sync import FILL_LOCK, FILL_LOG, vectors_waiting

    state = vault.root / store.STATE_DIR
    while True:
        with locks.WriterLock(state / FILL_LOCK, 0).try_hold() as held:
            if not held:
                return
            while fill(vault, yielding=True).stopped:
                while vault.index_lock.wanted():
                    time.sleep(MADE_WAY_POLL)
            (state / FILL_LOG).unlink(missing_ok=True)  # done: an earlier failure is no longer news
        # A write that queued more just as this filler finished saw the lock held and started none.
        if not vectors_waiting(state):
            return


def spawn_filler(vault: Vault) -> bool:
    """Start ``memvault sync --background`` for this vault, detached, unless a background filler
    already runs; whether one was started.  It embeds what waits and exits; its errors go to
    ``.memvault/fill.log``."""
    import subprocess
    import sys

    from ..index.sync import FILL_LOCK, FILL_LOG

    if locks.WriterLock(vault.root / store.STATE_DIR / FILL_LOCK, 0).held():
        return False
    log = vault.root / store.STATE_DIR / FILL_LOG
    with open(log, "ab") as err:
        subprocess.Popen(
            [sys.executable, "-m", "vault_engine", "--vault", str(vault.root), "sync", "--background"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
            close_fds=True)
    return True


READ_WAIT = 1.0  # seconds a read waits for another process's sync before it answers from the indexes as they are


def bring_current(vault: Vault) -> str | None:
    """Index what changed on disk since the last sync before a read: the words at once, the vectors of
    an edited memory dropped and queued (see :func:`sync_soon`).  Files whose stat alone changed are
    recorded as they are.  A notice when the indexes could not be brought in line (another process
    holds them longer than ``READ_WAIT``, or the sync failed); None otherwise."""
    feed = vault.change_feed
    if feed is not None and not feed.dirty():
        return None  # the kernel saw no memory file change since the last walk (index/change_feed.py)
    current = False
    try:
        notice = _bring_current(vault)
        current = notice is None
        return notice
    finally:
        if feed is not None and not current:
            feed.mark_dirty()  # what this walk found is not all indexed: the next read walks again


def _bring_current(vault: Vault) -> str | None:
    from ..index.disk import STAT_CACHE
    from ..index.freshness import RecordedStats, compare, settle

    state = vault.root / store.STATE_DIR
    if vault.kept_stats is None:
        vault.kept_stats = RecordedStats(state / STAT_CACHE)
    cache = vault.kept_stats.load() if (state / "catalog.sqlite").exists() else {}
    if not cache:
        if vault.change_feed is not None:
            vault.change_feed.mark_dirty()  # nothing indexed yet: the search builds, the next read looks again
        return None  # nothing indexed yet, or a build under way or cut short: the search decides
    found = compare(vault.root, cache)
    if found.empty and not found.settled:
        return None
    if found.empty:
        with vault.index_lock.try_hold() as held:
            if held:
                settle(vault.root, found.settled)
        return None
    try:
        with vault.index_lock.hold(timeout=READ_WAIT, patient=False):
            sync_soon(vault, paths=found.paths)
    except VaultBusy:
        return (f"notice: {_files(len(found.paths))} changed since the search indexes were updated; another "
                "memvault process is updating them, so results may be out of date")
    except VaultError as exc:
        return f"warning: search indexes not updated ({exc.one_line()}); run `memvault sync`"
    return None


def _files(count: int) -> str:
    return "1 file" if count == 1 else f"{count} files"


def search(vault: Vault, request: SearchQuery) -> SearchResult:
    """Hybrid search over the files as they are now; builds the indexes first when they are missing or
    unreadable, and indexes what changed since the last sync (:func:`bring_current`)."""

    notice = bring_current(vault)
    kept = vault.kept_searcher
    ready = kept if kept is not None and kept.indexed and kept.is_current() else None
    # A long-lived process whose indexes are built and unchanged skips the checks: they would all pass.
    if ready is None:
        notice = _build_if_missing(vault) or notice
    for attempt in (1, 2, 3):
        problem = None
        try:
            result = _search_once(vault, request, ready if attempt == 1 else None)
        except IndexStale as exc:
            if attempt == 3:
                raise
            problem = exc.one_line()
        if problem is None:
            from ..index import notices

            # What a cache could not do on the way (said once per process: a server's next answers do not repeat it).
            said = [line for line in (*notices.take(), notice, result.notice) if line]
            result.notice = "; ".join(said) if said else None
            return result
        # Unreadable or from another version: rebuild from the files (outside the
        # handler, so nothing of the failed attempt is held open), then search again.
        # A sync first: it drops just the stale part and refills it, keeping the vectors
        # of unchanged text (a full rebuild re-embeds the whole vault); then a full one.
        report = vault.sync(full=attempt == 2)
        notice = f"notice: {problem}; rebuilt ({report.plan.summary()})"
    raise AssertionError("unreachable")


def _unbuilt(vault: Vault) -> bool:
    """Whether the catalog exists but lists nothing (an empty vault, or a rebuild cut short)."""
    searcher = vault.kept_searcher
    if searcher is not None and searcher.is_current():
        return searcher.indexed == 0
    from ..index.catalog import Catalog

    try:
        catalog = Catalog(vault.root / store.STATE_DIR / "catalog.sqlite")
        try:
            return catalog.count() == 0
        finally:
            catalog.close()
    except VaultError:  # unreadable: the search that follows rebuilds it
        return False


def searcher(vault: Vault) -> Searcher:
    """A searcher kept open while the indexes stay as they were (in a long-lived process,
    repeated searches and context deliveries pay the loading once)."""
    from ..retrieval.searcher import Searcher

    searcher = vault.kept_searcher
    if searcher is not None and not searcher.is_current():
        searcher.close()
        searcher = vault.kept_searcher = None
    if searcher is None:
        searcher = vault.kept_searcher = Searcher(vault.root, vault.config, vault.embedder(), embedding_cache(vault))
    return searcher


def _build_if_missing(vault: Vault) -> str | None:
    """Build the indexes when they are missing, or empty and nobody is building them; the notice
    that says what happened (None: they were there)."""
    if not (vault.root / store.STATE_DIR / "catalog.sqlite").exists():
        report = sync_soon(vault)
        return report.notice or f"notice: built the search indexes ({report.plan.summary()})"
    if not _unbuilt(vault):
        return None
    # Being built, or left empty by a rebuild cut short (a full disk, no model, Ctrl-C).
    if vault.index_lock.held():  # being built right now: a reader never waits for it
        return ("notice: the search indexes are being built by another memvault process; "
                "results may be incomplete until it is done")
    report = sync_soon(vault)  # the files decide
    if report.plan.empty:
        return None
    return report.notice or f"notice: the search indexes were empty; built them ({report.plan.summary()})"


def _search_once(vault: Vault, request: SearchQuery, ready: Searcher | None = None) -> SearchResult:
    """One search with ``ready`` (a kept searcher known current) or the vault's searcher."""
    searcher = ready if ready is not None else vault.searcher()
    try:
        return searcher.search(request)
    except IndexStale:
        searcher.close()
        vault.kept_searcher = None
        raise
