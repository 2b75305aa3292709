"""Synthesis: higher-level memories over clusters of 2-8 related memories.

Clusters come from the cross-links consolidation keeps (related memories of
one scope and project, linked both ways): the links are joined best first
(closest in meaning first), and a cluster never grows past
``synthesis.max_members`` (8).  A cluster is valid when one theme word (a
content word of four letters or more: a person, a tool, a subject) is in
every member; a cluster without one is not synthesised.

Each valid cluster of at least two members gets one synthesis: a memory
whose text says what the members establish together (written by the
language model; offline, or when the model is unavailable, an extractive
overview: each member's first sentence), followed by the list of its
members, linked both ways.  It is kept current: when a member's text
changes, a member leaves (trashed, superseded, merged) or a related memory
joins the cluster, the synthesis is written again; with fewer than two
members left it goes to the trash.  A memory belongs to at most one
synthesis; syntheses never merge, supersede, link by similarity or join
another synthesis.

Members are memories a person or an importer wrote: not episodes or
documents (raw records; compaction's digests summarise those), not the core
profile (resident anyway), not external ones (left out of search and
context), not conflict versions.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from ..format.ids import new_memory_id
from ..format.kinds import Trust
from ..format.memory import Memory, memory_text, text_digest
from ..format.text import STOPWORDS, clip
from ..format.value import SYNTHESIS_OF, SYNTHESIS_SOURCE
from ..patterns import lazy_pattern
from ..store import folder_for
from .actions import Action, Change, View
from .links import link_targets, resolve_link
from .similarity import Similarity, group_of

RAW = frozenset({"episode", "document", "core-profile"})
_THEME = lazy_pattern(r"[^\W\d_]{4,}")
MEMBERS_HEADING = "Members (open one with `memvault show ID`):"


def is_synthesis(memory: Memory) -> bool:
    return memory.source == SYNTHESIS_SOURCE and isinstance(memory.extra.get(SYNTHESIS_OF), list | tuple)


def eligible(memory: Memory) -> bool:
    """Whether ``memory`` may be a member of a synthesis."""
    return (memory.type not in RAW and memory.trust != "external" and not is_synthesis(memory)
            and not memory.extra.get("digest"))


def themes(members: Sequence[Memory]) -> list[str]:
    """Content words every member has (title and text), most frequent first: what the cluster is about."""
    counts: Counter[str] = Counter()
    shared: set[str] | None = None
    for memory in members:
        words = [w.lower() for w in _THEME.findall(f"{memory.title}\n{memory_text(memory)}")]
        found = {w for w in words if w not in STOPWORDS}
        counts.update(w for w in words if w in found)
        shared = found if shared is None else shared & found
    return sorted(shared or (), key=lambda w: (-counts[w], w))


def fingerprint(members: Sequence[Memory]) -> str:
    """What a synthesis was written from: its members and their texts (order-free)."""
    parts = sorted(f"{m.id}:{text_digest(memory_text(m))}" for m in members)
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def clusters(view: View, similarity: Similarity, limit: int) -> list[list[str]]:
    """Groups of linked eligible memories, joined closest first, at most ``limit`` each.

    An existing synthesis's current members start as one group; two groups that each hold a synthesis
    never join.  Groups of one are left out.
    """
    members = {m.id: m for m in view.governed() if eligible(m)}
    stems = link_targets(view)
    cosine: dict[frozenset[str], float] = {}
    for memory_id in sorted(members):
        for other_id, value in similarity.neighbours(memory_id):
            if other_id in members:
                key = frozenset((memory_id, other_id))
                cosine[key] = max(value, cosine.get(key, value))
    edges: set[frozenset[str]] = set()
    for memory_id in sorted(members):
        for link in members[memory_id].links:
            other = resolve_link(link, stems, view.active)
            if other is not None and other != memory_id and other in members and (
                    group_of(members[other]) == group_of(members[memory_id])):
                edges.add(frozenset((memory_id, other)))
    parent = {i: i for i in members}
    size = dict.fromkeys(members, 1)
    anchored: set[str] = set()  # roots of groups holding an existing synthesis

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra == rb or size[ra] + size[rb] > limit or (ra in anchored and rb in anchored):
            return
        root, child = min(ra, rb), max(ra, rb)
        parent[child] = root
        size[root] += size[child]
        if child in anchored:
            anchored.discard(child)
            anchored.add(root)

    for synthesis in sorted(existing(view), key=lambda m: m.id):
        current = [i for i in synthesis_members(synthesis) if i in members][:limit]
        for other in current[1:]:
            union(current[0], other)
        if current:
            anchored.add(find(current[0]))
    for edge in sorted(edges, key=lambda e: (-cosine.get(e, 0.0), sorted(e))):
        a, b = sorted(edge)
        union(a, b)
    groups: dict[str, list[str]] = {}
    for memory_id in sorted(members):
        groups.setdefault(find(memory_id), []).append(memory_id)
    return [ids for ids in groups.values() if len(ids) >= 2]


def existing(view: View) -> list[Memory]:
    return [m for m in view.governed() if is_synthesis(m)]


def synthesis_members(memory: Memory) -> list[str]:
    value = memory.extra.get(SYNTHESIS_OF)
    return [str(i) for i in value] if isinstance(value, list | tuple) else []


def _member_view(memory: Memory) -> dict[str, str]:
    return {"id": memory.id, "title": memory.title, "text": clip(memory_text(memory).strip(), 2000)}


def _body(text: str, members: Sequence[Memory], paths: Mapping[str, str]) -> str:
    lines = [text.strip(), "", MEMBERS_HEADING]
    for member in members:
        path = paths.get(member.id, "")
        title = clip(member.title, 100).replace("|", "/").replace("]", ")")
        link = f"[[{path[:-3]}|{title}]]" if path.endswith(".md") else title
        lines.append(f"- {link} `{member.id}`")
    return "\n".join(lines) + "\n"


def write(view: View, members: Sequence[Memory]) -> tuple[str, str, str]:
    """(title, body, who wrote it) of the synthesis over ``members``: the model's, else extractive."""
    from ..llm.offline import OfflineLlm

    listed = [_member_view(m) for m in members]
    found = view.advisor.synthesize(listed)
    by = view.advisor.model or "offline"
    if found is None:
        found, by = OfflineLlm().synthesize(listed), "offline"
    return clip(found.title, 120), _body(found.text, members, view.paths), by


def _summary(members: Sequence[Memory]) -> str:
    return clip(f"Overview of {len(members)} memories: " + "; ".join(m.title for m in members), 240)


def _new(view: View, members: Sequence[Memory], theme: str) -> Memory:
    title, body, by = write(view, members)
    sample = members[0]
    tags = [t for t, _ in Counter(t for m in members for t in m.tags).most_common(3)]
    trust: Trust = "learned" if any(m.trust == "learned" for m in members) else "system"
    return Memory(
        id=new_memory_id(), title=title, type="fact", body=body, scope=sample.scope, project=sample.project,
        authority="inferred", trust=trust, lifecycle="trial", recall="active", tier="cold",
        importance=max(m.importance for m in members), summary=_summary(members),
        trigger=f"When I need the overview of what I know about {theme}", tags=tuple(tags),
        links=tuple(m.id for m in members), source=SYNTHESIS_SOURCE, created=view.now, updated=view.now,
        extra={SYNTHESIS_OF: [m.id for m in members], "synthesis_key": fingerprint(members), "synthesis_by": by,
               "synthesis_text": body_digest(body)},
    )


def body_digest(body: str) -> str:
    """What memvault wrote as a synthesis's body (its words; whitespace is no change)."""
    return text_digest(" ".join(body.split()))[:16]


def edited_by_hand(memory: Memory) -> bool:
    """Whether a person changed the body memvault wrote: it is then theirs, never written over.  A
    synthesis from a release that kept no digest of its body counts as unedited."""
    kept = memory.extra.get("synthesis_text")
    return isinstance(kept, str) and kept != body_digest(memory.body)


def _back_links(view: View, members: Iterable[Memory], synthesis_id: str) -> list[Change]:
    out = []
    for member in members:
        if synthesis_id not in member.links:
            change = Change.of(member, links=(*member.links, synthesis_id))
            if change is not None:
                out.append(change)
    return out


def plan_synthesis(view: View, similarity: Similarity) -> list[Action]:
    """New syntheses for valid clusters, rewritten ones whose members changed, trashed ones left with one."""
    limit = view.config.synthesis.max_members
    if limit < 2:
        return []
    by_member: dict[str, Memory] = {}
    for synthesis in existing(view):
        for member_id in synthesis_members(synthesis):
            by_member.setdefault(member_id, synthesis)
    kept: set[str] = set()
    out: list[Action] = []
    for ids in clusters(view, similarity, limit):
        members = [view.active[i] for i in ids]
        theme = themes(members)
        holders = sorted({by_member[i].id for i in ids if i in by_member})
        current = view.active[holders[0]] if holders else None
        if not theme:
            if current is not None:  # its old members still share a theme: keep it as it was
                kept.add(current.id)
            continue
        if current is None:
            synthesis = _new(view, members, theme[0])
            out.append(Action(
                "synthesize", synthesis.id,
                f"overview of {len(members)} related memories about {theme[0]}",
                changes=tuple(_back_links(view, members, synthesis.id)),
                create=((folder_for(synthesis), synthesis),), related=tuple(ids),
            ))
            continue
        kept.add(current.id)
        if edited_by_hand(current):
            continue  # a person's words: the members' changes do not replace them
        rewrite = (current.extra.get("synthesis_key") != fingerprint(members)
                   or (current.extra.get("synthesis_by") == "offline" and view.advisor.model not in (None, "offline")))
        if not rewrite:
            continue
        title, body, by = write(view, members)
        if by == "offline" and current.extra.get("synthesis_by") not in (None, "offline") and (
                current.extra.get("synthesis_key") == fingerprint(members)):
            continue  # the model is unavailable: the model's text stays until it can be written again
        change = Change.of(current, title=title, body=body, summary=_summary(members),
                           links=tuple(m.id for m in members), **{SYNTHESIS_OF: [m.id for m in members],
                                                                  "synthesis_key": fingerprint(members),
                                                                  "synthesis_by": by,
                                                                  "synthesis_text": body_digest(body)})
        changes = [c for c in (change, *_back_links(view, members, current.id)) if c is not None]
        if changes:
            out.append(Action("resynthesize", current.id,
                              f"members changed: overview of {len(members)} related memories about {theme[0]}",
                              changes=tuple(changes), related=tuple(ids)))
    for synthesis in sorted(existing(view), key=lambda m: m.id):
        if synthesis.id in kept:
            continue
        left = [i for i in synthesis_members(synthesis) if i in view.active and eligible(view.active[i])]
        if len(left) < 2:
            out.append(Action("resynthesize", synthesis.id,
                              f"{len(left)} of its members left: the overview is no longer needed",
                              trash=(synthesis.id,)))
    return out
