"""The ``--explain`` text: every lane's rank, every boost and re-ranking factor of a hit, in words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..index.catalog import CatalogRow
from ..index.vectors import LANES
from .fusion import LaneRank
from .lanes import Lanes

RERANK_WORDS = {"terms": "query words covered", "tags": "tags the query names (by name, or I = user, you = assistant)",
                "time": "date the query names", "thread": "next to a strong match",
                "unanimous": "held below the memory every lane ranks first"}


def query_reading(found: Lanes, memory_id: str, lanes: Mapping[str, int]) -> list[str]:
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


def why(fused_lanes: Sequence[LaneRank], lanes: Mapping[str, int], cosines: Mapping[str, float],
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
