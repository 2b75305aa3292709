"""Sync planning: compare the files with what the indexes hold.

:func:`plan_changes` is pure: given each memory's (path, content digest) on
disk and in the index, it returns the :class:`ChangeSet` to apply.  A file
whose bytes are unchanged but whose path moved is a *move* (no re-embedding);
a changed digest is a *modification*.  Applying it is :mod:`sync`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Located:
    """Where a memory's file is and which bytes it holds."""

    path: str
    digest: str


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What sync must do, by memory id."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.added or self.modified or self.moved or self.deleted)

    def summary(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.modified)} modified, {len(self.moved)} moved, "
            f"{len(self.deleted)} deleted, {self.unchanged} unchanged"
        )


def plan_changes(disk: Mapping[str, Located], indexed: Mapping[str, Located]) -> ChangeSet:
    """The changes that bring ``indexed`` in line with ``disk`` (both keyed by memory id)."""
    added, modified, moved = [], [], []
    unchanged = 0
    for memory_id in sorted(disk):
        now = disk[memory_id]
        before = indexed.get(memory_id)
        if before is None:
            added.append(memory_id)
        elif before.digest != now.digest:
            modified.append(memory_id)
        elif before.path != now.path:
            moved.append(memory_id)
        else:
            unchanged += 1
    deleted = sorted(set(indexed) - set(disk))
    return ChangeSet(tuple(added), tuple(modified), tuple(moved), tuple(deleted), unchanged)
