"""memvault: a file-based memory vault for LLM agents.

The public API is small and importing it loads no heavy library.
"""

from __future__ import annotations

import os

# Vector search is one matrix-vector product, bound by memory bandwidth: a
# second BLAS thread gains nothing and fights the embedding model's own
# thread pool (search p50 at 10,000 memories: 19 ms with it, 13 ms without).
# Only effective when numpy is not imported yet; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .config import VaultConfig
from .errors import VaultError
from .format.memory import Memory, parse, render
from .vault import NewMemory, Vault
from .version import __version__

__all__ = ["Memory", "NewMemory", "Vault", "VaultConfig", "VaultError", "__version__", "parse", "render"]
