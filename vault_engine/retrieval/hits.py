"""A ranked candidate made into a :class:`Hit`: its row, lane ranks, cosines, boosts and why-lines."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from ..config import RetrievalSettings
from ..format.text import clip
from ..index.catalog import CatalogRow
from ..index.vectors import LANES
from . import explain
from .fusion import Fused, boost
from .lanes import Lanes
from .request import Hit


def make_hit(fused: Fused, row: CatalogRow, settings: RetrievalSettings, positions: Mapping[str, Mapping[str, int]],
             found: Lanes | None, now: datetime, reranked: Mapping[str, float] | None = None,
             score: float | None = None) -> Hit:
    """The hit of ``row``; ``score`` (when given) replaces its boosted score (it was re-ranked)."""
    boosted = boost(fused, row, settings, now)
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
        rerank=dict(reranked or {}), dup_key=row.dup_key, updated=row.updated or row.created,
    )
    if score is not None:
        hit.score = score
    hit.why = explain.why(fused.lanes, lanes, cosines, boosted.factors, row, reranked or {})
    if found is not None:
        hit.why[1:1] = explain.query_reading(found, row.id, lanes)
    return hit
