"""Stale notes: inferred notes that say they are obsolete, and in-progress notes the work has left behind.

Only notes the system inferred are candidates: what a person wrote
(``authority: explicit``) is never trashed on a word's say-so, as it never
decays away.  Never candidates either: core profiles, episodes and
documents (raw records), protected memories and red lines, system-trust
memories, what governance wrote (stubs, digests, syntheses, the originals of
compressed rules), and a note that gives an instruction ("The old deploy
script is obsolete; always use make" is a rule, not a stale note).

- **Short** (text of at most ``decay.stale_max_chars``) and marked stale
  ("obsolete", "outdated", "no longer relevant", "already fixed", "was
  resolved", "[stale]", ...): to the trash.
- **Long** and in progress ("in progress", "WIP", "TODO", "ongoing", "not
  yet done", ...), unused for ``decay.stale_after_days``: the language model
  judges it (:meth:`~.advice.Advisor.stale`, asked once per text).  Stale:
  to the trash.  Not stale: kept.  A model that was asked and failed
  (unreachable, timed out, an unusable reply): to the trash, as the seed
  design has it; the trash keeps it ``vault.trash_days`` days, and a search
  that strongly matches it offers to revive it.  No model (offline) or an
  unsure one: kept, since nobody judged it.

Each trash action says why.  A person's rollback restores the note and it
is not trashed again.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from ..config import VaultConfig
from ..format.memory import Memory, memory_text
from ..patterns import lazy_pattern
from .actions import Action, View
from .classify import NEVER_DECAY_TYPES, ORIGINAL_OF, idle_days, instructs, is_stub, keeps_its_words

STALE = lazy_pattern(
    r"[\[(](?:stale|obsolete|outdated|fixed|resolved|done)[\])]"
    r"|\b(?:obsolete|outdated|no longer (?:relevant|needed|used|in use|applies|valid|true)|not relevant any ?more"
    r"|(?:already|now|has been|have been|was|were|got) "
    r"(?:fixed|resolved|completed|retired|decommissioned|shut down|turned off))\b",
    re.I,
)
IN_PROGRESS = lazy_pattern(
    r"\b(?:in[- ]progress|wip|todo|to-do|ongoing|under ?way|not (?:yet )?(?:done|finished|complete)"
    r"|still working on|halfway through)\b",
    re.I,
)


def eligible(memory: Memory, config: VaultConfig) -> bool:
    """Whether the stale cleanup may judge ``memory`` at all (see the module docstring)."""
    return (
        memory.authority == "inferred"
        and memory.trust != "system"
        and memory.type not in NEVER_DECAY_TYPES
        and not is_stub(memory)
        and ORIGINAL_OF not in memory.extra
        and not memory.source.startswith("maintain")
        and not memory.extra.get("digest")
        and keeps_its_words(memory, config) is None
    )


def marker(memory: Memory, config: VaultConfig) -> tuple[str, str] | None:
    """("short", the stale marker) or ("long", the in-progress marker) of an eligible note; None otherwise."""
    text = memory_text(memory)
    whole = f"{memory.title}\n{text}"
    if not eligible(memory, config) or instructs(whole):
        return None
    if len(text) <= config.decay.stale_max_chars:
        found = STALE.search(whole)
        return ("short", found[0]) if found else None
    found = IN_PROGRESS.search(whole)
    return ("long", found[0]) if found else None


def stale_due(memory: Memory, now: datetime, config: VaultConfig) -> datetime | None:
    """When a long in-progress note will have been idle long enough to be judged (None: it is no candidate)."""
    found = marker(memory, config)
    if found is None or found[0] != "long":
        return None
    return now + timedelta(days=config.decay.stale_after_days - idle_days(memory, now))


def plan_stale(view: View) -> list[Action]:
    """Short notes marked stale, and long in-progress notes judged stale, to the trash."""
    config = view.config
    out = []
    for memory in sorted(view.governed(), key=lambda m: m.id):
        found = marker(memory, config)
        if found is None or ("stale", frozenset({memory.id})) in view.vetoes:
            continue
        size, word = found
        if size == "short":
            out.append(Action("stale", memory.id, f"a short note marked stale ('{word}')", trash=(memory.id,)))
            continue
        idle = idle_days(memory, view.now)
        if idle < config.decay.stale_after_days:
            continue
        verdict = view.advisor.stale(memory_text(memory))
        if verdict is True:
            why = "the language model judged it stale"
        elif verdict is None and view.advisor.failed("stale"):
            why = (f"the language model could not be asked, so it waits in the trash "
                   f"({config.vault.trash_days} days; memvault trash restore {memory.id})")
        else:
            continue  # not stale, or nobody judged it (offline, unsure): kept
        out.append(Action("stale", memory.id, f"in progress ('{word}') and unused for {idle:.0f} days; {why}",
                          trash=(memory.id,)))
    return out
