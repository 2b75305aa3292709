"""A query's scores against every stored vector: one matrix-vector product, in two halves side by side
when the matrix is large.

Scoring 10,000 memories reads their whole matrix (about 57,000 rows, 87 MB): the product is bound
by memory, not arithmetic, and one core reads it in about 4.5 ms.  BLAS runs on one thread here
(``OPENBLAS_NUM_THREADS=1``, set in the package: its own pool spun against the model's), so a large
matrix is cut in two and the lower half multiplied on a helper thread while this one does the
upper; numpy releases the interpreter's lock for both (``benchmarks`` figures in
``docs/performance.md``: 4.4 -> 2.8 ms at 10,000 memories).

The scores are the same bits as one product's: each row is its own dot product, and the cut falls on
a multiple of :data:`ROW_BLOCK` rows, so the kernel groups the rows of each half as it grouped them
in the whole (``tests/unit/test_matvec.py`` checks this against the installed BLAS).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

PARALLEL_ROWS = 16_384  # a matrix of at least this many rows is multiplied in two halves
ROW_BLOCK = 64  # the cut falls on a multiple of this many rows (BLAS kernels group rows by 4 to 16)

_helper: ThreadPoolExecutor | None = None
_helper_lock = threading.Lock()


def scores(matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``matrix @ query``, the same bits, in two halves side by side when ``matrix`` is large and
    this process may run on two cores or more."""
    rows = len(matrix)
    if rows < PARALLEL_ROWS or _cores() < 2:
        return np.asarray(matrix @ query)
    cut = rows // 2 // ROW_BLOCK * ROW_BLOCK
    lower: Future[npt.NDArray[np.float32]] = _pool().submit(np.matmul, matrix[cut:], query)
    upper = matrix[:cut] @ query
    return np.concatenate([upper, lower.result()])


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _pool() -> ThreadPoolExecutor:
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memvault-matvec")
        return _helper
