"""Stubs: under hard pressure, dormant hot rules leave a short pointer in the hot tier.

From the hard limit (``tiers.hard_ratio``) up, at most
``tiers.max_stubs_per_run`` dormant rules per run move cold and leave a
*stub* in the hot tier: a new memory of at most ``tiers.stub_max_chars``
resident characters, its title cut short and its text ``→ <id of the
rule>``, so every context still names the rule and the agent opens it by id
(``memvault show ID``).  The rule itself keeps its file, id, history and
links: only its tier changes, and the stub is written first.

A rule is dormant when all of these hold (doubt keeps it resident):

- it has not been used for ``tiers.stub_idle_days`` (its last reported use,
  else its last edit);
- no task of the last ``tiers.activity_days`` (the journal's
  ``application`` events: what ``memvault context`` was asked) shares its
  words; with no such task at all (no activity to judge by) nothing is stubbed;
- the language model, shown those tasks, says it is dormant.  Offline,
  unavailable or unsure means active.

Stubs have a lifecycle of their own: they never merge or overflow.  A stub
whose rule is gone (trashed) or hot again is trashed; under hard pressure in a
run that stubbed nothing, the oldest stubs (at least
``tiers.stub_gc_min_age_days`` old) go to the trash, at most
``tiers.max_stubs_per_run``, until usage is under the hard limit.  The rule
a stub points to is never touched.  Protected memories and red lines are
never stubbed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ..format.ids import new_memory_id
from ..format.memory import Memory, memory_text
from ..format.text import STOPWORDS
from ..journal import Journal
from ..store import folder_for
from .actions import Action, Change, View
from .classify import STUB_OF, idle_days, is_stub, moment_key, resident_chars, written_at
from .rules import may_leave
from .similarity import words
from .tiers import hot_memories, usage

EVAL_CAP = 10  # dormancy candidates the model is asked about per run, longest idle first
MAX_TASKS = 50  # the newest distinct tasks shown to the model


def recent_tasks(journal: Journal, now: datetime, days: float) -> tuple[str, ...]:
    """The tasks the agent was given in the ``days`` before ``now`` (the journal's ``application``
    events), newest first, each once."""
    since = now - timedelta(days=days)
    found: list[tuple[datetime, str]] = []
    for event in journal.events(("application",)):
        task = event.payload.get("task")
        if event.kind != "application" or not isinstance(task, str) or not task.strip():
            continue
        try:
            when = datetime.fromisoformat(event.ts.replace("Z", "+00:00"))
        except ValueError:
            continue
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        if when >= since:
            found.append((when, " ".join(task.split())))
    found.sort(key=lambda item: item[0], reverse=True)
    return tuple(list(dict.fromkeys(task for _, task in found))[:MAX_TASKS])


def keywords(text: str) -> set[str]:
    """The content words of ``text`` (no stopwords, numbers or words under 3 letters), plural ``s`` cut."""
    out = set()
    for word in words(text):
        if len(word) < 3 or word in STOPWORDS or word.isdigit():
            continue
        out.add(word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word)
    return out


def overlap(text: str, tasks: tuple[str, ...]) -> str | None:
    """The first task that shares words with ``text`` (two content words, or all of a shorter task's)."""
    mine = keywords(text)
    for task in tasks:
        theirs = keywords(task)
        if theirs and len(mine & theirs) >= min(2, len(theirs)):
            return task
    return None


def short_title(title: str, room: int) -> str:
    """``title`` in at most ``room`` characters: whole words, then an ellipsis (a word cut when none fits)."""
    flat = " ".join(title.split())
    if len(flat) <= room:
        return flat
    kept = ""
    for word in flat.split(" "):
        if len(f"{kept} {word}".strip()) + 1 > room:
            break
        kept = f"{kept} {word}".strip()
    return (kept.rstrip(" ,;:.-") or flat[: max(0, room - 1)]) + "…"


def stub_for(memory: Memory, now: datetime, limit: int) -> Memory | None:
    """The hot pointer to ``memory``: its title cut short and ``→ <id>``, at most ``limit`` resident chars
    (None when ``limit`` leaves no room for a title)."""
    pointer = f"→ {memory.id}"
    title = short_title(memory.title, limit - len(pointer))
    if len(title) < 2 or len(title) + len(pointer) > limit:
        return None
    return Memory(
        id=new_memory_id(), title=title, type=memory.type, body=pointer + "\n", klass=memory.klass,
        scope=memory.scope, project=memory.project, paths=memory.paths, tasks=memory.tasks,
        operations=memory.operations, phases=memory.phases, authority=memory.authority, trust=memory.trust,
        lifecycle=memory.lifecycle, recall="active", tier="hot", importance=memory.importance,
        links=(memory.id,), source="maintain", sender=memory.sender, created=now, updated=now,
        extra={STUB_OF: memory.id},
    )


def candidate(memory: Memory, view: View) -> bool:
    """A hot rule stubbing may replace, its idleness and the tasks aside (its recall must be active:
    a passive memory is in every context whatever its tier)."""
    return may_leave(memory, view.config) and memory.recall == "active" and (
        "stub", frozenset({memory.id})) not in view.vetoes


def plan_stubs(view: View) -> list[Action]:
    """From the hard limit up: dormant rules moved cold behind stubs; then the stubs' own collection."""
    settings = view.config.tiers
    current = usage(view)
    out: list[Action] = []
    if current.ratio >= settings.hard_ratio and view.tasks:
        existing = {str(m.extra[STUB_OF]): m for m in hot_memories(view) if is_stub(m)}
        ranked = []
        for memory in hot_memories(view):
            idle = idle_days(memory, view.now)
            if (candidate(memory, view) and idle >= settings.stub_idle_days
                    and overlap(f"{memory.title}\n{memory_text(memory)}", view.tasks) is None):
                ranked.append((idle, memory))
        ranked.sort(key=lambda item: (-item[0], -resident_chars(item[1]), item[1].id))
        for idle, memory in ranked[:EVAL_CAP]:
            if len(out) >= settings.max_stubs_per_run:
                break
            if view.advisor.dormant(memory_text(memory), view.tasks) is not True:
                continue  # active, or no answer: doubt keeps the rule resident
            stub = existing.get(memory.id) or stub_for(memory, view.now, settings.stub_max_chars)
            if stub is None:
                continue
            change = Change.of(memory, tier="cold")
            assert change is not None
            out.append(Action(
                "stub", memory.id,
                f"hot tier at {current.ratio:.0%}: idle {idle:.0f} days and no task of the last "
                f"{settings.activity_days} days needs it (the model agrees); its {resident_chars(memory)} chars "
                f"leave for the pointer {stub.id} ({resident_chars(stub)} chars)",
                changes=(change,), create=() if memory.id in existing else ((folder_for(stub), stub),),
            ))
    return out + plan_stub_gc(view.after(out), stubbed=bool(out))


def plan_stub_gc(view: View, *, stubbed: bool = False) -> list[Action]:
    """Stubs whose rule is gone or hot again; under hard pressure in a run that ``stubbed`` nothing,
    the oldest stubs too (the rules they point to stay as they are)."""
    settings = view.config.tiers
    stubs = sorted((m for m in hot_memories(view) if is_stub(m)), key=lambda m: (moment_key(m.created), m.id))
    out: list[Action] = []
    kept = []
    for stub in stubs:
        target_id = str(stub.extra[STUB_OF])
        target = view.active.get(target_id)
        why = ("its rule is gone" if target is None or target.lifecycle == "superseded"
               else "its rule is hot again" if target.tier == "hot" else None)
        if why is None:
            kept.append(stub)
        elif ("stub-gc", frozenset({stub.id, target_id})) not in view.vetoes:
            out.append(Action("stub-gc", stub.id, f"stub of {target_id}: {why}", trash=(stub.id,),
                              related=(target_id,)))
    current = usage(view.after(out))
    chars, budget = current.chars, current.budget
    if stubbed or budget <= 0:
        return out
    collected = 0
    for stub in kept:
        if chars / budget < settings.hard_ratio or collected >= settings.max_stubs_per_run:
            break
        written = written_at(stub)
        age = (view.now - written).total_seconds() / 86400 if written is not None else 0.0
        target_id = str(stub.extra[STUB_OF])
        if age < settings.stub_gc_min_age_days or ("stub-gc", frozenset({stub.id, target_id})) in view.vetoes:
            continue
        out.append(Action(
            "stub-gc", stub.id,
            f"hot tier at {chars / budget:.0%} (over the hard limit): the oldest stub ({age:.0f} days); "
            f"its rule {target_id} stays cold",
            trash=(stub.id,), related=(target_id,),
        ))
        chars -= resident_chars(stub)
        collected += 1
    return out
