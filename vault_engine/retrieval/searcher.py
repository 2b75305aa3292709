"""Hybrid search over the derived indexes.

One query runs two kinds of lane: Tantivy BM25 over title, summary, trigger,
body and tags, and cosine similarity over the summary, trigger and body-chunk
vectors (the dual path).  Lanes are fused by weighted RRF normalised to
(0, 1], then boosted by recency, event time, proof, trust and usefulness.
Filters (project, path selectors, type, trust) hold in every lane before
ranking; superseded memories never appear; trashed ones are never hits but,
when they match strongly, are offered for revival.  Near-duplicates collapse
into the best of them, linked neighbours may join at a share of the linking
hit's score, and the list is cut to the limit and the character budget.

A :class:`Searcher` keeps the indexes open and the filter masks cached, so a
long-lived process (the watcher, the MCP server, a benchmark) pays the
loading once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import store
from ..config import RetrievalSettings, VaultConfig
from ..errors import IndexStale, InvalidInput
from ..format.memory import TRUSTS, TYPES
from ..format.text import clip
from ..index.catalog import Catalog, CatalogRow
from ..index.embedder import Embedder
from ..index.fulltext import FullTextIndex, query_terms
from ..index.vectors import LANES, VectorStore
from ..index.vocabulary import Expansion, Vocabulary, vocabulary_terms
from . import rerank, threads
from .fusion import Fused, LaneRank, boost, fuse
from .selectors import path_matches

DEFAULT_TRUST = ("system", "learned")
MAX_EXPANDED_WORDS = 8
RERANK_WORDS = {"terms": "query words covered", "tags": "tags named in the query",
                "time": "date the query names", "thread": "next to a strong match"}
MAX_REVIVABLE = 3


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search: the query and its filters (empty filters allow everything)."""

    query: str
    limit: int | None = None
    project: str | None = None  # this project's memories and the global ones
    path: str | None = None  # memories whose path selectors match it, or that have none
    types: tuple[str, ...] = ()
    trust: tuple[str, ...] = ()  # empty: system and learned (and external if configured)


@dataclass(slots=True)
class Hit:
    """One result, with enough to decide whether to open it."""

    id: str
    title: str
    path: str
    score: float
    summary: str
    trigger: str
    type: str
    scope: str
    project: str
    trust: str
    lifecycle: str
    tier: str = "cold"
    authority: str = "explicit"
    snippet: str = ""
    base: float = 0.0
    lanes: dict[str, int] = field(default_factory=dict)
    similarity: dict[str, float] = field(default_factory=dict)
    boosts: dict[str, float] = field(default_factory=dict)
    rerank: dict[str, float] = field(default_factory=dict)  # factor per re-ranking feature ("thread": added)
    why: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    dup_key: str = ""

    @property
    def chars(self) -> int:
        return len(self.title) + len(self.summary) + len(self.trigger)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "path": self.path, "score": round(self.score, 6),
            "summary": self.summary, "trigger": self.trigger, "type": self.type, "scope": self.scope,
            "project": self.project or None, "trust": self.trust, "authority": self.authority,
            "lifecycle": self.lifecycle, "tier": self.tier, "snippet": self.snippet, "why": self.why,
            "base": round(self.base, 6), "lanes": self.lanes,
            "similarity": {k: round(v, 4) for k, v in self.similarity.items()},
            "boosts": {k: round(v, 4) for k, v in self.boosts.items()},
            "rerank": {k: round(v, 4) for k, v in self.rerank.items()}, "duplicates": self.duplicates,
        }


@dataclass(slots=True)
class SearchResult:
    query: str
    hits: list[Hit]
    revivable: list[Hit]
    notice: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query, "hits": [h.to_json() for h in self.hits],
            "revivable": [{"id": h.id, "title": h.title, "score": round(h.score, 6), "path": h.path,
                           "restore": f"memvault trash restore {h.id}"} for h in self.revivable],
            "notice": self.notice,
        }


def allowed_trust(request: SearchRequest, settings: RetrievalSettings) -> tuple[str, ...]:
    if not request.trust:
        return (*DEFAULT_TRUST, "external") if settings.include_external else DEFAULT_TRUST
    unknown = [t for t in request.trust if t not in TRUSTS and t != "any"]
    if unknown:
        raise InvalidInput(f"unknown trust level '{unknown[0]}'; expected {', '.join(TRUSTS)} or any")
    return TRUSTS if "any" in request.trust else tuple(request.trust)


@dataclass(slots=True)
class _Filter:
    """The request's filters as a predicate over catalog rows and masks over the vector ids."""

    trust: tuple[str, ...]
    types: tuple[str, ...]
    project: str | None
    path: str | None

    def admits(self, row: CatalogRow) -> bool:
        if row.lifecycle == "superseded" or row.trust not in self.trust:
            return False
        if self.types and row.type not in self.types:
            return False
        if self.project is not None and not (row.scope == "global" or row.project == self.project):
            return False
        return not (self.path is not None and row.paths and not path_matches(row.paths, self.path))

    def key(self) -> tuple[Any, ...]:
        return (self.trust, self.types, self.project, self.path)


class _Columns:
    """What the filters read, for every catalog row, as arrays: filtering costs no row decoding."""

    def __init__(self, catalog: Catalog, vector_ids: Sequence[str]):
        light = catalog.light()
        n = len(light)
        self.position: dict[str, int] = {}
        self.superseded = np.zeros(n, dtype=bool)
        self.trashed = np.zeros(n, dtype=bool)
        self.trust = np.full(n, -1, dtype=np.int8)
        self.type = np.full(n, -1, dtype=np.int8)
        self.global_scope = np.zeros(n, dtype=bool)
        self.project = np.full(n, -1, dtype=np.int32)
        self.projects: dict[str, int] = {}
        self.with_paths: list[tuple[int, tuple[str, ...]]] = []
        for at, (memory_id, status, lifecycle, trust, kind, scope, project, paths) in enumerate(light):
            self.position[memory_id] = at
            self.superseded[at] = lifecycle == "superseded"
            self.trashed[at] = status == "trashed"
            self.trust[at] = TRUSTS.index(trust) if trust in TRUSTS else -1
            self.type[at] = TYPES.index(kind) if kind in TYPES else -1
            self.global_scope[at] = scope == "global"
            self.project[at] = self.projects.setdefault(project, len(self.projects))
            if paths:
                self.with_paths.append((at, paths))
        # Vector-store row -> catalog row (-1: a vector without a catalog row, never returned).
        self.vector_rows = np.array([self.position.get(i, -1) for i in vector_ids], dtype=np.int64)

    def mask(self, flt: _Filter) -> npt.NDArray[np.bool_]:
        """Catalog rows the filter admits (trashed ones included: they may be offered for revival)."""
        mask = ~self.superseded
        mask &= np.isin(self.trust, [TRUSTS.index(t) for t in flt.trust])
        if flt.types:
            mask &= np.isin(self.type, [TYPES.index(t) for t in flt.types if t in TYPES])
        if flt.project is not None:
            code = self.projects.get(flt.project, -2)
            mask &= self.global_scope | (self.project == code)
        if flt.path is not None:
            for at, paths in self.with_paths:
                if not path_matches(paths, flt.path):
                    mask[at] = False
        return mask

    def vector_mask(self, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        known = self.vector_rows >= 0
        if not len(mask):  # no catalog rows (an index being built): no vector is known
            return known
        return known & mask[np.where(known, self.vector_rows, 0)]


def boost_bounds(settings: RetrievalSettings) -> tuple[float, float]:
    """The smallest and largest product the boosts can give (signals lie in [0, 1])."""
    low = high = 1.0
    for alpha in (settings.alpha_recency, settings.alpha_event_time, settings.alpha_proof,
                  settings.alpha_trust, settings.alpha_usefulness):
        low *= 1 - abs(alpha) / 2
        high *= 1 + abs(alpha) / 2
    return low, high


WHOLE_LANES = ("fts", "expansion", "feedback")  # lanes fused as they are (vector lanes: by vector_fusion)
# What the feedback lane compares: whole memories (a turn: in its context), not their parts.
FEEDBACK_LANES = ("summary", "context")
FEEDBACK_POOL = 10  # each lane's first hits that the quick first fusion reads


@dataclass(slots=True)
class _Lanes:
    """What the lanes found for one query, and how they read it."""

    rankings: dict[str, list[str]]  # lane -> memory ids, best first
    snippets: dict[str, str]  # BM25 snippets
    similarity: dict[str, dict[str, float]]  # vector lane -> memory id -> cosine
    vector: npt.NDArray[np.float32]  # the embedded (vector) query
    dropped: tuple[str, ...] = ()  # query words left out of the vector query
    expansions: list[Expansion] = field(default_factory=list)


class Searcher:
    """Searches one vault's indexes; cheap to query many times."""

    def __init__(self, root: Path, config: VaultConfig, embedder: Embedder):
        state = root / store.STATE_DIR
        self.root = root
        self.settings = config.retrieval
        self._vocabulary: Vocabulary | None = None
        self.embedder = embedder
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
        self._columns: _Columns | None = None
        self._masks: dict[tuple[Any, ...], tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]] = {}
        self._row_cache: dict[str, CatalogRow] = {}
        self._standing: dict[str | None, list[CatalogRow]] = {}
        self._around: dict[str, tuple[str | None, str | None]] | None = None
        self._terms: dict[str, frozenset[str]] = {}
        self._common_tags: frozenset[str] | None = None

    def close(self) -> None:
        self.vectors.close()
        self.catalog.close()
        if self._vocabulary is not None:
            self._vocabulary.close()

    def _check_parts(self) -> None:
        """Every memory has a catalog row, a full-text document and vectors: parts that disagree on
        whether anything is indexed (one deleted or emptied behind the engine's back) are stale, or
        a search would silently lose a lane (or fail)."""
        counts = {"catalog": self.catalog.count(), "full-text index": self.fulltext.count(),
                  "vector index": self.vectors.count()}
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
        self._terms.clear()
        self._common_tags = None

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

    def _cols(self) -> _Columns:
        if self._columns is None:
            self._columns = _Columns(self.catalog, self.vectors.ids())
        return self._columns

    def _mask(self, flt: _Filter) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """(catalog mask, vector mask) of a filter, cached."""
        key = flt.key()
        if key not in self._masks:
            if len(self._masks) > 32:
                self._masks.clear()
            cols = self._cols()
            mask = cols.mask(flt)
            self._masks[key] = (mask, cols.vector_mask(mask))
        return self._masks[key]

    # ------------------------------------------------------------ lanes

    def _lanes(self, query: str, flt: _Filter, depth: int) -> _Lanes:
        """Every lane's candidates for ``query``, best first."""
        any_of = [[("scope", "global"), ("project", flt.project)]] if flt.project is not None else []
        filters: dict[str, Iterable[str]] = {"trust": flt.trust}
        if flt.types:
            filters["type"] = flt.types
        text_hits = self.fulltext.search(query, depth, filters, any_of=any_of, exclude=[("lifecycle", "superseded")],
                                         snippet_count=self.settings.limit * 2,
                                         boosts={"context": self.settings.fts_context, "when": self.settings.fts_when})
        vector_query, dropped = self._vector_query(query)
        vocabulary = self._vocabulary_store() if self.settings.weight_expansion > 0 else None
        words = sorted(vocabulary_terms(query))[:MAX_EXPANDED_WORDS] if vocabulary is not None else []
        vectors = self.embedder.embed([vector_query, *words])
        found = _Lanes({"fts": [h.id for h in text_hits]}, {h.id: h.snippet for h in text_hits}, {},
                       np.asarray(vectors[0], dtype=np.float32), dropped)
        if vocabulary is not None and words:
            found.expansions = vocabulary.expand(words, vectors[1:], per_word=self.settings.expansion_per_word,
                                                 min_similarity=self.settings.expansion_similarity, exclude=words)
        if found.expansions:
            wider = self.fulltext.search(" ".join(e.term for e in found.expansions), depth, filters, any_of=any_of,
                                         exclude=[("lifecycle", "superseded")], snippet_count=0,
                                         boosts={"context": 0.0, "when": 0.0})
            found.rankings["expansion"] = [h.id for h in wider]
        for lane, pairs in self.vectors.search(found.vector, depth, self._mask(flt)[1]).items():
            if lane == "sentence" and not self.settings.sentence_lane:
                continue
            found.rankings[lane] = [memory_id for memory_id, _ in pairs]
            found.similarity[lane] = dict(pairs)
        return found

    def _vector_query(self, query: str) -> tuple[str, tuple[str, ...]]:
        """The query the vector lanes embed, and the words left out of it.

        A name in the query that many memories carry as a tag (a person in a chat log: "what did
        *Caroline* paint?") tells the re-ranker's tag feature whose memories to prefer, but in
        the embedding it only pulls every memory that mentions the name, whatever its topic.
        Such names are left out of the vector query (never all of its words)."""
        s = self.settings
        if not s.vector_drop_tags:
            return query, ()
        if self._common_tags is None:
            self._common_tags = frozenset(tag for tag, share in self.catalog.tag_shares().items()
                                          if share >= s.drop_tag_share)
        # Names only: a capitalised word past the first (a topic tag such as "deploy" is part of
        # what the query is about, and stays).
        words = rerank.words(query)
        named = [w for w in dict.fromkeys(words[1:]) if w[:1].isupper() and w.casefold() in self._common_tags]
        if not named:
            return query, ()
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in named) + r")(?:'s)?\b", re.IGNORECASE)
        rest = " ".join(pattern.sub(" ", query).split())
        if not query_terms(rest):
            return query, ()
        return rest, tuple(named)

    def _feedback(self, found: _Lanes) -> list[tuple[str, float]]:
        """Pseudo-relevance feedback: the lanes' candidates ranked by how close their summary (or,
        for a turn, its context) lies to the query moved halfway toward the mean summary vector of
        the seeds, best first (empty when feedback is off or nothing seeds it).

        The seeds are the best hits of a quick first fusion (each lane's top ten) that are turns
        of a conversation: a list's items are scattered over many small turns, while a fact, an
        episode or a document is whole in itself (seeded by those, feedback measured worse: see
        the README's "Retrieval quality").  A vault without conversations skips all of it."""
        s = self.settings
        if s.weight_feedback <= 0 or s.feedback_docs <= 0 or not self._thread_links():
            return []
        first_input, first_weights = self._fusion_input(
            {lane: ids[:FEEDBACK_POOL] for lane, ids in self._active(found.rankings).items()}, found.similarity)
        best = [f.id for f in fuse(first_input, first_weights, s.rrf_k)[: s.feedback_docs]]
        known = self.rows(set(best))
        seeds = [i for i in best if i in known and known[i].thread]
        seed_vectors = [v for v in (self.vectors.vector(i, "summary") for i in seeds) if v is not None]
        if not seed_vectors:
            return []
        moved = found.vector + np.mean(seed_vectors, axis=0)
        moved = (moved / max(float(np.linalg.norm(moved)), 1e-9)).astype(np.float32)
        # Only the candidates the lanes found (already filtered) are ranked again: as good on the
        # benchmark as a scan of the whole vault, and its cost does not grow with the vault.
        return self.vectors.closest_of(moved, (i for ids in found.rankings.values() for i in ids), FEEDBACK_LANES)

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

    def _fusion_input(self, rankings: Mapping[str, list[str]],
                      similarity: Mapping[str, Mapping[str, float]]) -> tuple[dict[str, list[str]], dict[str, float]]:
        s = self.settings
        lanes = {lane: ids for lane, ids in rankings.items() if lane not in WHOLE_LANES and ids}
        out: dict[str, list[str]] = {lane: rankings.get(lane, []) for lane in WHOLE_LANES}
        weights = {"fts": s.weight_fts, "expansion": s.weight_expansion, "feedback": s.weight_feedback}
        if s.vector_fusion == "lanes":
            for lane, ids in lanes.items():
                out[lane] = ids
                weights[lane] = s.weight_vector / max(1, len(lanes))
        elif lanes:
            # "max": every vector lane by its best cosine.  "body-apart": the lanes that say what the
            # memory is (summary, trigger, its sentences, a turn's context) by their best, and the
            # body's chunks ranked apart: a long body (an episode, a document) is more than its
            # best chunk, and one ranking of everything lets the short views drown it.
            groups = ({"vector": [lane for lane in lanes if lane != "body"], "body": ["body"]}
                      if s.vector_fusion == "body-apart" else {"vector": list(lanes)})
            present = {name: members for name, members in groups.items() if any(m in lanes for m in members)}
            for name, members in present.items():
                best: dict[str, float] = {}
                for lane in members:
                    for memory_id in lanes.get(lane, ()):
                        cosine = similarity[lane][memory_id]
                        if cosine > best.get(memory_id, -2.0):
                            best[memory_id] = cosine
                out[name] = sorted(best, key=lambda i: (-best[i], i))
                weights[name] = s.weight_vector / len(present)
        return {k: v for k, v in out.items() if v}, weights

    # ------------------------------------------------------------ search

    def search(self, request: SearchRequest, now: datetime | None = None) -> SearchResult:
        if not query_terms(request.query) and not request.query.strip():
            raise InvalidInput("search needs a query")
        s = self.settings
        unknown = [t for t in request.types if t not in TYPES]
        if unknown:
            raise InvalidInput(f"unknown type '{unknown[0]}'; expected one of {', '.join(TYPES)}")
        limit = request.limit if request.limit is not None else s.limit
        if limit < 1:
            raise InvalidInput(f"--limit must be at least 1, got {limit}")
        flt = _Filter(allowed_trust(request, s), tuple(request.types), request.project, request.path)
        moment = now or datetime.now(UTC)
        depth = max(s.candidates, limit * 3)

        found = self._lanes(request.query, flt, depth)
        cols = self._cols()
        admitted = self._mask(flt)[0]
        # Stale lane entries (not in the catalog) and rows the filters reject
        # (path selectors in the BM25 lane) drop out here.
        rankings = found.rankings = {
            lane: [i for i in ids if i in cols.position and admitted[cols.position[i]]]
            for lane, ids in found.rankings.items()
        }
        pairs = self._feedback(found)[:depth]
        if pairs:
            rankings["feedback"] = [memory_id for memory_id, _ in pairs]
            found.similarity["feedback"] = dict(pairs)
        positions = {lane: {memory_id: n for n, memory_id in enumerate(ids, 1)} for lane, ids in rankings.items()}
        similarity = found.similarity

        fused_input, weights = self._fusion_input(self._active(rankings), similarity)
        fused = fuse(fused_input, weights, s.rrf_k)
        shortlist_size = limit * 2 + 10
        if len(fused) > shortlist_size:
            # A candidate whose best possible boost cannot reach the worst possible
            # boost of the shortlist's last member can never be shown: skip it.
            low, high = boost_bounds(s)
            if s.rerank:
                for weight in (s.rerank_terms, s.rerank_tags, s.rerank_time, s.rerank_thread):
                    high *= 1 + max(0.0, weight)
            floor = fused[shortlist_size - 1].score * low / high
            fused = [f for f in fused if f.score >= floor]
        rows = self.rows({f.id for f in fused})
        scored = sorted(((boost(f, rows[f.id], s, moment).score, f) for f in fused if f.id in rows),
                        key=lambda pair: (-pair[0], pair[1].id))
        reranked: dict[str, dict[str, float]] = {}
        if s.rerank and s.rerank_depth > 1 and len(scored) > 1:
            scored, reranked = self._rerank(request.query, scored, rows, flt, moment)
        # Building a full hit (reasons, snippet) is done for the shortlist only.
        hits = [self._hit(f, rows[f.id], positions, found, moment, reranked.get(f.id), score)
                for score, f in scored[:shortlist_size]]
        hits = self._with_neighbours(hits, flt, moment, rows)
        hits.sort(key=lambda h: (-h.score, h.id))
        hits = [h for h in hits if h.score >= s.min_score]
        hits = self._collapse(hits, limit)
        hits = self._cut(hits, limit)

        revivable: list[Hit] = []
        if any(cols.trashed[cols.position[i]] for ids in rankings.values() for i in ids[:limit]):
            all_input, all_weights = self._fusion_input(rankings, similarity)
            top = fuse(all_input, all_weights, s.rrf_k)[:limit]
            trashed_rows = self.rows({f.id for f in top if cols.trashed[cols.position[f.id]]})
            revivable = [
                self._hit(f, trashed_rows[f.id], positions, found, moment)
                for f in top if f.id in trashed_rows
            ]
            revivable = [h for h in revivable if h.score >= s.revive_score][:MAX_REVIVABLE]
        return SearchResult(request.query, hits, revivable)

    def _active(self, rankings: Mapping[str, list[str]]) -> dict[str, list[str]]:
        """``rankings`` without trashed memories."""
        cols = self._cols()
        return {lane: [i for i in ids if not cols.trashed[cols.position[i]]] for lane, ids in rankings.items()}

    def _thread_links(self) -> dict[str, tuple[str | None, str | None]]:
        """Each turn's (previous, next) memory in its thread, cached until the indexes change."""
        if self._around is None:
            around = threads.neighbours_by_id(self.catalog.threads())
            self._around = around
        return self._around

    def _rerank(self, query: str, scored: list[tuple[float, Fused]], rows: dict[str, CatalogRow],
                flt: _Filter, now: datetime) -> tuple[list[tuple[float, Fused]], dict[str, dict[str, float]]]:
        """The top ``rerank_depth`` candidates (and the thread neighbours of the best of them)
        re-scored by :mod:`rerank`; the rest keep their order below them.  ``rows`` gains the
        rows of neighbours that joined."""
        s = self.settings
        head, tail = scored[: s.rerank_depth], scored[s.rerank_depth :]
        base = {f.id: score for score, f in scored}
        by_id = {f.id: f for _score, f in head}
        around = self._thread_links() if s.rerank_thread else {}
        if around:
            # The neighbours of the best candidates join as candidates with no score of their own.
            near = {n for _score, f in head[: self.settings.limit] for n in around.get(f.id, ()) if n}
            near -= set(base)
            if near:
                fresh = self.rows(near)
                for memory_id in sorted(fresh):
                    row = fresh[memory_id]
                    if row.status == "active" and flt.admits(row):
                        rows[memory_id] = row
                        by_id[memory_id] = Fused(memory_id, 0.0, ())
                        head.append((0.0, by_id[memory_id]))
        candidates = []
        for score, f in head:
            row = rows[f.id]
            prev_id, next_id = around.get(f.id, (None, None))
            terms = self._terms.get(f.id)
            if terms is None:
                if len(self._terms) > 50_000:
                    self._terms.clear()
                terms = self._terms[f.id] = rerank.terms_of(f"{row.title}\n{row.summary}\n{row.trigger}", row.tags)
            candidates.append(rerank.Candidate(
                f.id, score, terms, row.tags, row.occurred_at,
                max(base.get(prev_id, 0.0) if prev_id else 0.0, base.get(next_id, 0.0) if next_id else 0.0)))
        profile = rerank.QueryProfile.of(query, now.date())
        weights = {"terms": s.rerank_terms, "tags": s.rerank_tags, "time": s.rerank_time, "thread": s.rerank_thread}
        out = [(c, score, effects) for c, score, effects in rerank.rerank(profile, candidates, weights,
                                                                          s.time_slack_days) if score > 0]
        floor = out[-1][1] if out else 0.0
        # Candidates below the re-ranked head never jump above it.
        rest = [(min(score, floor), f) for score, f in tail]
        return ([(score, by_id[c.id]) for c, score, _ in out] + rest,
                {c.id: effects for c, _score, effects in out if effects})

    def _hit(self, fused: Fused, row: CatalogRow, positions: Mapping[str, Mapping[str, int]],
             found: _Lanes | None, now: datetime,
             reranked: Mapping[str, float] | None = None, score: float | None = None) -> Hit:
        boosted = boost(fused, row, self.settings, now)
        lanes = {lane: ranks[row.id] for lane, ranks in positions.items() if row.id in ranks}
        similarity = found.similarity if found is not None else {}
        # Cosines with the query only: the feedback lane's are with the moved query.
        cosines = {lane: similarity[lane][row.id] for lane in LANES if row.id in similarity.get(lane, {})}
        hit = Hit(
            id=row.id, title=row.title, path=row.path, score=boosted.score, summary=row.summary,
            trigger=row.trigger, type=row.type, scope=row.scope, project=row.project, trust=row.trust,
            lifecycle=row.lifecycle, tier=row.tier, authority=row.authority,
            snippet=(found.snippets.get(row.id) if found is not None else None) or clip(row.summary or row.title, 160),
            base=fused.score, lanes=lanes, similarity=cosines, boosts=boosted.factors,
            rerank=dict(reranked or {}), dup_key=row.dup_key,
        )
        if score is not None:
            hit.score = score
        hit.why = _why(fused.lanes, lanes, cosines, boosted.factors, row, reranked or {})
        if found is not None:
            hit.why[1:1] = _query_reading(found, row.id, lanes)
        return hit

    def _with_neighbours(self, hits: list[Hit], flt: _Filter, now: datetime,
                         known: Mapping[str, CatalogRow]) -> list[Hit]:
        """A memory linked from a hit scores at least ``neighbour_factor`` of the hit's score."""
        factor = self.settings.neighbour_factor
        if factor <= 0 or not hits:
            return hits
        hits.sort(key=lambda h: (-h.score, h.id))
        top = hits[: self.settings.limit]
        links = {h.id: list(known[h.id].links) for h in top if h.id in known and known[h.id].links}
        if not links:
            return hits
        targets = self.catalog.resolve({t for ts in links.values() for t in ts})
        by_id = {h.id: h for h in hits}
        rows = self.rows(set(targets.values()) - set(by_id))
        for source in links:
            score = by_id[source].score * factor
            for target in links[source]:
                memory_id = targets.get(target)
                if memory_id is None or memory_id == source:
                    continue
                current = by_id.get(memory_id)
                if current is None:
                    row = rows.get(memory_id)
                    if row is None or row.status != "active" or not flt.admits(row):
                        continue
                    current = self._hit(Fused(row.id, 0.0, ()), row, {}, None, now)
                    current.score = 0.0
                    by_id[memory_id] = current
                    hits.append(current)
                if score > current.score:
                    current.score = score
                    current.why.append(f"linked from {source} ({factor:g} x its score)")
        return hits

    def _collapse(self, hits: list[Hit], limit: int) -> list[Hit]:
        """Near-duplicates (same text, or summary vectors this close) fold into the best one.

        Only as many hits as can still be shown are compared.
        """
        kept: list[Hit] = []
        keys: dict[str, Hit] = {}
        vectors: list[tuple[Hit, npt.NDArray[np.float32]]] = []
        threshold = self.settings.duplicate_similarity
        for hit in hits:
            if len(kept) >= limit:
                break
            row_key = hit.dup_key
            twin = keys.get(row_key) if row_key else None
            vector = self.vectors.vector(hit.id) if threshold < 1 else None
            if twin is None and vector is not None:
                for other, other_vector in vectors:
                    if float(np.dot(vector, other_vector)) >= threshold:
                        twin = other
                        break
            if twin is not None:
                twin.duplicates.append(hit.id)
                continue
            kept.append(hit)
            if row_key:
                keys[row_key] = hit
            if vector is not None:
                vectors.append((hit, vector))
        for hit in kept:
            if hit.duplicates:
                hit.why.append(f"near-duplicates folded in: {', '.join(hit.duplicates)}")
        return kept

    def _cut(self, hits: list[Hit], limit: int) -> list[Hit]:
        out: list[Hit] = []
        used = 0
        for hit in hits[:limit]:
            if out and used + hit.chars > self.settings.max_context_chars:
                break
            out.append(hit)
            used += hit.chars
        return out


def _query_reading(found: _Lanes, memory_id: str, lanes: Mapping[str, int]) -> list[str]:
    """The why-lines of the lanes that read the query differently: expansion, feedback, dropped words."""
    out = []
    if "expansion" in lanes:
        words = ", ".join(f"{e.term} for '{e.source}' ({e.similarity:.2f})" for e in found.expansions)
        out.append(f"vault words like the query's: rank {lanes['expansion']} ({words})")
    if "feedback" in lanes:
        cosine = found.similarity.get("feedback", {}).get(memory_id, 0.0)
        out.append(f"like the best first hits: rank {lanes['feedback']} (cosine {cosine:.3f} with the query moved"
                   " toward them)")
    if found.dropped and any(lane in lanes for lane in (*LANES, "feedback")):
        out.append(f"vector query without {', '.join(found.dropped)} (a tag many memories carry; the tag feature"
                   " weighs it)")
    return out


def _why(fused_lanes: Sequence[LaneRank], lanes: Mapping[str, int], cosines: Mapping[str, float],
         factors: Mapping[str, float], row: CatalogRow, reranked: Mapping[str, float]) -> list[str]:
    """Every lane's rank (or that it did not match), every boost and re-ranking factor, in words."""
    out = [f"full text: rank {lanes['fts']}" if "fts" in lanes else "full text: no match"]
    missing = []
    for lane in LANES:
        if lane in lanes:
            out.append(f"vector {lane}: rank {lanes[lane]} (cosine {cosines.get(lane, 0.0):.3f})")
        elif lane in ("summary", "body", "trigger") or (lane == "context" and row.thread):
            missing.append(lane)  # lanes every memory (or, for context, every turn) may have
    if missing:
        out.append(f"vector {', '.join(missing)}: not in the top candidates")
    weighted = ", ".join(f"{r.lane} #{r.rank} x{r.weight:.3g}" for r in fused_lanes)
    if weighted:
        out.append(f"fused: {weighted}")
    out.append("boosts: " + ", ".join(f"{name.replace('_', ' ')} x{value:.3f}" for name, value in factors.items()))
    if reranked:
        out.append("re-ranked: " + ", ".join(
            f"{RERANK_WORDS[name]} +{value:.3f}" if name == "thread" else f"{RERANK_WORDS[name]} x{value:.3f}"
            for name, value in reranked.items()))
    if row.trust == "external":
        out.append("external source: check before relying on it")
    return out
