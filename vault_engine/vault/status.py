"""The vault at a glance: counts, the hot tier's budget, the journal and the search indexes."""

from __future__ import annotations

from collections import Counter

from ..governance.classify import resident_chars
from ..journal import PURGE_DECLINED
from .ports import Open as Vault
from .results import Status


def status(vault: Vault) -> Status:
    """How many memories of each kind, the hot tier's use, the journal and the indexes."""
    scan = vault.scan()
    active = [e.memory for e in scan.active()]
    events = list(vault.journal.events())
    hot = [m for m in active if m.tier == "hot" and m.lifecycle != "superseded"]
    from ..captures import CaptureQueue
    from ..index.sync import freshness

    index_state, index_text = freshness(vault.root)
    present = {m.id for m in active} | {e.memory.id for e in scan.trashed()}
    kept = {e.memory: e.payload.get("purge") for e in events if e.kind == PURGE_DECLINED and e.memory in present}
    return Status(
        vault=str(vault.root),
        memories=len(active),
        by_type=dict(sorted(Counter(m.type for m in active).items())),
        by_lifecycle=dict(sorted(Counter(m.lifecycle for m in active).items())),
        by_tier=dict(sorted(Counter(m.tier for m in active).items())),
        trash=sum(1 for _ in scan.trashed()),
        invalid=[p.one_line() for p in scan.problems],
        hot_chars=sum(resident_chars(m) for m in hot),
        hot_budget=vault.config.tiers.hot_budget_chars,
        journal_events=len(events),
        journal_warnings=list(vault.journal.warnings),
        index=index_text,
        index_state=index_state,
        embedding_model=vault.config.embedding.model,
        captures=CaptureQueue(vault.root).state().to_json(),
        kept_from_purges=[f"{memory_id}: kept; a permanent forget from another machine ({purge}) forgot an older "
                          f"text; memvault forget {memory_id} --permanent removes it"
                          for memory_id, purge in sorted(kept.items())],
    )
