"""The hot tier under its character budget: retiring states, overflow, admitting new hot memories.

Hot memories are resident: they go into every context.  Their total size is
budgeted (``tiers.hot_budget_chars``).  Overflow moves the least valuable
hot memories to the cold tier, in this order: duplicates of another hot
memory, state memories past their retirement age, then the lowest
:func:`~.classify.value`.  Protected memories (explicit core profile,
importance >= ``tiers.protect_importance``) never move.

- usage >= soft (60%): one pass, down below the soft level;
- usage >= hard (80%): passes until usage <= target (40%) or it stops falling.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import VaultConfig
from ..format.memory import Memory, normalize_text
from .actions import Action, Change, View
from .classify import age_days, hot_reason, is_protected, is_stub, moment_key, nature, resident_chars, value


@dataclass(frozen=True, slots=True)
class Usage:
    chars: int
    budget: int

    @property
    def ratio(self) -> float:
        return self.chars / self.budget if self.budget > 0 else (1.0 if self.chars else 0.0)


def hot_memories(view: View) -> list[Memory]:
    """The resident memories governance sees, stubs included."""
    return [m for m in view.governed(stubs=True) if m.tier == "hot"]


def usage(view: View) -> Usage:
    return Usage(sum(resident_chars(m) for m in hot_memories(view)), view.config.tiers.hot_budget_chars)


def _cold(memory: Memory, reason: str, kind: str = "overflow") -> Action:
    change = Change.of(memory, tier="cold")
    assert change is not None
    return Action(kind, memory.id, reason, changes=(change,))


def plan_retire(view: View) -> list[Action]:
    """Hot state memories older than the retirement age go cold (rules never retire by age)."""
    days = view.config.tiers.state_retire_days
    out = []
    for memory in sorted(hot_memories(view), key=lambda m: m.id):
        if is_protected(memory, view.config) or is_stub(memory) or nature(memory) != "state":
            continue
        age = age_days(memory, view.now)
        if age >= days:
            out.append(_cold(memory, f"state memory {age:.0f} days old (states retire after {days} days)", "retire"))
    return out


def overflow_order(view: View) -> list[tuple[Memory, str]]:
    """Movable hot memories, first to go first, each with the reason it goes (stubs have a
    collection of their own: :mod:`.stubs`)."""
    hot = sorted((m for m in hot_memories(view) if not is_stub(m)), key=lambda m: (moment_key(m.created), m.id))
    movable = [m for m in hot if not is_protected(m, view.config)]
    seen: dict[str, str] = {}
    dups: list[tuple[Memory, str]] = []
    for memory in hot:  # oldest first: a later copy of the same text is the duplicate
        key = normalize_text(memory.body.strip() or memory.summary or memory.title)
        if key in seen and not is_protected(memory, view.config):
            dups.append((memory, f"duplicate of hot memory {seen[key]}"))
        else:
            seen.setdefault(key, memory.id)
    dup_ids = {m.id for m, _ in dups}
    days = view.config.tiers.state_retire_days
    states = [
        (m, f"state memory {age_days(m, view.now):.0f} days old")
        for m in movable
        if m.id not in dup_ids and nature(m) == "state" and age_days(m, view.now) >= days
    ]
    state_ids = {m.id for m, _ in states}
    rest = [m for m in movable if m.id not in dup_ids and m.id not in state_ids]
    rest.sort(key=lambda m: (value(m, view.now, view.config), m.id))
    ranked = [(m, f"lowest value {value(m, view.now, view.config):.2f}") for m in rest]
    return dups + states + ranked


def plan_overflow(view: View, incoming: int = 0) -> list[Action]:
    """Moves that bring hot-tier usage (plus ``incoming`` characters about to be written) under its limits."""
    settings = view.config.tiers
    current = usage(view)
    chars = current.chars + incoming
    budget = current.budget
    if not chars:
        return []

    def share(n: int) -> float:  # a budget of 0 holds nothing
        return n / budget if budget > 0 else 1.0

    ratio = share(chars)
    if ratio < settings.soft_ratio:
        return []
    goal = settings.target_ratio if ratio >= settings.hard_ratio else settings.soft_ratio
    level = "hard" if ratio >= settings.hard_ratio else "soft"
    out = []
    for memory, why in overflow_order(view):
        if share(chars) <= goal if level == "hard" else share(chars) < goal:
            break
        if ("overflow", frozenset({memory.id})) in view.vetoes:
            continue  # a person moved it back: it does not count towards the goal
        size = resident_chars(memory)
        chars -= size
        out.append(_cold(memory, f"hot tier at {ratio:.0%} (over the {level} limit): {why}, {size} chars"))
    return out


def route(memory: Memory, config: VaultConfig, *, chosen: bool) -> tuple[Memory, str | None]:
    """The tier a new memory goes to, and a notice when it is not the one asked for.

    With no tier ``chosen``: hot when important enough (``tiers.hot_importance``) or marked so in
    words ("important", "must never", ...), else as built.  A *state* (a dated record of something
    done) never enters the hot tier, asked for or not: it would only retire a week later; a
    ``nature: rule`` key overrides the heuristic.
    """
    if (not chosen and memory.tier != "hot" and memory.type not in ("episode", "document")
            and hot_reason(memory, config) is not None):
        memory = memory.replace(tier="hot")
    if memory.tier == "hot" and memory.type != "core-profile" and nature(memory) == "state":
        notice = ("a dated record of something done is a state, and states never enter the hot tier; "
                  "stored in the cold tier (add `nature: rule` to keep it hot)")
        return memory.replace(tier="cold"), notice if chosen else None
    return memory, None


def admit(view: View, memory: Memory) -> tuple[list[Action], Memory, str | None]:
    """Make room for a new hot ``memory``: overflow first, then cold with a notice if it still does not fit.

    Returns the overflow actions, the memory as it should be written and the notice.
    """
    if memory.tier != "hot":
        return [], memory, None
    size = resident_chars(memory)
    actions = plan_overflow(view, incoming=size)
    after = usage(view.after(actions))
    if after.chars + size > after.budget and not is_protected(memory, view.config):
        # Nothing moves for a memory that is not admitted.
        current = usage(view)
        notice = (f"the hot tier has no room for {size} more characters "
                  f"({current.chars} of {current.budget} in use); stored in the cold tier instead")
        return [], memory.replace(tier="cold"), notice
    return actions, memory, None
