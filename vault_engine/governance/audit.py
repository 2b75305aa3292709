"""``audit``: a read-only health report.

Every hot memory with its type, nature (state or rule), age, value, size and
what governance plans for it (keep, move now, move in N days, merge into
ID, retype, compress, stub, trash; what only the language model can decide
is named, never asked: the audit makes no call); counts and budget use per
tier; what a ``maintain`` run would do; invalid files; index freshness; and
the count check between the files, the catalog and the vector index.
Nothing is written, not even the indexes.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from .. import store
from ..clock import now as clock
from ..format.memory import Memory, memory_text
from ..format.value import CONFLICT_OF
from .actions import Action, View
from .classify import age_days, ceil_days, idle_days, is_protected, nature, resident_chars, retire_in_days, value
from .compaction import uncompacted
from .compression import candidate as compressible
from .compression import due as compress_due
from .forgetting import after_repairs, plan_repair
from .maintain import load_similarity, plan, vetoes
from .stubs import candidate as stubbable
from .stubs import overlap, recent_tasks
from .tiers import hot_memories, usage

if TYPE_CHECKING:
    from .ports import Governed


@dataclass(frozen=True, slots=True)
class HotRow:
    id: str
    title: str
    type: str
    nature: str
    age_days: int
    value: float
    chars: int
    protected: bool
    plan: str


@dataclass(slots=True)
class Audit:
    hot: list[HotRow]
    hot_chars: int
    hot_budget: int
    tiers: dict[str, int]
    trash: int
    next_expiry: str | None
    episodes_uncompacted: int
    compaction_limit: int
    planned: dict[str, int]
    plan: list[str]
    invalid: list[str]
    index: str
    counts: dict[str, int | None] = field(default_factory=dict)
    counts_ok: bool = True
    conflicts: list[str] = field(default_factory=list)  # conflict versions a merge kept, to settle


_NOW = {"overflow": "move now", "retire": "move now", "redundant": "move now", "retype": "retype to state now",
        "stub": "stub now", "compress": "compress now"}


def _plan_for(memory_id: str, actions: list[Action], memory_nature: str, retire_days: float | None,
              protected: bool, hint: str | None = None) -> str:
    for action in actions:
        if action.kind == "merge" and memory_id in action.trash:
            return f"merge into {action.memory}"
        if action.kind in _NOW and action.memory == memory_id:
            return f"{_NOW[action.kind]} ({action.reason})"
        if action.kind in ("stale", "stub-gc") and memory_id in action.trash:
            return f"trash now ({action.reason})"
        if action.kind == "supersede" and memory_id in action.related:
            return f"superseded by {action.memory}"
    # A protected state never retires; one past its age that is not planned was moved back by a person.
    if memory_nature == "state" and retire_days is not None and retire_days > 0 and not protected:
        return f"move in {ceil_days(retire_days)} days"
    return hint or "keep"


def _model_hint(memory: Memory, view: View) -> str | None:
    """What ``maintain`` would ask the language model about a hot memory (the audit asks nothing)."""
    config = view.config
    due = compress_due(memory, config) if compressible(memory, config) else None
    if due is not None and due <= view.now and ("compress", frozenset({memory.id})) not in view.vetoes:
        return "compress if the language model shortens it acceptably"
    if (usage(view).ratio >= config.tiers.hard_ratio and view.tasks and stubbable(memory, view)
            and idle_days(memory, view.now) >= config.tiers.stub_idle_days
            and overlap(f"{memory.title}\n{memory_text(memory)}", view.tasks) is None):
        return "stub if the language model confirms it is dormant"
    return None


def _index_counts(vault: Governed) -> dict[str, int | None]:
    """Memories in the files, in the catalog and in the vector index (None when an index is absent)."""
    out: dict[str, int | None] = {}
    for name, query in (("catalog", "SELECT COUNT(*) FROM memories"),
                        ("vectors", "SELECT COUNT(DISTINCT id) FROM vectors")):
        path = vault.root / store.STATE_DIR / f"{name}.sqlite"
        if not path.exists():
            out[name] = None
            continue
        try:
            # Not mode=ro: a read-only connection to a WAL database leaves its -wal and -shm files behind.
            db = sqlite3.connect(path)
            try:
                out[name] = int(db.execute(query).fetchone()[0])
            finally:
                db.close()
        except sqlite3.DatabaseError:
            out[name] = -1
    return out


def audit(vault: Governed, *, now: datetime | None = None) -> Audit:
    from ..index.sync import freshness
    stamp = now or clock()
    scan = vault.scan()
    tasks = recent_tasks(vault.journal, stamp, vault.config.tiers.activity_days)
    view = View.from_scan(scan, stamp, vault.config, vault.root, vetoes(vault.journal), tasks=tasks)
    repairs = plan_repair(view)  # as maintain: interrupted moves are finished before the plan
    view = after_repairs(view, repairs)
    actions = repairs + plan(view, load_similarity(vault, view))
    rows = []
    for memory in sorted(hot_memories(view), key=lambda m: (value(m, stamp, vault.config), m.id)):
        kind = nature(memory)
        protected = is_protected(memory, vault.config)
        rows.append(HotRow(
            id=memory.id,
            title=memory.title,
            type=memory.type,
            nature=kind,
            age_days=int(age_days(memory, stamp)),
            value=round(value(memory, stamp, vault.config), 3),
            chars=resident_chars(memory),
            protected=protected,
            plan=_plan_for(memory.id, actions, kind, retire_in_days(memory, stamp, vault.config), protected,
                           _model_hint(memory, view)),
        ))
    active = list(view.governed())
    expiries = sorted(m.expires_at.isoformat() for m in view.trashed.values() if m.expires_at is not None)
    counts = _index_counts(vault)
    files = len(scan.entries)
    counts["files"] = files
    ok = all(counts.get(k) == files for k in ("catalog", "vectors"))
    return Audit(
        hot=rows,
        hot_chars=sum(r.chars for r in rows),
        hot_budget=vault.config.tiers.hot_budget_chars,
        tiers=dict(sorted(Counter(m.tier for m in active).items())),
        trash=len(view.trashed),
        next_expiry=expiries[0] if expiries else None,
        episodes_uncompacted=len(uncompacted(view)),
        compaction_limit=vault.config.compaction.max_cold,
        planned=dict(sorted(Counter(a.kind for a in actions).items())),
        plan=[a.describe() for a in actions],
        invalid=[p.one_line() for p in scan.problems],
        index=freshness(vault.root)[1],
        counts=counts,
        counts_ok=ok,
        conflicts=_conflicts(view),
    )


def _conflicts(view: View) -> list[str]:
    """One line per conflict version a merge kept beside a memory (see :mod:`vault_engine.sharing`)."""
    out = []
    for memory in sorted(view.active.values(), key=lambda m: m.id):
        current = memory.extra.get(CONFLICT_OF)
        if isinstance(current, str):
            out.append(f"{memory.id} is a conflicting version of {current} ({memory.title}): keep one "
                       f"(memvault forget {memory.id}) or swap them (memvault rollback {memory.id})")
    return out
