"""The last cuts: near-duplicates fold into the best of them, then the limit and the character budget."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from .request import Hit


def collapse(hits: list[Hit], limit: int, threshold: float,
             vector_of: Callable[[str], npt.NDArray[np.float32] | None]) -> list[Hit]:
    """Near-duplicates (same text, or summary vectors at least ``threshold`` close) fold into the best one.

    Only as many hits as can still be shown are compared.
    """
    kept: list[Hit] = []
    keys: dict[str, Hit] = {}
    vectors: list[tuple[Hit, npt.NDArray[np.float32]]] = []
    for hit in hits:
        if len(kept) >= limit:
            break
        row_key = hit.dup_key
        twin = keys.get(row_key) if row_key else None
        vector = vector_of(hit.id) if threshold < 1 else None
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


def cut(hits: list[Hit], limit: int, max_chars: int) -> list[Hit]:
    """The first ``limit`` hits, stopping before the one that would pass ``max_chars`` (never the first)."""
    out: list[Hit] = []
    used = 0
    for hit in hits[:limit]:
        if out and used + hit.chars > max_chars:
            break
        out.append(hit)
        used += hit.chars
    return out
