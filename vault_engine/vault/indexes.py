"""The search indexes of a vault: brought in line with the files, and searched (rebuilt when unreadable)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import store
from ..errors import IndexStale, VaultError
from .ports import Open as Vault

if TYPE_CHECKING:
    from ..index.embedder import Embedder
    from ..index.sync import SyncReport
    from ..retrieval.searcher import Searcher, SearchRequest, SearchResult


def sync(vault: Vault, *, full: bool = False, embedder: Embedder | None = None,
         paths: Iterable[str] | None = None) -> SyncReport:
    """Bring the search indexes in line with the files (only ``paths``, relative, when given)."""
    from ..index.sync import Indexes, sync

    model = embedder if embedder is not None else vault.embedder()
    with vault.index_lock.hold():
        indexes = Indexes(vault.root, model, vocabulary=vault.config.retrieval.weight_expansion > 0)
        try:
            try:
                return sync(vault.root, indexes, full=full, progress=vault.progress, paths=paths)
            except IndexStale as exc:  # damage found past the open: rebuild from the files
                indexes.notice = f"notice: {exc.one_line()}"
                return sync(vault.root, indexes, full=True, progress=vault.progress)
        finally:
            indexes.close()


def search(vault: Vault, request: SearchRequest) -> SearchResult:
    """Hybrid search; builds the indexes first when they are missing or unreadable."""

    notice = None
    if not (vault.root / store.STATE_DIR / "catalog.sqlite").exists():
        report = vault.sync()
        notice = report.notice or f"notice: built the search indexes ({report.plan.summary()})"
    elif _unbuilt(vault):  # being built, or left empty by a rebuild cut short (a full disk, no model, Ctrl-C)
        if vault.index_lock.held():  # being built right now: a reader never waits for it
            notice = ("notice: the search indexes are being built by another memvault process; "
                      "results may be incomplete until it is done")
        else:  # the files decide
            report = vault.sync()
            if not report.plan.empty:
                built = f"notice: the search indexes were empty; built them ({report.plan.summary()})"
                notice = report.notice or built
    for attempt in (1, 2, 3):
        problem = None
        try:
            result = _search_once(vault, request)
        except IndexStale as exc:
            if attempt == 3:
                raise
            problem = exc.one_line()
        if problem is None:
            if notice:
                result.notice = f"{notice}; {result.notice}" if result.notice else notice
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
    searcher = vault._searcher
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

    searcher = vault._searcher
    if searcher is not None and not searcher.is_current():
        searcher.close()
        searcher = vault._searcher = None
    if searcher is None:
        searcher = vault._searcher = Searcher(vault.root, vault.config, vault.embedder())
    return searcher


def _search_once(vault: Vault, request: SearchRequest) -> SearchResult:
    searcher = vault.searcher()
    try:
        return searcher.search(request)
    except IndexStale:
        searcher.close()
        vault._searcher = None
        raise
