"""What the journal says happened to each memory: its replay, and the texts forgotten for good.

:func:`replay` rebuilds each memory's lifecycle and counters from the events alone (the files hold
the same, and ``memvault repair`` puts back what a file lost); :func:`forgotten_digests` are the
texts a permanent forget keeps from being learned again.  The events themselves, and where they
are kept, are :mod:`vault_engine.journal`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .format.memory import OUTCOMES, text_digest, words_digest
from .journal import PURGE_DECLINED, Event


@dataclass(slots=True)
class MemoryState:
    """Lifecycle and counters of one memory, as the journal tells them."""

    lifecycle: str = "trial"
    status: str = "active"  # active | trashed | purged
    proof_count: int = 1
    applied: dict[str, int] = field(default_factory=lambda: {k: 0 for k in OUTCOMES})
    last_applied: str | None = None
    superseded_by: str | None = None
    supersedes: str | None = None
    authority: str = "inferred"


def replay(events: Iterable[Event]) -> dict[str, MemoryState]:
    """Rebuild each memory's state from events alone (pure, idempotent).

    Events are applied once each, in order; a repeated event id is ignored.
    """
    states: dict[str, MemoryState] = {}
    by_id: dict[str, Event] = {}
    seen: set[str] = set()

    def state(memory_id: str) -> MemoryState:
        return states.setdefault(memory_id, MemoryState())

    def set_status(s: MemoryState, status: str) -> None:
        # Purged is final: no later event (restore, rollback, a merged branch's
        # add) brings forgotten content back.
        if s.status != "purged":
            s.status = status

    for event in events:
        if event.id in seen:
            continue
        seen.add(event.id)
        by_id[event.id] = event
        p = event.payload
        if event.kind in ("add", "import"):
            s = state(event.memory)
            _take(s, p)
            set_status(s, "active")
        elif event.kind == "evidence":
            baseline = p.get("baseline")
            if isinstance(baseline, dict) and event.memory not in states:
                # Met here first (a file written by hand, or one whose add a crash kept from the journal):
                # its lifecycle and counters start from what the event recorded, not from the defaults.
                _take(state(event.memory), baseline)
            state(event.memory).proof_count += 1
        elif event.kind == "correct":
            if not isinstance(p.get("new"), str):
                continue  # a hand-edited or foreign event; skipped rather than fatal
            old, new = state(event.memory), state(p["new"])
            old.lifecycle, old.superseded_by = "superseded", p["new"]
            new.lifecycle, new.authority, new.supersedes = "proven", "explicit", event.memory
            set_status(new, "active")
        elif event.kind == "forget":
            set_status(state(event.memory), "trashed")
        elif event.kind == "restore":
            set_status(state(event.memory), "active")
        elif event.kind in ("purge", "trash-expire"):
            state(event.memory).status = "purged"
        elif event.kind == PURGE_DECLINED and state(event.memory).status == "purged":  # kept (sharing.reconcile)
            state(event.memory).status = "active"
        elif event.kind == "rollback":
            undone = by_id.get(str(p.get("undoes")))
            if undone is not None:
                _replay_rollback(undone, states, set_status)
        elif event.kind == "govern":
            _replay_govern(p, states, set_status, undo=False)
        elif event.kind == "feedback":
            _replay_feedback(state(event.memory), event)
    return states


def _replay_rollback(undone: Event, states: dict[str, MemoryState], set_status: Any) -> None:
    """The states after the event ``undone`` is rolled back."""
    def state(memory_id: str) -> MemoryState:
        return states.setdefault(memory_id, MemoryState())

    if undone.kind == "correct" and isinstance(undone.payload.get("new"), str):
        old, new = state(undone.memory), state(undone.payload["new"])
        old.lifecycle = str(undone.payload.get("old_lifecycle", "proven"))
        old.superseded_by = None
        set_status(new, "trashed")
    elif undone.kind == "forget":
        set_status(state(undone.memory), "active")
    elif feedback_superseded(undone):
        state(undone.memory).lifecycle = str(undone.payload["old_lifecycle"])
    elif undone.kind == "govern":
        _replay_govern(undone.payload, states, set_status, undo=True)


def _replay_feedback(s: MemoryState, event: Event) -> None:
    """``s`` after one reported outcome (``event``)."""
    p = event.payload
    # The engine decided from the file's authority and lifecycle, which it
    # records; a memory written by hand has no add event to tell them.
    if p.get("authority") in ("explicit", "inferred"):
        s.authority = str(p["authority"])
    if isinstance(p.get("old_lifecycle"), str):
        s.lifecycle = p["old_lifecycle"]
    outcome = str(p.get("outcome"))
    if outcome in s.applied:
        s.applied[outcome] += 1
        s.last_applied = event.ts
    if outcome == "used-successfully" and s.lifecycle == "trial":
        s.lifecycle = "proven"
    if outcome in ("corrected", "contributed-to-failure") and s.authority == "inferred":
        s.lifecycle = "superseded"


def _take(s: MemoryState, values: dict[str, Any]) -> None:
    """Lifecycle, authority, supersession and counters as an event's ``values`` state them (others kept)."""
    if isinstance(values.get("lifecycle"), str):
        s.lifecycle = values["lifecycle"]
    if values.get("authority") in ("explicit", "inferred"):
        s.authority = str(values["authority"])
    if "superseded_by" in values:
        s.superseded_by = values["superseded_by"] if isinstance(values["superseded_by"], str) else None
    proof = values.get("proof_count")
    if isinstance(proof, int) and not isinstance(proof, bool) and proof >= 0:
        s.proof_count = proof
    counts = values.get("applied")
    if isinstance(counts, dict):
        for outcome, number in counts.items():
            if outcome in s.applied and isinstance(number, int) and not isinstance(number, bool):
                s.applied[outcome] = number


def _replay_govern(payload: dict[str, Any], states: dict[str, MemoryState], set_status: Any, *, undo: bool) -> None:
    """A governance action (or its undo): lifecycle, supersession and proof changes, trash moves, digests.

    A memory the journal has not seen before (written by hand, or created by
    the action) starts from the event's ``baseline``, not from the defaults.
    """

    def state(memory_id: str) -> MemoryState:
        return states.setdefault(memory_id, MemoryState())

    baseline = payload.get("baseline")
    if not undo and isinstance(baseline, dict):
        for memory_id, values in baseline.items():
            if isinstance(values, dict) and memory_id not in states:
                _take(state(memory_id), values)
    changes = payload.get("changes")
    if isinstance(changes, dict):
        for memory_id, change in changes.items():
            if not isinstance(change, dict):
                continue
            values = change.get("before" if undo else "after")
            if not isinstance(values, dict):
                continue
            _take(state(memory_id), values)
    for memory_id in payload.get("trash") or []:
        if isinstance(memory_id, str):
            set_status(state(memory_id), "active" if undo else "trashed")
    for memory_id in payload.get("create") or []:
        if isinstance(memory_id, str):
            set_status(state(memory_id), "trashed" if undo else "active")


def feedback_superseded(event: Event) -> bool:
    """Whether ``event`` is a feedback that superseded its memory (which a rollback undoes)."""
    old = event.payload.get("old_lifecycle")
    return (
        event.kind == "feedback"
        and event.payload.get("lifecycle") == "superseded"
        and isinstance(old, str)
        and old != "superseded"
    )


def forgotten_digests(events: Iterable[Event]) -> dict[str, str]:
    """Digests blocked from re-learning (each purge's text digest and, since purges record it, its
    words digest), mapped to the purged memory id; ask it with :func:`forgotten_as`.  A purge from
    another machine that this one declined (a ``purge-declined`` event: its memory had changed here)
    blocks nothing here: pass those events along with the purges."""
    out: dict[str, str] = {}
    events = list(events)
    declined = {str(e.payload.get("purge")) for e in events if e.kind == PURGE_DECLINED}
    for e in events:
        if e.kind == "purge" and e.payload.get("permanent") and e.id not in declined:
            for key in ("text_sha256", "words_sha256"):
                if key in e.payload:
                    out[str(e.payload[key])] = e.memory
    return out


def forgotten_as(forgotten: Mapping[str, str], text: str) -> str | None:
    """The purged memory whose text ``text`` is, by its text or by its words (other punctuation)."""
    return forgotten.get(text_digest(text)) or forgotten.get(words_digest(text))


def governed_ids(event: Event) -> set[str]:
    """Every memory id a ``govern`` journal event touched."""
    p = event.payload
    ids = {event.memory}
    for key in ("trash", "create", "related", "purge"):
        value = p.get(key)
        if isinstance(value, list):
            ids.update(v for v in value if isinstance(v, str))
    if isinstance(p.get("changes"), dict):
        ids.update(p["changes"])
    return ids
