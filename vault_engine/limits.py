"""How much text memvault takes at once, the same on every interface (command line, MCP, HTTP, Python).

Each limit is written here once and checked before any work is done: a
longer input is refused whole, in one line, and nothing is written.

* ``MAX_TEXT``: one memory's text (``add``, ``correct``, the ``body`` of an
  import line, the MCP tools' and the HTTP API's ``text``).
* ``MAX_DOCUMENT``: a document, a tool output or a conversation given at
  once (``ingest-doc``, ``remember-output``, ``ingest``), which memvault cuts
  into parts; also the longest line ``import`` reads. A million characters
  is a long book; ingesting it takes about a minute.
"""

from __future__ import annotations

from .errors import InvalidInput

MAX_TEXT = 200_000  # characters
MAX_DOCUMENT = 1_000_000  # characters


def too_long(what: str, limit: int, size: int | None = None, *, hint: str = "",
             path: str | None = None) -> InvalidInput:
    """The error for ``what`` past ``limit`` characters (``size`` when it is known, else "more than")."""
    measured = f"{size} characters; at most {limit}" if size is not None else f"more than {limit} characters"
    return InvalidInput(f"{what} is too long ({measured}){'; ' + hint if hint else ''}", path=path)


def check_length(text: str, limit: int, what: str, *, hint: str = "", path: str | None = None) -> None:
    """Refuse ``text`` when it is longer than ``limit`` characters.

    Raises:
        InvalidInput: ``text`` is too long, naming ``what`` and the limit.
    """
    if len(text) > limit:
        raise too_long(what, limit, len(text), hint=hint, path=path)
