"""``repair``: each file holding an id that another file keeps gets an id of its own.

Which copy keeps an id is the rule of :mod:`vault_engine.copies` (the copy the
indexes hold, first); every other copy is ignored, reported by ``status`` and
``audit``, until it is repaired.  A copy holding the same memory (title and
text) as the copy kept is what an interrupted move leaves: ``maintain`` removes
it, and ``repair`` leaves it alone.  A plain note's id comes from its path, so a
plain note is never given another.

Each new id is written first (the file rewritten in place, atomically, read
back), then journalled as a ``reid`` event (its memory: the new id; payload: the
old id, the path, the title and text digest, the copy that kept the old id).  ``memvault rollback NEW-ID``
gives the file its old id back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from .. import copies, store
from ..clock import now
from ..errors import MemoryFileError, NothingToUndo
from ..format.ids import new_memory_id
from ..format.memory import memory_text, text_digest
from ..journal import Event
from ..store import Scan
from .ports import Open as Vault
from .results import ChangeResult
from .transaction import Transaction

KIND = "reid"


@dataclass(frozen=True, slots=True)
class Reid:
    """One copy given an id of its own (or, in a dry run, to be given one)."""

    path: str
    old: str
    new: str
    title: str
    kept: str  # the path of the copy that keeps the old id
    event: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "old": self.old, "new": self.new, "title": self.title, "kept": self.kept,
                "event": self.event}


def plan(vault: Vault, scan: Scan) -> list[Reid]:
    """The copies ``scan`` ignores that hold a memory of their own, each with a fresh id."""
    out = []
    for memory_id in sorted(scan.duplicates):
        kept = scan.entries[memory_id]
        for path in sorted(scan.duplicates[memory_id]):
            try:
                entry = store.read_entry(vault.root, path)
            except MemoryFileError:  # changed since the scan; the next repair looks again
                continue
            memory = entry.memory
            if memory.id != memory_id or memory.plain or copies.same_memory(memory, kept.memory):
                continue
            out.append(Reid(path, memory_id, new_memory_id(), memory.title, kept.path))
    return out


def repair(vault: Vault, *, dry_run: bool = False) -> list[Reid]:
    """Give every copy that lost its id to another file an id of its own (with ``dry_run``: say which)."""
    if dry_run:
        return plan(vault, vault.scan())
    stamp = now()
    done = []
    with vault.transaction() as tx:
        for item in plan(vault, vault.scan()):
            entry = store.read_entry(vault.root, item.path)
            tx.write(item.path, entry.memory.replace(id=item.new, updated=stamp, plain=False), entry.parsed)
            event = Event(KIND, item.new, {"from": item.old, "path": item.path, "title": item.title,
                                           "text_sha256": text_digest(memory_text(entry.memory)), "kept": item.kept})
            tx.record(event)
            done.append(replace(item, event=event.id))
    return done


def undo(vault: Vault, tx: Transaction, target: Event, scan: Scan, stamp: datetime) -> ChangeResult:
    """Give the file that ``target`` (a ``reid`` event) gave a new id its old id back."""
    entry = vault.entry(target.memory, scan)
    old = target.payload.get("from")
    if not isinstance(old, str):
        raise NothingToUndo(f"{target.id} names no earlier id")
    tx.write(entry.path, entry.memory.replace(id=old, updated=stamp), entry.parsed)
    return ChangeResult("rolled-back", old, entry.path, related=target.memory)
