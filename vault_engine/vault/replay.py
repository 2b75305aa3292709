"""Replaying the journal: where the files' lifecycle and counters differ from what it tells, and the fix."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..format.memory import Memory
from ..history import MemoryState, replay
from ..store import Entry
from .ports import Open as Vault
from .results import ReplayDiff


def plan(vault: Vault) -> list[tuple[Entry, list[ReplayDiff]]]:
    """Each file whose lifecycle or counters disagree with the journal, with the differences."""
    states = replay(vault.journal.events())
    plan = []
    for entry in vault.scan().entries.values():
        state = states.get(entry.memory.id)
        # A purge is final: what the journal tells of a forgotten memory is never written into a file
        # (one holding its id again is left out of the scan, and reported, before it gets here).
        if state is None or entry.memory.plain or state.status == "purged":
            continue
        diffs = [
            ReplayDiff(entry.memory.id, entry.path, key, file_value, journal_value)
            for key, file_value, journal_value in _compare(entry.memory, state)
        ]
        if diffs:
            plan.append((entry, diffs))
    return plan


def diff(vault: Vault) -> list[ReplayDiff]:
    """Where the files' lifecycle and counters differ from what the journal tells."""
    return [diff for _, diffs in plan(vault) for diff in diffs]


def apply(vault: Vault) -> list[ReplayDiff]:
    """Rewrite lifecycle and counters of every file that disagrees with the journal."""
    applied: list[ReplayDiff] = []
    with vault.transaction() as tx:
        vault.finish_corrections(vault.scan())  # the journal is completed, not the files undone
        for entry, diffs in plan(vault):
            updates: dict[str, Any] = {d.key: d.journal_value for d in diffs}
            if updates.get("last_applied"):
                stamp_text = str(updates["last_applied"]).replace("Z", "+00:00")
                updates["last_applied"] = datetime.fromisoformat(stamp_text)
            tx.write(entry.path, entry.memory.replace(**updates), entry.parsed)
            applied.extend(diffs)
    return applied


def _compare(memory: Memory, state: MemoryState) -> list[tuple[str, Any, Any]]:
    out: list[tuple[str, Any, Any]] = []
    if memory.lifecycle != state.lifecycle:
        out.append(("lifecycle", memory.lifecycle, state.lifecycle))
    if memory.superseded_by != state.superseded_by and state.lifecycle == "superseded":
        out.append(("superseded_by", memory.superseded_by, state.superseded_by))
    if memory.proof_count != state.proof_count:
        out.append(("proof_count", memory.proof_count, state.proof_count))
    if dict(memory.applied) != state.applied:
        out.append(("applied", dict(memory.applied), dict(state.applied)))
    return out
