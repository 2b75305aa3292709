"""The ``memvault`` command line: parse, call one core function, print.

Errors from the core (:class:`VaultError`) are turned into one stderr line
and a non-zero exit in :meth:`.root.MemvaultGroup.invoke`, in one place.
"""

from . import (  # commands register themselves on `cli`
    admin,
    context,
    documents,
    governance,
    ingest,
    memories,
    project,
    reflect,
    search,
    servers,
    watch,
)
from .root import cli, main

__all__ = ["admin", "cli", "context", "documents", "governance", "ingest", "main", "memories", "project", "reflect",
           "search", "servers", "watch"]

if __name__ == "__main__":  # pragma: no cover
    main()
