"""What changed on disk since the last sync, cheaply enough to ask before every read.

Every read (search, context, ``show``, a server's request, an agent's hook) asks this first, so
that a memory edited, deleted, renamed or added by hand (an editor, ``git pull``) is indexed again
before the answer, with or without ``memvault watch`` running.  It is the stat cache's own test
(:mod:`.disk`), without reading the catalog or parsing anything: the vault's markdown files are
listed (:func:`store.stat_markdown`) and each one's stat (mtime, size, inode, change time) is
compared with what the last sync recorded.  Only a file whose stat differs is read, and it counts as
changed only when its bytes differ too; a file touched but not changed (a checkout that rewrote it
as it was, or one recorded in the clock tick of its last edit: *racy*, see :mod:`.disk`) is
*settled* instead: its new stat is recorded, so the next reader does not read it again.

Directory change times cannot replace the walk: an edit in place changes the file's times, not its
folder's, so every file is stat'ed either way (``benchmarks/freshness.py`` measures the walk).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import store
from ..format.memory import content_digest
from ..fsio import write_atomic
from .disk import STAT_CACHE, load_stat_cache, stat_entry, unchanged


@dataclass(frozen=True, slots=True)
class Changes:
    """The files whose bytes differ from the last sync's (added, changed or gone), and the files whose
    stat alone changed, with the stat cache entries that record them."""

    paths: tuple[str, ...] = ()
    settled: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.paths


class RecordedStats:
    """The stat cache as last read, kept by a long-lived process (a server): parsed again only when the
    file was replaced (every sync writes a new file)."""

    def __init__(self, path: Path):
        self.path = path
        self._stamp: tuple[int, int, int] | None = None
        self._cache: dict[str, list[Any]] = {}

    def load(self) -> Mapping[str, Sequence[Any]]:
        try:
            info = os.stat(self.path)
        except OSError:
            return {}
        stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
        if stamp != self._stamp:
            self._cache, self._stamp = load_stat_cache(self.path), stamp
        return self._cache


def changes(root: Path) -> Changes:
    """The files of ``root`` changed since the last sync (nothing is written)."""
    cache = load_stat_cache(root / store.STATE_DIR / STAT_CACHE)
    return compare(root, cache)


def compare(root: Path, cache: Mapping[str, Sequence[Any]]) -> Changes:
    """:func:`changes` against the stat cache ``cache``."""
    changed: list[str] = []
    settled: dict[str, list[Any]] = {}
    seen: set[str] = set()
    for rel, info in store.stat_markdown(root):
        seen.add(rel)
        known = cache.get(rel)
        if known is not None and unchanged(known, info):
            continue
        try:
            if known is not None and content_digest((root / rel).read_bytes()) == known[2]:
                entry = stat_entry(info, str(known[2]), str(known[3]))
                if entry != list(known):
                    settled[rel] = entry
                continue
        except OSError:  # gone or unreadable since it was listed: sync decides
            pass
        changed.append(rel)
    changed += sorted(set(cache) - seen)
    return Changes(tuple(changed), settled)


def settle(root: Path, settled: Mapping[str, Sequence[Any]]) -> None:
    """Record the new stats of files whose bytes did not change (the caller holds the index lock,
    which every writer of the stat cache holds)."""
    path = root / store.STATE_DIR / STAT_CACHE
    cache = load_stat_cache(path)
    updated = {rel: list(entry) for rel, entry in settled.items()
               if rel in cache and cache[rel][2:4] == list(entry[2:4])}
    if updated and any(cache[rel] != entry for rel, entry in updated.items()):
        cache.update(updated)
        write_atomic(path, json.dumps(cache, sort_keys=True, separators=(",", ":")))
