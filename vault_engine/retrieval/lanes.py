"""The lanes: what one query asks the full-text and vector indexes, and the ranking each returns.

``fts`` is Tantivy BM25 over title, summary, trigger, body, tags and (at low weight) a turn's
context and the words of its date; ``expansion`` is BM25 again over the vault words nearest the
query's (off unless ``weight_expansion`` > 0); the vector lanes (summary, trigger, body chunks,
sentences, a turn's context) rank by cosine with the embedded query.  The feedback lane, which
reads these lanes' candidates, is :mod:`feedback`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..config import RetrievalSettings
from ..index.embedder import Embedder
from ..index.fulltext import FullTextIndex, query_terms
from ..index.vectors import VectorStore
from ..index.vocabulary import Expansion, Vocabulary, vocabulary_terms
from . import rerank
from .filters import Columns, Filter

MAX_EXPANDED_WORDS = 8


@dataclass(slots=True)
class Lanes:
    """What the lanes found for one query, and how they read it."""

    rankings: dict[str, list[str]]  # lane -> memory ids, best first
    snippets: dict[str, str]  # BM25 snippets
    similarity: dict[str, dict[str, float]]  # vector lane -> memory id -> cosine
    vector: npt.NDArray[np.float32]  # the embedded (vector) query
    dropped: tuple[str, ...] = ()  # query words left out of the vector query
    expansions: list[Expansion] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Sources:
    """The open indexes (and model) the lanes read."""

    fulltext: FullTextIndex
    vectors: VectorStore
    embedder: Embedder
    vocabulary: Vocabulary | None  # None: no expansion lane
    common_tags: Callable[[], frozenset[str]]  # tags many memories carry (see :func:`vector_query`)


def read(query: str, flt: Filter, depth: int, settings: RetrievalSettings, sources: Sources,
         vector_mask: Callable[[], npt.NDArray[np.bool_]]) -> Lanes:
    """Every lane's candidates for ``query``, best first (``vector_mask()``: the vectors ``flt`` admits).

    The mask is asked for only once the query is embedded: building it loads the vector
    matrix, and loading that while the model loads raises a cold search's peak memory.
    """
    any_of = [[("scope", "global"), ("project", flt.project)]] if flt.project is not None else []
    filters: dict[str, Iterable[str]] = {"trust": flt.trust}
    if flt.types:
        filters["type"] = flt.types
    text_hits = sources.fulltext.search(query, depth, filters, any_of=any_of, exclude=[("lifecycle", "superseded")],
                                        snippet_count=settings.limit * 2,
                                        boosts={"context": settings.fts_context, "when": settings.fts_when})
    vector_text, dropped = vector_query(query, settings, sources.common_tags)
    vocabulary = sources.vocabulary
    words = sorted(vocabulary_terms(query))[:MAX_EXPANDED_WORDS] if vocabulary is not None else []
    vectors = sources.embedder.embed([vector_text, *words])
    found = Lanes({"fts": [h.id for h in text_hits]}, {h.id: h.snippet for h in text_hits}, {},
                  np.asarray(vectors[0], dtype=np.float32), dropped)
    if vocabulary is not None and words:
        found.expansions = vocabulary.expand(words, vectors[1:], per_word=settings.expansion_per_word,
                                             min_similarity=settings.expansion_similarity, exclude=words)
    if found.expansions:
        wider = sources.fulltext.search(" ".join(e.term for e in found.expansions), depth, filters, any_of=any_of,
                                        exclude=[("lifecycle", "superseded")], snippet_count=0,
                                        boosts={"context": 0.0, "when": 0.0})
        found.rankings["expansion"] = [h.id for h in wider]
    for lane, pairs in sources.vectors.search(found.vector, depth, vector_mask()).items():
        if lane == "sentence" and not settings.sentence_lane:
            continue
        found.rankings[lane] = [memory_id for memory_id, _ in pairs]
        found.similarity[lane] = dict(pairs)
    return found


def keep_admitted(found: Lanes, columns: Columns, admitted: npt.NDArray[np.bool_]) -> dict[str, list[str]]:
    """Drop stale lane entries (not in the catalog) and rows the filters reject (path selectors
    in the BM25 lane); returns the rankings that remain."""
    found.rankings = {
        lane: [i for i in ids if i in columns.position and admitted[columns.position[i]]]
        for lane, ids in found.rankings.items()
    }
    return found.rankings


def vector_query(query: str, settings: RetrievalSettings,
                 common_tags: Callable[[], frozenset[str]]) -> tuple[str, tuple[str, ...]]:
    """The query the vector lanes embed, and the words left out of it.

    A name in the query that many memories carry as a tag (a person in a chat log: "what did
    *Caroline* paint?") tells the re-ranker's tag feature whose memories to prefer, but in
    the embedding it only pulls every memory that mentions the name, whatever its topic.
    Such names are left out of the vector query (never all of its words); ``common_tags`` holds
    the names untagged memories lead with too (:mod:`subjects`)."""
    if not settings.vector_drop_tags:
        return query, ()
    tags = common_tags()
    # Names only: a capitalised word past the first (a topic tag such as "deploy" is part of
    # what the query is about, and stays).
    words = rerank.words(query)
    named = [w for w in dict.fromkeys(words[1:]) if w[:1].isupper() and w.casefold() in tags]
    if not named:
        return query, ()
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in named) + r")(?:'s)?\b", re.IGNORECASE)
    rest = " ".join(pattern.sub(" ", query).split())
    if not query_terms(rest):
        return query, ()
    return rest, tuple(named)
