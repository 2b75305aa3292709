"""Whether two memories are about the same thing, before governance contradicts or merges them.

The reading of the texts (sentences, subjects, identifiers) is :mod:`vault_engine.retrieval.restatements`;
search asks the same question before it shows two hits as stating different values.
"""

from __future__ import annotations

from functools import lru_cache

from ..format.memory import Memory
from ..retrieval.restatements import Judgement, compare_texts


@lru_cache(maxsize=65536)  # supersede, merge and link steps ask about mostly the same pairs
def judge(older: Memory, newer: Memory) -> Judgement:
    """:func:`compare_texts` on two memories' titles and bodies."""
    return compare_texts(f"{older.title}\n{older.body}", f"{newer.title}\n{newer.body}")


def distinct(older: Memory, newer: Memory) -> str | None:
    """Why two memories are distinct facts that may neither merge nor supersede (None: they may)."""
    found = judge(older, newer)
    return found.reason() if found.distinct is not None else None
