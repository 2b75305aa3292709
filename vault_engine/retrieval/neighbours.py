"""Linked neighbours: a memory a strong hit links to scores at least a share of that hit's score."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from ..config import RetrievalSettings
from ..index.catalog import Catalog, CatalogRow
from .filters import Filter
from .fusion import Fused
from .hits import make_hit
from .request import Hit


def with_neighbours(hits: list[Hit], flt: Filter, now: datetime, known: Mapping[str, CatalogRow],
                    settings: RetrievalSettings, catalog: Catalog,
                    rows: Callable[[set[str]], dict[str, CatalogRow]]) -> list[Hit]:
    """A memory linked from a hit scores at least ``neighbour_factor`` of the hit's score."""
    factor = settings.neighbour_factor
    if factor <= 0 or not hits:
        return hits
    hits.sort(key=lambda h: (-h.score, h.id))
    top = hits[: settings.limit]
    links = {h.id: list(known[h.id].links) for h in top if h.id in known and known[h.id].links}
    if not links:
        return hits
    targets = catalog.resolve({t for ts in links.values() for t in ts})
    by_id = {h.id: h for h in hits}
    fetched = rows(set(targets.values()) - set(by_id))
    for source in links:
        score = by_id[source].score * factor
        for target in links[source]:
            memory_id = targets.get(target)
            if memory_id is None or memory_id == source:
                continue
            current = by_id.get(memory_id)
            if current is None:
                row = fetched.get(memory_id)
                if row is None or row.status != "active" or not flt.admits(row):
                    continue
                current = make_hit(Fused(row.id, 0.0, ()), row, settings, {}, None, now)
                current.score = 0.0
                by_id[memory_id] = current
                hits.append(current)
            if score > current.score:
                current.score = score
                current.why.append(f"linked from {source} ({factor:g} x its score)")
    return hits
