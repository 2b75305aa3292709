"""How alike two memories are: embedding neighbours and word overlap.

:class:`Neighbours` answers "which memories are closest to this one" from
one vector per memory (its body's first chunk, else its summary: what the
memory states).  Neighbours are searched only within a memory's own scope
and project, since memories of different projects never merge or link.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..format.memory import Memory, normalize_text
from ..patterns import lazy_pattern

_WORD = lazy_pattern(r"\w+")
_BLOCK = 1024


class Similarity(Protocol):
    """What the consolidation planners need to know about closeness."""

    def neighbours(self, memory_id: str) -> list[tuple[str, float]]:
        """The closest memories of the same scope and project, best first, with their cosine."""
        ...


def words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(normalize_text(text)))


@lru_cache(maxsize=65536)
def _words_of(text: str) -> Counter[str]:
    return words(text)


def stated(memory: Memory) -> str:
    """The text compared for near-duplicates: title, summary and body."""
    return f"{memory.title}\n{memory.summary}\n{memory.body.strip()}"


@lru_cache(maxsize=65536)
def _bag(text: str) -> tuple[dict[str, int], int]:
    counts = _words_of(text)
    return dict(counts), sum(counts.values())


@lru_cache(maxsize=262144)  # the supersede and merge steps judge mostly the same pairs
def text_similarity(a: Memory, b: Memory) -> float:
    """Dice overlap of the words of two memories, in [0, 1] (word order ignored)."""
    (wa, na), (wb, nb) = _bag(stated(a)), _bag(stated(b))
    if not na + nb:
        return 0.0
    if len(wa) > len(wb):
        wa, wb = wb, wa
    shared = sum(min(n, wb.get(word, 0)) for word, n in wa.items())
    return 2 * shared / (na + nb)


def group_of(memory: Memory) -> tuple[str, str]:
    return (memory.scope, memory.project or "") if memory.scope == "project" else ("global", "")


class Neighbours:
    """Exact top-k cosine neighbours within each (scope, project) group, down to a cosine ``floor``."""

    def __init__(self, vectors: Mapping[str, npt.NDArray[np.float32]], memories: Iterable[Memory], k: int = 10,
                 floor: float = 0.0):
        self._found: dict[str, list[tuple[str, float]]] = {}
        groups: dict[tuple[str, str], list[str]] = {}
        for memory in sorted(memories, key=lambda m: m.id):
            if memory.id in vectors:
                groups.setdefault(group_of(memory), []).append(memory.id)
        for ids in groups.values():
            if len(ids) < 2:
                continue
            matrix = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in ids])
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)
            for start in range(0, len(ids), _BLOCK):
                scores = matrix[start : start + _BLOCK] @ matrix.T
                rows = np.arange(scores.shape[0])
                scores[rows, rows + start] = -np.inf
                hit_rows, hit_cols = np.nonzero(scores >= floor)
                hit_scores = scores[hit_rows, hit_cols]
                # By row, best first; ties: the earlier id first.
                order = np.lexsort((hit_cols, -hit_scores, hit_rows))
                hit_rows, hit_cols, hit_scores = hit_rows[order], hit_cols[order], hit_scores[order]
                bounds = np.searchsorted(hit_rows, np.arange(scores.shape[0] + 1))
                cols, values = hit_cols.tolist(), hit_scores.tolist()
                for row in range(scores.shape[0]):
                    lo, hi = int(bounds[row]), min(int(bounds[row + 1]), int(bounds[row]) + k)
                    if hi > lo:
                        self._found[ids[start + row]] = [(ids[cols[n]], values[n]) for n in range(lo, hi)]

    def neighbours(self, memory_id: str) -> list[tuple[str, float]]:
        return self._found.get(memory_id, [])


def gist_vectors(store: object, ids: Iterable[str]) -> dict[str, npt.NDArray[np.float32]]:
    """Each memory's vector from a :class:`~vault_engine.index.vectors.VectorStore`: first body chunk, else summary."""
    from ..index.vectors import VectorStore

    assert isinstance(store, VectorStore)
    out = {}
    for memory_id in ids:
        vector = store.vector(memory_id, "body")
        if vector is None:
            vector = store.vector(memory_id, "summary")
        if vector is not None:
            out[memory_id] = vector
    return out
