"""memvault: a file-based memory vault for LLM agents.

The public API is small and importing it loads no heavy library.
"""

from __future__ import annotations

from .config import VaultConfig
from .errors import VaultError
from .memory import Memory, parse, render
from .vault import NewMemory, Vault

__version__ = "0.1.0"

__all__ = ["Memory", "NewMemory", "Vault", "VaultConfig", "VaultError", "__version__", "parse", "render"]
