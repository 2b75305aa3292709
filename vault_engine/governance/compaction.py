"""Compaction: when cold episodes pile up, the oldest are summarised into digests.

When the vault holds more than ``compaction.max_cold`` cold episodes that no
digest covers yet, the oldest are grouped (by scope and project, in time
order, ``compaction.digest_size`` per digest) into digest memories until
``compaction.target_cold`` remain uncovered.  A digest lists each episode
with its date, id and summary and links to it; each episode records the
digest that covers it.  Raw content is never deleted: the episodes stay,
searchable and readable in full.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import date, datetime

from ..format.ids import new_memory_id
from ..format.kinds import Trust
from ..format.memory import Memory
from ..format.text import clip
from ..store import folder_for
from .actions import Action, Change, View
from .classify import moment_key
from .similarity import group_of


def _when(memory: Memory) -> str:
    moment: date | datetime | None = memory.occurred_at or memory.created
    return moment.isoformat()[:10] if moment is not None else "undated"


def _sort_key(memory: Memory) -> tuple[str, str]:
    return (moment_key(memory.occurred_at or memory.created), memory.id)


def uncompacted(view: View) -> list[Memory]:
    """Cold episodes no digest covers yet (digests themselves excluded)."""
    return [
        m for m in view.governed()
        if m.type == "episode" and m.tier == "cold" and not m.extra.get("compacted_into") and not m.extra.get("digest")
    ]


def digest_of(members: list[Memory], now: datetime, paths: Mapping[str, str] | None = None) -> Memory:
    """A digest memory over ``members`` (oldest first), deterministic but for its id and stamps.

    Each line links the episode's file (``[[path|title]]``, as Obsidian resolves links) and names its id.
    """
    first, last = _when(members[0]), _when(members[-1])
    sample = members[0]
    span = first if first == last else f"{first} to {last}"
    tags = [t for t, _ in Counter(t for m in members for t in m.tags).most_common(3)]
    trust: Trust = "external" if any(m.trust == "external" for m in members) else (
        "learned" if any(m.trust == "learned" for m in members) else "system")
    lines = [f"Digest of {len(members)} episodes ({span}). Each keeps its full content; follow the links.", ""]
    for member in members:
        path = (paths or {}).get(member.id, "")
        title = clip(member.title, 100).replace("|", "/").replace("]", ")")
        link = f"[[{path[:-3]}|{title}]]" if path.endswith(".md") else title
        lines.append(f"- {_when(member)} {link} `{member.id}`: {clip(member.summary or member.title, 200)}")
    titles = "; ".join(clip(m.title, 60) for m in members[:3])
    return Memory(
        id=new_memory_id(),
        title=f"Digest: {len(members)} episodes, {span}",
        type="episode",
        body="\n".join(lines) + "\n",
        scope=sample.scope,
        project=sample.project,
        authority="inferred",
        trust=trust,
        lifecycle="trial",
        recall="active",
        tier="cold",
        importance=0.5,
        summary=clip(f"{len(members)} episodes from {span}: {titles}", 240),
        trigger="When I need an overview of what happened in this period",
        tags=tuple(tags),
        links=tuple(m.id for m in members),
        source="maintain",
        occurred_at=members[-1].occurred_at,
        created=now,
        updated=now,
        extra={"digest": True},
    )


def plan_compaction(view: View) -> list[Action]:
    settings = view.config.compaction
    pending = uncompacted(view)
    if len(pending) <= settings.max_cold:
        return []
    pending.sort(key=_sort_key)
    chosen = pending[: len(pending) - settings.target_cold]
    groups: dict[tuple[str, str], list[Memory]] = {}
    for memory in chosen:
        groups.setdefault(group_of(memory), []).append(memory)
    out = []
    for group in sorted(groups):
        members = groups[group]
        for start in range(0, len(members), settings.digest_size):
            part = members[start : start + settings.digest_size]
            digest = digest_of(part, view.now, view.paths)
            changes = tuple(c for c in (Change.of(m, compacted_into=digest.id) for m in part) if c is not None)
            where = f"project {group[1]}" if group[1] else "global"
            out.append(Action(
                "compact", digest.id,
                f"{len(pending)} cold episodes (limit {settings.max_cold}): digest of {len(part)} ({where})",
                changes=changes, create=((folder_for(digest), digest),), related=tuple(m.id for m in part),
            ))
    return out
