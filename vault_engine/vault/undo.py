"""Undoing: the last correction, forget, superseding feedback or governance action of a memory."""

from __future__ import annotations

from datetime import datetime

from ..clock import now
from ..errors import InvalidInput, NothingToUndo, VaultError
from ..format.value import CONFLICT_OF
from ..history import feedback_superseded, governed_ids
from ..journal import Event
from ..store import Scan
from . import repair
from .ports import Open as Vault
from .results import ChangeResult, RunRollback, RunStep
from .transaction import Transaction


def rollback(vault: Vault, memory_id: str | None = None, *, event_id: str | None = None) -> ChangeResult:
    """Undo the last correct, forget, superseding feedback or governance action of ``memory_id``
    (or exactly the journal event ``event_id``).

    A conflicting version a shared vault's merge kept (``conflict_of``) is swapped with the
    current one instead: its text becomes current, and the other is kept as the conflicting
    version (rolling it back again swaps back).  A correction is undone from either of its
    versions; a feedback that
    superseded an inferred memory gets its earlier lifecycle back (its
    counters stay: the outcome was reported); a governance action (a merge,
    supersession, tier move, link, tag rewrite, decay or compaction) is
    undone from any memory it touched.
    """
    stamp = now()
    with vault.transaction() as tx:
        if memory_id is not None and event_id is None:
            swapped = _swap_conflict(vault, tx, memory_id, stamp)
            if swapped is not None:
                return swapped
        events = list(vault.journal.events())
        memory_id, target = _target(events, memory_id, event_id)
        scan = vault.scan()
        if target.kind == "govern":
            from ..governance.maintain import undo

            touched, conflicts = undo(vault, target, stamp)
            action = str(target.payload.get("kind", "govern"))
            event = Event("rollback", memory_id, {"undoes": target.id, "kind": "govern", "action": action,
                                                  "conflicts": conflicts})
            tx.record(event)
            related = ", ".join(i for i in touched if i != memory_id) or None
            return ChangeResult(f"undid {action}", memory_id, None, related, event.id, conflicts=conflicts)
        result = _undo(vault, tx, target, memory_id, scan, stamp)
        event = Event("rollback", memory_id, {"undoes": target.id, "kind": target.kind})
        tx.record(event)
    return ChangeResult(result.action, result.id, result.path, result.related, event.id)


def rollback_run(vault: Vault, run_id: str) -> RunRollback:
    """Undo every action of the ``maintain`` run ``run_id``, the last applied first.

    The run's actions were applied one after another, each on what the earlier left, so they are undone
    in reverse order, each as ``rollback --event`` would undo it, under one writer lock. An action that
    cannot be undone (trash it purged for good, a leftover copy it removed, a memory deleted since) is
    kept and reported with its reason; the others are still undone. An action rolled back before is
    reported, not undone twice.

    Raises:
        NothingToUndo: no action of the journal carries ``run_id``.
    """
    from ..governance.maintain import undo

    stamp = now()
    undone: list[RunStep] = []
    kept: list[RunStep] = []
    with vault.transaction() as tx:
        events = list(vault.journal.events())
        actions = [e for e in events if e.kind == "govern" and e.payload.get("run") == run_id]
        if not actions:
            raise NothingToUndo(f"no maintain run {run_id} in the journal (maintain prints its run id)")
        before = {str(e.payload.get("undoes")) for e in events if e.kind == "rollback"}
        for target in reversed(actions):
            kind = str(target.payload.get("kind", "govern"))
            if target.id in before:
                kept.append(RunStep(target.id, kind, target.memory, why="rolled back before"))
                continue
            try:
                _, conflicts = undo(vault, target, stamp)
            except VaultError as exc:  # not reversible, or a file changed meanwhile: the rest still go
                kept.append(RunStep(target.id, kind, target.memory, why=exc.one_line()))
                continue
            event = Event("rollback", target.memory, {"undoes": target.id, "kind": "govern", "action": kind,
                                                      "conflicts": conflicts, "run": run_id})
            tx.record(event)
            undone.append(RunStep(target.id, kind, target.memory, rollback=event.id, conflicts=conflicts))
    return RunRollback(run_id, undone, kept)


SUFFIX = " (conflicting version)"


def _swap_conflict(vault: Vault, tx: Transaction, memory_id: str, stamp: datetime) -> ChangeResult | None:
    """Swap a conflicting version with the memory it lost to; None when ``memory_id`` is no conflict version."""
    scan = vault.scan()
    entry = scan.entries.get(memory_id)
    current_id = entry.memory.extra.get(CONFLICT_OF) if entry is not None and not entry.in_trash else None
    current = scan.entries.get(current_id) if isinstance(current_id, str) else None
    if entry is None or current is None or current.in_trash:
        return None
    loser, winner = entry.memory, current.memory
    if loser.supersedes and loser.supersedes == winner.supersedes:  # two corrections of one memory
        extra = {k: v for k, v in loser.extra.items() if k != CONFLICT_OF}
        tx.write(entry.path, loser.replace(title=loser.title.removesuffix(SUFFIX), extra=extra, updated=stamp),
                 entry.parsed)
        tx.write(current.path, winner.replace(title=winner.title + SUFFIX, extra={**winner.extra,
                                                                                 CONFLICT_OF: loser.id},
                                              updated=stamp), current.parsed)
        old = scan.entries.get(loser.supersedes)
        if old is not None:
            tx.write(old.path, old.memory.replace(superseded_by=loser.id), old.parsed)
    else:  # one memory changed two ways: the texts change places
        content = ("body", "summary", "trigger")
        tx.write(current.path, winner.replace(updated=stamp, **{k: getattr(loser, k) for k in content}),
                 current.parsed)
        tx.write(entry.path, loser.replace(updated=stamp, **{k: getattr(winner, k) for k in content}),
                 entry.parsed)
    event = Event("conflict-swap", memory_id, {"current": winner.id})
    tx.record(event)
    return ChangeResult("swapped", winner.id, current.path, related=loser.id, event=event.id)


def _target(events: list[Event], memory_id: str | None, event_id: str | None) -> tuple[str, Event]:
    """The memory and the journal event to undo (``NothingToUndo`` when there is none)."""
    undone = {str(e.payload.get("undoes")) for e in events if e.kind == "rollback"}
    purged = {e.memory for e in events if e.kind in ("purge", "trash-expire")}
    if event_id is not None:
        chosen = next((e for e in events if e.id == event_id), None)
        if chosen is None:
            raise NothingToUndo(f"no journal event {event_id}")
        if chosen.id in undone:
            raise NothingToUndo(f"{event_id} was already rolled back")
        memory_id = chosen.memory
    if memory_id is None:
        raise InvalidInput("name a memory id or an event id to roll back")
    if memory_id in purged and event_id is None:
        raise NothingToUndo(f"{memory_id} was deleted for good; it cannot be rolled back")
    target = None
    for event in reversed(events):
        if event.id in undone or (event_id is not None and event.id != event_id):
            continue
        if event.kind == "govern" and memory_id in governed_ids(event) and (
                event_id is not None or event.payload.get("kind") != "repair"):  # a repair undoes nothing
            target = event
            break
        if event.kind == "forget" and event.memory == memory_id:
            target = event
            break
        if event.kind == "correct" and memory_id in (event.memory, event.payload.get("new")):
            target = event
            break
        if feedback_superseded(event) and event.memory == memory_id:
            target = event
            break
        if event.kind == repair.KIND and event.memory == memory_id:  # a new id given by `memvault repair`
            target = event
            break
    if target is None:
        if event_id is not None:
            raise NothingToUndo(f"{event_id} is not a correction, forget, superseding feedback or "
                                "governance action")
        raise NothingToUndo(f"no correction, forget, superseding feedback or governance action of "
                            f"{memory_id} to roll back")
    if target.kind == "correct" and target.memory in purged:
        raise NothingToUndo(f"{target.memory} was deleted for good; its correction cannot be rolled back")
    return memory_id, target


def _undo(vault: Vault, tx: Transaction, target: Event, memory_id: str, scan: Scan,
          stamp: datetime) -> ChangeResult:
    """Undo a forget, a superseding feedback, a correction or a repair's new id (``target``) of ``memory_id``."""
    if target.kind == repair.KIND:
        result = repair.undo(vault, tx, target, scan, stamp)
    elif target.kind == "forget":
        entry = vault.entry(memory_id, scan)
        if not entry.in_trash:
            raise NothingToUndo(f"{memory_id} is no longer in the trash")
        dest = vault.move_out_of_trash(entry, stamp)
        result = ChangeResult("restored", memory_id, dest)
    elif target.kind == "feedback":
        entry = vault.entry(memory_id, scan)
        if entry.memory.lifecycle != "superseded":
            raise NothingToUndo(f"{memory_id} is no longer superseded; its feedback has nothing to undo")
        lifecycle = str(target.payload["old_lifecycle"])
        tx.write(entry.path, entry.memory.replace(lifecycle=lifecycle), entry.parsed)
        result = ChangeResult("reinstated", memory_id, entry.path)
    else:
        old_id, new_id = target.memory, str(target.payload["new"])
        old = vault.entry(old_id, scan)
        new = scan.entries.get(new_id)
        if new is not None and new.memory.lifecycle == "superseded":
            raise NothingToUndo(f"{new_id} was corrected again; roll back {new.memory.superseded_by} first")
        restored = old.memory.replace(
            lifecycle=str(target.payload.get("old_lifecycle", "proven")),
            superseded_by=None,
            tier=str(target.payload.get("old_tier", old.memory.tier)),
            updated=stamp,
        )
        tx.write(old.path, restored, old.parsed)
        if new is not None and not new.in_trash:
            vault.move_to_trash(new, stamp, "rollback")
        result = ChangeResult("rolled-back", old_id, old.path, related=new_id)
    return result
