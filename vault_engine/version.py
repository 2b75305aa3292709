"""The release of memvault (a module of its own, so the package's parts can read it without importing the package)."""

__version__ = "0.1.0"
