"""Consolidation: contradictions, near-duplicate merges and cross-links (tag variants: :mod:`.tags`).

Pairs come from embedding neighbours within one scope and project and are
judged with word overlap too (``consolidation.*`` in ``memvault.toml``).
Before two memories may contradict or merge, :mod:`.subjects` decides
whether they are about the same thing: identifiers that differ in the
subject ("customer 1042" / "customer 2077") make distinct facts, which
neither supersede nor merge (they may link as related):

- a newer memory that **contradicts** an older one (a negation or an update
  marker the other lacks, or the same sentence with other numbers)
  supersedes it when its trust is at least the older one's and an inferred
  memory would not override an explicit one; otherwise both are linked and
  reported as a conflict;
- **near-duplicates** (``0.6 * cosine + 0.4 * word overlap >=
  merge_similarity``) of one trust level merge into the older memory (an
  explicit one wins over an inferred one): evidence, sources, tags, links,
  counters and ``proof_count`` are folded in, links elsewhere re-pointed, and
  the newer file goes to the trash pointing at the survivor, whose text
  gains what only the absorbed one said (:mod:`.clauses`).  Memories of
  different trust never merge (an external copy would make a trusted memory
  external, which search and context then leave out); two short notes that
  each say something the other does not merge only when close in meaning
  (:func:`distinct_notes`);
- **related** memories (cosine >= ``crosslink_similarity``, each among the
  other's ``link_limit`` closest) link both ways, so a memory gains at most
  ``link_limit`` links per run.

Raw records (episodes, documents, digests, the turns of an imported conversation) and syntheses never
merge or supersede.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import cast

from ..config import ConsolidationSettings
from ..format.memory import TRUSTS, Memory, normalize_text
from ..format.text import STOPWORDS
from ..format.threads import thread_of
from ..format.value import SYNTHESIS_SOURCE
from ..patterns import lazy_pattern
from ..retrieval.statements import NEGATION as _NEGATION
from ..retrieval.statements import NUMBER as _NUMBER
from .actions import Action, Change, View, merge_changes
from .classify import moment_key
from .clauses import united_text
from .links import link_targets, resolve_link
from .similarity import Similarity, group_of, text_similarity, words
from .subjects import distinct, judge

TRUST_RANK = {t: len(TRUSTS) - n for n, t in enumerate(TRUSTS)}  # system 3 > learned 2 > external 1
LIFECYCLE_RANK = {"superseded": 0, "trial": 1, "proven": 2}

_UPDATE = lazy_pattern(
    r"\b(?:no longer|any ?more|instead|switched|switching|moved|migrated|changed|replaced|now|nowadays|"
    r"from now on|as of)\b",
    re.I,
)
_SENTENCE = lazy_pattern(r"(?<=[.!?;])\s+|\n+")
_COUNTERPART = 0.5  # word overlap at which two sentences state the same thing


@dataclass(frozen=True, slots=True)
class Pair:
    older: Memory
    newer: Memory
    cosine: float
    text: float

    @property
    def combined(self) -> float:
        return 0.6 * self.cosine + 0.4 * self.text


def _created(memory: Memory) -> str:
    return moment_key(memory.created)


def _order(a: Memory, b: Memory) -> tuple[Memory, Memory]:
    """(older, newer) by creation time, then id."""
    return (a, b) if (_created(a), a.id) <= (_created(b), b.id) else (b, a)


# Raw records (what happened, what a document said) are never merged into or superseded by another:
# two episodes with the same words are two events, and a trashed one would expire for good.
RAW_TYPES = frozenset({"episode", "document"})


def is_record(memory: Memory) -> bool:
    """A raw record of what happened or what was said: an episode, a document, or one turn of an imported
    conversation (``source: conversation:<id>#<turn>``).  Two turns with the same words ("That's great!")
    were said twice; merging them would lose one."""
    return memory.type in RAW_TYPES or thread_of(memory.source) is not None


def candidate_pairs(view: View, similarity: Similarity, floor: float) -> list[Pair]:
    """Pairs of governed memories of one group and type whose cosine reaches ``floor``, best first.

    Raw records (episodes, documents, digests) are left out: they never merge or supersede.
    """
    governed = {m.id: m for m in view.governed() if not is_record(m) and m.source != SYNTHESIS_SOURCE}
    seen: set[tuple[str, str]] = set()
    out = []
    for memory_id in sorted(governed):
        a = governed[memory_id]
        for other_id, cosine in similarity.neighbours(memory_id):
            if cosine < floor:
                break  # neighbours come best first
            b = governed.get(other_id)
            if b is None or group_of(a) != group_of(b) or a.type != b.type:
                continue
            key = (min(a.id, b.id), max(a.id, b.id))
            if key in seen:
                continue
            seen.add(key)
            older, newer = _order(a, b)
            out.append(Pair(older, newer, cosine, text_similarity(a, b)))
    out.sort(key=lambda p: (-p.combined, p.older.id, p.newer.id))
    return out


def _sentences(memory: Memory) -> list[str]:
    text = f"{memory.title}\n{memory.body}"
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


def _content(sentence: str) -> Counter[str]:
    """The words of a sentence without negations, update markers and numbers: what it is about."""
    return words(_NUMBER.sub(" ", _UPDATE.sub(" ", _NEGATION.sub(" ", sentence))))


def _overlap(a: Counter[str], b: Counter[str]) -> float:
    total = sum(a.values()) + sum(b.values())
    return 2 * sum((a & b).values()) / total if total else 0.0


def contradicts(older: Memory, newer: Memory) -> str | None:
    """Why ``newer`` reverses ``older`` (None when it does not).

    Sentence by sentence: each sentence of the newer memory that the older one
    does not contain is paired with the older sentence that says the most
    nearly the same thing (word overlap without negations, update markers and
    numbers >= 0.5).  The pair is a reversal when one side negates and the
    other does not, when the newer side marks a change ("no longer",
    "switched", "now", ...) about something else, or when only numbers differ.
    A sentence dropped or added without a counterpart is an omission, not a
    reversal, and rewording that keeps a negation on both sides is a paraphrase.
    Distinct facts (:func:`.subjects.distinct`: another customer, rack, rule
    number) never reverse each other.
    """
    old_sentences, new_sentences = _sentences(older), _sentences(newer)
    old_seen = {normalize_text(s) for s in old_sentences}
    new_seen = {normalize_text(s) for s in new_sentences}
    old_changed = [(s, _content(s)) for s in old_sentences if normalize_text(s) not in new_seen]
    if not old_changed:
        return None
    for sentence in new_sentences:
        if normalize_text(sentence) in old_seen:
            continue
        content = _content(sentence)
        overlap, counterpart, counterpart_content = max(
            ((_overlap(content, c), t, c) for t, c in old_changed), key=lambda item: item[0])
        if overlap < _COUNTERPART:
            continue
        why = None
        if (_NEGATION.search(sentence) is None) != (_NEGATION.search(counterpart) is None):
            why = "one states what the other negates"
        elif _UPDATE.search(sentence) and not _UPDATE.search(counterpart) and content != counterpart_content:
            why = "the newer one marks a change"
        else:
            numbers, old_numbers = set(_NUMBER.findall(sentence)), set(_NUMBER.findall(counterpart))
            if numbers and old_numbers and numbers != old_numbers and content == counterpart_content:
                why = "the same statement with other values"
        if why is not None:  # asked only now: most pairs reverse nothing
            judged = judge(older, newer)
            if judged.distinct is not None:
                return None
            return judged.reason() if why.startswith("the same statement") and judged.values else why
    return None


def restated(older: Memory, newer: Memory) -> float:
    """How nearly two memories that each state one sentence (a title its body repeats counted once)
    say the same thing: the overlap of what they are about, their words without stopwords,
    negations, update markers and numbers.  0 for longer memories.

    The supersede step's word gate (``conflict_text_similarity``) counts every word of the two
    texts, and in one short sentence those are mostly the words an update rewords: "Our staging
    database runs on port 6543" / "The staging database port is now 5499" share 0.43 of their
    words and 0.86 of what they are about ("the production database is now on port 5499": 0.57).
    For two single statements this is the measure."""
    old, new = _statement(older), _statement(newer)
    if not old or not new:
        return 0.0
    return _overlap(*(Counter({w: n for w, n in _content(t).items() if w not in STOPWORDS}) for t in (old, new)))


def _statement(memory: Memory) -> str | None:
    """The one sentence a memory states, or None when it states more (or nothing)."""
    found: dict[str, str] = {}
    for sentence in _sentences(memory):
        found.setdefault(normalize_text(sentence).rstrip(".!?;: "), sentence)
    return next(iter(found.values())) if len(found) == 1 else None


def may_supersede(older: Memory, newer: Memory) -> bool:
    """A newer memory overrides an older one of lower or equal trust; inferred never overrides explicit."""
    if TRUST_RANK[newer.trust] < TRUST_RANK[older.trust]:
        return False
    return not (older.authority == "explicit" and newer.authority == "inferred")


def _has_link(memory: Memory, target: Memory, stems: dict[str, str]) -> bool:
    return any(resolve_link(link, stems, (target.id,)) == target.id for link in memory.links)


# ---------------------------------------------------------------- contradictions


def _refusal(older: Memory, newer: Memory) -> str:
    if TRUST_RANK[newer.trust] < TRUST_RANK[older.trust]:
        return f"its trust {newer.trust} is below {older.trust}"
    return "an inferred memory does not override an explicit one"


def plan_supersede(view: View, similarity: Similarity) -> list[Action]:
    """Newer memories that reverse older ones supersede them (history kept in the older file).

    A newer memory may supersede several older ones; one already superseded in
    this plan takes no further part.  A reversal that may not supersede (lower
    trust, inferred over explicit) links the two both ways as a conflict.
    """
    settings = view.config.consolidation
    stems = link_targets(view)
    out = []
    superseded: set[str] = set()
    state: dict[str, Memory] = {}  # memories as earlier actions of this plan left them
    for pair in candidate_pairs(view, similarity, settings.conflict_similarity):
        older, newer = state.get(pair.older.id, pair.older), state.get(pair.newer.id, pair.newer)
        if older.id in superseded or newer.id in superseded:
            continue
        if max(pair.text, restated(older, newer)) < settings.conflict_text_similarity:
            continue
        why = contradicts(older, newer)
        if why is None:
            continue
        if not may_supersede(older, newer):
            if ("link", frozenset({newer.id, older.id})) in view.vetoes:
                continue
            linked = []
            for a, b in ((newer, older), (older, newer)):
                if not _has_link(a, b, stems):
                    linked.append(Change.of(a, links=(*a.links, b.id)))
                    state[a.id] = a.replace(links=(*a.links, b.id))
            if linked:
                out.append(Action(
                    "link", newer.id,
                    f"conflicts with {older.id} ({why}; not superseding: {_refusal(older, newer)})",
                    changes=tuple(c for c in linked if c is not None), related=(older.id,),
                ))
            continue
        if ("supersede", frozenset({newer.id, older.id})) in view.vetoes:
            continue
        changes = [
            Change.of(older, lifecycle="superseded", superseded_by=newer.id, tier="cold"),
            Change.of(newer, supersedes=newer.supersedes or older.id),
        ]
        state[older.id] = older.replace(lifecycle="superseded", superseded_by=newer.id, tier="cold")
        state[newer.id] = newer.replace(supersedes=newer.supersedes or older.id)
        out.append(Action(
            "supersede", newer.id, f"contradicts {older.id} ({why}; cosine {pair.cosine:.2f})",
            changes=tuple(c for c in changes if c is not None), related=(older.id,),
        ))
        superseded.add(older.id)
    return out


# ---------------------------------------------------------------- merges


def _survivor(members: list[Memory]) -> Memory:
    """An explicit memory over inferred ones, then the oldest."""
    return min(members, key=lambda m: (m.authority != "explicit", _created(m), m.id))


def fold(survivor: Memory, absorbed: Memory) -> dict[str, object]:
    """The survivor's governed fields once ``absorbed`` is folded in (idempotent: folding twice adds nothing)."""
    if any(e.get("merged") == absorbed.id for e in survivor.evidence):
        return {}
    evidence = list(survivor.evidence)
    for item in absorbed.evidence:
        if item not in evidence:
            evidence.append(item)
    evidence.append({"merged": absorbed.id, "source": absorbed.source})
    applied = {k: survivor.applied.get(k, 0) + absorbed.applied.get(k, 0)
               for k in dict.fromkeys([*survivor.applied, *absorbed.applied])}
    links = [link for link in dict.fromkeys([*survivor.links, *absorbed.links])
             if link not in (survivor.id, absorbed.id)]
    lifecycle = max(survivor.lifecycle, absorbed.lifecycle, key=lambda s: LIFECYCLE_RANK.get(s, 1))
    return {
        "evidence": tuple(evidence),
        "proof_count": survivor.proof_count + absorbed.proof_count,
        "tags": tuple(dict.fromkeys([*survivor.tags, *absorbed.tags])),
        "links": tuple(links),
        "trust": min(survivor.trust, absorbed.trust, key=lambda t: TRUST_RANK[t]),
        "applied": applied,
        "importance": max(survivor.importance, absorbed.importance),
        "tier": "hot" if "hot" in (survivor.tier, absorbed.tier) else survivor.tier,
        "lifecycle": lifecycle,
    }


def _content_words(memory: Memory) -> set[str]:
    return {w for w in words(f"{memory.title}\n{memory.body}") if w not in STOPWORDS}


def distinct_notes(pair: Pair, short_words: int, short_cosine: float) -> bool:
    """Whether two short notes that share most words are about different things.

    In a short note one word is the whole difference ("Alpha service notes
    about rollout." and "Beta service notes about rollout cadence."; "Alice
    owns the checkout flow." and "Bob owns ..."), so word overlap vouches for
    nothing: when each note says something the other does not and the shorter
    has at most ``short_words`` content words, only closeness in meaning
    (cosine >= ``short_cosine``) makes them one memory.  A note that only adds
    words to the other ("..., always.") is not held back.
    """
    a, b = _content_words(pair.older), _content_words(pair.newer)
    if not (a - b) or not (b - a) or min(len(a), len(b)) > short_words:
        return False
    return pair.cosine < short_cosine


def plan_merges(view: View, similarity: Similarity) -> list[Action]:
    """Near-duplicates merged into their oldest (explicit first) member, one action per absorbed memory."""
    settings = view.config.consolidation
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    pairs = {}
    # 0.6 * cosine + 0.4 * words reaches merge_similarity only from this cosine up (words <= 1).
    floor = max(settings.review_similarity, (settings.merge_similarity - 0.4) / 0.6)
    for pair in candidate_pairs(view, similarity, floor):
        if pair.combined < settings.merge_similarity or pair.text < settings.text_similarity:
            continue
        if pair.older.trust != pair.newer.trust or contradicts(pair.older, pair.newer):
            continue
        if distinct(pair.older, pair.newer) is not None:
            continue
        if distinct_notes(pair, settings.short_words, settings.short_cosine):
            continue
        parent.setdefault(pair.older.id, pair.older.id)
        parent.setdefault(pair.newer.id, pair.newer.id)
        a, b = find(pair.older.id), find(pair.newer.id)
        if a != b:
            parent[max(a, b)] = min(a, b)
            pairs[frozenset((pair.older.id, pair.newer.id))] = pair
    clusters: dict[str, list[Memory]] = {}
    for memory_id in sorted(parent):
        clusters.setdefault(find(memory_id), []).append(view.active[memory_id])
    stems = link_targets(view)
    incoming: dict[str, list[str]] = {}  # target id -> ids of memories linking to it
    for memory in view.governed():
        for link in memory.links:
            target = resolve_link(link, stems, view.active)
            if target is not None and target != memory.id:
                incoming.setdefault(target, []).append(memory.id)
    state: dict[str, Memory] = {}  # memories as earlier actions of this plan left them
    out: list[Action] = []
    for root in sorted(clusters):
        members = clusters[root]
        survivor = _survivor(members)
        for absorbed in sorted((m for m in members if m.id != survivor.id), key=lambda m: (_created(m), m.id)):
            if ("merge", frozenset({survivor.id, absorbed.id})) in view.vetoes:
                continue  # a person undid this merge: nothing of it is folded into the survivor
            if distinct(*_order(survivor, absorbed)) is not None:
                continue  # joined through a third memory, yet about another thing: it stays on its own
            current = state.get(survivor.id, survivor)
            folded = fold(current, absorbed)
            united = united_text(current, absorbed) if folded else None
            if united is not None:
                folded.update(united[0])
            if folded:  # no link of the survivor to itself or to the trashed copy, wikilinks included
                folded["links"] = tuple(link for link in cast(tuple[str, ...], folded["links"])
                                        if resolve_link(link, stems, view.active) not in (survivor.id, absorbed.id))
            changes: list[Change | None] = [Change.of(current, **folded)]
            state[survivor.id] = current.replace(**folded)
            changes.append(Change.of(absorbed, merged_into=survivor.id))
            for other_id in sorted(set(incoming.get(absorbed.id, ()))):
                if other_id in (survivor.id, absorbed.id) or other_id not in view.active:
                    continue
                other = state.get(other_id, view.active[other_id])
                relinked = tuple(dict.fromkeys(
                    survivor.id if resolve_link(link, stems, view.active) == absorbed.id else link
                    for link in other.links
                ))
                changes.append(Change.of(other, links=relinked))
                state[other_id] = other.replace(links=relinked)
            found = pairs.get(frozenset((survivor.id, absorbed.id)))
            detail = f"cosine {found.cosine:.2f}, words {found.text:.2f}" if found else "same cluster"
            if united is not None:
                detail += f"; keeps what only it said: {united[1]}"
            out.append(Action(
                "merge", survivor.id, f"absorbs near-duplicate {absorbed.id} ({detail})",
                changes=merge_changes(c for c in changes if c is not None), trash=(absorbed.id,),
                related=(absorbed.id,),
            ))
    return out


# ---------------------------------------------------------------- cross-links


def _why_apart(a: Memory, b: Memory, settings: ConsolidationSettings) -> str:
    """"; distinct: they name different customers (1042, 2077)" for two memories that share most words
    yet are distinct facts (why they link rather than merge), else ""."""
    if text_similarity(a, b) < settings.conflict_text_similarity:
        return ""
    why = distinct(*_order(a, b))
    return f"; {why}" if why else ""


def plan_links(view: View, similarity: Similarity) -> list[Action]:
    """Related memories linked both ways.

    Each memory's candidates are its ``link_limit`` closest neighbours at or
    above ``crosslink_similarity``; two memories link when each is among the
    other's candidates.  So no memory gains more than ``link_limit`` links in
    a run, and a second run finds the same pairs already linked.  A neighbour
    that may not be linked (superseded, trashed, a digest) still takes its
    place among the closest: otherwise trashing it would promote a farther one
    and the next run would link anew.
    """
    settings = view.config.consolidation
    # A digest links to its episodes already; digests are written after this step, so linking them
    # would leave work for the next run.
    # Syntheses link to their members when written, and are no memory's "closest": an overview
    # restates its members, and taking their places would change which memories link.
    syntheses = {i for i, m in view.active.items() if m.source == SYNTHESIS_SOURCE}
    governed = {m.id: m for m in view.governed() if not m.extra.get("digest") and m.id not in syntheses}
    stems = link_targets(view)
    top: dict[str, dict[str, float]] = {}
    for memory_id in sorted(governed):
        memory = governed[memory_id]
        picks: dict[str, float] = {}
        closest = [(i, c) for i, c in similarity.neighbours(memory_id)
                   if c >= settings.crosslink_similarity and i != memory_id and i not in syntheses
                   ][: settings.link_limit]
        for other_id, cosine in closest:
            other = governed.get(other_id)
            if other is not None and group_of(other) == group_of(memory):
                picks[other_id] = cosine
        top[memory_id] = picks
    added: dict[str, list[str]] = {}
    reasons: dict[tuple[str, str], float] = {}
    for memory_id in sorted(top):
        for other_id, cosine in top[memory_id].items():
            if memory_id not in top.get(other_id, {}):
                continue
            a, b = governed[memory_id], governed[other_id]
            if not _has_link(a, b, stems) and b.id not in added.get(a.id, []):
                added.setdefault(a.id, []).append(b.id)
                reasons[(a.id, b.id)] = cosine
    out = []
    for memory_id in sorted(added):
        memory = governed[memory_id]
        change = Change.of(memory, links=(*memory.links, *added[memory_id]))
        if change is None:
            continue
        shown = ", ".join(f"{b} ({reasons[(memory_id, b)]:.2f}{_why_apart(memory, governed[b], settings)})"
                          for b in added[memory_id])
        out.append(Action("link", memory_id, f"related: {shown}", changes=(change,),
                          related=tuple(added[memory_id])))
    return out
