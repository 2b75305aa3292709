"""What a memory is and what it is worth: state or rule, protection, value, decay.

Deterministic heuristics, pure functions of a memory and the clock.

- A **state** is a dated record of something done or decided ("2026-03-02:
  migrated the billing database"); it retires from the hot tier after
  ``tiers.state_retire_days``.  A **rule** is a standing preference or
  convention ("always run ruff before committing"); rules never retire by age.
- **Value** orders hot memories for overflow: importance first, then how
  recently the memory was used or written, then how its deliveries worked out.
- **Decay** halves a memory's weight every ``decay.half_life_days`` since it
  was last used (else written); important memories do not decay.
- **Protection**: explicit core profiles and memories at or above
  ``tiers.protect_importance`` never move out of the hot tier; with red lines
  (a ``red-line`` tag, or words such as "non-negotiable") they also keep
  their words: never compressed, stubbed or retyped.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime

from ..config import VaultConfig
from ..format.memory import Memory, memory_text
from ..patterns import lazy_pattern

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_DATE = lazy_pattern(
    rf"\b(?:20\d\d-[01]\d-[0-3]\d|{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?"
    r"(?:,? 20\d\d)?|\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*(?: 20\d\d)?|"
    r"yesterday|today|last (?:week|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.I,
)
_DONE = lazy_pattern(
    r"\b(?:done|fixed|merged|shipped|deployed|released|resolved|completed|finished|decided|migrated|upgraded|"
    r"closed|landed|rolled back|reverted|removed|added|installed|renamed|moved|replaced|switched|set up|"
    r"bumped|published|approved|agreed|met|paid|sent|booked|cancell?ed|ran|tested|reviewed)\b",
    re.I,
)
_BEHAVIOUR = lazy_pattern(
    r"\b(?:always|never|prefers?|preferred|should|must|shall|don'?t|do not|avoid|use|using|make sure|"
    r"convention|rule|policy|whenever|every time|each time|by default|instead of|keep|remember to|"
    r"likes?|dislikes?|wants?|hates?)\b",
    re.I,
)
_PENDING = lazy_pattern(
    r"\b(?:todo|to do|pending|in progress|will|next|planned|plan to|going to|not yet|waiting|blocked|"
    r"follow up|tbd|open question|ongoing)\b",
    re.I,
)
# Words that send a new memory to the hot tier when no tier is given (besides its importance).
_HOT_WORDS = lazy_pattern(
    r"\b(?:important|critical|crucial|red[- ]line|non-negotiable|must always|must never|never ever)\b", re.I
)
NEVER_DECAY_TYPES = frozenset({"core-profile", "episode", "document"})
# A rule a person marked as not to be touched: the tag, or these words in its title or text.
RED_LINE_TAGS = frozenset({"red-line", "redline"})
_RED_LINE = lazy_pattern(
    r"\b(?:red[- ]?line|non-negotiable|zero tolerance|never ever|under no circumstances)\b", re.I
)

# Keys governance writes on the memories it makes of a hot rule (see governance/compression.py, stubs.py).
STUB_OF = "stub_of"  # a stub: the short hot pointer to a dormant rule moved cold
COMPRESSED_FROM = "compressed_from"  # a compressed hot rule: the cold memory holding its original text
ORIGINAL_OF = "original_of"  # that cold memory: the original text of the compressed hot rule


def nature(memory: Memory) -> str:
    """``state`` (a dated record of something done or decided) or ``rule`` (standing guidance).

    An explicit ``nature: state|rule`` key in the frontmatter wins over the heuristic.
    """
    declared = memory.extra.get("nature")
    if declared in ("state", "rule"):
        return str(declared)
    if memory.type in ("core-profile", "collaboration-policy", "procedure"):
        return "rule"
    text = f"{memory.title}\n{memory.summary}\n{memory_text(memory)}"
    dated = memory.occurred_at is not None or memory.type == "episode" or _DATE.search(text) is not None
    if dated and _DONE.search(text) and not _BEHAVIOUR.search(text) and not _PENDING.search(text):
        return "state"
    return "rule"


def done_markers(text: str) -> list[str]:
    """The distinct completion words of ``text`` ("migrated", "shipped", "rolled back"), lowercased, sorted."""
    return sorted({" ".join(m.group(0).lower().split()) for m in _DONE.finditer(text)})


def instructs(text: str) -> bool:
    """Whether ``text`` has a behaviour word ("always", "never", "should", "prefers", "use", ...)."""
    return _BEHAVIOUR.search(text) is not None


def hot_reason(memory: Memory, config: VaultConfig) -> str | None:
    """Why a new memory with no tier given belongs in the hot tier: its importance or a hot word."""
    if memory.importance >= config.tiers.hot_importance:
        return f"importance {memory.importance:g} >= {config.tiers.hot_importance:g}"
    found = _HOT_WORDS.search(f"{memory.title}\n{memory_text(memory)}")
    return f"'{found[0].lower()}'" if found else None


def is_protected(memory: Memory, config: VaultConfig) -> bool:
    """Never moved out of the hot tier: explicit core-profile memories and importance >= the protect level."""
    explicit_profile = memory.type == "core-profile" and memory.authority == "explicit"
    return explicit_profile or memory.importance >= config.tiers.protect_importance


def is_red_line(memory: Memory) -> bool:
    """Marked by a person as a red line: a ``red-line`` tag, or "red line", "non-negotiable",
    "zero tolerance", "never ever", "under no circumstances" in its title or text."""
    if any(tag.strip().lower() in RED_LINE_TAGS for tag in memory.tags):
        return True
    return _RED_LINE.search(f"{memory.title}\n{memory_text(memory)}") is not None


def keeps_its_words(memory: Memory, config: VaultConfig) -> str | None:
    """Why a hot rule is never compressed, stubbed, retyped or dropped as redundant (None: it may be):
    protected (:func:`is_protected`) or a red line (:func:`is_red_line`)."""
    if memory.type == "core-profile" and memory.authority == "explicit":
        return "explicit core profile"
    if memory.importance >= config.tiers.protect_importance:
        return f"importance {memory.importance:g}"
    return "red line" if is_red_line(memory) else None


def is_stub(memory: Memory) -> bool:
    """A stub: the hot pointer governance left in place of a dormant rule it moved cold."""
    return isinstance(memory.extra.get(STUB_OF), str)


def _aware(moment: date | datetime | None) -> datetime | None:
    if moment is None:
        return None
    if not isinstance(moment, datetime):
        return datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def moment_key(moment: date | datetime | None) -> str:
    """A moment as sortable text: UTC ISO, so "+02:00" and "Z" times order by the instant ("" when None)."""
    aware = _aware(moment)
    return aware.astimezone(UTC).isoformat() if aware is not None else ""


def written_at(memory: Memory) -> datetime | None:
    """When the memory was last written (``updated``, else ``created``)."""
    return _aware(memory.updated) or _aware(memory.created)


_ISO_DAY = lazy_pattern(r"\b(20\d\d)-([01]\d)-([0-3]\d)\b")


def stated_at(memory: Memory) -> datetime | None:
    """The moment a memory records: ``occurred_at``, else the latest full date its text states."""
    if memory.occurred_at is not None:
        return _aware(memory.occurred_at)
    days = []
    for match in _ISO_DAY.finditer(f"{memory.title}\n{memory_text(memory)}"):
        try:
            days.append(date(int(match[1]), int(match[2]), int(match[3])))
        except ValueError:
            continue  # "2026-13-45" is not a date
    return _aware(max(days)) if days else None


def age_days(memory: Memory, now: datetime) -> float:
    """Days since the memory was written, or since the moment it records when that is earlier
    ("shipped on 2026-10-02", written a month later, is a month old); 0 when it carries no date."""
    written = _aware(memory.created) or _aware(memory.updated)
    stated = stated_at(memory)
    if stated is not None and written is not None and stated.date() >= written.date():
        stated = None  # the same day (a date has no hour) or later (a plan): the writing counts
    stamp = stated or written
    return max(0.0, (now - stamp).total_seconds() / 86400) if stamp else 0.0


def idle_days(memory: Memory, now: datetime) -> float:
    """Days since the memory was last used, else written; 365 when it carries no date at all."""
    stamp = _aware(memory.last_applied) or written_at(memory)
    if stamp is None:
        return 365.0
    return max(0.0, (now - stamp).total_seconds() / 86400)


def decay(memory: Memory, now: datetime, config: VaultConfig) -> float:
    """``0.5 ** (idle days / half-life)``; exactly 1.0 for memories exempt from decay."""
    if memory.importance >= config.decay.exempt_importance:
        return 1.0
    return float(0.5 ** (idle_days(memory, now) / config.decay.half_life_days))


def usefulness(memory: Memory) -> float:
    """Laplace-smoothed share of deliveries that helped (0.5 with no history)."""
    good = memory.applied.get("used-successfully", 0)
    bad = sum(memory.applied.get(k, 0) for k in ("ignored", "overridden", "corrected", "contributed-to-failure"))
    return (good + 1) / (good + bad + 2)


def value(memory: Memory, now: datetime, config: VaultConfig) -> float:
    """How much a hot memory is worth keeping resident, in [0, 1]."""
    recency = float(0.5 ** (idle_days(memory, now) / config.decay.half_life_days))
    return 0.6 * memory.importance + 0.25 * recency + 0.15 * usefulness(memory)


def retire_in_days(memory: Memory, now: datetime, config: VaultConfig) -> float | None:
    """Days until a hot state memory retires by age (0: now); None for rules."""
    if nature(memory) != "state":
        return None
    return max(0.0, config.tiers.state_retire_days - age_days(memory, now))


def resident_chars(memory: Memory) -> int:
    """Characters a memory costs when resident (title, summary and body)."""
    return len(memory.title) + len(memory.summary or "") + len(memory.body.strip())


def ceil_days(days: float) -> int:
    return math.ceil(days)
