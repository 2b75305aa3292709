"""After a merge: what the merged journal and files say, made true on this machine.

A merge joins two histories file by file; two things only the whole vault shows:

- **Permanent forgets of the other machine.** Its purge event arrived with the
  journal, but this machine may still hold the memory's file.  The event
  carries the digest of the text it forgot; a forget applies only to what
  the forgetting machine saw.  A file holding exactly that text (its words,
  at least) goes and the events about the memory are scrubbed, as the forget
  did there; the purge's digest then keeps the text from being learned again
  here too.  A file whose text changed since (edited on this machine, or a
  third one), or a purge without a digest (no memvault writes one; a line
  written by hand), is *kept*: a ``purge-declined`` event names the purge,
  so every machine, the forgetting one included, reads the memory again, and
  the sync's summary and ``status`` say so.  Anyone who can push can still
  forget a memory on every machine, as they can delete any file of a git
  repository: this rule keeps edits made since, not a repository's writers out.
- **Concurrent corrections.** Both machines corrected the same memory: two new
  versions, each superseding it.  The one the merged memory names as its
  successor stays current; the other becomes its conflict version (titled so,
  ``conflict_of`` the current one, linked both ways), as a body conflict does.

Every step is deterministic, and its journal event is named by what it records,
so machines that reconcile the same merge write the same files and one event.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import VaultError
from ..format.ids import derived_event_id
from ..format.memory import memory_text, text_digest, words_digest
from ..journal import PURGE_DECLINED, Event
from ..store import read_entry
from .merge import CONFLICT_KEY

if TYPE_CHECKING:
    from ..format.value import Memory
    from ..store import Entry, Scan
    from ..vault import Vault

CONFLICT_SUFFIX = " (conflicting version)"


@dataclass(slots=True)
class Reconciled:
    """What :func:`reconcile` changed."""

    purged: list[str] = field(default_factory=list)  # memories removed: permanently forgotten elsewhere
    kept: list[str] = field(default_factory=list)  # memories kept: forgotten elsewhere, but not this text
    scrubbed: int = 0  # journal events whose text was replaced by its hash
    conflicts: list[str] = field(default_factory=list)  # versions that became conflict versions

    @property
    def changed(self) -> bool:
        return bool(self.purged or self.kept or self.scrubbed or self.conflicts)


def reconcile(vault: Vault) -> Reconciled:
    """Apply the other machines' permanent forgets and settle concurrent corrections (see the module)."""
    done = Reconciled()
    purges = _purges(vault)
    with vault.transaction() as tx:
        scan = vault.scan()
        events = []
        # The scan leaves out the files of purged ids (see store.scan) and names them in ``forgotten``.
        for memory_id, paths in sorted(scan.forgotten.items()):
            kept = False
            for path in paths:
                memory = _read(vault, path)
                if memory is not None and not any(_same_text(e, memory) for e in purges.get(memory_id, ())):
                    kept = True
                else:
                    tx.remove(path)
            if kept:
                done.kept.append(memory_id)
                events += [Event(PURGE_DECLINED, memory_id, {
                    "purge": e.id, "reason": "the memory changed after this forget saw it" if "text_sha256" in e.payload
                    else "the forget names no text"}, id=derived_event_id(PURGE_DECLINED, e.id))
                    for e in purges.get(memory_id, ())]
            else:
                done.purged.append(memory_id)
        purged = set(purges) - set(done.kept)
        if purged:
            done.scrubbed = vault.journal.scrub(purged)
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


def declined_purges(events: Iterable[Event]) -> set[str]:
    """The ids of the purge events a ``purge-declined`` event declined."""
    return {str(e.payload.get("purge")) for e in events if e.kind == PURGE_DECLINED}


def purge_applies(vault: Vault, memory: Memory) -> bool:
    """Whether a permanent forget in the journal (not declined) forgot exactly ``memory``'s text."""
    return any(_same_text(e, memory) for e in _purges(vault).get(memory.id, ()))


def _purges(vault: Vault) -> dict[str, list[Event]]:
    """The permanent forgets in the journal that no ``purge-declined`` event declined, by memory id."""
    events = list(vault.journal.events(("purge", PURGE_DECLINED)))
    declined = declined_purges(events)
    out: dict[str, list[Event]] = {}
    for e in events:
        if e.kind == "purge" and e.payload.get("permanent") and e.id not in declined:
            out.setdefault(e.memory, []).append(e)
    return out


def _same_text(event: Event, memory: Memory) -> bool:
    """Whether the forget ``event`` saw ``memory``'s text (by its digest, or its words' digest); a forget
    made again (a file back from a backup) counts when an earlier forget of the id saw it."""
    text = memory_text(memory)
    return (event.payload.get("text_sha256") == text_digest(text)
            or event.payload.get("words_sha256") == words_digest(text))


def _read(vault: Vault, path: str) -> Memory | None:
    try:
        memory = read_entry(vault.root, path).memory
    except VaultError:
        return None
    return None if memory.plain else memory


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
