"""After a merge: what the merged journal and files say, made true on this machine.

A merge joins two histories file by file; two things only the whole vault shows:

- **Permanent forgets of the other machine.** Its purge event arrived with the
  journal, but this machine may still hold the memory's file (it changed it
  meanwhile) and events about it that the other machine never saw.  The file
  goes and those events are scrubbed, as the forget did there; the purge's
  digest then keeps the text from being learned again here too.
- **Concurrent corrections.** Both machines corrected the same memory: two new
  versions, each superseding it.  The one the merged memory names as its
  successor stays current; the other becomes its conflict version (titled so,
  ``conflict_of`` the current one, linked both ways), as a body conflict does.

Every step is deterministic, and its journal event is named by what it records,
so machines that reconcile the same merge write the same files and one event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..format.ids import derived_event_id
from ..journal import Event
from .merge import CONFLICT_KEY

if TYPE_CHECKING:
    from ..store import Entry, Scan
    from ..vault import Vault

CONFLICT_SUFFIX = " (conflicting version)"


@dataclass(slots=True)
class Reconciled:
    """What :func:`reconcile` changed."""

    purged: list[str] = field(default_factory=list)  # memories removed: permanently forgotten elsewhere
    scrubbed: int = 0  # journal events whose text was replaced by its hash
    conflicts: list[str] = field(default_factory=list)  # versions that became conflict versions

    @property
    def changed(self) -> bool:
        return bool(self.purged or self.scrubbed or self.conflicts)


def reconcile(vault: Vault) -> Reconciled:
    """Apply the other machines' permanent forgets and settle concurrent corrections (see the module)."""
    done = Reconciled()
    purged = {e.memory for e in vault.journal.events(("purge",)) if e.payload.get("permanent")}
    with vault.transaction() as tx:
        scan = vault.scan()
        # The scan leaves out the files of purged ids (see store.scan) and names them in ``forgotten``.
        for memory_id, paths in sorted(scan.forgotten.items()):
            if memory_id in purged:
                for path in paths:
                    tx.remove(path)
                done.purged.append(memory_id)
        if purged:
            done.scrubbed = vault.journal.scrub(purged)
        events = []
        for winner, losers in _concurrent_corrections(scan, purged):
            links = list(winner.memory.links)
            for loser in losers:
                memory = loser.memory
                title = memory.title if memory.title.endswith(CONFLICT_SUFFIX) else memory.title + CONFLICT_SUFFIX
                tx.write(loser.path, memory.replace(
                    title=title, links=tuple(dict.fromkeys([*memory.links, winner.memory.id])),
                    extra={**memory.extra, CONFLICT_KEY: winner.memory.id}), loser.parsed)
                links.append(memory.id)
                done.conflicts.append(memory.id)
                events.append(Event("conflict", memory.id, {"current": winner.memory.id,
                                                            "reason": "corrected on two machines at once"},
                                    id=derived_event_id("conflict", memory.id, winner.memory.id)))
            tx.write(winner.path, winner.memory.replace(links=tuple(dict.fromkeys(links))), winner.parsed)
        if events:
            known = vault.journal.known_ids()
            tx.record(*(e for e in events if e.id not in known))
    return done


def _concurrent_corrections(scan: Scan, purged: set[str]) -> list[tuple[Entry, list[Entry]]]:
    """(current version, the others) for each memory that more than one current version supersedes."""
    by_target: dict[str, list[Entry]] = {}
    for entry in scan.active():
        memory = entry.memory
        if (memory.supersedes and memory.lifecycle != "superseded" and memory.id not in purged
                and CONFLICT_KEY not in memory.extra):
            by_target.setdefault(memory.supersedes, []).append(entry)
    out = []
    for target, versions in sorted(by_target.items()):
        if len(versions) < 2:
            continue
        old = scan.entries.get(target)
        named = old.memory.superseded_by if old is not None else None
        winner = next((v for v in versions if v.memory.id == named), None) or max(
            versions, key=lambda v: (v.memory.updated.isoformat() if v.memory.updated else "", v.memory.id))
        out.append((winner, sorted((v for v in versions if v is not winner), key=lambda v: v.memory.id)))
    return out
