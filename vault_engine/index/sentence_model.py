"""The default model run by onnxruntime and tokenizers directly, exactly as fastembed runs it.

Importing fastembed costs more than the model it runs: it pulls in huggingface_hub, requests,
tqdm and PIL (about 0.36 s of a hook's 0.4 s budget), none of which embeds anything.  For the
default model (:data:`~vault_engine.index.embedder.DEFAULT_MODEL`) every step fastembed takes is
done here with the same libraries and the same settings, so the vectors are the same bits:

- the tokenizer: the vendored ``tokenizer.json``, truncated at ``max_tokens`` on the right, the
  special tokens registered, padded to the longest text of the batch with ``[PAD]`` (fastembed's
  ``load_tokenizer`` with this model's ``tokenizer_config.json``);
- the session: CPU, every graph optimisation on, ``threads`` intra- and inter-op threads
  (fastembed's ``_load_onnx_model``);
- the vector: the mean of the token states the attention mask keeps, summed in float64, divided by
  its L2 norm (at least 1e-12), then cast to float32 (``mean_pooling`` and ``normalize``).

``tests/integration/test_sentence_model.py`` checks the bits against fastembed itself.  Other models
still go through fastembed (:class:`~vault_engine.index.embedder.FastEmbedder`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SPECIAL_TOKENS = ("[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]")  # in the order fastembed registers them
PAD_TOKEN = "[PAD]"
OUTPUT = "last_hidden_state"


def load_tokenizer(path: Path, max_tokens: int) -> Any:
    """The tokenizer fastembed builds from ``path`` for a window of ``max_tokens``."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(max_length=max_tokens, direction=truncation.get("direction", "right"))
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or PAD_TOKEN
    pad_id = padding.get("pad_id")
    tokenizer.enable_padding(direction=padding.get("direction", "right"),
                             pad_id=tokenizer.token_to_id(pad_token) if pad_id is None else pad_id,
                             pad_type_id=padding.get("pad_type_id", 0), pad_token=pad_token,
                             pad_to_multiple_of=padding.get("pad_to_multiple_of"), length=None)
    return tokenizer


class SentenceModel:
    """all-MiniLM-L6-v2's graph and tokenizer, loaded once; :meth:`embed` gives fastembed's vectors."""

    embedding_size = 384

    def __init__(self, graph: Path, tokenizer: Path, max_tokens: int, threads: int | None):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = threads
        # The pool's threads spin while a run hands out work, then sleep once it returns: a search's
        # next steps (the vectors' product on a helper thread, :mod:`.matvec`) get the cores back.
        options.add_session_config_entry("session.force_spinning_stop", "1")
        self.graph = graph
        self.session = ort.InferenceSession(str(graph), sess_options=options, providers=["CPUExecutionProvider"])
        self.inputs = {node.name for node in self.session.get_inputs()}
        self.tokenizer = load_tokenizer(tokenizer, max_tokens)

    def tokenize(self, texts: Sequence[str]) -> list[Any]:
        """The encodings of one batch, padded to its longest text."""
        return list(self.tokenizer.encode_batch(list(texts)))

    def states(self, encodings: Sequence[Any]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """The token states of a batch of encodings, and its attention mask."""
        import numpy as np

        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        states = self.session.run([OUTPUT], {k: v for k, v in feed.items() if k in self.inputs})[0]
        return states, mask

    def embed(self, texts: Sequence[str], batch_size: int) -> npt.NDArray[np.float32]:
        """One unit vector per text, batch by batch."""
        import numpy as np

        rows = []
        for start in range(0, len(texts), max(1, batch_size)):
            states, mask = self.states(self.tokenize(texts[start : start + batch_size]))
            rows.append(mean_pooled(states, mask))
        if not rows:
            return np.zeros((0, self.embedding_size), dtype=np.float32)
        return np.ascontiguousarray(np.vstack(rows), dtype=np.float32)


def mean_pooled(states: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """fastembed's mean pooling and normalisation of a batch: float64 sums, cast back at the end."""
    import numpy as np

    sums = np.sum(states, axis=1, where=mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
    pooled = sums / np.maximum(np.sum(mask, axis=1, keepdims=True), 1e-9)
    norm = np.maximum(np.linalg.norm(pooled, ord=2, axis=1, keepdims=True), 1e-12)
    return np.asarray(pooled / norm).astype(states.dtype, copy=False)
