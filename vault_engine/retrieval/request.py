"""What a search is asked and what it answers: :class:`SearchQuery`, :class:`Hit`, :class:`SearchResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..config import RetrievalSettings
from ..errors import InvalidInput
from ..format.memory import TRUSTS

DEFAULT_TRUST = ("system", "learned")


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search: the query and its filters (empty filters allow everything)."""

    query: str
    limit: int | None = None
    project: str | None = None  # this project's memories and the global ones
    path: str | None = None  # memories whose path selectors match it, or that have none
    types: tuple[str, ...] = ()
    trust: tuple[str, ...] = ()  # empty: system and learned (and external if configured)
    weak: bool = False  # when no hit clears the relevance floor, list the closest anyway (marked weak)
    # With no hit to list and the default trust levels: say in the notice how many memories of external
    # sources match (a second pass over the query; a person's search asks for it, the context director not).
    count_external: bool = False
    # The query's vector is kept in the embedding cache (a task asked again and again, as a session's start
    # asks it): the next process reads it there instead of loading the model.
    keep_vector: bool = False
    # The hits as candidates for the context director, which sizes each line of its manifest to its own
    # budget and shows no conflicts: all of them up to the limit, not cut at [retrieval] max_context_chars
    # (what a person's search shows), and conflicting values not paired up.
    candidates: bool = False


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
    duplicates: list[str] = field(default_factory=list)  # true duplicates folded into this hit
    conflicts: list[str] = field(default_factory=list)  # hits stating the same with other values
    dup_key: str = ""
    evidence: float = 0.0  # best cosine + IDF-weighted query coverage (see retrieval/relevance.py)
    weak: bool = False  # evidence below the relevance floor
    updated: datetime | None = None  # when the memory was last stated (updated, else created)

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
            "evidence": round(self.evidence, 4), "weak": self.weak,
            "conflicts": self.conflicts,
        }


@dataclass(slots=True)
class SearchResult:
    query: str
    hits: list[Hit]
    revivable: list[Hit]
    notice: str | None = None
    relevance: dict[str, float] | None = None  # the best evidence and cosine of the candidates, and the floors
    project: str | None = None  # the project searched, with the global memories; None: every project
    weak_left_out: int = 0  # hits below the relevance floor not listed (the request did not ask for weak ones)
    vectors: dict[str, Any] | None = None  # {"built": share of memories with vectors, "pending": memories without}

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query, "project": self.project, "hits": [h.to_json() for h in self.hits],
            "revivable": [{"id": h.id, "title": h.title, "score": round(h.score, 6), "path": h.path,
                           "restore": f"memvault trash restore {h.id}"} for h in self.revivable],
            "notice": self.notice, "relevance": self.relevance, "weak_left_out": self.weak_left_out,
            "vectors": self.vectors,
        }


def allowed_trust(request: SearchQuery, settings: RetrievalSettings) -> tuple[str, ...]:
    if not request.trust:
        return (*DEFAULT_TRUST, "external") if settings.include_external else DEFAULT_TRUST
    unknown = [t for t in request.trust if t not in TRUSTS and t != "any"]
    if unknown:
        raise InvalidInput(f"unknown trust level '{unknown[0]}'; expected {', '.join(TRUSTS)} or any")
    return TRUSTS if "any" in request.trust else tuple(request.trust)
