"""memvault: a file-based memory vault for LLM agents.

The public API is small and importing it loads no heavy library: the names
below are imported on first use, so a command that needs none of them (an
agent's hook answered by a running server) starts in milliseconds.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# Vector search is one matrix-vector product, bound by memory bandwidth: a
# second BLAS thread gains nothing and fights the embedding model's own
# thread pool (search p50 at 10,000 memories: 19 ms with it, 13 ms without).
# Only effective when numpy is not imported yet; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

if TYPE_CHECKING:
    from .config import VaultConfig
    from .errors import VaultError
    from .format.memory import Memory, parse, render
    from .vault import NewMemory, Vault
    from .version import __version__

__all__ = ["Memory", "NewMemory", "Vault", "VaultConfig", "VaultError", "__version__", "parse", "render"]

_WHERE = {"VaultConfig": "config", "VaultError": "errors", "Memory": "format.memory", "parse": "format.memory",
          "render": "format.memory", "NewMemory": "vault", "Vault": "vault", "__version__": "version"}


def __getattr__(name: str) -> Any:
    """The public names, imported when first asked for."""
    if name not in _WHERE:
        raise AttributeError(f"module 'vault_engine' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value
