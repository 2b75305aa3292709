"""A query's scores in two halves side by side: the same bits as one product, with the installed BLAS."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from vault_engine.index import matvec


def _matrix(rows: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((rows, 384)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


@pytest.mark.parametrize("rows", [matvec.PARALLEL_ROWS, matvec.PARALLEL_ROWS + 1, 3 * matvec.PARALLEL_ROWS + 37])
def test_a_large_matrix_is_scored_in_halves_with_the_bits_of_one_product(
        rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matvec, "_cores", lambda: 2)
    matrix = _matrix(rows)
    threads: list[str] = []
    real_matmul = np.matmul

    def spied(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        threads.append(threading.current_thread().name)
        return real_matmul(a, b)

    monkeypatch.setattr(matvec.np, "matmul", spied)
    for seed in range(5):
        query = _matrix(1, seed=100 + seed)[0]
        whole = matrix @ query
        halves = matvec.scores(matrix, query)
        assert halves.dtype == np.float32 and halves.shape == (rows,)
        assert np.array_equal(halves, whole)  # bit for bit, not merely close
    assert len(threads) == 5 and all(name.startswith("memvault-matvec") for name in threads)


def test_a_small_matrix_or_a_single_core_is_one_product(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(matvec, "_pool", lambda: calls.append(1))  # would fail if asked for
    small = _matrix(matvec.PARALLEL_ROWS - 1)
    query = _matrix(1, seed=3)[0]
    assert np.array_equal(matvec.scores(small, query), small @ query)
    monkeypatch.setattr(matvec, "_cores", lambda: 1)
    large = _matrix(matvec.PARALLEL_ROWS * 2)
    assert np.array_equal(matvec.scores(large, query), large @ query)
    assert calls == []
