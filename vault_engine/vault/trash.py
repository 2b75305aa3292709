"""The trash: forgetting (a move to the trash, or a purge of every trace), restoring, and emptying it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from .. import store
from ..clock import now
from ..errors import InvalidInput, VaultError
from ..format.ids import new_event_id
from ..format.memory import Memory, memory_text, text_digest, words_digest
from ..format.value import SYNTHESIS_OF, SYNTHESIS_SOURCE
from ..journal import Event
from ..store import Entry, Scan
from .ports import Open as Vault
from .results import ChangeResult
from .transaction import Transaction

log = logging.getLogger("vault_engine.vault")


def trash_path(vault: Vault, entry: Entry, taken: set[str] | None = None) -> str:
    """A free path in the trash for ``entry`` (its file name when free), not among ``taken``."""
    memory = entry.memory
    name = entry.path.rsplit("/", 1)[-1]
    suffix = memory.id[-6:] if memory.id.startswith("m-") else memory.id[:12]
    stem = name[:-3]
    while len(f"{stem}-{suffix}.md".encode("utf-8", "surrogateescape")) > 255:  # a file name's limit
        stem = stem[:-1]
    for dest in (f"{store.TRASH_DIR}/{name}", f"{store.TRASH_DIR}/{stem}-{suffix}.md",
                 f"{store.TRASH_DIR}/{store.slugify(memory.id, 120)}.md"):
        if not (vault.root / dest).exists() and dest not in (taken or ()):
            return dest
    return f"{store.TRASH_DIR}/{store.slugify(memory.id, 100)}-{new_event_id()[-8:]}.md"


def move_to_trash(vault: Vault, entry: Entry, stamp: datetime, reason: str, dest: str | None = None) -> str:
    """Move ``entry`` to the trash (write the trash copy, then remove the file); returns the new path.

    ``dest`` (from :func:`trash_path`) names the trash file; by default a free one is chosen.
    """
    memory = entry.memory.replace(
        trashed_at=stamp,
        expires_at=stamp + timedelta(days=vault.config.vault.trash_days),
        trashed_from=entry.path,
        updated=stamp,
        plain=False,
        extra={**entry.memory.extra, "trash_reason": reason},
    )
    dest = dest or vault.trash_path(entry)
    with vault.transaction(sync=False) as tx:  # the caller's transaction syncs
        tx.check(entry.path, entry.parsed)  # a change made meanwhile is not dropped
        tx.move(entry.path, dest, memory, None)
    return dest


def move_out_of_trash(vault: Vault, entry: Entry, stamp: datetime, dest: str | None = None) -> str:
    """Move a trashed ``entry`` back to where it came from (``dest`` when given); returns the new path."""
    extra = {k: v for k, v in entry.memory.extra.items() if k != "trash_reason"}
    memory = entry.memory.replace(trashed_at=None, expires_at=None, trashed_from=None, updated=stamp, extra=extra)
    dest = dest or entry.memory.trashed_from
    if dest:
        try:
            store.inside(vault.root, dest)
        except VaultError:
            dest = None
    if not dest or (vault.root / dest).exists() or not dest.endswith(".md"):
        dest = store.choose_path(vault.root, store.folder_for(memory), memory)
    with vault.transaction(sync=False) as tx:  # the caller's transaction syncs
        tx.check(entry.path, entry.parsed)  # a change made meanwhile is not dropped
        tx.move(entry.path, dest, memory, None)
    return dest


def forget(vault: Vault, memory_id: str, *, permanent: bool = False) -> ChangeResult:
    """Move a memory to the trash with a tombstone, or purge every trace of it.

    A purge is final on every path: the file goes, the journal keeps only digests (scrubbed), the
    embedding cache loses the memory's vectors, the syntheses that quoted it go with it (the next
    ``maintain`` writes them again from the members left), and a file that holds the id again later
    (git, a backup) is never read or indexed (see :func:`vault_engine.store.scan`); purging it again
    deletes that file.
    """
    stamp = now()
    with vault.transaction() as tx:
        scan = vault.scan()
        if permanent and memory_id in scan.forgotten:  # back from git or a backup: asked again, deleted again
            return _purge_again(vault, tx, memory_id, scan.forgotten[memory_id])
        entry = vault.entry(memory_id, scan)
        if not permanent:
            if entry.in_trash:
                raise InvalidInput(f"{memory_id} is already in the trash (use --permanent to purge it)")
            event = Event("forget", memory_id, {"title": entry.memory.title})
            dest = vault.move_to_trash(entry, stamp, "forget")
            overviews = retire_overviews(vault, tx, scan, memory_id, stamp, "forgotten")
            tx.record(event)
            return ChangeResult("forgotten", memory_id, dest, event=event.id, overviews=overviews)
        digest = text_digest(memory_text(entry.memory))
        quoting = _syntheses_of(scan, memory_id)
        tx.remove(entry.path)
        for synthesis in quoting:
            tx.remove(synthesis.path)
        vault.journal.scrub({memory_id, *(s.memory.id for s in quoting)})
        event = Event("purge", memory_id, {"permanent": True, "text_sha256": digest,
                                           "words_sha256": words_digest(memory_text(entry.memory))})
        tx.record(event, *(Event("purge", s.memory.id, {"permanent": False, "quoted": memory_id}) for s in quoting))
        _forget_vectors(vault, entry.memory)
    related = ", ".join(s.memory.id for s in quoting) or None
    return ChangeResult("purged", memory_id, None, related=related, event=event.id,
                        overviews=tuple(s.memory.id for s in quoting))


def _purge_again(vault: Vault, tx: Transaction, memory_id: str, paths: list[str]) -> ChangeResult:
    """Delete the files that hold the forgotten ``memory_id`` again (and their vectors)."""
    for rel in paths:
        with contextlib.suppress(VaultError):  # unreadable: nothing of it was embedded
            _forget_vectors(vault, store.read_entry(vault.root, rel).memory)
        tx.remove(rel)
    event = Event("purge", memory_id, {"permanent": True, "again": list(paths)})
    tx.record(event)
    return ChangeResult("purged", memory_id, None, event=event.id)


def _syntheses_of(scan: Scan, memory_id: str) -> list[Entry]:
    """The syntheses (overviews ``maintain`` wrote) that cover ``memory_id``, trashed ones too."""
    return [e for e in scan.entries.values()
            if e.memory.source == SYNTHESIS_SOURCE and memory_id in (e.memory.extra.get(SYNTHESIS_OF) or ())]


def retire_overviews(vault: Vault, tx: Transaction, scan: Scan, memory_id: str, stamp: datetime,
                     why: str) -> tuple[str, ...]:
    """Move the overviews memvault wrote that quote ``memory_id`` to the trash (``why``: what happened to it,
    "forgotten", "corrected"), lest searches and manifests keep serving its old text until the next
    ``maintain`` writes them again from their members; an overview a person rewrote is theirs and stays.
    Their ids."""
    quoting = [s for s in _syntheses_of(scan, memory_id) if not s.in_trash and not _edited(s.memory)]
    for synthesis in quoting:
        vault.move_to_trash(synthesis, stamp, f"it quoted {memory_id}, {why}")
    tx.record(*(Event("forget", s.memory.id, {"title": s.memory.title, "quoted": memory_id, "why": why})
                for s in quoting))
    return tuple(s.memory.id for s in quoting)


def _edited(memory: Memory) -> bool:
    """Whether a person rewrote this overview (then it is theirs, and stays)."""
    from ..governance.synthesis import edited_by_hand

    return edited_by_hand(memory)


def _forget_vectors(vault: Vault, memory: Memory) -> None:
    """Drop ``memory``'s vectors from the embedding cache; without the model nothing is computed to find
    them, and that is logged (the cache's bound evicts them in time)."""
    try:
        vault.forget_vectors(memory)
    except VaultError as exc:
        log.warning("vectors of %s left in the embedding cache: %s", memory.id, exc.one_line())


def trash_list(vault: Vault) -> list[Entry]:
    """The trashed memories, by path."""
    return sorted(vault.scan().trashed(), key=lambda e: e.path)


def restore(vault: Vault, memory_id: str) -> ChangeResult:
    """Bring a memory back from the trash to where it was.

    A memory governance trashed (stale, decayed, merged away) comes back for good: the restore event
    names the action that trashed it (``trashed_by``), which ``maintain`` then does not plan again (see
    :func:`vault_engine.governance.maintain.vetoes`), so a person's restore sticks as their rollback does.
    Only the file comes back; ``rollback`` of that action still reverts what it changed elsewhere (the
    evidence a merge folded into its survivor).
    """
    stamp = now()
    with vault.transaction() as tx:
        entry = vault.entry(memory_id)
        if not entry.in_trash:
            raise InvalidInput(f"{memory_id} is not in the trash")
        trashed_by = _trashed_by(vault.journal.events(("govern", "rollback", "restore")), memory_id)
        dest = vault.move_out_of_trash(entry, stamp)
        event = Event("restore", memory_id, {"trashed_by": trashed_by} if trashed_by else {})
        tx.record(event)
    return ChangeResult("restored", memory_id, dest, event=event.id)


def _trashed_by(events: Iterable[Event], memory_id: str) -> str | None:
    """The governance action that last moved ``memory_id`` to the trash and is not undone yet; None when
    a person (or a rollback) put it there."""
    undone: set[str] = set()
    last: str | None = None
    for event in events:
        if event.kind == "govern" and memory_id in (event.payload.get("trash") or ()):
            last = event.id
        elif event.kind == "rollback" and event.payload.get("undoes"):
            undone.add(str(event.payload["undoes"]))
        elif event.kind == "restore" and event.payload.get("trashed_by"):
            undone.add(str(event.payload["trashed_by"]))
    return last if last is not None and last not in undone else None


def trash_empty(vault: Vault, *, expired_only: bool = False) -> list[str]:
    """Delete trashed memories for good (only expired ones with ``expired_only``)."""
    stamp = now()
    purged = []
    with vault.transaction() as tx:
        events = []
        for entry in sorted(vault.scan().trashed(), key=lambda e: e.path):
            expires = entry.memory.expires_at
            if expired_only and (expires is None or expires > stamp):
                continue
            tx.remove(entry.path)
            kind = "trash-expire" if expired_only else "purge"
            events.append(Event(kind, entry.memory.id, {"permanent": False}))
            purged.append(entry.memory.id)
        tx.record(*events)
    return purged
