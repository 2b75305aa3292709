"""Ranking: weighted reciprocal-rank fusion of the lanes, then multiplicative boosts.

Pure functions over rankings and memory signals, so every rule is unit-tested
without an index.  :func:`fusion_input` groups the vector lanes as
``vector_fusion`` says; ``fuse`` combines lane rankings by weighted RRF and
normalises to (0, 1] against the best possible score (first in every lane);
``boost`` multiplies a score by ``1 + alpha * (signal - 0.5)`` per signal, where
a missing signal contributes exactly 1.0; :func:`prune` drops the candidates
that no boost can lift onto the shortlist.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Protocol

from ..config import RetrievalSettings

WHOLE_LANES = ("fts", "expansion", "feedback")  # lanes fused as they are (vector lanes: by vector_fusion)
TRUST_SIGNAL = {"system": 1.0, "learned": 0.5, "external": 0.0}
RECENCY_HALF_LIFE_DAYS = 90.0


class Signals(Protocol):
    """What the boosts read from a memory (a Memory or a catalog row)."""

    @property
    def created(self) -> datetime | None: ...
    @property
    def updated(self) -> datetime | None: ...
    @property
    def occurred_at(self) -> date | datetime | None: ...
    @property
    def proof_count(self) -> int: ...
    @property
    def applied(self) -> Mapping[str, int]: ...
    @property
    def trust(self) -> str: ...


# Not frozen: a search makes about a thousand of these (every candidate of every lane), and a frozen
# dataclass costs three times as much to make (0.37 against 0.13 us).  Nothing changes them once made.
@dataclass(slots=True)
class LaneRank:
    lane: str
    rank: int  # 1-based
    weight: float


@dataclass(slots=True)
class Fused:
    id: str
    score: float  # in (0, 1]
    lanes: tuple[LaneRank, ...]


@dataclass(frozen=True, slots=True)
class Boosted:
    id: str
    base: float
    score: float
    lanes: tuple[LaneRank, ...]
    factors: dict[str, float] = field(default_factory=dict)


def fuse(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int) -> list[Fused]:
    """Weighted RRF of ``rankings`` (lane -> ids, best first), best fused score first.

    Ties break by id so the order is stable.
    """
    total: dict[str, float] = {}
    seen: dict[str, list[LaneRank]] = {}
    for lane, ids in rankings.items():
        weight = weights.get(lane, 0.0)
        if weight <= 0:
            continue
        placed: set[str] = set()
        for position, memory_id in enumerate(ids, start=1):
            if memory_id in placed:
                continue
            placed.add(memory_id)
            total[memory_id] = total.get(memory_id, 0.0) + weight / (k + position)
            seen.setdefault(memory_id, []).append(LaneRank(lane, position, weight))
    best = sum(w for lane, w in weights.items() if w > 0 and lane in rankings) / (k + 1)
    if best <= 0:
        return []
    fused = [Fused(i, min(1.0, s / best), tuple(seen[i])) for i, s in total.items()]
    fused.sort(key=lambda f: (-f.score, f.id))
    return fused


def fusion_input(rankings: Mapping[str, list[str]], similarity: Mapping[str, Mapping[str, float]],
                 settings: RetrievalSettings) -> tuple[dict[str, list[str]], dict[str, float]]:
    """The rankings :func:`fuse` combines, and their weights: the whole lanes as they are, the
    vector lanes apart ("lanes"), by their best cosine ("max"), or the body apart ("body-apart")."""
    s = settings
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


def _age_signal(moment: datetime | date | None, now: datetime) -> float | None:
    if moment is None:
        return None
    if not isinstance(moment, datetime):
        moment = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    days = max(0.0, (now - moment).total_seconds() / 86400)
    return math.pow(0.5, days / RECENCY_HALF_LIFE_DAYS)


SIGNALS = ("recency", "event_time", "proof", "trust", "usefulness")  # the boosts, in the order they multiply


def signals(memory: Signals, now: datetime) -> dict[str, float | None]:
    """Each boost signal of ``memory`` in [0, 1], or None when the memory has no such signal."""
    return dict(zip(SIGNALS, _signal_values(memory, now), strict=True))


def _signal_values(memory: Signals, now: datetime) -> tuple[float | None, ...]:
    """:func:`signals`' values, in the order of :data:`SIGNALS`."""
    applied = memory.applied
    good = applied.get("used-successfully", 0)
    bad = applied.get("corrected", 0) + applied.get("contributed-to-failure", 0) + applied.get("overridden", 0)
    return (
        _age_signal(memory.updated or memory.created, now),
        _age_signal(memory.occurred_at, now),
        1.0 - 1.0 / (1.0 + max(0, memory.proof_count - 1)) if memory.proof_count > 1 else None,
        TRUST_SIGNAL.get(memory.trust),
        (good + 1) / (good + bad + 2) if good or bad else None,
    )


def _alphas(settings: RetrievalSettings) -> tuple[float, ...]:
    """Each boost's alpha, in the order of :data:`SIGNALS`."""
    return (settings.alpha_recency, settings.alpha_event_time, settings.alpha_proof, settings.alpha_trust,
            settings.alpha_usefulness)


def boost(item: Fused, memory: Signals, settings: RetrievalSettings, now: datetime) -> Boosted:
    """Apply ``base * prod(1 + alpha * (signal - 0.5))``; a missing signal gives exactly 1.0."""
    factors: dict[str, float] = {}
    score = item.score
    for name, alpha, value in zip(SIGNALS, _alphas(settings), _signal_values(memory, now), strict=True):
        factor = 1.0 if value is None else 1.0 + alpha * (value - 0.5)
        factors[name] = factor
        score *= factor
    return Boosted(item.id, item.score, score, item.lanes, factors)


def boosted_score(item: Fused, memory: Signals, settings: RetrievalSettings, now: datetime) -> float:
    """``boost(...).score`` alone (the same product, bit for bit: a missing signal's 1.0 is skipped), for
    ranking many candidates of which few become hits."""
    score = item.score
    for alpha, value in zip(_alphas(settings), _signal_values(memory, now), strict=True):
        if value is not None:
            score *= 1.0 + alpha * (value - 0.5)
    return score


def boost_bounds(settings: RetrievalSettings) -> tuple[float, float]:
    """The smallest and largest product the boosts can give (signals lie in [0, 1])."""
    low = high = 1.0
    for alpha in (settings.alpha_recency, settings.alpha_event_time, settings.alpha_proof,
                  settings.alpha_trust, settings.alpha_usefulness):
        low *= 1 - abs(alpha) / 2
        high *= 1 + abs(alpha) / 2
    return low, high


def prune(fused: list[Fused], size: int, settings: RetrievalSettings) -> list[Fused]:
    """``fused`` (best first) without the candidates that cannot be among the ``size`` best
    once boosted.

    A candidate whose best possible boost cannot reach the worst possible boost of the
    ``size``-th candidate has ``size`` candidates above it whatever the signals say.  Only the
    best boosted candidates are re-ranked, and re-ranking only lifts them, so what is cut here
    can never be shown (the re-ranker reads the scores of the rest through its own lookup).
    """
    if len(fused) <= size:
        return fused
    low, high = boost_bounds(settings)
    floor = fused[size - 1].score * low / high
    return [f for f in fused if f.score >= floor]
