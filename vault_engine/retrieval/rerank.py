"""Re-ranking: a second, closer look at the best fused candidates.

Fusion only knows each lane's rank.  The re-ranker reads the query and each of
the top ``rerank_depth`` candidates' catalog row and multiplies the score by
``1 + weight * feature`` for four features, each in [0, 1]:

- ``terms``: the share of the query's content words (stemmed as the index stems) that the
  memory's own words carry: its title, summary, trigger, body and tags, read from the
  full-text index (all of them, not just the rarest one BM25 liked; not the neighbouring
  turns' words, nor the date in words, which ``thread`` and ``time`` weigh);
- ``tags``: the share of the memory's tags that the query names ("what did
  Caroline ..." and a memory tagged ``caroline``; a tag in a script without spaces by
  standing in the query: "欧阳娜娜的歌"): the tags a person or an importer gave.
  An inferred memory's tags (an episode's: the compacter chose them from the text, offline
  its most frequent words such as "keep" or "photo") are not counted: they say what the
  text mentions, which ``terms`` reads already, not whom or what it is about.  A memory
  with no tag it was given counts the subject its title leads with (:mod:`subjects`).
  The person of the query names a chat's roles (:func:`roles_named`): the one asking is the
  chat's user, the one asked its assistant, so "When did I ..." names the ``user`` tag a chat
  importer gives what the user said, and "What did you recommend?" the ``assistant`` tag.  A
  query in both persons names the assistant when it asks back what the assistant said ("can
  you remind me", "the trail you recommended to me"), else the user: "can you suggest
  something for my trip?" asks for a new answer, which what the user said shapes.
  A name is no topic: the feature is scaled by the candidate's closest cosine with the
  vector query (which leaves the name out) as a share of the closest candidate's, to the
  power ``rerank_tag_gate``, so the named person's memories about something else do not
  push out what someone else said about the topic ("What did Caroline realize after her
  charity race?" when it was Melanie who ran it: LoCoMo's adversarial questions).  For the
  same reason the names left out of the vector query that name one of the vault's subjects (which
  this feature weighs) are left out of ``terms`` too;
- ``time``: how close the memory's ``occurred_at`` lies to a date the query
  names ("in May 2023", "last summer"; see :mod:`temporal`), 1 inside the span,
  fading to 0 at ``time_slack_days`` outside it;
- ``thread``: the best score among the memory's neighbouring turns in its
  conversation, *added* at ``rerank_thread`` times its value (a turn next to a
  strong match is often its answer, even when it shares no word with the
  query: "Yes, last Friday!"); the neighbours of the best hits join the
  candidates this way even when no lane found them.  A turn longer than one
  passage of the model takes a share of it (:func:`leaning`): it says enough to
  stand alone.

Word coverage does not overturn the lanes' unanimous best (``rerank_unanimous``): a candidate
first in every lane that found it, and found by every lane that found the other, stays above it
unless the other features (tags, dates, neighbours) lift the other over.  The full-text lane
already weighs the query's words by their rarity; the share of words covered counts every word
alike, and a memory carrying two common words ("check", "changes") passed the one every lane,
BM25 included, put first for the word that mattered ("commit").  Held below every candidate
all lanes rank higher, not only the first, the development conversations lost R@10 (0.812 to
0.809); held below the unanimous best, nothing moved there.

It is deterministic, needs no model, costs well under a millisecond per
candidate, and is switched off by ``rerank = false`` in ``[retrieval]``.
:func:`rerank_shortlist` is the search stage that applies it to the fused list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..config import RetrievalSettings
from ..format.dates import TimeSpan, closeness
from ..format.text import STOPWORDS
from ..index import segment
from ..index.catalog import CatalogRow
from ..index.derived import GIST_CHARS
from ..patterns import lazy_pattern
from . import temporal
from .fusion import Fused

_WORD = lazy_pattern(r"[^\W_]+", re.UNICODE)
_analyzer: Any = None


def stems(text: str) -> list[str]:
    """The words of ``text``, lower-cased and stemmed exactly as the full-text index does
    (Tantivy's English Snowball stemmer): "changes" and "change" are one word; a run of a
    script written without spaces gives its bigrams, as the index does (:mod:`segment`)."""
    global _analyzer
    if _analyzer is None:
        import tantivy

        _analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
                     .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.stemmer("english")).build())
    return list(_analyzer.analyze(segment.spaced(text)))


def words(text: str) -> list[str]:
    """The words of ``text`` as written; a run of a script written without spaces gives its bigrams."""
    return segment.words(text, _WORD)


def terms_of(text: str, tags: Sequence[str] = ()) -> frozenset[str]:
    """The stemmed words of a memory's text and tags, as :func:`features` compares them."""
    return frozenset(stems(" ".join((text, *tags))))


# The chat roles a query names by its person: the one asking is the chat's user, the one asked its
# assistant (see the module).
_FIRST = frozenset({"i", "me", "my", "mine", "myself"})
_SECOND = frozenset({"you", "your", "yours", "yourself"})
_ASKED_BACK = frozenset({"remind", "remember", "recall"})
_PAST = frozenset({"said", "told", "gave", "made", "wrote", "sent", "shown", "found", "built", "taught",
                   "chose", "drew", "put", "got", "brought", "thought", "meant", "ran", "did"})


def roles_named(tokens: Sequence[str]) -> frozenset[str]:
    """The chat role the query's person names (``tokens``: its words, case folded, in order): ``user``
    for a query in the first person alone ("when did I ..."), ``assistant`` for one in the second
    ("what did you recommend?") or in both that asks back what the assistant said ("can you remind
    me", "the trail you recommended to me"); a request in both ("can you suggest something for my
    trip?") asks for a new answer, which what the user said about themselves shapes: ``user``."""
    first = any(t in _FIRST for t in tokens)
    if not any(t in _SECOND for t in tokens):
        return frozenset({"user"}) if first else frozenset()
    if not first or _asks_back(tokens):
        return frozenset({"assistant"})
    return frozenset({"user"})


def _asks_back(tokens: Sequence[str]) -> bool:
    """"Remind me", "do you remember", or "you" next to a verb in the past ("did you", "you said",
    "you've mentioned", "the song you wrote")."""
    if any(t in _ASKED_BACK for t in tokens):
        return True
    for n, token in enumerate(tokens):
        if token == "you" and ((n > 0 and tokens[n - 1] == "did") or any(_past(t) for t in tokens[n + 1:n + 3])):
            return True
    return False


def _past(token: str) -> bool:
    return token in _PAST or (len(token) >= 4 and token.endswith("ed") and not token.endswith("eed"))


@dataclass(frozen=True, slots=True)
class QueryProfile:
    """What the re-ranker reads from a query, computed once per search."""

    terms: frozenset[str]  # stemmed content words
    names: frozenset[str]  # every word, case folded (tags are compared with these)
    spans: tuple[TimeSpan, ...]
    folded: str = ""  # the query case folded: a tag in a script without spaces is named by standing in it

    @classmethod
    def of(cls, query: str, today: date) -> QueryProfile:
        tokens = words(query)
        content = [t for t in tokens if t.casefold() not in STOPWORDS]
        folded = [t.casefold() for t in tokens]
        return cls(frozenset(stems(" ".join(content))), frozenset(folded) | roles_named(folded),
                   tuple(temporal.resolve(query, today)), query.casefold())

    def without(self, names: Sequence[str]) -> QueryProfile:
        """The profile without the content words of ``names`` (the subjects the query names, which
        the tag feature weighs); unchanged when nothing else would be left."""
        topic = self.terms - frozenset(stems(" ".join(names)))
        return QueryProfile(topic, self.names, self.spans, self.folded) if topic else self

    def names_tag(self, tag: str) -> bool:
        """Whether the query names ``tag``: one of its words, or (a tag in a script written
        without spaces, "欧阳娜娜" in "欧阳娜娜的歌") a stretch of its text."""
        folded = tag.casefold()
        return folded in self.names or (segment.has_runs(tag) and folded in self.folded)


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the re-ranker reads of one candidate."""

    id: str
    score: float
    terms: frozenset[str]  # its own stemmed words (at least those of the query it carries)
    tags: tuple[str, ...]  # the tags the feature counts (none for an inferred memory)
    occurred_at: date | datetime | None
    neighbour_score: float  # best fused score among its thread neighbours (0 outside threads)
    ranks: Mapping[str, int] = field(default_factory=dict)  # lane -> its rank there (the lanes that found it)
    meaning: float = 0.0  # its best cosine with the vector query (0: no vector lane found it)


def features(profile: QueryProfile, candidate: Candidate, slack_days: int) -> dict[str, float]:
    """Each multiplying feature of ``candidate`` in [0, 1] (absent features are 0)."""
    out: dict[str, float] = {}
    if profile.terms:
        out["terms"] = len(profile.terms & candidate.terms) / len(profile.terms)
    if candidate.tags:
        named = [t for t in candidate.tags if profile.names_tag(t)]
        out["tags"] = len(named) / len(candidate.tags)
    if profile.spans and candidate.occurred_at is not None:
        day = candidate.occurred_at.date() if isinstance(candidate.occurred_at, datetime) else candidate.occurred_at
        out["time"] = closeness(day, [_in_year(span, day.year) for span in profile.spans], slack_days)
    return out


_YEAR = lazy_pattern(r"\b\d{4}\b")
_MONTH_OR_SEASON = lazy_pattern(
    r"(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|spring|summer|autumn|fall|winter)")


def _in_year(span: TimeSpan, year: int) -> TimeSpan:
    """A month or season named without a year ("in June") matches that month of any year: the
    span is moved into the candidate's year.  Spans with a year, or relative ones, stay."""
    if _YEAR.search(span.text) or not _MONTH_OR_SEASON.search(span.text) or span.start.year != span.end.year:
        return span
    try:
        return TimeSpan(span.start.replace(year=year), span.end.replace(year=year), span.text)
    except ValueError:  # 29 February
        return span


def on_topic(meaning: float, closest: float, gate: float) -> float:
    """How much of its tag feature a candidate keeps: its meaning's share of the closest
    candidate's, to the power ``gate`` (see the module: a name is no topic)."""
    if closest <= 0:
        return 1.0
    return float(min(1.0, max(0.0, meaning) / closest) ** gate)


def rerank(profile: QueryProfile, candidates: Sequence[Candidate], weights: Mapping[str, float],
           slack_days: int = 14, *, unanimous: bool = False) -> list[tuple[Candidate, float, dict[str, float]]]:
    """(candidate, new score, what each feature did), best first; ties keep the input order.

    ``thread`` adds ``weight * neighbour score`` (so a turn that was not a candidate at all can
    enter next to a strong match); the other features multiply.  The returned dict holds the
    added amount under ``thread`` and the factor under each other name.  ``unanimous``: word
    coverage does not overturn a unanimous lane order (see :func:`hold_unanimous`).
    """
    scored: list[tuple[Candidate, float, dict[str, float]]] = []
    plain: list[float] = []  # each score without the ``terms`` factor, multiplied out (not divided back)
    gate = weights.get("tag_gate", 0.0)
    closest = max((c.meaning for c in candidates), default=0.0)
    for candidate in candidates:
        effects: dict[str, float] = {}
        score = candidate.score
        added = weights.get("thread", 0.0) * candidate.neighbour_score
        if added > 0:
            effects["thread"] = added
            score += added
        without_terms = score
        for name, value in features(profile, candidate, slack_days).items():
            if name == "tags" and gate > 0:
                value *= on_topic(candidate.meaning, closest, gate)
            factor = 1.0 + weights.get(name, 0.0) * value
            if factor != 1.0:
                effects[name] = factor
                score *= factor
                if name != "terms":
                    without_terms *= factor
        scored.append((candidate, score, effects))
        plain.append(without_terms)
    if unanimous:
        scored = hold_unanimous(scored, plain)
    order = sorted(range(len(scored)), key=lambda n: (-scored[n][1], n))
    return [scored[n] for n in order]


def ranks_above(higher: Mapping[str, int], lower: Mapping[str, int]) -> bool:
    """Whether every lane that found ``lower`` found ``higher`` too, and ranks it higher."""
    return bool(lower) and all(lane in higher and higher[lane] < rank for lane, rank in lower.items())


Rescored = list[tuple[Candidate, float, dict[str, float]]]


def hold_unanimous(scored: Rescored, plain: Sequence[float]) -> Rescored:
    """``scored`` with each candidate that word coverage alone lifted over the lanes' unanimous
    best held just below it (the factor it took, under ``unanimous`` in its effects).

    The lanes' unanimous best: first in every lane that found it, and found (first) by every lane
    that found the candidate.  "Alone": without the ``terms`` factor on either side (``plain``: each
    score without it, in the order of ``scored``) the candidate would not pass it; the other
    features (tags, dates, neighbours) still may.  The scores without the factor are multiplied out,
    not divided back: two turns that are each other's neighbour tie exactly (a + b against b + a),
    and a division's rounding would decide that tie one way or the other by the minute.
    """
    leaders = [(c, score, without) for (c, score, _effects), without in zip(scored, plain, strict=True)
               if c.ranks and all(rank == 1 for rank in c.ranks.values())]
    if not leaders:
        return scored
    lowest = min(leader_score for _leader, leader_score, _plain in leaders)
    out: Rescored = []
    for (candidate, score, effects), without in zip(scored, plain, strict=True):
        if score <= lowest:  # above no leader: nothing to hold
            out.append((candidate, score, effects))
            continue
        cap = score
        for leader, leader_score, leader_plain in leaders:
            if leader_score < cap and without <= leader_plain and ranks_above(leader.ranks, candidate.ranks):
                cap = math.nextafter(leader_score, 0.0)
        out.append((candidate, cap, {**effects, "unanimous": cap / score}) if cap < score else
                   (candidate, score, effects))
    return out


# ---------------------------------------------------------------- the search stage

# What a memory's own words are (the ``terms`` feature): the full-text fields of the memory itself.
TERM_FIELDS = ("title", "summary", "trigger", "body", "tags")
Carried = Callable[[frozenset[str], list[str]], Mapping[str, frozenset[str]]]

Scored = list[tuple[float, Fused]]  # (boosted score, fused candidate), best first


def leaning(chars: int) -> float:
    """How much of its neighbours' score a turn of ``chars`` characters takes (the ``thread``
    feature): all of it when the model reads the turn in one passage (``GIST_CHARS``), less the
    longer it is.  A short reply leans on the turn it answers ("Yes, last Friday!"); a long
    message says enough to stand alone, and lifted by its neighbours it passed the turn that said
    what was asked (an assistant's long answer around the user's own words: LongMemEval)."""
    return 1.0 if chars <= GIST_CHARS else GIST_CHARS / chars


def rerank_shortlist(query: str, scored: Scored, rows: dict[str, CatalogRow], settings: RetrievalSettings,
                     now: datetime, *, around: Mapping[str, tuple[str | None, str | None]],
                     joinable: Callable[[set[str]], dict[str, CatalogRow]],
                     carried: Carried, elsewhere: Callable[[set[str]], dict[str, float]],
                     subjects_of: Callable[[CatalogRow], tuple[str, ...]] | None = None,
                     meaning: Mapping[str, float] | None = None,
                     names: Sequence[str] = (),
                     ) -> tuple[Scored, dict[str, dict[str, float]]]:
    """The top ``rerank_depth`` candidates (and the thread neighbours of the best of them)
    re-scored by :func:`rerank`; the rest keep their order below them.  ``rows`` gains the
    rows of neighbours that joined.

    ``around``: each turn's (previous, next) memory ({} when the thread feature is off);
    ``joinable``: the rows of those ids that may join (active, admitted by the filters);
    ``carried(terms, ids)``: which of the query's stemmed ``terms`` each of ``ids`` carries in
    its :data:`TERM_FIELDS`; ``elsewhere(ids)``: the boosted scores of those of ``ids`` that the
    lanes found but ``scored`` leaves out (candidates too weak to be shown themselves).
    """
    s = settings
    head, tail = scored[: s.rerank_depth], scored[s.rerank_depth :]
    base = {f.id: score for score, f in scored}
    by_id = {f.id: f for _score, f in head}
    if around:
        neighbours = {n for _score, f in head for n in around.get(f.id, ()) if n and n not in base}
        if neighbours:
            base.update(elsewhere(neighbours))
        # The neighbours of the best candidates join as candidates with no score of their own.
        near = {n for _score, f in head[: s.limit] for n in around.get(f.id, ()) if n}
        near -= set(base)
        if near:
            fresh = joinable(near)
            for memory_id in sorted(fresh):
                rows[memory_id] = fresh[memory_id]
                by_id[memory_id] = Fused(memory_id, 0.0, ())
                head.append((0.0, by_id[memory_id]))
    profile = QueryProfile.of(query, now.date())
    if names:
        profile = profile.without(names)
    own = carried(profile.terms, [f.id for _score, f in head]) if profile.terms else {}
    candidates = []
    for score, f in head:
        row = rows[f.id]
        prev_id, next_id = around.get(f.id, (None, None))
        candidates.append(Candidate(
            f.id, score, own.get(f.id, frozenset()),
            subjects_of(row) if subjects_of else (() if row.authority == "inferred" else row.tags),
            row.occurred_at,
            leaning(row.chars) * max(base.get(prev_id, 0.0) if prev_id else 0.0,
                                     base.get(next_id, 0.0) if next_id else 0.0),
            {lane.lane: lane.rank for lane in f.lanes}, (meaning or {}).get(f.id, 0.0)))
    weights = {"terms": s.rerank_terms, "tags": s.rerank_tags, "time": s.rerank_time, "thread": s.rerank_thread,
               "tag_gate": s.rerank_tag_gate}
    out = [(c, score, effects) for c, score, effects
           in rerank(profile, candidates, weights, s.time_slack_days, unanimous=s.rerank_unanimous) if score > 0]
    floor = out[-1][1] if out else 0.0
    # Candidates below the re-ranked head never jump above it.
    rest = [(min(score, floor), f) for score, f in tail]
    return ([(score, by_id[c.id]) for c, score, _ in out] + rest,
            {c.id: effects for c, _score, effects in out if effects})
