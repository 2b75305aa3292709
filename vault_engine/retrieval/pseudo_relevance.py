"""The pseudo-relevance feedback lane, seeded by the best first hits that are turns (not the
feedback a person gives a memory: ``memvault feedback``, ``Vault.feedback``).

The lanes' candidates are ranked again by how close their summary (or, for a turn, its context)
lies to the query moved halfway toward the mean summary vector of the seeds.  The seeds are the
best hits of a quick first fusion (each lane's top ten) that are turns of a conversation: a
list's items are scattered over many small turns, while a fact, an episode or a document is
whole in itself (seeded by those, feedback measured worse: see "Checked against the other
workloads" in docs/decisions/retrieval-ranking.md).  A vault without conversations skips all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..config import RetrievalSettings
from ..index.catalog import CatalogRow
from ..index.vectors import VectorStore
from .fusion import fuse, fusion_input
from .lanes import Lanes

# What the feedback lane compares: whole memories (a turn: in its context), not their parts.
FEEDBACK_LANES = ("summary", "context")
FEEDBACK_POOL = 10  # each lane's first hits that the quick first fusion reads


def wanted(settings: RetrievalSettings) -> bool:
    """Whether the settings ask for the feedback lane at all."""
    return settings.weight_feedback > 0 and settings.feedback_docs > 0


def lane(found: Lanes, active: Mapping[str, list[str]], settings: RetrievalSettings,
         rows: Callable[[set[str]], dict[str, CatalogRow]], vectors: VectorStore) -> list[tuple[str, float]]:
    """(memory id, cosine with the moved query) of the lanes' candidates, best first; empty when
    no first hit is a turn.  ``active``: the lanes' rankings without trashed memories."""
    first_input, first_weights = fusion_input(
        {name: ids[:FEEDBACK_POOL] for name, ids in active.items()}, found.similarity, settings)
    best = [f.id for f in fuse(first_input, first_weights, settings.rrf_k)[: settings.feedback_docs]]
    known = rows(set(best))
    seeds = [i for i in best if i in known and known[i].thread]
    seed_vectors = [v for v in (vectors.vector(i, "summary") for i in seeds) if v is not None]
    if not seed_vectors:
        return []
    moved = found.vector + np.mean(seed_vectors, axis=0)
    moved = (moved / max(float(np.linalg.norm(moved)), 1e-9)).astype(np.float32)
    # Only the candidates the lanes found (already filtered) are ranked again: as good on the
    # benchmark as a scan of the whole vault, and its cost does not grow with the vault.
    return vectors.closest_of(moved, (i for ids in found.rankings.values() for i in ids), FEEDBACK_LANES)
