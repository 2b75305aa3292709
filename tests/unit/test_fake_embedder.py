"""The deterministic fake embedder used by logic tests."""

from __future__ import annotations

import numpy as np

from vault_engine.index.fakes import HashEmbedder


def test_same_words_same_vector_and_unit_norm() -> None:
    fake = HashEmbedder(dim=32)
    vectors = fake.embed(["alpha beta", "beta alpha", "gamma"])
    assert np.allclose(vectors[0], vectors[1])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert float(vectors[0] @ vectors[2]) < 0.99
    assert fake.calls == 3


def test_chunks_cover_every_word() -> None:
    fake = HashEmbedder(window=10)
    text = " ".join(str(i) for i in range(35))
    pieces = fake.chunks(text)
    assert len(pieces) == 4
    assert " ".join(pieces).split() == text.split()
