"""Hot rules that no longer earn their place: records of things done, and rules the cold tier already holds.

Rules never retire by age (:mod:`.tiers`), so a hot tier of rules alone
would only grow.  Two signals give a rule a way out that loses nothing (the
memory only changes tier; its file, id, history and links stay):

- **retype**: a hot rule whose text states a date at least
  ``tiers.retype_after_days`` old, at least ``tiers.retype_done_markers``
  distinct completion words ("migrated", "removed") and no behaviour word
  ("always", "should", "use") is a record of things done after all.  It
  becomes ``nature: state`` and moves cold.  A ``nature: rule`` a person
  wrote is kept.
- **redundant**: while the hot tier is at its soft limit or above, a hot rule
  not used for ``tiers.redundant_idle_days`` whose near-duplicate (the merge
  test of :mod:`.consolidate`) is already a cold memory of at least its
  trust moves cold: search finds either.  It is not merged: the two may
  differ in trust or carry a person's veto of their merge, and the next
  ``maintain`` merges them anyway when it may.

Neither touches protected memories, red lines
(:func:`~.classify.keeps_its_words`), stubs or what governance wrote.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..config import VaultConfig
from ..format.memory import Memory, memory_text
from .actions import Action, Change, View
from .classify import (
    COMPRESSED_FROM,
    done_markers,
    idle_days,
    instructs,
    is_stub,
    keeps_its_words,
    moment_key,
    nature,
    stated_at,
)
from .consolidate import TRUST_RANK, Pair, contradicts, distinct_notes
from .similarity import Similarity, text_similarity
from .subjects import distinct
from .tiers import hot_memories, usage


def may_leave(memory: Memory, config: VaultConfig) -> bool:
    """Whether a hot memory is a rule these signals (and stubbing) may move: not protected or a red
    line, not a stub, not the core profile, nothing governance wrote."""
    return (
        memory.tier == "hot"
        and memory.type not in ("core-profile", "episode", "document")
        and not is_stub(memory)
        and not memory.source.startswith("maintain")
        and keeps_its_words(memory, config) is None
        and nature(memory) == "rule"
    )


def _retype_signals(memory: Memory) -> tuple[datetime, list[str]] | None:
    """The date a hot rule states and its completion words, when it reads as a record of things done."""
    if memory.extra.get("nature") == "rule":  # a person said so
        return None
    stated = stated_at(memory)
    text = f"{memory.title}\n{memory_text(memory)}"
    if stated is None or instructs(text):
        return None
    return stated, done_markers(text)


def retype_due(memory: Memory, config: VaultConfig) -> datetime | None:
    """When a hot rule that reads as a record of things done is old enough to retype (None: it does not)."""
    found = _retype_signals(memory) if may_leave(memory, config) else None
    if found is None or len(found[1]) < config.tiers.retype_done_markers:
        return None
    try:
        return found[0] + timedelta(days=config.tiers.retype_after_days)
    except OverflowError:
        return None


def plan_retype(view: View) -> list[Action]:
    """Hot rules that are records of things done: ``nature: state``, moved cold."""
    out = []
    for memory in sorted(hot_memories(view), key=lambda m: m.id):
        when = retype_due(memory, view.config)
        found = _retype_signals(memory)
        if when is None or found is None or when > view.now or ("retype", frozenset({memory.id})) in view.vetoes:
            continue
        stated, done = found
        change = Change.of(memory, nature="state", tier="cold")
        assert change is not None
        out.append(Action(
            "retype", memory.id,
            f"states {stated.date()} ({(view.now - stated).days} days ago), things done "
            f"({', '.join(done)}) and no instruction: a state, moved cold",
            changes=(change,),
        ))
    return out


def _counterpart(memory: Memory, other: Memory) -> bool:
    """Whether the governed ``other`` may stand for the hot ``memory`` in the cold tier (a compressed
    rule's own original is not governed: it never does)."""
    return (
        other.id != memory.id
        and other.tier == "cold"
        and other.type not in ("episode", "document")
        and memory.extra.get(COMPRESSED_FROM) != other.id
        and TRUST_RANK[other.trust] >= TRUST_RANK[memory.trust]
    )


def redundant_due(memory: Memory, now: datetime, config: VaultConfig) -> datetime | None:
    """When a hot rule will have been idle long enough to leave for a cold duplicate (None: it may not)."""
    if not may_leave(memory, config):
        return None
    return now + timedelta(days=config.tiers.redundant_idle_days - idle_days(memory, now))


def plan_redundant(view: View, similarity: Similarity) -> list[Action]:
    """From the soft limit up: idle hot rules a cold memory already states move cold."""
    config = view.config
    settings, consolidation = config.tiers, config.consolidation
    current = usage(view)
    if current.ratio < settings.soft_ratio:
        return []
    floor = (consolidation.merge_similarity - 0.4) / 0.6  # words <= 1: the combined score needs this cosine
    governed = {m.id: m for m in view.governed()}
    out = []
    for memory in sorted(hot_memories(view), key=lambda m: m.id):
        idle = idle_days(memory, view.now)
        if not may_leave(memory, config) or idle < settings.redundant_idle_days:
            continue
        for other_id, cosine in similarity.neighbours(memory.id):
            if cosine < floor:
                break  # best first
            other = governed.get(other_id)
            if other is None or not _counterpart(memory, other):
                continue
            if ("redundant", frozenset({memory.id, other.id})) in view.vetoes:
                continue
            older, newer = sorted((memory, other), key=lambda m: (moment_key(m.created), m.id))
            pair = Pair(older, newer, cosine, text_similarity(memory, other))
            if (pair.combined < consolidation.merge_similarity or pair.text < consolidation.text_similarity
                    or contradicts(older, newer) or distinct(older, newer) is not None
                    or distinct_notes(pair, consolidation.short_words, consolidation.short_cosine)):
                continue
            change = Change.of(memory, tier="cold")
            assert change is not None
            out.append(Action(
                "redundant", memory.id,
                f"hot tier at {current.ratio:.0%}: idle {idle:.0f} days and cold memory {other.id} states the "
                f"same (cosine {cosine:.2f}, words {pair.text:.2f}); moved cold",
                changes=(change,), related=(other.id,),
            ))
            break
    return out
