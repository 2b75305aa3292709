"""Ranking: weighted reciprocal-rank fusion of the lanes, then multiplicative boosts.

Pure functions over rankings and memory signals, so every rule is unit-tested
without an index.  ``fuse`` combines lane rankings by weighted RRF and
normalises to (0, 1] against the best possible score (first in every lane);
``boost`` multiplies a score by ``1 + alpha * (signal - 0.5)`` per signal, where
a missing signal contributes exactly 1.0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Protocol

from ..config import RetrievalSettings

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


@dataclass(frozen=True, slots=True)
class LaneRank:
    lane: str
    rank: int  # 1-based
    weight: float


@dataclass(frozen=True, slots=True)
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


def _age_signal(moment: datetime | date | None, now: datetime) -> float | None:
    if moment is None:
        return None
    if not isinstance(moment, datetime):
        moment = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    days = max(0.0, (now - moment).total_seconds() / 86400)
    return math.pow(0.5, days / RECENCY_HALF_LIFE_DAYS)


def signals(memory: Signals, now: datetime) -> dict[str, float | None]:
    """Each boost signal of ``memory`` in [0, 1], or None when the memory has no such signal."""
    applied = memory.applied
    good = applied.get("used-successfully", 0)
    bad = applied.get("corrected", 0) + applied.get("contributed-to-failure", 0) + applied.get("overridden", 0)
    return {
        "recency": _age_signal(memory.updated or memory.created, now),
        "event_time": _age_signal(memory.occurred_at, now),
        "proof": 1.0 - 1.0 / (1.0 + max(0, memory.proof_count - 1)) if memory.proof_count > 1 else None,
        "trust": TRUST_SIGNAL.get(memory.trust),
        "usefulness": (good + 1) / (good + bad + 2) if good or bad else None,
    }


def boost(item: Fused, memory: Signals, settings: RetrievalSettings, now: datetime) -> Boosted:
    """Apply ``base * prod(1 + alpha * (signal - 0.5))``; a missing signal gives exactly 1.0."""
    alphas = {
        "recency": settings.alpha_recency,
        "event_time": settings.alpha_event_time,
        "proof": settings.alpha_proof,
        "trust": settings.alpha_trust,
        "usefulness": settings.alpha_usefulness,
    }
    factors: dict[str, float] = {}
    score = item.score
    for name, value in signals(memory, now).items():
        factor = 1.0 if value is None else 1.0 + alphas[name] * (value - 0.5)
        factors[name] = factor
        score *= factor
    return Boosted(item.id, item.score, score, item.lanes, factors)
