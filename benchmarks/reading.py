"""What indexing makes the model read, and the naive pass it is compared with.

:class:`ReadCounter` wraps a vault's embedder and counts every text the model reads (a text it
embeds, or a host whose sentences are pooled from one pass) and its tokens as the model reads
them: [CLS] and [SEP] included, cut at the model's window.  :func:`naive_pass` embeds texts once
each with fastembed itself (its defaults: the texts in order, ``batch_size=256``), the model given
as the same int8 graph the vault runs, the way anyone would embed a chat log without memvault.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vault_engine import config as config_mod
from vault_engine.config import EmbeddingSettings
from vault_engine.index.embedder import ASSETS, DEFAULT_MODEL, DelegatingEmbedder, Embedder
from vault_engine.index.model_graph import graph_folder

_naive: dict[str, Any] = {}  # the fastembed model, loaded once per process


class ReadCounter:
    """Counts what the model reads through the embedders it wraps."""

    def __init__(self, window: int = EmbeddingSettings().max_tokens):
        self.window = window
        self.texts: list[str] = []
        self._tokenizer: Any = None
        self.inner: Embedder | None = None

    def wrap(self, embedder: Embedder) -> Embedder:
        self.inner = embedder
        return _Counted(embedder, self)

    def tokens(self, texts: Sequence[str]) -> int:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(str(ASSETS / "tokenizer.json"))
            self._tokenizer.no_padding()
            self._tokenizer.no_truncation()
        return sum(min(self.window, len(e.ids)) for e in self._tokenizer.encode_batch(list(texts)))

    def report(self, memories: int) -> dict[str, Any]:
        return {"texts": len(self.texts), "tokens": self.tokens(self.texts), "memories": memories}


class _Counted(DelegatingEmbedder):
    """An embedder that tells a :class:`ReadCounter` what it reads."""

    def __init__(self, inner: Embedder, counter: ReadCounter):
        super().__init__(inner)
        self._counter = counter

    def embed(self, texts: Sequence[str]) -> Any:
        self._counter.texts.extend(texts)
        return self.inner.embed(texts)

    def embed_spans(self, texts: Sequence[str], spans: Sequence[Sequence[Sequence[tuple[int, int]]]]) -> Any:
        self._counter.texts.extend(texts)
        return self.inner.embed_spans(texts, spans)


def _fastembed(graph: Path) -> Any:
    """fastembed's TextEmbedding running ``graph`` (all-MiniLM-L6-v2, mean pooling, normalised)."""
    if "model" in _naive:
        return _naive["model"]
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    folder = Path(tempfile.mkdtemp(prefix="lme-fastembed-"))
    model_dir = folder / "model"
    model_dir.mkdir()
    # Copies, not links: onnxruntime refuses a graph's external weights that resolve outside the folder
    # of the graph it was given (the int8 graph keeps its weights in a file beside it).
    shutil.copyfile(graph, model_dir / "model.onnx")
    for weights in graph.parent.glob(graph.name + ".weights"):
        shutil.copyfile(weights, model_dir / weights.name)
    special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
               "mask_token": "[MASK]"}
    settings = EmbeddingSettings()
    (model_dir / "tokenizer.json").write_bytes((ASSETS / "tokenizer.json").read_bytes())
    (model_dir / "tokenizer_config.json").write_text(json.dumps(
        {**special, "model_max_length": settings.max_tokens, "do_lower_case": True}, sort_keys=True))
    (model_dir / "special_tokens_map.json").write_text(json.dumps(special, sort_keys=True))
    name = f"{DEFAULT_MODEL}-naive"
    TextEmbedding.add_custom_model(model=name, pooling=PoolingType.MEAN, normalization=True,
                                   sources=ModelSource(hf=name), dim=384, model_file="model.onnx",
                                   license="apache-2.0", size_in_gb=0.023)
    model = TextEmbedding(name, specific_model_path=str(model_dir), cache_dir=str(folder),
                          threads=settings.threads, local_files_only=True)
    list(model.embed(["warm up"]))
    _naive["model"] = model
    return model


def naive_pass(texts: Sequence[str], counter: ReadCounter) -> dict[str, Any]:
    """Seconds and tokens of fastembed embedding ``texts`` once each, with the graph the counter's
    embedder runs."""
    inner: Any = counter.inner
    graph = Path(inner._load().graph)  # the default model's graph, as the vault ran it
    if not graph.is_file():  # read through a cold build's cache folder, gone since: the user's keeps it
        graph = graph_folder(config_mod.cache_folder(config_mod.CacheSettings())) / graph.name
    graph = graph.resolve()
    model = _fastembed(graph)
    started = time.perf_counter()
    list(model.embed(list(texts)))
    return {"naive_s": time.perf_counter() - started, "naive_tokens": counter.tokens(texts)}
