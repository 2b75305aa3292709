"""The ``memvault`` command line: parse, call one core function, print.

Errors from the core (:class:`VaultError`) are turned into one stderr line
and a non-zero exit in :meth:`.root.MemvaultGroup.invoke`, in one place.

The command modules register themselves on :data:`cli` when it is first asked
for.  :func:`main` answers an agent's hook (``memvault [--vault DIR] hook AGENT
EVENT``) before any of them is imported: with a server of the vault running,
the hook is a file read and one local HTTP call (see :mod:`vault_engine.agents.hooks`).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import click

COMMANDS = ("admin", "agents", "context", "documents", "governance", "ingest", "memories", "project", "reflect",
            "search", "servers", "sharing", "watch")

__all__ = ["cli", "main"]


def commands() -> click.Group:
    """The root group with every command registered."""
    from importlib import import_module

    for name in COMMANDS:
        import_module(f".{name}", __name__)
    from .root import cli

    return cli


def __getattr__(name: str) -> Any:
    if name == "cli":
        return commands()
    if name in COMMANDS:
        from importlib import import_module

        return import_module(f".{name}", __name__)
    raise AttributeError(f"module 'vault_engine.cli' has no attribute {name!r}")


def main() -> None:
    """Console entry point."""
    from ..agents.hooks import fast_path

    if fast_path(sys.argv[1:]):
        # The hook has answered and written what it keeps: it ends without the interpreter's
        # teardown of the search's libraries (about 30 ms the agent would wait for).
        import contextlib

        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # the agent stopped reading: nothing more to say
                stream.flush()
        os._exit(0)
    from ..server.mcp_handshake import answer_early

    answer_early(sys.argv[1:])  # memvault mcp: the client's initialize answered before the command line loads
    commands().main(prog_name="memvault")


if __name__ == "__main__":  # pragma: no cover
    main()
