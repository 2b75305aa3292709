"""Revising memories: a correction (a new version supersedes the old), its crash recovery, and feedback."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import store
from ..clock import now
from ..errors import InvalidInput
from ..format.characters import check
from ..format.ids import derived_event_id, new_event_id, new_memory_id
from ..format.memory import OUTCOMES, Memory, memory_text, text_digest
from ..format.redact import redact
from ..format.text import make_summary, make_title
from ..format.yamlfmt import format_datetime
from ..history import MemoryState, governed_ids, replay
from ..journal import Event
from ..limits import MAX_TEXT, check_fields, check_length
from ..store import Scan
from .ports import Open as Vault
from .results import ChangeResult, FeedbackResult
from .transaction import Transaction
from .trash import retire_overviews


def correct(vault: Vault, memory_id: str, text: str, title: str | None = None) -> ChangeResult:
    """Write a new version of a memory; the old one becomes superseded (history kept).

    Raises:
        InvalidInput: empty text, or a character no memory may hold (see :mod:`~vault_engine.format.characters`).
    """
    check_length(text, MAX_TEXT, "correction text")
    check_fields(title=title)
    text, title = check(text, "text"), check(title, "title") if title is not None else None
    if not text.strip():
        raise InvalidInput("correction text is empty")
    stamp = now()
    with vault.transaction() as tx:
        scan = vault.scan()
        if vault.finish_corrections(scan, memory_id):  # one of this memory that a crash cut short
            scan = vault.scan()
        old = vault.entry(memory_id, scan)
        if old.in_trash:
            raise InvalidInput(f"{memory_id} is in the trash; restore it before correcting it")
        body = redact(text.strip("\n")).rstrip() + "\n"
        if old.memory.lifecycle == "superseded":
            newer = scan.entries.get(old.memory.superseded_by or "")
            if (newer is not None and not newer.in_trash and newer.memory.supersedes == memory_id
                    and text_digest(memory_text(newer.memory)) == text_digest(body)):
                # The same correction again (a caller retrying after a crash or a lost answer): done already.
                done = next((e.id for e in vault.journal.events(("correct",))
                             if e.memory == memory_id and e.payload.get("new") == newer.memory.id), None)
                return ChangeResult("corrected", newer.memory.id, newer.path, related=memory_id, event=done)
            raise InvalidInput(f"{memory_id} is superseded by {old.memory.superseded_by or 'a newer version'}; "
                               "correct that one instead")
        event_id = new_event_id()
        new = old.memory.replace(
            id=new_memory_id(),
            title=_new_title(old.memory, body, title),
            body=body,
            summary=make_summary(body),
            authority="explicit",
            lifecycle="proven",
            supersedes=memory_id,
            superseded_by=None,
            sender=vault.sender,  # the new text is whoever corrects it
            evidence=(*old.memory.evidence, {"event": event_id, "source": "user"}),
            proof_count=1,
            applied={k: 0 for k in old.memory.applied},
            last_applied=None,
            created=stamp,
            updated=stamp,
            plain=False,
        )
        superseded = old.memory.replace(
            lifecycle="superseded", superseded_by=new.id, tier="cold", updated=stamp, plain=False
        )
        event = Event(
            "correct",
            memory_id,
            {
                "new": new.id,
                "old_lifecycle": old.memory.lifecycle,
                "old_tier": old.memory.tier,
                "title": new.title,
                "text_sha256": text_digest(body),
            },
            id=event_id,
        )
        folder = old.path.rsplit("/", 1)[0] if "/" in old.path else store.folder_for(new)
        tx.check(old.path, old.parsed)  # before the new version exists
        rel = store.choose_path(vault.root, folder, new)
        tx.write(rel, new)
        tx.write(old.path, superseded, old.parsed)
        tx.record(event)
        overviews = retire_overviews(vault, tx, scan, memory_id, stamp, "corrected")
    return ChangeResult("corrected", new.id, rel, related=memory_id, event=event.id, overviews=overviews)


def _new_title(old: Memory, body: str, given: str | None) -> str:
    """The title of a correction: the one given; else, when the old title was made from the old
    text, one made from the new text (a title saying the old value would outlive it); else the
    old title, which someone wrote."""
    if given and given.strip():
        return redact(given.strip())
    if old.title == make_title(old.body):
        return make_title(body)
    return old.title


def finish_corrections(vault: Vault, scan: Scan, memory_id: str | None = None) -> list[str]:
    """Complete the corrections a crash cut short (of ``memory_id`` alone, when given); returns the
    new versions' ids.  Joins the caller's transaction.

    :meth:`correct` writes the new version (the old one's evidence plus the correction's event id),
    then marks the old one superseded, then journals the correction under that event id.  A new
    version whose event id the journal lacks, and that no other event names, is what a crash in
    between leaves: the old memory is marked superseded by it (unless it is already) and the event
    is written, as the correction would have.
    """
    with vault.transaction(sync=False) as tx:  # the caller's transaction syncs
        return _finish(vault, tx, scan, memory_id)


def _finish(vault: Vault, tx: Transaction, scan: Scan, memory_id: str | None) -> list[str]:
    known = vault.journal.known_ids()
    finished: list[str] = []
    states: dict[str, MemoryState] | None = None
    named: set[str] | None = None  # every memory id the journal names
    for entry in sorted(scan.entries.values(), key=lambda e: e.memory.id):
        new = entry.memory
        old = scan.entries.get(new.supersedes or "")
        if entry.in_trash or old is None or old.in_trash or (memory_id is not None and old.memory.id != memory_id):
            continue
        count = len(old.memory.evidence)
        if len(new.evidence) <= count or new.evidence[:count] != old.memory.evidence:
            continue
        mark = new.evidence[count]
        event_id = mark.get("event")
        if (set(mark) != {"event", "source"} or not isinstance(event_id, str)
                or not event_id.startswith("e-") or event_id in known):
            continue
        if named is None:
            named = set()
            for event in vault.journal.events():
                named.update(governed_ids(event) if event.kind == "govern" else {event.memory})
                if isinstance(event.payload.get("new"), str):
                    named.add(event.payload["new"])
        if new.id in named:  # journalled otherwise (a governance supersession, say): not a crash's trace
            continue
        payload: dict[str, Any] = {"new": new.id, "title": new.title,
                                   "text_sha256": text_digest(memory_text(new)), "recovered": True}
        if old.memory.superseded_by is None and old.memory.lifecycle != "superseded":
            payload.update(old_lifecycle=old.memory.lifecycle, old_tier=old.memory.tier)
            superseded = old.memory.replace(lifecycle="superseded", superseded_by=new.id, tier="cold",
                                            updated=now(), plain=False)
            tx.write(old.path, superseded, old.parsed)
        elif old.memory.superseded_by == new.id:
            # Marked already: its lifecycle before the correction is the journal's (its tier is lost).
            if states is None:
                states = replay(vault.journal.events())
            state = states.get(old.memory.id)
            payload["old_lifecycle"] = state.lifecycle if state and state.lifecycle != "superseded" else "proven"
        else:
            continue  # superseded by another memory since: a person's doing, left alone
        tx.record(Event("correct", old.memory.id, payload, id=event_id))
        known = vault.journal.known_ids()
        finished.append(new.id)
    return finished


def feedback(vault: Vault, memory_id: str, outcome: str, *, application: str | None = None) -> FeedbackResult:
    """Record how a delivered memory worked out; counters, and for inferred memories the lifecycle.

    ``used-successfully`` promotes a trial memory to proven; ``corrected`` and
    ``contributed-to-failure`` supersede an inferred memory (undo with
    :meth:`Vault.rollback`); explicit memories only count.  With ``application``
    (the id of the journal event that delivered the memory) the same outcome
    reported twice for that application counts once.

    Raises:
        InvalidInput: an unknown outcome, a plain note, a trashed or superseded
            memory, or an application that did not deliver this memory.
        MemoryNotFound: no memory has that id.
    """
    if outcome not in OUTCOMES:
        raise InvalidInput(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOMES)}")
    stamp = now()
    with vault.transaction() as tx:
        entry = vault.entry(memory_id)
        memory = entry.memory
        if application is not None:
            event_id = derived_event_id("feedback", application, memory_id, outcome)
            if event_id in vault.journal.known_ids():  # reported before: the file already counts it
                return FeedbackResult("already-recorded", memory_id, entry.path, outcome, memory.lifecycle,
                                      memory.lifecycle, dict(memory.applied), memory.last_applied,
                                      application, event_id)
        else:
            event_id = new_event_id()
        if memory.plain:
            raise InvalidInput(f"{memory_id} is a plain note without memvault frontmatter; "
                               "feedback is kept only on memories")
        if entry.in_trash:
            raise InvalidInput(f"{memory_id} is in the trash; restore it before giving feedback")
        if memory.lifecycle == "superseded":
            newer = memory.superseded_by
            hint = f"give feedback on {newer}" if newer else f"undo with `memvault rollback {memory_id}`"
            raise InvalidInput(f"{memory_id} is superseded; {hint}")
        if application is not None:
            _check_delivered(vault, memory_id, application)
        updated = apply_outcome(memory, outcome, stamp)
        payload: dict[str, Any] = {
            "outcome": outcome,
            "authority": memory.authority,
            "old_lifecycle": memory.lifecycle,
            "lifecycle": updated.lifecycle,
        }
        if application is not None:
            payload["application"] = application
        event = Event("feedback", memory_id, payload, id=event_id, ts=format_datetime(stamp))
        tx.write(entry.path, updated, entry.parsed)
        tx.record(event)
    if updated.lifecycle == memory.lifecycle:
        action = "recorded"
    else:
        action = "promoted" if updated.lifecycle == "proven" else "superseded"
    return FeedbackResult(action, memory_id, entry.path, outcome, memory.lifecycle, updated.lifecycle,
                          dict(updated.applied), updated.last_applied, application, event.id)


def _check_delivered(vault: Vault, memory_id: str, application: str) -> None:
    """Raise unless journal event ``application`` is an application that delivered ``memory_id``."""
    for event in vault.journal.events():
        if event.id != application:
            continue
        if event.kind != "application":
            raise InvalidInput(f"{application} is a {event.kind} event, not an application")
        ids = event.payload.get("ids")
        if isinstance(ids, list) and memory_id in ids:
            return
        break
    else:
        raise InvalidInput(f"memory {memory_id} was not delivered in application {application} "
                           "(no such application in the journal)")
    raise InvalidInput(f"memory {memory_id} was not delivered in application {application}")


def apply_outcome(memory: Memory, outcome: str, stamp: datetime) -> Memory:
    """``memory`` after one reported ``outcome`` (pure: the plan of :func:`feedback`).

    Explicit memories only count: feedback never overrides what a person set.
    """
    applied = {**memory.applied, outcome: memory.applied.get(outcome, 0) + 1}
    lifecycle = memory.lifecycle
    if outcome == "used-successfully" and lifecycle == "trial":
        lifecycle = "proven"
    elif outcome in ("corrected", "contributed-to-failure") and memory.authority == "inferred":
        lifecycle = "superseded"
    return memory.replace(applied=applied, last_applied=stamp, lifecycle=lifecycle)
