"""Hybrid search over the derived indexes, as a short pipeline of stages.

One query runs two kinds of lane (:mod:`lanes`): Tantivy BM25 over title, summary, trigger,
body and tags, and cosine similarity over the summary, trigger and body-chunk vectors (the dual
path); in a vault with conversations the feedback lane (:mod:`feedback`) ranks their candidates
again.  Lanes are fused by weighted RRF normalised to (0, 1], then boosted by recency, event
time, proof, trust and usefulness (:mod:`fusion`), and the best are re-ranked (:mod:`rerank`).
Filters (project, path selectors, type, trust; :mod:`filters`) hold in every lane before
ranking; superseded memories never appear; trashed ones are never hits but, when they match
strongly and would clear the relevance floor themselves, are offered for revival (not when the
memory holding their content now, the survivor of a merge, is a hit).  Linked neighbours may
join at a share of the linking hit's score (:mod:`neighbours`), true duplicates fold into the
member a user would trust, hits that state the same with other values are placed side by side,
and the list is cut to the limit and the character budget (:mod:`collapse`).  Every hit
explains itself (:mod:`explain`).

A :class:`Searcher` keeps the indexes open and the filter masks cached, so a
long-lived process (the watcher, the MCP server, a benchmark) pays the
loading once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import store
from ..config import VaultConfig
from ..errors import IndexStale, InvalidInput
from ..format import threads
from ..format.memory import TYPES
from ..index import segment
from ..index.catalog import Catalog, CatalogRow
from ..index.embedder import Embedder
from ..index.embedding_cache import EmbeddingCache, KeptVectors
from ..index.filling import built_share
from ..index.fulltext import FullTextIndex, query_terms
from ..index.vectors import VectorStore
from ..index.vocabulary import Vocabulary
from . import lanes, pseudo_relevance, rarity, relevance, rerank, subjects
from .collapse import collapse, cut
from .filters import Columns, Filter
from .fusion import Fused, boosted_score, fuse, fusion_input, prune
from .hits import make_hit
from .neighbours import with_neighbours
from .request import Hit, SearchQuery, SearchResult, allowed_trust

__all__ = ["Hit", "SearchQuery", "SearchResult", "Searcher"]  # the request types, for callers that search

MAX_REVIVABLE = 3
EXTERNAL = "external"  # the trust level a default search leaves out
Positions = dict[str, dict[str, int]]  # lane -> memory id -> 1-based rank


MAX_UNHEARD = 5  # words named in a notice as held by no memory


def unheard_words(fulltext: FullTextIndex, query: str) -> list[str]:
    """The query's content words, as written, that no memory holds where its evidence is read."""
    words = relevance.content_words(query)
    _count, held = fulltext.frequencies({s for _w, stems in words for s in stems}, relevance.EVIDENCE_FIELDS)
    return list(dict.fromkeys(word for word, stems in words if not any(held.get(s) for s in stems)))


def vectors_building(pending: int, indexed: int) -> str:
    """The notice of a search while vectors are being built."""
    share = built_share(indexed, pending)
    plural = "memory waits" if pending == 1 else "memories wait"
    return (f"vectors {share}% built ({pending} {plural} for theirs: found by their words only, "
            "until `memvault sync`, `watch`, `serve` or `mcp` has embedded them)")


def _explain(hit: Hit, reason: str, unread: bool) -> None:
    """Add a hit's relevance verdict to its reasons: after the lanes, fusion and boosts; before what
    joined or folded the hit."""
    if unread:
        reason += " (the model does not read the query's script: its meaning is not counted)"
    at = next((n + 1 for n in range(len(hit.why) - 1, -1, -1)
               if hit.why[n].startswith(("boosts:", "re-ranked:"))), len(hit.why))
    hit.why.insert(at, reason)


def _meaning(found: lanes.Lanes) -> dict[str, float]:
    """Each candidate's closest cosine with the vector query, over the vector lanes (not the
    feedback lane's: that one is with the moved query)."""
    out: dict[str, float] = {}
    for lane, sims in found.similarity.items():
        if lane == "feedback":
            continue
        for i, v in sims.items():
            if v > out.get(i, -1.0):
                out[i] = v
    return out


class Searcher:
    """Searches one vault's indexes; cheap to query many times."""

    def __init__(self, root: Path, config: VaultConfig, embedder: Embedder, cache: EmbeddingCache | None = None):
        state = root / store.STATE_DIR
        self.root = root
        self.settings = config.retrieval
        self._vocabulary: Vocabulary | None = None
        self.embedder = embedder
        # What a request that keeps its vector embeds with (see SearchQuery.keep_vector).
        self._kept: Embedder = embedder if cache is None else KeptVectors(embedder, cache, config.embedding.max_tokens)
        self.catalog = Catalog(state / "catalog.sqlite")
        try:
            self.vectors = VectorStore(state / "vectors.sqlite", embedder.name, embedder.dim)
            self.fulltext = FullTextIndex(state / "fulltext")
        except BaseException:
            self.catalog.close()
            if hasattr(self, "vectors"):
                self.vectors.close()
            raise
        self._state = state
        try:
            self._check_parts()
        except BaseException:
            self.close()
            raise
        self._signature = self._current()
        self._columns: Columns | None = None
        self._masks: dict[tuple[Any, ...], tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]] = {}
        self._row_cache: dict[str, CatalogRow] = {}
        self._standing: dict[str | None, list[CatalogRow]] = {}
        self._around: dict[str, tuple[str | None, str | None]] | None = None
        self._common_tags: frozenset[str] | None = None
        self._subjects: dict[str, str] | None = None
        self._inferred: subjects.Inferred | None = None

    def close(self) -> None:
        self.vectors.close()
        self.catalog.close()
        if isinstance(self._kept, KeptVectors):
            self._kept.cache.close()
        if self._vocabulary is not None:
            self._vocabulary.close()

    def _check_parts(self) -> None:
        """Every memory has a catalog row, a full-text document and vectors: parts that disagree on
        whether anything is indexed (one deleted or emptied behind the engine's back) are stale, or
        a search would silently lose a lane (or fail)."""
        self.pending = self.vectors.pending_count()  # memories whose vectors are still being computed
        counts = {"catalog": self.catalog.count(), "full-text index": self.fulltext.count(),
                  "vector index": self.vectors.count() + self.pending}
        self.indexed = counts["catalog"]
        if len({count > 0 for count in counts.values()}) > 1:
            empty = ", ".join(name for name, count in counts.items() if not count)
            raise IndexStale(f"the search indexes disagree ({empty} empty, the others not); they will be rebuilt",
                             path=self._state)

    def _current(self) -> tuple[object, ...]:
        files = []
        for name in ("catalog.sqlite", "vectors.sqlite", "fulltext/meta.json"):
            try:
                info = (self._state / name).stat()
                files.append((info.st_ino, info.st_mtime_ns if name.endswith(".json") else 0))
            except OSError:
                files.append((0, 0))
        return (self.catalog.data_version(), self.vectors.data_version(), *files)

    def is_current(self) -> bool:
        """Whether the indexes are as they were when this searcher loaded them (no other
        connection committed, no file was replaced): a long-lived searcher checks before reuse."""
        try:
            return self._current() == self._signature
        except IndexStale:
            return False

    def refresh(self) -> None:
        """Forget cached state after the indexes changed (e.g. after a sync)."""
        self.fulltext.index.reload()
        self.vectors.invalidate()
        self._columns = None
        self._masks.clear()
        self._row_cache.clear()
        self._standing.clear()
        self._around = None
        self._common_tags = None
        self._subjects = None
        self._inferred = None

    def standing(self, project: str | None) -> list[CatalogRow]:
        """The catalog's standing rows of a scope (see :meth:`Catalog.standing`), cached."""
        if project not in self._standing:
            self._standing[project] = self.catalog.standing(project)
        return self._standing[project]

    def rows(self, ids: set[str]) -> dict[str, CatalogRow]:
        """Catalog rows of ``ids``, decoded once per searcher."""
        missing = [i for i in ids if i not in self._row_cache]
        if missing:
            if len(self._row_cache) > 50_000:
                self._row_cache.clear()
            self._row_cache.update(self.catalog.get(missing))
        return {i: self._row_cache[i] for i in ids if i in self._row_cache}

    # ------------------------------------------------------------ what the stages read, cached

    def _cols(self) -> Columns:
        if self._columns is None:
            self._columns = Columns(self.catalog, self.vectors.ids())
        return self._columns

    def _mask(self, flt: Filter) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """(catalog mask, vector mask) of a filter, cached."""
        key = flt.key()
        if key not in self._masks:
            if len(self._masks) > 32:
                self._masks.clear()
            cols = self._cols()
            mask = cols.mask(flt)
            self._masks[key] = (mask, cols.vector_mask(mask))
        return self._masks[key]

    def _thread_links(self) -> dict[str, tuple[str | None, str | None]]:
        """Each turn's (previous, next) memory in its thread, cached until the indexes change."""
        if self._around is None:
            around = threads.neighbours_by_id(self.catalog.threads())
            self._around = around
        return self._around

    def _subjects_by_stem(self, query: str) -> dict[str, str]:
        """The stemmed words of the vault's subjects (see :class:`relevance.QueryWords`), each with
        the tag or name it comes from: the tags people gave its memories (cached) and the names its
        untagged memories lead with that ``query`` writes as names (:mod:`subjects`)."""
        if self._subjects is None:
            self._subjects = {stem: tag for tag in sorted(self.catalog.given_tags(), reverse=True)
                              for stem in rerank.stems(tag)}  # the first tag in order wins a shared stem
        named = self._inferred_subjects().named_by(query).written.values()
        if not named:
            return self._subjects
        inferred = {stem: name for name in sorted(named, reverse=True) for stem in rerank.stems(name)}
        return {**inferred, **self._subjects}

    def _inferred_subjects(self) -> subjects.Inferred:
        """The subjects the untagged memories lead with (see :mod:`subjects`), cached."""
        if self._inferred is None:
            total, titles = self.catalog.untagged_titles()
            self._inferred = subjects.Inferred.of(titles, total, self.settings.drop_tag_share)
        return self._inferred

    def _subjects_of(self, row: CatalogRow, inferred: subjects.Inferred) -> tuple[str, ...]:
        """The subjects of a memory: the tags a person or an importer gave it (an inferred
        memory's tags are the engine's choice, and name none), else, untagged, the one its title
        leads with among ``inferred`` (those the query writes as names)."""
        if row.tags:
            return () if row.authority == "inferred" else row.tags
        found = inferred.subject_of(row.title)
        return (found,) if found else ()

    def _weighed_names(self, query: str, names: tuple[str, ...]) -> tuple[str, ...]:
        """Those of the ``names`` left out of the vector query that the tag feature weighs: the
        vault's subjects (an episode's tags, the compacter's, are none, and its names stay words
        to cover)."""
        if not names:
            return names
        known = {subject.casefold() for subject in self._subjects_by_stem(query).values()}
        return tuple(name for name in names if name.casefold() in known)

    def _tags_many_carry(self) -> frozenset[str]:
        """The tags at least ``drop_tag_share`` of the memories carry, and the names that many
        lead with untagged (:mod:`subjects`), case folded, cached."""
        if self._common_tags is None:
            self._common_tags = frozenset(
                {*(tag for tag, share in self.catalog.tag_shares().items() if share >= self.settings.drop_tag_share),
                 *self._inferred_subjects().shares})
        return self._common_tags

    def _carried(self, terms: frozenset[str], ids: list[str]) -> dict[str, frozenset[str]]:
        """Which of the query's stemmed ``terms`` each of ``ids`` carries in its own words (the
        re-ranker's ``terms`` feature), read from the full-text index."""
        by_term = self.fulltext.carriers(sorted(terms), ids, rerank.TERM_FIELDS)
        return {i: frozenset(t for t, carriers in by_term.items() if i in carriers) for i in ids}

    def _vocabulary_store(self) -> Vocabulary | None:
        """The vault's vocabulary, when sync has built one (search never creates it)."""
        if self._vocabulary is None:
            path = self._state / "vocabulary.sqlite"
            if not path.exists():
                return None
            try:
                self._vocabulary = Vocabulary(path, self.embedder.name, self.embedder.dim)
            except IndexStale:
                return None  # the next sync starts it afresh
        return self._vocabulary

    def _active(self, rankings: Mapping[str, list[str]]) -> dict[str, list[str]]:
        """``rankings`` without trashed memories."""
        cols = self._cols()
        return {lane: [i for i in ids if not cols.trashed[cols.position[i]]] for lane, ids in rankings.items()}

    # ------------------------------------------------------------ search

    def search(self, request: SearchQuery, now: datetime | None = None) -> SearchResult:
        flt, limit = self._read_request(request)
        moment = now or datetime.now(UTC)
        found = self._find(request.query, flt, max(self.settings.candidates, limit * 3), request.keep_vector)
        positions = {lane: {memory_id: n for n, memory_id in enumerate(ids, 1)}
                     for lane, ids in found.rankings.items()}
        hits, best = self._rank(request.query, found, positions, flt, limit, moment, shown=not request.candidates)
        notice, left_out = None, 0
        if hits and not best.clears:
            notice = f"no memory matches closely: {best.describe()}"
            unheard = unheard_words(self.fulltext, request.query)
            if unheard:  # a typo ("stagng databse port") is matched by no word and by little meaning
                notice += f"; no memory has the word{'s' if len(unheard) > 1 else ''} " + \
                    ", ".join(f"'{word}'" for word in unheard[:MAX_UNHEARD])
            if request.weak:
                notice += "; the closest are listed, marked weak"
            else:
                plural = "match" if len(hits) == 1 else "matches"
                notice += f"; {len(hits)} weak {plural} left out"
                left_out, hits = len(hits), []
        elif hits and not best.floored:
            notice = best.describe_subjects()
        if not hits and request.count_external and not request.trust and EXTERNAL not in flt.trust:
            # Nothing to list, but what a tool's output said may be what was asked for: say it is there.
            outside = self._external_matches(request.query, flt, limit, moment)
            if outside:
                plural = "memory" if outside == 1 else "memories"
                external = (f"{outside} {plural} from external sources match, left out: they are searched "
                            "only when asked for (trust external)")
                notice = f"{external}; {notice}" if notice else external  # a weak-hits hint stays last
        if self.pending:  # a fill under way: the meaning of some memories is not searched yet
            for hit in hits:
                if not self.vectors.has(hit.id):
                    hit.why.append("no vectors yet (being built): found by its words alone")
            building = vectors_building(self.pending, self.indexed)
            notice = f"{building}; {notice}" if notice else building
        shown = {memory_id for hit in hits for memory_id in (hit.id, *hit.duplicates)}  # folded ones are shown too
        revivable = self._revivable(request.query, found, positions, limit, moment, shown)
        return SearchResult(request.query, hits, revivable, notice,
                            best.to_json(), project=request.project, weak_left_out=left_out,
                            vectors=self.vectors_state())

    def vectors_state(self) -> dict[str, Any]:
        """How far the vectors are built: the share of memories that have them, and how many wait."""
        built = max(0, self.indexed - self.pending)
        return {"built": round(built / self.indexed, 4) if self.indexed else 1.0, "pending": self.pending}

    def _external_matches(self, query: str, flt: Filter, limit: int, now: datetime) -> int:
        """How many memories of external sources a search for ``query`` that asked for them would list."""
        outside = Filter((EXTERNAL,), flt.types, flt.project, flt.path)
        if not self._mask(outside)[0].any():  # none in the vault, or none the other filters admit
            return 0
        found = self._find(query, outside, max(self.settings.candidates, limit * 3))
        positions = {lane: {memory_id: n for n, memory_id in enumerate(ids, 1)}
                     for lane, ids in found.rankings.items()}
        hits, best = self._rank(query, found, positions, outside, limit, now)
        return len(hits) if best.clears else 0

    def _weigh_evidence(self, query: str, hits: list[Hit]) -> relevance.Best:
        """Give every hit its evidence (see :mod:`relevance`); the best of them, against the floors."""
        s = self.settings
        floors = relevance.Floors(s.relevance_floor, s.meaning_floor, s.named_relevance_floor, s.named_meaning_floor)
        best = relevance.Best(floors)
        if not hits:
            return best
        stems = relevance.content_stems(query)
        specific = relevance.Specifics.of(query)
        subjects = self._subjects_by_stem(query)
        words = relevance.QueryWords.of(query, subjects.keys())
        carriers = self.fulltext.carriers(sorted({*stems, *specific.words}), [h.id for h in hits],
                                          relevance.EVIDENCE_FIELDS)
        best.subjects = relevance.named_subjects(stems, subjects, carriers)
        # The model reads English: for a query written wholly in a script without spaces (Chinese,
        # Japanese, ...) its cosines are no evidence (benchmarks.cjk_probe: the memories such a
        # query names are no closer than those of unrelated queries), so its words alone are.
        unread = segment.wholly_in_runs(query)
        for hit in hits:
            carried = {stem for stem, ids in carriers.items() if hit.id in ids}
            coverage = words.coverage(carried)
            names_carried = specific.carried_by(carried)
            cosines = {} if unread else hit.similarity
            hit.evidence = relevance.evidence(cosines, coverage)
            meaning = max(cosines.values(), default=0.0)
            # "customer 2077" is not answered by customer 1042, however close the rest of its words.
            others = specific.other_instance(carried, " ".join((hit.title, hit.summary, hit.trigger)))
            hit.weak = bool(others) or not floors.cleared(hit.evidence, meaning, names_carried)
            if not others:
                best.add(hit.evidence, meaning, names_carried)
            reason = relevance.describe(hit.evidence, meaning, coverage, floors, names_carried)
            _explain(hit, reason + specific.unlike(others), unread)
        return best

    def _read_request(self, request: SearchQuery) -> tuple[Filter, int]:
        """The request's filter and limit, checked."""
        if not query_terms(request.query) and not request.query.strip():
            raise InvalidInput("search needs a query")
        s = self.settings
        unknown = [t for t in request.types if t not in TYPES]
        if unknown:
            raise InvalidInput(f"unknown type '{unknown[0]}'; expected one of {', '.join(TYPES)}")
        limit = request.limit if request.limit is not None else s.limit
        if limit < 1:
            raise InvalidInput(f"--limit must be at least 1, got {limit}")
        return Filter(allowed_trust(request, s), tuple(request.types), request.project, request.path), limit

    def _find(self, query: str, flt: Filter, depth: int, keep_vector: bool = False) -> lanes.Lanes:
        """Every lane's admitted candidates, the feedback lane's included."""
        s = self.settings
        vocabulary = self._vocabulary_store() if s.weight_expansion > 0 else None
        embedder = self._kept if keep_vector else self.embedder
        sources = lanes.Sources(self.fulltext, self.vectors, embedder, vocabulary, self._tags_many_carry)
        rarity.prepare()  # the ranking needs them: read while a child may embed the query (no model here)
        if embedder.loads_no_model:
            self._mask(flt)
        found = lanes.read(query, flt, depth, s, sources, lambda: self._mask(flt)[1])
        rankings = lanes.keep_admitted(found, self._cols(), self._mask(flt)[0])
        pairs: list[tuple[str, float]] = []
        if pseudo_relevance.wanted(s) and self._thread_links():
            pairs = pseudo_relevance.lane(found, self._active(rankings), s, self.rows, self.vectors)[:depth]
        if pairs:
            rankings["feedback"] = [memory_id for memory_id, _ in pairs]
            found.similarity["feedback"] = dict(pairs)
        return found

    def _rank(self, query: str, found: lanes.Lanes, positions: Positions, flt: Filter, limit: int,
              now: datetime, shown: bool = True) -> tuple[list[Hit], relevance.Best]:
        """The hits: fused, boosted, re-ranked, with linked neighbours, weighed against the relevance
        floor (the whole shortlist: whether the vault holds the answer does not depend on the
        limit), duplicates folded, conflicts paired, cut.  Unless ``shown`` (the context director's
        candidates), conflicts are not paired and only the limit cuts."""
        s = self.settings
        fused_input, weights = fusion_input(self._active(found.rankings), found.similarity, s)
        shortlist_size = limit * 2 + 10
        reranking = s.rerank and s.rerank_depth > 1
        every = fuse(fused_input, weights, s.rrf_k)
        # Boosting costs a catalog row and a few signals per candidate: only the candidates that
        # can reach the shortlist or the re-ranked head are boosted up front.
        fused = prune(every, max(shortlist_size, s.rerank_depth) if reranking else shortlist_size, s)
        rows = self.rows({f.id for f in fused})
        scored = sorted(((boosted_score(f, rows[f.id], s, now), f) for f in fused if f.id in rows),
                        key=lambda pair: (-pair[0], pair[1].id))
        reranked: dict[str, dict[str, float]] = {}
        if reranking and len(scored) > 1:
            cut_off = {f.id: f for f in every[len(fused):]}
            named = self._inferred_subjects().named_by(query)

            def elsewhere(ids: set[str]) -> dict[str, float]:
                """The boosted scores of those of ``ids`` that are candidates left out above."""
                wanted = {i for i in ids if i in cut_off}
                found_rows = self.rows(wanted) if wanted else {}
                return {i: boosted_score(cut_off[i], row, s, now) for i, row in found_rows.items()}

            scored, reranked = rerank.rerank_shortlist(
                query, scored, rows, s, now, around=self._thread_links() if s.rerank_thread else {},
                joinable=lambda ids: {i: row for i, row in self.rows(ids).items()
                                      if row.status == "active" and flt.admits(row)},
                carried=self._carried, elsewhere=elsewhere,
                subjects_of=lambda row: self._subjects_of(row, named),
                meaning=_meaning(found), names=self._weighed_names(query, found.dropped))
        # Building a full hit (reasons, snippet) is done for the shortlist only.
        hits = [make_hit(f, rows[f.id], s, positions, found, now, reranked.get(f.id), score)
                for score, f in scored[:shortlist_size]]
        hits = with_neighbours(hits, flt, now, rows, s, self.catalog, self.rows)
        hits.sort(key=lambda h: (-h.score, h.id))
        hits = [h for h in hits if h.score >= s.min_score]
        best = self._weigh_evidence(query, hits)
        # A memory that stands alone and is weak ranks below every hit that clears the floor, in any
        # language.  A conversation's turn keeps its place: it is often weak on its own and still the
        # answer, lifted by its neighbours (LoCoMo chat: partitioning turns too cost R@10 0.813 -> 0.809).
        turns = self._thread_links()
        hits.sort(key=lambda h: h.weak and h.id not in turns)
        hits = collapse(hits, limit, s.duplicate_similarity, self.vectors.vector, pair=shown)
        return (cut(hits, limit, s.max_context_chars) if shown else hits[:limit]), best

    def _clearing(self, query: str, hits: list[Hit]) -> list[Hit]:
        """Those of ``hits`` that clear the relevance floor themselves (weighed as a search's hits are)."""
        self._weigh_evidence(query, hits)
        return [h for h in hits if not h.weak]

    def _revivable(self, query: str, found: lanes.Lanes, positions: Positions, limit: int, now: datetime,
                   shown: set[str]) -> list[Hit]:
        """Trashed memories that match strongly, offered for revival (never hits): those among the
        best ``limit`` that score at least ``revive_score`` and clear the relevance floor
        themselves, unless the memory holding their content now (a merge's survivor) is ``shown`` (a
        hit, or a duplicate folded into one)."""
        s = self.settings
        cols = self._cols()
        rankings = found.rankings
        if not any(cols.trashed[cols.position[i]] for ids in rankings.values() for i in ids[:limit]):
            return []
        all_input, all_weights = fusion_input(rankings, found.similarity, s)
        top: list[Fused] = fuse(all_input, all_weights, s.rrf_k)[:limit]
        trashed_rows = {i: row for i, row in self.rows({f.id for f in top if cols.trashed[cols.position[f.id]]}).items()
                        if row.successor not in shown}
        revivable = [make_hit(f, trashed_rows[f.id], s, positions, found, now) for f in top if f.id in trashed_rows]
        strong = [h for h in revivable if h.score >= s.revive_score]
        return self._clearing(query, strong)[:MAX_REVIVABLE] if strong else []
