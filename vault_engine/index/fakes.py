"""Deterministic in-repo stand-ins for unit tests of logic (never used in production paths)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..patterns import lazy_pattern

_WORD = lazy_pattern(r"\w+")


class HashEmbedder:
    """Bag-of-words hashed into ``dim`` buckets, L2-normalised: same words, same vector."""

    def __init__(self, dim: int = 64, window: int = 64):
        self._dim = dim
        self.window = window
        self.calls = 0

    @property
    def name(self) -> str:
        return "fake/hash"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def loads_no_model(self) -> bool:
        return False

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
                out[row, bucket % self._dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        self.calls += len(texts)
        return out

    def embed_spans(self, texts: Sequence[str], spans: Sequence[Sequence[Sequence[tuple[int, int]]]]
                    ) -> tuple[npt.NDArray[np.float32], list[list[npt.NDArray[np.float32] | None]]]:
        """Each text's vector, and each span's: the vector of the words in its ranges."""
        pooled: list[list[npt.NDArray[np.float32] | None]] = []
        for text, group in zip(texts, spans, strict=True):
            parts = [" ".join(text[begin:end] for begin, end in ranges) for ranges in group]
            pooled.append(list(self.embed(parts)) if parts else [])
            self.calls -= len(parts)  # one pass per text, as the real model makes
        return self.embed(texts), pooled

    def chunks(self, text: str) -> list[str]:
        """``text`` cut every ``window`` words, as slices of it (as the real model's chunks are)."""
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        if len(words) <= self.window:
            return [text]
        return [text[words[i][0] : words[min(i + self.window, len(words)) - 1][1]]
                for i in range(0, len(words), self.window)]


class TableSimilarity:
    """Governance's :class:`~vault_engine.governance.similarity.Similarity` from a table of cosines
    (symmetric; absent pairs are not neighbours), best first, ties by id."""

    def __init__(self, cosines: dict[tuple[str, str], float] | None = None):
        self.table: dict[str, list[tuple[str, float]]] = {}
        for (a, b), cosine in (cosines or {}).items():
            self.table.setdefault(a, []).append((b, cosine))
            self.table.setdefault(b, []).append((a, cosine))
        for found in self.table.values():
            found.sort(key=lambda item: (-item[1], item[0]))

    def neighbours(self, memory_id: str) -> list[tuple[str, float]]:
        return self.table.get(memory_id, [])
