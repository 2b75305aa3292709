"""What the vault's operations return, and what a caller asks to remember."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import VaultError
from ..format.kinds import Authority, MemoryClass, MemoryType, Recall, Scope, Tier, Trust


@dataclass(frozen=True, slots=True)
class AddResult:
    id: str
    path: str
    created: bool  # False: the same text already existed and gained evidence
    notice: str | None = None
    scope: Scope = "global"  # where the memory is: global, or project (and which)
    project: str | None = None


@dataclass(frozen=True, slots=True)
class Escaped:
    """One imported record whose text held characters no memory may hold, stored as their ``⟨U+XXXX⟩``
    escapes: its line, and each field so stored with the code points escaped (``("body", ["U+000B"])``)."""

    line: int
    fields: tuple[tuple[str, list[str]], ...]

    def one_line(self) -> str:
        return f"line {self.line} (" + "; ".join(f"{name}: {', '.join(codes)}" for name, codes in self.fields) + ")"


def escaped_notice(source: str, escaped: Sequence[Escaped], listed: int = 5) -> str:
    """One line for people: which records of ``source`` were stored with escapes (the first ``listed``)."""
    records = "1 record" if len(escaped) == 1 else f"{len(escaped)} records"
    more = f", and {len(escaped) - listed} more" if len(escaped) > listed else ""
    return (f"notice: {records} of {source} stored with ⟨U+XXXX⟩ escapes (for characters a memory file cannot "
            "hold, or a ⟨ that begins such a form): " + ", ".join(e.one_line() for e in escaped[:listed]) + more)


@dataclass(frozen=True, slots=True)
class ImportResult:
    added: list[str]
    merged: list[str]
    errors: list[VaultError]
    unchanged: list[str] = field(default_factory=list)  # records imported before: their memories, unchanged
    escaped: list[Escaped] = field(default_factory=list)  # records kept with escaped characters


@dataclass(frozen=True, slots=True)
class ChangeResult:
    """What a correct, forget, rollback or restore did."""

    action: str
    id: str
    path: str | None
    related: str | None = None
    event: str | None = None
    conflicts: Sequence[str] = ()
    overviews: Sequence[str] = ()  # overviews that quoted the memory, moved to the trash with it (forget, correct)


@dataclass(frozen=True, slots=True)
class RunStep:
    """One action of a ``maintain`` run, as rolling back the run left it."""

    event: str  # the govern event of the action
    kind: str  # merge, stale, tags, ...
    memory: str
    rollback: str | None = None  # the rollback event, when undone
    why: str | None = None  # why it was not undone
    conflicts: Sequence[str] = ()  # fields changed since, kept as they are


@dataclass(frozen=True, slots=True)
class RunRollback:
    """What ``rollback --run`` did: the run's actions undone, and those that could not be, latest first."""

    run: str
    undone: Sequence[RunStep]
    kept: Sequence[RunStep]


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    """What one reported outcome did to a memory."""

    action: str  # recorded | promoted | superseded | already-recorded
    id: str
    path: str
    outcome: str
    old_lifecycle: str
    lifecycle: str
    applied: dict[str, int]
    last_applied: datetime | None
    application: str | None
    event: str


@dataclass(frozen=True, slots=True)
class ReplayDiff:
    id: str
    path: str
    key: str
    file_value: Any
    journal_value: Any


@dataclass(slots=True)
class Status:
    vault: str
    memories: int
    by_type: dict[str, int]
    by_lifecycle: dict[str, int]
    by_tier: dict[str, int]
    trash: int
    invalid: list[str]
    hot_chars: int
    hot_budget: int
    journal_events: int
    journal_warnings: list[str]
    index: str
    index_state: str  # current | stale | missing | unreadable
    embedding_model: str
    captures: dict[str, Any] = field(default_factory=dict)  # the agents' capture queue (captures.py)
    # Memories kept although another machine forgot them for good: it forgot an older text (sharing/reconcile.py).
    kept_from_purges: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What a person or agent asks to remember."""

    text: str
    title: str | None = None
    type: MemoryType = "fact"
    klass: MemoryClass | None = None
    scope: Scope | None = None
    project: str | None = None
    paths: Sequence[str] = ()
    tasks: Sequence[str] = ()
    operations: Sequence[str] = ()
    phases: Sequence[str] = ()
    tags: Sequence[str] = ()
    trust: Trust = "learned"
    authority: Authority = "explicit"
    recall: Recall | None = None
    tier: Tier | None = None
    importance: float = 0.5
    source: str = "user"
    summary: str | None = None
    trigger: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    sender: str | None = None  # who it came from (None: whoever the vault writes as; see Vault.sender)
    # The project of the work (the repository the caller is in; None outside one): where a memory goes when
    # neither scope nor project is given (see vault_engine.vault.scope.placement).
    current_project: str | None = None

