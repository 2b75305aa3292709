"""Compression: a long hot rule nobody edits is shortened by the language model, its original kept cold.

A hot *rule* longer than ``tiers.compress_min_chars`` that nobody edited for
``tiers.compress_after_days`` is given to the model once
(:meth:`~.advice.Advisor.compress`; the answer is remembered).  The shorter
text is kept only when :func:`rejection` finds nothing wrong with it: shorter
than ``compress_max_ratio`` of the original, at least
``compress_min_result_chars`` long, and keeping at least
``compress_min_coverage`` of the original's character bigrams
(:func:`bigram_coverage`: a text that drops what the rule says, or says it
in other words altogether, is not its compression).

One ``compress`` action first writes a new cold memory holding the original
text (``original_of: <rule>``), then the rule's new text (``compressed_from:
<copy>``); each links the other.  Nothing is lost: the copy is searchable,
and ``memvault rollback`` puts the original text back and trashes the copy.
A model that is offline, unavailable or unsure, or an answer that fails a
check, leaves the rule as it is.  Never compressed: stubs, rules compressed
before, protected memories and red lines
(:func:`~.classify.keeps_its_words`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..config import TierSettings, VaultConfig
from ..format.ids import new_memory_id
from ..format.memory import Memory, memory_text, normalize_text
from ..format.text import make_summary
from ..format.value import empty_applied
from ..patterns import lazy_pattern
from ..store import folder_for
from .actions import Action, Change, View
from .classify import COMPRESSED_FROM, ORIGINAL_OF, is_stub, keeps_its_words, nature, written_at

_NOT_TEXT = lazy_pattern(r"[\W_]+")


def char_bigrams(text: str) -> set[str]:
    """The distinct pairs of adjacent letters or digits of ``text`` (case, spaces and punctuation dropped)."""
    letters = _NOT_TEXT.sub("", normalize_text(text))
    return {letters[n : n + 2] for n in range(len(letters) - 1)}


def bigram_coverage(compressed: str, original: str) -> float:
    """The share of the original's distinct character bigrams that ``compressed`` keeps, in [0, 1].

    The seed's acceptance check: a compression keeps the rule's words ("ruff",
    "72 characters", "imperative"), so most of its letter pairs survive; a
    text that drops part of the rule, or rewrites it in other words, keeps
    far fewer.  0.0 when the original has no bigram.
    """
    found = char_bigrams(original)
    if not found:
        return 0.0
    return len(found & char_bigrams(compressed)) / len(found)


def rejection(original: str, compressed: str, settings: TierSettings) -> str | None:
    """Why ``compressed`` may not replace ``original`` (None: it may)."""
    size, new = len(original), len(compressed)
    if new >= settings.compress_max_ratio * size:
        return f"{new} chars is not under {settings.compress_max_ratio:.0%} of {size}"
    if new < settings.compress_min_result_chars:
        return f"{new} chars is under {settings.compress_min_result_chars}"
    coverage = bigram_coverage(compressed, original)
    if coverage < settings.compress_min_coverage:
        return f"it keeps {coverage:.0%} of the original's letter pairs (under {settings.compress_min_coverage:.0%})"
    return None


def candidate(memory: Memory, config: VaultConfig) -> bool:
    """Whether ``memory`` is a hot rule compression may shorten, its age aside."""
    return (
        memory.tier == "hot"
        and memory.type not in ("episode", "document")
        and not is_stub(memory)
        and COMPRESSED_FROM not in memory.extra
        and ORIGINAL_OF not in memory.extra
        and not memory.source.startswith("maintain")  # what governance wrote (stubs, syntheses, digests)
        and keeps_its_words(memory, config) is None
        and len(memory_text(memory)) > config.tiers.compress_min_chars
        and nature(memory) == "rule"
    )


def due(memory: Memory, config: VaultConfig) -> datetime | None:
    """When a candidate's text has gone unedited long enough to be compressed (None: undated)."""
    written = written_at(memory)
    if written is None:
        return None  # a hand-written file without dates: no evidence it is old
    try:
        return written + timedelta(days=config.tiers.compress_after_days)
    except OverflowError:
        return None


def original_copy(memory: Memory) -> Memory:
    """A new cold memory holding ``memory``'s text as it is, linked back to it (its title says it is the
    original, so a search or a folder listing tells the two apart)."""
    return memory.replace(
        id=new_memory_id(), title=f"{memory.title} (original)", tier="cold", recall="active", links=(memory.id,),
        evidence=(), proof_count=1, applied=empty_applied(), last_applied=None, supersedes=None, superseded_by=None,
        source="maintain", extra={**{k: v for k, v in memory.extra.items() if k != COMPRESSED_FROM},
                                  ORIGINAL_OF: memory.id},
    )


def plan_compress(view: View) -> list[Action]:
    """Old long hot rules the model shortens acceptably, each with its original written cold first."""
    config = view.config
    copies = {str(m.extra[ORIGINAL_OF]): m for m in view.active.values()
              if isinstance(m.extra.get(ORIGINAL_OF), str)}
    out = []
    for memory in sorted(view.governed(), key=lambda m: m.id):
        if not candidate(memory, config) or ("compress", frozenset({memory.id})) in view.vetoes:
            continue
        when = due(memory, config)
        if when is None or when > view.now:
            continue
        text = memory_text(memory)
        answer = view.advisor.compress(text)
        if answer is None:
            continue  # offline, unavailable or unsure: the rule stays as it is
        compressed = answer.strip()
        if rejection(text, compressed, config.tiers) is not None:
            continue
        # A copy an interrupted run already wrote is used again, not written twice.
        found = copies.get(memory.id)
        copy = found if found is not None and found.body == memory.body else original_copy(memory)
        days = (view.now - when).days + config.tiers.compress_after_days
        change = Change.of(
            memory, body=compressed + "\n", summary=make_summary(compressed) if memory.summary else "",
            links=tuple(dict.fromkeys((*memory.links, copy.id))), compressed_from=copy.id,
        )
        assert change is not None
        out.append(Action(
            "compress", memory.id,
            f"rule unedited for {days} days: {len(text)} -> {len(compressed)} chars "
            f"(keeps {bigram_coverage(compressed, text):.0%} of the original's letter pairs); "
            f"the original is kept cold as {copy.id}",
            changes=(change,), create=() if copy is found else ((folder_for(copy), copy),),
        ))
    return out
