"""Governance actions and the vault view planners read.

A planner is a pure function from a :class:`View` to a list of
:class:`Action`; an action says, with a reason, which fields of which
memories change (before and after, so it can be undone), which memories go
to the trash, which new memories are created and which trashed ones are
purged.  :meth:`View.after` applies actions to the view in memory, so the
steps of ``maintain`` chain into one plan before anything is written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..config import VaultConfig
from ..format.memory import Memory
from ..format.value import CONFLICT_OF
from ..store import Entry, Scan
from .advice import Advisor
from .classify import ORIGINAL_OF, STUB_OF

# The fields governance may change on an existing memory, and their Python types.
TUPLE_FIELDS = frozenset({"tags", "links", "evidence"})
GOVERNED = frozenset({
    "tier", "tags", "links", "lifecycle", "superseded_by", "supersedes", "evidence", "proof_count",
    "trust", "applied", "importance",
    "title", "summary", "body",  # a synthesis written again; a hot rule compressed
})
# Keys kept among a memory's extra (unknown) frontmatter keys; None removes the key.
EXTRA_KEYS = frozenset({"merged_into", "compacted_into", "digest", "synthesis_of", "synthesis_key", "synthesis_by",
                        "synthesis_text",
                        "nature", "compressed_from", "original_of"})  # a rule retyped; a rule compressed

KINDS = ("repair", "expire", "stale", "tags", "supersede", "merge", "link", "synthesize", "resynthesize", "compact",
         "retire", "retype", "redundant", "compress", "stub", "stub-gc", "overflow", "decay")


def to_json(key: str, value: Any) -> Any:
    """A governed field value as journal JSON."""
    if isinstance(value, tuple):
        return [dict(v) if isinstance(v, Mapping) else v for v in value]
    if isinstance(value, dict):
        return dict(value)
    return value


def from_json(key: str, value: Any) -> Any:
    """A governed field value from journal JSON."""
    if key in TUPLE_FIELDS:
        return tuple(dict(v) if isinstance(v, Mapping) else v for v in (value or ()))
    if key == "applied":
        return dict(value or {})
    return value


def field_value(memory: Memory, key: str) -> Any:
    if key in EXTRA_KEYS:
        return memory.extra.get(key)
    return getattr(memory, key)


def with_values(memory: Memory, values: Mapping[str, Any]) -> Memory:
    """``memory`` with governed fields (Python values) replaced; an extra key set to None is removed."""
    plain = {k: v for k, v in values.items() if k in GOVERNED}
    extra_changes = {k: v for k, v in values.items() if k in EXTRA_KEYS}
    unknown = set(values) - GOVERNED - EXTRA_KEYS
    if unknown:
        raise ValueError(f"not a governed field: {sorted(unknown)}")
    if extra_changes:
        extra = dict(memory.extra)
        for key, value in extra_changes.items():
            if value is None:
                extra.pop(key, None)
            else:
                extra[key] = value
        plain["extra"] = extra
    return memory.replace(**plain, plain=False) if plain else memory


@dataclass(frozen=True, slots=True)
class Change:
    """New values for some governed fields of one memory (``before`` holds the old ones)."""

    id: str
    before: Mapping[str, Any]
    after: Mapping[str, Any]

    @classmethod
    def of(cls, memory: Memory, **after: Any) -> Change | None:
        """The change setting ``after`` on ``memory``; None when nothing would change."""
        changed = {k: v for k, v in after.items() if field_value(memory, k) != v}
        if not changed:
            return None
        return cls(memory.id, {k: field_value(memory, k) for k in changed}, changed)

    def to_json(self) -> dict[str, Any]:
        return {
            "before": {k: to_json(k, v) for k, v in sorted(self.before.items())},
            "after": {k: to_json(k, v) for k, v in sorted(self.after.items())},
        }


CREATING = ("compact", "synthesize")  # kinds that create a memory over ``related`` ones


@dataclass(frozen=True, slots=True)
class Action:
    """One governance step on the vault, with the reason a person reads in the plan."""

    kind: str
    memory: str  # the memory the action is about (the survivor of a merge, the digest of a compaction)
    reason: str
    changes: tuple[Change, ...] = ()
    trash: tuple[str, ...] = ()  # ids moved to the trash (reason: the action kind)
    create: tuple[tuple[str, Memory], ...] = ()  # (folder, memory) written as new files
    purge: tuple[str, ...] = ()  # ids deleted from the trash for good
    remove: tuple[str, ...] = ()  # paths of leftover copies removed (repair)
    related: tuple[str, ...] = ()  # other memories involved (shown in the plan)

    def key(self) -> tuple[str, frozenset[str]]:
        """What a rollback vetoes: this kind of action on these memories (a new digest's or synthesis's
        own id aside: planned again, it would get another)."""
        if self.kind in CREATING:
            return (self.kind, frozenset(self.related))
        return (self.kind, frozenset({self.memory, *self.related}))

    def touches(self) -> set[str]:
        ids = {self.memory, *self.related, *self.trash, *self.purge}
        ids.update(c.id for c in self.changes)
        ids.update(m.id for _, m in self.create)
        return ids

    def describe(self) -> str:
        return f"{self.kind:<9} {self.memory}  {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "memory": self.memory,
            "reason": self.reason,
            "related": list(self.related),
            "changes": {c.id: c.to_json() for c in self.changes},
            "trash": list(self.trash),
            "create": [m.id for _, m in self.create],
            "purge": list(self.purge),
            "remove": list(self.remove),
        }


def merge_changes(changes: Iterable[Change]) -> tuple[Change, ...]:
    """Changes to one memory folded into one (the first ``before``, the last ``after`` of each field)."""
    merged: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for change in changes:
        before, after = merged.setdefault(change.id, ({}, {}))
        for key, value in change.before.items():
            before.setdefault(key, value)
        after.update(change.after)
    return tuple(Change(i, b, a) for i, (b, a) in merged.items() if any(b.get(k) != v for k, v in a.items()))


@dataclass(slots=True)
class View:
    """What the planners see: the vault's memories (by id, with paths), the trash, the clock, the settings."""

    active: dict[str, Memory]
    paths: dict[str, str]
    trashed: dict[str, Memory]
    now: datetime
    config: VaultConfig
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # id -> extra copies' paths
    entries: dict[str, Entry] = field(default_factory=dict)  # for the duplicate repair
    root: Path | None = None
    vetoes: frozenset[tuple[str, frozenset[str]]] = frozenset()  # actions a person rolled back
    advisor: Advisor = field(default_factory=Advisor)  # a language model's answers (none by default)
    tasks: tuple[str, ...] = ()  # the agent's recent tasks, newest first (see governance/stubs.py)

    @classmethod
    def from_scan(cls, scan: Scan, now: datetime, config: VaultConfig, root: Path | None = None,
                  vetoes: frozenset[tuple[str, frozenset[str]]] = frozenset(),
                  advisor: Advisor | None = None, tasks: tuple[str, ...] = ()) -> View:
        active: dict[str, Memory] = {}
        trashed: dict[str, Memory] = {}
        paths: dict[str, str] = {}
        for memory_id, entry in scan.entries.items():
            (trashed if entry.in_trash else active)[memory_id] = entry.memory
            paths[memory_id] = entry.path
        return cls(active, paths, trashed, now, config, dict(scan.duplicates), dict(scan.entries), root, vetoes,
                   advisor or Advisor(), tasks)

    def governed(self, *, stubs: bool = False) -> Iterator[Memory]:
        """Active memories governance may change: not plain notes, not superseded, not the conflict
        version a merge kept for a person to settle, not the original a compressed rule keeps cold;
        stubs (pointers with a lifecycle of their own, governance/stubs.py) only when asked for."""
        return (m for m in self.active.values()
                if not m.plain and m.lifecycle != "superseded" and CONFLICT_OF not in m.extra
                and ORIGINAL_OF not in m.extra and (stubs or STUB_OF not in m.extra))

    def after(self, actions: Iterable[Action]) -> View:
        """The view once ``actions`` are applied (pure: ``self`` is unchanged)."""
        active, trashed, paths = dict(self.active), dict(self.trashed), dict(self.paths)
        duplicates = dict(self.duplicates)
        for action in actions:
            for folder, memory in action.create:
                active[memory.id] = memory
                paths[memory.id] = f"{folder}/{memory.id}.md"
            for change in action.changes:
                if change.id in active:
                    active[change.id] = with_values(active[change.id], change.after)
            for memory_id in action.trash:
                if memory_id in active:  # as Vault.move_to_trash writes it
                    trashed[memory_id] = active.pop(memory_id).replace(
                        trashed_at=self.now, expires_at=self.now + timedelta(days=self.config.vault.trash_days),
                        trashed_from=paths.get(memory_id))
            for memory_id in action.purge:
                trashed.pop(memory_id, None)
            if action.kind == "repair":
                duplicates.pop(action.memory, None)
        return dataclasses.replace(self, active=active, paths=paths, trashed=trashed, duplicates=duplicates)
