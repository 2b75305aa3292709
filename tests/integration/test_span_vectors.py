"""Sentence vectors read from the model's pass over their host (the real model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vault_engine.config import EmbeddingSettings
from vault_engine.index.derived import span_text
from vault_engine.index.embedder import FastEmbedder
from vault_engine.index.filling import embed_distinct

HOST = ("[8 May 2023] Caroline: Hey Mel! I went to the LGBTQ support group yesterday. "
        "My grandma gave me this necklace when I moved from Sweden.")


def _range(host: str, piece: str) -> tuple[int, int]:
    at = host.index(piece)
    return at, at + len(piece)


def test_the_host_pass_gives_the_hosts_own_vector_and_each_spans(tmp_path: Path) -> None:
    model = FastEmbedder(EmbeddingSettings(), tmp_path / "models")
    sweden = _range(HOST, "My grandma gave me this necklace when I moved from Sweden.")
    group = _range(HOST, "I went to the LGBTQ support group yesterday.")
    vectors, pooled = model.embed_spans([HOST, "A second host."], [[[sweden], [group]], []])
    plain = model.embed([HOST, "A second host."])
    assert np.allclose(vectors, plain, atol=1e-5)  # the same vectors fastembed gives
    [necklace, support] = pooled[0]
    assert necklace is not None and support is not None and pooled[1] == []
    assert abs(float(np.linalg.norm(necklace)) - 1.0) < 1e-5
    question = model.embed(["Where did Caroline move from?"])[0]
    assert float(question @ necklace) > float(question @ support)
    assert float(necklace @ vectors[0]) < 0.95 and float(necklace @ support) < 0.95  # each its own, not the turn's


def test_a_span_past_the_window_is_embedded_alone(tmp_path: Path) -> None:
    model = FastEmbedder(EmbeddingSettings(), tmp_path / "models")
    host = "filler " * 400 + "The last sentence is about otters."
    tail = _range(host, "The last sentence is about otters.")
    _vectors, pooled = model.embed_spans([host], [[[tail]]])
    assert pooled == [[None]]  # the model never read it
    text = span_text(host, [tail])
    found, report = embed_distinct(model, None, [text], 256)
    alone = model.embed(["The last sentence is about otters."])[0]
    assert float(found[text] @ alone) > 0.9999 and report.embedded == 2  # the host, then the sentence alone
