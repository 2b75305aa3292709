"""``maintain``: the governance pipeline, planned in full, then applied; and its undo.

Order (fixed): repair what a crash left (temp files of cut-short writes,
corrections not journalled, interrupted moves), expire the trash, trash stale
notes (before anything merges or links them), normalise tags, supersede
contradicted memories, merge near-duplicates, cross-link related memories,
synthesise, compact old episodes, then the hot tier, what loses least first:
retire hot states, retype rules that are records of things done, move idle
rules the cold tier already states, compress long old rules, stub dormant
rules (under hard pressure), and only then overflow by value; last, trash
decayed ones (a memory the tier steps just moved cold decays in the same
run, not the next).  Each step plans on the view the previous steps leave,
so the plan is what applying it will do, and a second run with no new input
plans nothing.

Applying an action first appends one ``govern`` journal event holding every
field's before and after value and every path it will write (write-ahead),
then writes new and changed files, moves files to the trash (the trash copy
first, then the original is removed) and purges.  A crash part-way leaves an
event the next run completes (the repair step finishes a half-done move);
:func:`undo` reverses an event.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import fsio, store
from ..clock import now as clock
from ..errors import IndexStale, NothingToUndo, VaultError
from ..format.ids import ulid
from ..format.memory import Memory, ParsedFile, memory_text, render, text_digest
from ..format.redact import redact_memory
from ..journal import Event, Journal
from ..store import Entry
from .actions import CREATING, TUPLE_FIELDS, Action, View, field_value, from_json, with_values
from .advice import Advisor
from .compaction import plan_compaction
from .compression import plan_compress
from .consolidate import plan_links, plan_merges, plan_supersede
from .forgetting import after_repairs, plan_decay, plan_expiry, plan_repair
from .ports import Governed, Writes
from .rules import plan_redundant, plan_retype
from .settled import STATE_FILE, fingerprint, is_settled, mark_maintained, next_due
from .settled import last_maintained as last_maintained  # re-exported: the watcher's schedule
from .similarity import Neighbours, Similarity, gist_vectors
from .stale import plan_stale
from .stubs import plan_stubs, recent_tasks
from .synthesis import plan_synthesis
from .tags import plan_tags
from .tiers import plan_overflow, plan_retire

if TYPE_CHECKING:
    from ..index.embedder import Embedder
    from ..llm.base import Llm

Planner = Callable[[View, Similarity], list[Action]]
RUN_PREFIX = "r-"  # a maintain run's id

STEPS: tuple[tuple[str, Planner], ...] = (
    ("expire", lambda view, _: plan_expiry(view)),
    ("stale", lambda view, _: plan_stale(view)),
    ("tags", lambda view, _: plan_tags(view)),
    ("supersede", plan_supersede),
    ("merge", plan_merges),
    ("link", plan_links),
    ("synthesize", plan_synthesis),
    ("compact", lambda view, _: plan_compaction(view)),
    ("retire", lambda view, _: plan_retire(view)),
    ("retype", lambda view, _: plan_retype(view)),
    ("redundant", plan_redundant),
    ("compress", lambda view, _: plan_compress(view)),
    ("stub", lambda view, _: plan_stubs(view)),
    ("overflow", lambda view, _: plan_overflow(view)),
    ("decay", lambda view, _: plan_decay(view)),
)


@dataclass(slots=True)
class MaintainReport:
    actions: list[Action]
    applied: bool
    events: list[str] = field(default_factory=list)
    seconds: float = 0.0
    notice: str | None = None
    settled: bool = False  # nothing changed since a run that left nothing to do: planning was skipped
    run: str | None = None  # the run id its events carry (``memvault rollback --run``); None: nothing applied

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for action in self.actions:
            out[action.kind] = out.get(action.kind, 0) + 1
        return out


class _NoNeighbours:
    def neighbours(self, memory_id: str) -> list[tuple[str, float]]:
        return []


def load_similarity(vault: Governed, view: View, embedder: Embedder | None = None) -> Similarity:
    """Embedding neighbours of the governed memories from the vault's vector index (none when it is absent)."""
    from ..index.vectors import VectorStore

    path = vault.root / store.STATE_DIR / "vectors.sqlite"
    if not path.exists():
        return _NoNeighbours()
    model = embedder if embedder is not None else vault.embedder()
    # Neighbours are found among every memory with vectors, superseded and trashed ones included, so a
    # memory this run supersedes or trashes keeps its place in the others' lists and the next run, with
    # the same vectors, finds the same candidates (planners skip the ones they may not touch).
    memories = [m for m in (*view.active.values(), *view.trashed.values()) if not m.plain]
    try:
        vectors = VectorStore(path, model.name, model.dim)
        try:
            found = gist_vectors(vectors, (m.id for m in memories))
        finally:
            vectors.close()
    except IndexStale:  # built for another model, or unreadable: the next sync rebuilds it
        return _NoNeighbours()
    settings = vault.config.consolidation
    floor = min(settings.review_similarity, settings.conflict_similarity, settings.crosslink_similarity)
    return Neighbours(found, memories, k=settings.neighbours, floor=floor)


def vetoes(journal: Journal) -> frozenset[tuple[str, frozenset[str]]]:
    """Keys of the governance actions a person rolled back, or undid by restoring from the trash what
    they trashed: maintain does not plan them again."""
    undone_ids = {str(e.payload.get("undoes")) for e in journal.events(("rollback",))
                  if e.payload.get("kind") == "govern"}
    undone_ids |= {str(e.payload["trashed_by"]) for e in journal.events(("restore",)) if e.payload.get("trashed_by")}
    if not undone_ids:  # the usual case: one cheap pass over the journal
        return frozenset()
    out = set()
    for undone in journal.events(("govern",)):
        if undone.id in undone_ids:
            p = undone.payload
            related = [str(x) for x in p.get("related") or []]
            kind = str(p.get("kind"))
            ids = frozenset(related) if kind in CREATING else frozenset({undone.memory, *related})
            out.add((kind, ids))
    return frozenset(out)


def plan(view: View, similarity: Similarity, steps: Iterable[str] | None = None) -> list[Action]:
    """Every step's actions, each step planned on the view the earlier ones leave (pure)."""
    wanted = set(steps) if steps is not None else None
    out: list[Action] = []
    for name, planner in STEPS:
        if wanted is not None and name not in wanted:
            continue
        actions = [a for a in planner(view, similarity) if a.key() not in view.vetoes]
        out.extend(actions)
        view = view.after(actions)
    return out


# ---------------------------------------------------------------- applying


class Executor:
    """Applies actions to the files of one vault (the caller holds the writer lock)."""

    def __init__(self, vault: Governed, scan: store.Scan, now: datetime, run: str | None = None):
        """``run``: the id of the ``maintain`` run the actions belong to, kept in each event so the
        whole run can be undone at once."""
        self.vault = vault
        self.root = vault.root
        self.now = now
        self.run = run
        self.live: dict[str, tuple[str, Memory, ParsedFile | None]] = {
            i: (e.path, e.memory, e.parsed) for i, e in scan.entries.items()
        }

    def _write(self, tx: Writes, memory_id: str, memory: Memory) -> None:
        path, _, original = self.live[memory_id]
        memory = redact_memory(memory)  # as the store writes it, so the next write finds what it expects
        text = render(memory, original)
        tx.write(path, memory, original)
        # What the file holds now: a later write checks the file against it (store.ensure_unchanged).
        newline, bom = (original.newline, original.bom) if original is not None else ("\n", False)
        self.live[memory_id] = (path, memory, ParsedFile(memory, text, newline, bom))

    def _baseline(self, action: Action) -> dict[str, dict[str, Any]]:
        """Lifecycle and counters of each memory the action touches, before it (what replay starts from
        for a memory the journal has never seen: one written by hand, or a digest)."""
        out = {}
        touched = [*(c.id for c in action.changes), *action.trash]
        memories = [self.live[i][1] for i in dict.fromkeys(touched) if i in self.live]
        for memory in [*memories, *(m for _, m in action.create)]:
            out[memory.id] = {
                "lifecycle": memory.lifecycle,
                "authority": memory.authority,
                "superseded_by": memory.superseded_by,
                "proof_count": memory.proof_count,
                "applied": {k: v for k, v in memory.applied.items() if v},
            }
        return out

    def apply(self, action: Action) -> Event:
        """Journal ``action``, then change the files (write-ahead: a crash part-way leaves an event
        the next ``maintain`` completes, and a move interrupted between its write and its remove is
        finished by the repair step)."""
        payload: dict[str, Any] = action.to_json()
        payload["baseline"] = self._baseline(action)
        if self.run is not None:
            payload["run"] = self.run
        taken: set[str] = set()
        created_paths = {}
        for folder, memory in action.create:
            created_paths[memory.id] = store.choose_path(self.root, folder, memory, taken)
            taken.add(created_paths[memory.id])
        trashed = {}
        for memory_id in action.trash:
            path, memory, _ = self.live[memory_id]
            dest = self.vault.trash_path(Entry(path, ParsedFile(memory, "")), taken)
            taken.add(dest)
            trashed[memory_id] = {"from": path, "to": dest}
        tombstones = {}
        for memory_id in action.purge:
            path, memory, _ = self.live[memory_id]
            tombstones[memory_id] = {"path": path, "text_sha256": text_digest(memory_text(memory))}
        payload.update(created=created_paths, moved=trashed, tombstones=tombstones)
        event = Event("govern", action.memory, payload)
        with self.vault.transaction(sync=False) as tx:  # the caller's transaction syncs
            self._change(tx, action, event, created_paths, trashed)
        return event

    def _change(self, tx: Writes, action: Action, event: Event, created_paths: dict[str, str],
                trashed: dict[str, dict[str, str]]) -> None:
        """Journal ``event``, then write, move and remove the files of ``action`` (in that order)."""
        tx.record(event, *_expiry_events(action, event))
        for _, memory in action.create:
            tx.write(created_paths[memory.id], memory)
            self.live[memory.id] = (created_paths[memory.id], memory, None)
        moving = set(action.trash)
        for change in action.changes:
            if change.id not in self.live:
                continue
            _, current, _ = self.live[change.id]
            updated = with_values(current, change.after)
            if change.id in moving:
                self.live[change.id] = (self.live[change.id][0], updated, self.live[change.id][2])
            else:
                self._write(tx, change.id, updated)
        for memory_id in action.trash:
            path, memory, original = self.live.pop(memory_id)
            # The text the file held when planned (or last written): a change made since is not dropped.
            self.vault.move_to_trash(Entry(path, ParsedFile(memory, original.text if original else "")), self.now,
                                     action.kind, dest=trashed[memory_id]["to"])
        for memory_id in action.purge:
            path, _, _ = self.live.pop(memory_id)
            tx.remove(path)
        for path in action.remove:
            tx.remove(path)


def maintain(vault: Governed, *, dry_run: bool = False, now: datetime | None = None,
             steps: Iterable[str] | None = None, similarity: Similarity | None = None,
             embedder: Embedder | None = None, replan: bool = False, llm: Llm | None = None,
             choose_llm: Callable[[], Llm] | None = None) -> MaintainReport:
    """Plan the whole pipeline; unless ``dry_run``, apply it (see the module docstring).

    ``llm`` answers the steps that need a model's judgement (see :mod:`.advice`); without one they
    do only what needs none.  ``choose_llm`` gives one when there is work to plan (a settled vault
    never loads a model's client).

    A vault left settled by an earlier run (see :mod:`.settled`) is not planned
    again unless ``replan``; partial runs (``steps``) and injected
    ``similarity`` always plan and never mark the vault settled.
    """
    started = time.perf_counter()
    stamp = now or clock()
    notice = None
    whole = steps is None and similarity is None
    swept = False
    if whole and not replan:
        with vault.transaction(sync=False):  # Vault.maintain syncs once, at the end
            if not dry_run:
                remove_temps(vault.root)
                swept = True
            if is_settled(vault, stamp):
                return MaintainReport([], applied=not dry_run, seconds=time.perf_counter() - started, settled=True)
    if similarity is None and (steps is None or {"supersede", "merge", "link", "redundant"} & set(steps)):
        try:
            vault.sync(embedder=embedder)
        except VaultError as exc:  # the plan still runs on what is indexed
            notice = f"notice: indexes not updated before planning ({exc}); near-duplicates may be missed"
    if llm is None and choose_llm is not None:
        llm = choose_llm()
    with vault.transaction(sync=False):
        if not dry_run and not swept:
            remove_temps(vault.root)
        scan = vault.scan()
        if not dry_run and vault.finish_corrections(scan):  # corrections a crash cut short
            scan = vault.scan()
        vetoed = vetoes(vault.journal)
        tasks = recent_tasks(vault.journal, stamp, vault.config.tiers.activity_days)
        advisor = Advisor(llm, vault.root)
        view = View.from_scan(scan, stamp, vault.config, vault.root, vetoed, advisor, tasks)
        repairs = plan_repair(view)
        repaired: list[Event] = []
        run = new_run_id()
        if repairs and not dry_run:
            executor = Executor(vault, scan, stamp, run)
            repaired = [executor.apply(a) for a in repairs]
            scan = vault.scan()
            view = View.from_scan(scan, stamp, vault.config, vault.root, vetoed, advisor, tasks)
        elif repairs:
            view = after_repairs(view, repairs)
        if similarity is None:
            similarity = load_similarity(vault, view, embedder)
        actions = plan(view, similarity, steps)
        report = MaintainReport(repairs + actions, applied=not dry_run, notice=notice,
                                events=[e.id for e in repaired])  # one event per action, in order
        if not dry_run and actions:
            executor = Executor(vault, scan, stamp, run)
            for action in actions:
                report.events.append(executor.apply(action).id)
        if report.events:
            report.run = run
        if not dry_run:
            settled, due = None, None
            if whole:  # settled when nothing is left to do: planning the result again finds nothing
                after = view.after(actions)
                # ... and no model failed: an unavailable model is asked again next run.
                if (not actions or not plan(after, similarity)) and not advisor.failed():
                    settled, due = fingerprint(vault), next_due(after)
            mark_maintained(vault.root, settled=settled, due=due)
        advisor.save()
    report.seconds = time.perf_counter() - started
    return report


def new_run_id() -> str:
    """A fresh id for one ``maintain`` run (``r-`` + ULID): every action it applies carries it."""
    return RUN_PREFIX + ulid()


def remove_temps(root: Path) -> int:
    """Delete the temp files that writes cut short by a crash left of memory files, journal files and
    the settled state; returns how many.  The caller holds the writer lock, which every writer of
    those files holds (index pages and the sync state are sync's to clean, under the index lock)."""
    removed = 0
    for folder, dirs, _files in os.walk(root):
        at_root = folder == str(root)
        dirs[:] = [d for d in dirs if not d.startswith(".") and not (at_root and d in store.SKIP_DIRS)]
        removed += len(fsio.remove_temps(Path(folder), lambda name: name.endswith(".md") and name != store.INDEX_PAGE))
    removed += len(fsio.remove_temps(root / store.JOURNAL_DIR, lambda name: name.endswith(".jsonl")))
    removed += len(fsio.remove_temps(root / store.STATE_DIR, lambda name: name == STATE_FILE))
    return removed


def _expiry_events(action: Action, event: Event) -> list[Event]:
    """A ``trash-expire`` tombstone per purged id (what replay reads as gone for good)."""
    tombstones = event.payload.get("tombstones", {})
    return [Event("trash-expire", memory_id, {"permanent": False, "by": event.id, **tombstones.get(memory_id, {})})
            for memory_id in action.purge]


# ---------------------------------------------------------------- undo


def _revert(key: str, current: Any, before: Any, after: Any) -> tuple[Any, bool]:
    """The value of ``key`` with one action's change undone, and whether that was clean.

    A field still at its ``after`` value goes back to ``before``.  A list field
    that changed since keeps the later edits and loses only what the action
    added (and regains what it removed); any other field changed since is left
    as it is and reported.
    """
    if current == after:
        return before, True
    if current == before:
        return current, True
    if key in TUPLE_FIELDS:
        before_items, after_items = list(before or ()), list(after or ())
        added = [x for x in after_items if x not in before_items]
        removed = [x for x in before_items if x not in after_items]
        kept = [x for x in current if x not in added]
        return tuple(kept + [x for x in removed if x not in kept]), True
    return current, False


def undo(vault: Governed, event: Event, now: datetime) -> tuple[list[str], list[str]]:
    """Reverse one applied ``govern`` event; returns (ids restored or changed, conflicts kept as they are).

    Raises:
        NothingToUndo: the action purged memories or removed leftover copies, or a memory it moved to
            the trash has been deleted since (not reversible).
    """
    payload = event.payload
    kind = payload.get("kind")
    if payload.get("purge"):
        raise NothingToUndo(f"{event.id} ({kind}) purged expired trash for good; it cannot be rolled back")
    if payload.get("remove"):
        raise NothingToUndo(f"{event.id} ({kind}) removed a leftover copy of an interrupted move; nothing to undo")
    scan = vault.scan()
    touched: list[str] = []
    conflicts: list[str] = []
    changes: dict[str, Any] = payload.get("changes", {})
    moved: dict[str, Any] = payload.get("moved", {})
    gone = sorted(i for i in moved if i not in scan.entries)
    if gone:  # undoing the rest would drop what the action folded in from a memory that no longer exists
        raise NothingToUndo(f"{event.id} ({kind}) moved {', '.join(gone)} to the trash, deleted for good since; "
                            "it cannot be rolled back")
    for memory_id in sorted(set(changes) | set(moved)):
        entry = scan.entries.get(memory_id)
        if entry is None:
            conflicts.append(f"{memory_id} no longer exists")
            continue
        memory = entry.memory
        values: dict[str, Any] = {}
        for key, after in changes.get(memory_id, {}).get("after", {}).items():
            before = changes[memory_id]["before"].get(key)
            current = field_value(memory, key)
            value, clean = _revert(key, current, from_json(key, before), from_json(key, after))
            if not clean:
                conflicts.append(f"{memory_id}.{key} changed since; kept {current!r}")
            values[key] = value
        reverted = with_values(memory, values) if values else memory
        if memory_id in moved and entry.in_trash:
            vault.move_out_of_trash(Entry(entry.path, ParsedFile(reverted, "")), now, moved[memory_id].get("from"))
        elif reverted != memory:
            with vault.transaction(sync=False) as tx:  # rollback's transaction syncs
                tx.write(entry.path, reverted, entry.parsed)
        touched.append(memory_id)
    for memory_id in payload.get("create", []):
        entry = scan.entries.get(memory_id)
        if entry is not None and not entry.in_trash:
            vault.move_to_trash(entry, now, "rollback")
            touched.append(memory_id)
    return touched, conflicts
