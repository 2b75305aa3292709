"""The memory value: the :class:`Memory` dataclass, the order its keys are written in, and a parsed file.

:mod:`vault_engine.format.schema` builds a checked value from frontmatter, and
:mod:`vault_engine.format.memory` reads and writes the file around it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, cast

from . import yamlfmt
from .kinds import OUTCOMES, Authority, Lifecycle, MemoryClass, MemoryType, Recall, Scope, Tier, Trust

# The one order in which the engine writes keys.
KEY_ORDER = (
    "id", "title", "type", "class", "scope", "project",
    "paths", "tasks", "operations", "phases",
    "authority", "trust", "lifecycle", "recall", "tier", "importance",
    "summary", "trigger", "tags", "links", "supersedes", "superseded_by",
    "source", "sender", "evidence", "proof_count", "applied", "last_applied", "occurred_at",
    "created", "updated", "trashed_at", "expires_at", "trashed_from",
)
# Written even when they hold their default, so a file shows its state at a glance.
ALWAYS_WRITTEN = frozenset({
    "id", "title", "type", "scope", "authority", "trust", "lifecycle", "recall", "tier",
    "importance", "summary", "trigger", "tags",
})
LIST_KEYS = ("paths", "tasks", "operations", "phases", "tags", "links")
# A key of the memory's own (kept in ``extra``): this memory is the version of ``<id>`` that lost
# a merge (both machines of a shared vault changed it differently), kept for a person to settle.
CONFLICT_OF = "conflict_of"
SYNTHESIS_OF = "synthesis_of"  # a synthesis's members (``maintain`` writes syntheses: governance/synthesis.py)
SYNTHESIS_SOURCE = "maintain:synthesis"
DATETIME_KEYS = ("last_applied", "created", "updated", "trashed_at", "expires_at")
MAX_HEADER_CHARS = 256 * 1024
# Counts beyond this are not counts: the indexes (SQLite) and JSON readers (the plugin) keep up to here exactly.
MAX_COUNT = 2**53 - 1


def empty_applied() -> dict[str, int]:
    """A count of zero for every outcome, in outcome order."""
    return {k: 0 for k in OUTCOMES}


@dataclass(frozen=True, slots=True, eq=True)
class Memory:
    """One memory: its frontmatter fields and its body."""

    id: str
    title: str
    type: MemoryType
    body: str = ""
    klass: MemoryClass | None = None
    scope: Scope = "global"
    project: str | None = None
    paths: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    authority: Authority = "inferred"
    trust: Trust = "learned"
    lifecycle: Lifecycle = "trial"
    recall: Recall = "active"
    tier: Tier = "cold"
    importance: float = 0.5
    summary: str = ""
    trigger: str = ""
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    supersedes: str | None = None
    superseded_by: str | None = None
    source: str = "user"
    sender: str | None = None  # who it came from in a shared vault (see vault_engine.senders)
    evidence: tuple[dict[str, Any], ...] = ()
    proof_count: int = 1
    applied: dict[str, int] = field(default_factory=empty_applied)
    last_applied: datetime | None = None
    occurred_at: date | datetime | None = None
    created: datetime | None = None
    updated: datetime | None = None
    trashed_at: datetime | None = None
    expires_at: datetime | None = None
    trashed_from: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    plain: bool = False  # a markdown file without memvault frontmatter

    def __hash__(self) -> int:
        return hash(self.id)

    def replace(self, **changes: Any) -> Memory:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    @property
    def is_trashed(self) -> bool:
        return self.trashed_at is not None

    def fields(self) -> dict[str, Any]:
        """Frontmatter keys in write order (defaults omitted unless always written)."""
        defaults = _DEFAULTS
        out: dict[str, Any] = {}
        for key in KEY_ORDER:
            value = getattr(self, "klass" if key == "class" else key)
            if key == "project" and self.scope == "project":
                out[key] = value
                continue
            if isinstance(value, tuple):
                value = list(value)
            if key == "applied":  # outcome order, so equal counts always give equal bytes
                value = {**{k: value[k] for k in OUTCOMES if k in value}, **value}
            if key not in ALWAYS_WRITTEN and (value is None or value == defaults.get(key)):
                continue
            out[key] = value
        out.update(self.extra)
        return out

    def to_json(self) -> dict[str, Any]:
        """Every known field (defaults included) as JSON-ready values, plus unknown keys."""
        out: dict[str, Any] = {}
        for key in KEY_ORDER:
            out[key] = _jsonable(getattr(self, "klass" if key == "class" else key))
        out["extra"] = _jsonable(self.extra)
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return yamlfmt.format_datetime(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


_DEFAULTS: dict[str, Any] = {
    ("class" if f.name == "klass" else f.name): (
        f.default if f.default is not dataclasses.MISSING else cast(Callable[[], Any], f.default_factory)()
    )
    for f in dataclasses.fields(Memory)
    if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
}
_DEFAULTS = {k: (list(v) if isinstance(v, tuple) else v) for k, v in _DEFAULTS.items()}


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """A memory together with the exact text it was parsed from."""

    memory: Memory
    text: str
    newline: str = "\n"
    bom: bool = False
