"""Reflection: learning deltas for inferred memories from what the journal records.

:func:`reflect` reads the journal events after the last reflection (reported
outcomes and corrections; an outcome reported for an application carries
that application's task), shows them and the memories they involve to the
language model (:meth:`~.llm.base.Llm.reflect`), and applies the deltas it
proposes:

- ``create`` adds an inferred memory (``source: reflection``), which starts
  ``trial`` like every inferred memory;
- ``update`` writes a new inferred ``trial`` version of an inferred memory
  and supersedes the old one (``supersedes`` / ``superseded_by``);
- ``supersede`` marks an inferred memory superseded;
- ``forget`` moves an inferred memory to the trash;
- ``noop`` changes nothing.

Inference never overwrites what a person set: any change proposed for an
explicit memory leaves its file untouched and records a ``conflict`` journal
event (the proposed text and the reason) instead.  Updates and supersessions
are journaled as ``govern`` events of kind ``reflect``, so :func:`~vault_engine.history.replay`
agrees with the files and ``memvault rollback`` undoes them.

The journal is the record of progress: each run appends a ``reflection``
event naming the last event it covered (``through``), and the next run starts
after it.  When the model cannot answer, a ``reflection-failed`` event records
the attempt and when to try again (1, 2, 4 ... minutes); the events stay
pending, and a run before that time returns "deferred" without calling the
model.  After :data:`MAX_ATTEMPTS` failures the window is skipped (the failed
event says so) and reflection moves on.  Event ids derive from the window, so
a retried write never counts twice.  ``.memvault/reflect.json`` mirrors the
state for people and tools (``last_event``, ``failures``, ``next_try``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from .. import fsio, store
from ..clock import now as clock
from ..errors import InvalidInput, LlmUnavailable, ReflectionFailed, VaultError
from ..format.ids import derived_event_id, new_memory_id
from ..format.memory import OUTCOMES, Memory, memory_text
from ..format.redact import redact
from ..format.text import clip, make_summary
from ..format.yamlfmt import format_datetime
from ..governance.actions import Action, Change
from ..history import forgotten_as, forgotten_digests
from ..journal import PURGE_DECLINED, Event
from ..llm.base import Delta

if TYPE_CHECKING:
    from ..llm.base import Llm
    from ..store import Entry, Scan
    from ..vault import Vault

STATE_FILE = "reflect.json"
EVIDENCE_KINDS = ("feedback", "correct")  # what reflection learns from; applications give feedback its task
MAX_EVIDENCE = 200  # events per run; later ones wait for the next run
MAX_MEMORIES = 100  # memories shown to the model per run
MAX_MEMORY_CHARS = 2000  # text shown per memory
MAX_ATTEMPTS = 8  # failed runs over one window before it is skipped
BACKOFF_MINUTES = 1  # the wait after the first failure; doubles after each
TASK_KEYS = ("task", "project", "path", "operation", "phase", "kind")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one proposed delta.

    ``action``: created, reinforced (the same text existed: evidence added),
    updated, superseded, forgotten, conflict (an explicit target: nothing
    changed), skipped (``note`` says why) or noop; in a dry run, what would
    be done.  ``id`` is the memory written (created, updated) or the target.
    """

    delta: Delta
    action: str
    id: str | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {**self.delta.to_json(), "action": self.action, "id": self.id, "note": self.note}

    def describe(self) -> str:
        what = f"{self.action:<10} {self.id or '-'}"
        if self.delta.op == "create" and self.delta.title:
            what += f"  {self.delta.title}"
        note = f" ({self.note})" if self.note else ""
        return f"{what}  {self.delta.reason or self.delta.op}{note}"


@dataclass(slots=True)
class ReflectionReport:
    model: str
    evidence: int = 0
    memories: int = 0
    outcomes: list[Outcome] = field(default_factory=list)
    dry_run: bool = False
    deferred_until: datetime | None = None
    failures: int = 0
    event: str | None = None

    @property
    def learned(self) -> list[Outcome]:
        """The outcomes that change (or would change) something, conflicts included."""
        return [o for o in self.outcomes if o.action not in ("noop", "skipped")]

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dry_run": self.dry_run,
            "evidence": self.evidence,
            "memories": self.memories,
            "deltas": [o.to_json() for o in self.outcomes],
            "deferred_until": format_datetime(self.deferred_until) if self.deferred_until else None,
            "failures": self.failures,
            "event": self.event,
        }


@dataclass(frozen=True, slots=True)
class _Window:
    """The events one run reflects on."""

    evidence: list[Event]
    failures: list[Event]  # reflection-failed events of this window, oldest first
    last_event: str | None  # the last event reflection has covered

    @property
    def key(self) -> str:
        return self.evidence[0].id

    @property
    def through(self) -> str:
        return self.evidence[-1].id


def reflect(vault: Vault, *, llm: Llm, now: datetime | None = None, dry_run: bool = False) -> ReflectionReport:
    """Reflect on the journal events since the last run and apply the deltas (see the module docstring).

    Raises:
        InvalidInput: learning is off (``vault.learning = false``).
        ReflectionFailed: the model could not answer (journaled; retried by a later run).
    """
    if not vault.config.vault.learning:
        raise InvalidInput("learning is off (vault.learning = false): reflection proposes nothing")
    stamp = now or clock()
    report = ReflectionReport(model=llm.name, dry_run=dry_run)
    window = _window(vault)
    if window is None:
        return report
    report.failures = len(window.failures)
    next_try = _next_try(window.failures)
    if next_try is not None and stamp < next_try:
        report.deferred_until = next_try
        return report
    scan = vault.scan()
    evidence = _evidence(vault, window.evidence)
    memories = _memories(window.evidence, scan)
    report.evidence, report.memories = len(evidence), len(memories)
    try:
        deltas = llm.reflect(evidence, memories)
    except LlmUnavailable as exc:
        if dry_run:
            raise
        raise _failed(vault, window, exc, stamp) from None
    shown = {str(m["id"]) for m in memories}
    if dry_run:
        report.outcomes = [_plan(d, shown, scan, stamp) for d in deltas]
        return report
    report.outcomes, report.event = _apply(vault, window, deltas, shown, llm.name, stamp)
    _save_state(vault, window.through, 0, None)
    return report


# ---------------------------------------------------------------- reading


def _window(vault: Vault) -> _Window | None:
    """The evidence after the last reflection, with this window's failed attempts; None when there is none."""
    events = list(vault.journal.events())
    position = {e.id: n for n, e in enumerate(events)}
    start, last = 0, None
    for event in events:
        covered = event.kind == "reflection" or (event.kind == "reflection-failed" and event.payload.get("skipped"))
        through = event.payload.get("through")
        if covered and isinstance(through, str) and through in position and position[through] + 1 > start:
            start, last = position[through] + 1, through
    evidence = [e for e in events[start:] if e.kind in EVIDENCE_KINDS][:MAX_EVIDENCE]
    if not evidence:
        return None
    key = evidence[0].id
    failures = [e for e in events[start:] if e.kind == "reflection-failed" and e.payload.get("window") == key]
    return _Window(evidence, failures, last)


def _next_try(failures: Sequence[Event]) -> datetime | None:
    if not failures:
        return None
    value = failures[-1].payload.get("next_try")
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None


def _evidence(vault: Vault, events: Sequence[Event]) -> list[dict[str, Any]]:
    """The events as the model reads them; an outcome reported for an application names its task."""
    wanted = {str(e.payload["application"]) for e in events if e.payload.get("application")}
    tasks: dict[str, dict[str, Any]] = {}
    if wanted:
        for event in vault.journal.events(("application",)):
            if event.id in wanted:
                tasks[event.id] = {k: event.payload[k] for k in TASK_KEYS if k in event.payload}
    out = []
    for event in events:
        payload = dict(event.payload)
        if str(payload.get("application")) in tasks:
            payload["task"] = tasks[str(payload["application"])]
        out.append({"kind": event.kind, "memory": event.memory, "payload": payload, "ts": event.ts})
    return out


def _memories(events: Sequence[Event], scan: Scan) -> list[dict[str, Any]]:
    """The memories the events involve (a correction: both versions), as the model reads them."""
    ids: dict[str, None] = {}
    for event in events:
        ids.setdefault(event.memory)
        if isinstance(event.payload.get("new"), str):
            ids.setdefault(event.payload["new"])
    out = []
    for memory_id in ids:
        entry = scan.entries.get(memory_id)
        if entry is None or entry.in_trash or entry.memory.plain:
            continue
        m = entry.memory
        out.append({
            "id": m.id, "title": m.title, "text": clip(memory_text(m), MAX_MEMORY_CHARS), "type": m.type,
            "authority": m.authority, "lifecycle": m.lifecycle,
            "applied": {k: v for k, v in m.applied.items() if v},
        })
        if len(out) >= MAX_MEMORIES:
            break
    return out


# ---------------------------------------------------------------- failing


def _failed(vault: Vault, window: _Window, exc: LlmUnavailable, stamp: datetime) -> ReflectionFailed:
    """Journal one failed attempt; the error the caller raises."""
    attempt = len(window.failures) + 1
    skipped = attempt >= MAX_ATTEMPTS
    next_try = None if skipped else stamp + timedelta(minutes=BACKOFF_MINUTES * 2 ** (attempt - 1))
    payload: dict[str, Any] = {
        "window": window.key, "attempt": attempt, "error": exc.one_line(),
        "next_try": format_datetime(next_try) if next_try else None,
    }
    if skipped:
        payload.update(skipped=True, through=window.through, events=len(window.evidence))
    event_id = derived_event_id("reflection-failed", window.key, str(attempt))
    with vault.transaction(sync=False) as tx:  # the journal only: nothing for the indexes
        tx.record(Event("reflection-failed", "", payload, id=event_id, ts=format_datetime(stamp)))
    if skipped:
        _save_state(vault, window.through, 0, None)
        message = (f"reflection failed {attempt} times ({exc.one_line()}); "
                   f"skipped {len(window.evidence)} events")
    else:
        _save_state(vault, window.last_event, attempt, next_try)
        message = f"reflection failed (attempt {attempt} of {MAX_ATTEMPTS}): {exc.one_line()}"
    return ReflectionFailed(message, attempt=attempt, next_try=next_try)


def _save_state(vault: Vault, last_event: str | None, failures: int, next_try: datetime | None) -> None:
    record = {"last_event": last_event, "failures": failures,
              "next_try": format_datetime(next_try) if next_try else None}
    fsio.write_atomic(vault.root / store.STATE_DIR / STATE_FILE, json.dumps(record, sort_keys=True) + "\n")


# ---------------------------------------------------------------- applying


def _plan(delta: Delta, shown: set[str], scan: Scan, stamp: datetime) -> Outcome:
    """What ``delta`` would do (pure): the action it maps to, or why it is skipped."""
    if delta.op == "noop":
        return Outcome(delta, "noop", delta.target)
    if delta.op == "create":
        return Outcome(delta, "create")
    target = delta.target or ""
    entry = scan.entries.get(target)
    if target not in shown:
        return Outcome(delta, "skipped", target or None, "not among the memories reflected on")
    if entry is None or entry.in_trash:
        return Outcome(delta, "skipped", target, "no longer in the vault")
    if entry.memory.authority == "explicit":
        return Outcome(delta, "conflict", target, "explicit memory kept as it is")
    if delta.op in ("update", "supersede") and entry.memory.lifecycle == "superseded":
        return Outcome(delta, "skipped", target, "already superseded")
    return Outcome(delta, delta.op, target)


def _apply(vault: Vault, window: _Window, deltas: Sequence[Delta], shown: set[str], model: str,
           stamp: datetime) -> tuple[list[Outcome], str]:
    """Apply each delta under the writer lock, then journal the run (its ``reflection`` event id)."""
    event_id = derived_event_id("reflection", window.key, window.through)
    outcomes: list[Outcome] = []
    with vault.transaction() as tx:
        if event_id in vault.journal.known_ids():  # another run reflected on this window meanwhile
            return [], event_id
        for n, delta in enumerate(deltas):
            outcome = _plan(delta, shown, vault.scan(), stamp)
            try:
                outcomes.append(_do(vault, outcome, event_id, n, model, stamp))
            except VaultError as exc:  # one unusable delta (a one-off, forgotten text ...) does not stop the rest
                outcomes.append(Outcome(delta, "skipped", outcome.id, exc.one_line()))
        payload = {
            "through": window.through, "window": window.key, "events": len(window.evidence), "model": model,
            "deltas": [{"op": o.delta.op, "target": o.delta.target, "action": o.action, "id": o.id}
                       for o in outcomes],
        }
        tx.record(Event("reflection", "", payload, id=event_id, ts=format_datetime(stamp)))
    return outcomes, event_id


def _do(vault: Vault, planned: Outcome, reflection: str, n: int, model: str, stamp: datetime) -> Outcome:
    from ..governance.maintain import Executor
    from ..vault import NewMemory

    delta, action = planned.delta, planned.action
    if action == "create":
        added = vault.add(NewMemory(text=delta.text, title=delta.title or None, authority="inferred",
                                    source="reflection"))
        return Outcome(delta, "created" if added.created else "reinforced", added.id,
                       "" if added.created else "the same text was already remembered; evidence added")
    if action in ("noop", "skipped"):
        return planned
    target = str(planned.id)
    if action == "conflict":
        payload = {"op": delta.op, "title": delta.title, "text": delta.text, "reason": delta.reason, "by": model,
                   "reflection": reflection}
        event = Event("conflict", target, payload, id=derived_event_id("conflict", reflection, str(n)),
                      ts=format_datetime(stamp))
        with vault.transaction() as tx:  # joins the reflection's
            tx.record(event)
        return planned
    if action == "forget":
        vault.forget(target)
        return Outcome(delta, "forgotten", target)
    scan = vault.scan()
    old = scan.get(target)
    if action == "supersede":
        change = Change.of(old.memory, lifecycle="superseded", tier="cold")
        if change is not None:
            Executor(vault, scan, stamp).apply(Action("reflect", target, delta.reason or "superseded by reflection",
                                                      changes=(change,)))
        return Outcome(delta, "superseded", target)
    new = _new_version(vault, old, delta, reflection, stamp)
    change = Change.of(old.memory, lifecycle="superseded", superseded_by=new.id, tier="cold")
    folder = old.path.rsplit("/", 1)[0] if "/" in old.path else store.folder_for(new)
    Executor(vault, scan, stamp).apply(Action("reflect", target, delta.reason or "updated by reflection",
                                              changes=(change,) if change else (), create=((folder, new),),
                                              related=(new.id,)))
    return Outcome(delta, "updated", new.id, f"supersedes {target}")


def _new_version(vault: Vault, old: Entry, delta: Delta, reflection: str, stamp: datetime) -> Memory:
    """The inferred ``trial`` version of ``old`` that ``delta`` writes."""
    body = redact(delta.text.strip("\n")).rstrip() + "\n"
    if not body.strip():
        raise InvalidInput("the updated text is empty")
    if forgotten_as(forgotten_digests(vault.journal.events(("purge", PURGE_DECLINED))), body) is not None:
        raise InvalidInput("the updated text was permanently forgotten and is not re-learned")
    title = redact(" ".join(delta.title.split())) if delta.title.strip() else old.memory.title
    return old.memory.replace(
        id=new_memory_id(), title=title, body=body, summary=make_summary(body), authority="inferred",
        lifecycle="trial", supersedes=old.memory.id, superseded_by=None, source="reflection",
        evidence=(*old.memory.evidence, {"event": reflection, "source": "reflection"}), proof_count=1,
        applied={k: 0 for k in OUTCOMES}, last_applied=None, created=stamp, updated=stamp, plain=False,
    )

