"""How much text memvault takes at once, the same on every interface (command line, MCP, HTTP, Python).

Each limit is written here once and checked before any work is done: a
longer input is refused whole, in one line, and nothing is written.

* ``MAX_TEXT``: one memory's text (``add``, ``correct``, the ``body`` of an
  import line, the MCP tools' and the HTTP API's ``text``).
* ``MAX_TITLE``, ``MAX_SUMMARY`` (also a trigger), ``MAX_TAG`` and
  ``MAX_ITEMS`` (tags or paths given at once): the short fields a person or
  an agent gives with a memory, on the command line as over the servers.
* ``MAX_DOCUMENT``: a document, a tool output or a conversation given at
  once (``ingest-doc``, ``remember-output``, ``ingest``), which memvault cuts
  into parts; also the longest line ``import`` reads. A million characters
  is a long book; ingesting it takes about a minute.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import InvalidInput

MAX_TEXT = 200_000  # characters
MAX_DOCUMENT = 1_000_000  # characters
MAX_TITLE = 300
MAX_SUMMARY = 2000  # a summary, and a trigger
MAX_TAG = 200
MAX_ITEMS = 50  # paths or tags one memory may be given at once


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


def check_fields(*, title: str | None = None, summary: str | None = None, trigger: str | None = None,
                 tags: Sequence[str] = (), paths: Sequence[str] = ()) -> None:
    """Refuse short fields past their limits (see the module docstring), before any work.

    Raises:
        InvalidInput: a field is too long, or too many tags or paths are given, naming the field.
    """
    for name, value, limit in (("title", title, MAX_TITLE), ("summary", summary, MAX_SUMMARY),
                               ("trigger", trigger, MAX_SUMMARY)):
        if value is not None:
            check_length(value, limit, name)
    for name, values in (("tags", tags), ("paths", paths)):
        if len(values) > MAX_ITEMS:
            raise InvalidInput(f"{name}: at most {MAX_ITEMS} may be given, got {len(values)}")
    for tag in tags:
        check_length(tag, MAX_TAG, "a tag")
        if not tag.strip():
            raise InvalidInput("a tag is empty: give it a word (or leave the tag out)")
