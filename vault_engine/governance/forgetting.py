"""Forgetting on purpose: decay to the trash, trash expiry, and finishing interrupted moves.

- **Decay**: an inferred cold memory whose ``importance * decay`` falls below
  ``decay.forget_below`` goes to the trash (never straight to deletion).
  Explicit memories (a person said so), core profiles, episodes and documents
  (raw content) and memories at or above ``decay.exempt_importance`` never
  decay away.
- **Expiry**: a trashed memory past its ``expires_at`` is purged; the journal
  keeps a tombstone (id, title digest, text digest).
- **Repair**: a move is write-first-then-remove; a crash in between leaves
  the same memory in two places.  The copy written last wins and the other
  is removed, so no memory is lost or doubled.
"""

from __future__ import annotations

import dataclasses

from .. import store
from ..errors import MemoryFileError
from ..format.memory import Memory, memory_text, normalize_text
from .actions import Action, View
from .classify import NEVER_DECAY_TYPES, decay, idle_days, moment_key


def decays(memory: Memory) -> bool:
    """Whether ``memory`` may be trashed by decay at all."""
    return (
        memory.authority == "inferred"
        and memory.tier == "cold"
        and memory.type not in NEVER_DECAY_TYPES
        and memory.trust != "system"
        # Undated memories (written by hand without created/updated) have no age to decay by.
        and (memory.last_applied or memory.created or memory.updated) is not None
    )


def plan_decay(view: View) -> list[Action]:
    settings = view.config.decay
    out = []
    for memory in sorted(view.governed(), key=lambda m: m.id):
        if not decays(memory) or memory.importance >= settings.exempt_importance:
            continue
        weight = memory.importance * decay(memory, view.now, view.config)
        if weight < settings.forget_below:
            out.append(Action(
                "decay", memory.id,
                f"importance {memory.importance:.2f} x decay after {idle_days(memory, view.now):.0f} idle days "
                f"= {weight:.3f} < {settings.forget_below}",
                trash=(memory.id,),
            ))
    return out


def plan_expiry(view: View) -> list[Action]:
    out = []
    for memory_id in sorted(view.trashed):
        memory = view.trashed[memory_id]
        expires = memory.expires_at
        if expires is None or (expires if expires.tzinfo else expires.replace(tzinfo=view.now.tzinfo)) > view.now:
            continue
        out.append(Action("expire", memory_id, f"in the trash since {memory.trashed_at}, expired {expires}",
                          purge=(memory_id,)))
    return out


def _same_memory(a: Memory, b: Memory) -> bool:
    return normalize_text(memory_text(a)) == normalize_text(memory_text(b)) and a.title == b.title


def _stamp(memory: Memory) -> str:
    return max(moment_key(memory.updated), moment_key(memory.trashed_at))


def plan_repair(view: View) -> list[Action]:
    """Leftovers of interrupted moves: for each id in two places with the same text, keep the copy written last.

    Copies with different text are a person's doing (a copied file): they are
    reported by the scan and left alone.
    """
    out = []
    for memory_id in sorted(view.duplicates):
        kept = view.entries.get(memory_id)
        if kept is None or view.root is None:
            continue
        copies = [kept]
        for path in view.duplicates[memory_id]:
            try:
                copies.append(store.read_entry(view.root, path))
            except MemoryFileError:
                continue
        if len(copies) < 2 or not all(_same_memory(copies[0].memory, c.memory) for c in copies[1:]):
            continue
        # Written last wins; on a tie the trashed copy wins (the move to the trash was under way), then the
        # copy in use (the one the indexes hold: a copy made by hand is the newcomer).
        winner = max(copies, key=lambda c: (_stamp(c.memory), c.in_trash, c.path == kept.path, c.path))
        losers = tuple(sorted(c.path for c in copies if c.path != winner.path))
        out.append(Action("repair", memory_id, f"interrupted move: kept {winner.path}, removing {', '.join(losers)}",
                          remove=losers))
    return out


def after_repairs(view: View, repairs: list[Action]) -> View:
    """The view once ``repairs`` are applied, each memory as the copy kept holds it (what a dry run plans on)."""
    if view.root is None or not repairs:
        return view
    active, trashed, paths = dict(view.active), dict(view.trashed), dict(view.paths)
    duplicates, entries = dict(view.duplicates), dict(view.entries)
    for action in repairs:
        memory_id = action.memory
        copies = [view.paths.get(memory_id), *view.duplicates.get(memory_id, [])]
        kept = next((p for p in copies if p is not None and p not in action.remove), None)
        duplicates.pop(memory_id, None)
        if kept is None or kept == view.paths.get(memory_id):
            continue
        try:
            entry = store.read_entry(view.root, kept)
        except MemoryFileError:
            continue
        active.pop(memory_id, None)
        trashed.pop(memory_id, None)
        (trashed if entry.in_trash else active)[memory_id] = entry.memory
        paths[memory_id] = kept
        entries[memory_id] = entry
    return dataclasses.replace(view, active=active, paths=paths, trashed=trashed, duplicates=duplicates,
                               entries=entries)
