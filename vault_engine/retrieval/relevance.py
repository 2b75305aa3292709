"""The absolute relevance floor: whether a hit is evidence that the vault holds what the query asks.

Ranks and fused scores are relative: the best of ten unrelated memories still ranks first
with a confident score.  A hit's *evidence* is absolute instead: the closest meaning any of
its vectors has to the query (the best cosine over its lanes) plus the share of the query's
words it carries, each word weighted by how rare it is in the vault: both read from the
full-text index (title, summary, trigger, body, tags and ``occurred_at`` in words, stemmed as
the index stems them).  A query
about something the vault does not hold names words the vault has never seen (a person, a
tool, a place), and those weigh most, so its best hit covers little of it and means little
like it.

A word that names one of the vault's subjects (a tag a person or an importer gave: a person
in a chat log, a project, a topic) weighs as much as a word no memory carries, however many
memories carry it: it says what the question is about, and the vault holds that subject.
Weighted by its rarity alone, the name of a chat's speaker (on half of the turns) counted for
almost nothing, and a question about that person in words the turns do not use ("what might
Caroline's political leaning be?") looked as foreign as one about a stranger.  An inferred
memory's tags (the compacter's choice of frequent words) name no subject.

A hit also clears the floor when its meaning alone is close enough (``meaning_floor``: a
paraphrase that shares no word with the memory).  A search none of whose candidates (the
whole shortlist, not only the page returned) clears it answers no hits (``weak`` asks for
them anyway, each marked); when any clears it, every hit is returned and the ones below are
marked weak (a turn found through its neighbours is often weak on its own and still the
answer).  A search that names one of the vault's subjects, carried by one of its candidates,
is answered too, its hits marked weak, with a notice saying so: the query is about something
the vault holds even when it asks in words no memory uses ("What European countries has Maria
been to?" of Maria's chat log, whose turns say Spain and England).  A stranger's name is no
subject of the vault, so a question about someone else is still answered with nothing.  The
context director's search is the same, so a task the vault holds nothing about gets no memory
"relevant to the task".

The floors (``retrieval.relevance_floor``, ``retrieval.meaning_floor``) were set on the
development conversations, checked leave-one-conversation-out, with foreign questions (each
conversation's questions asked of the other conversations' vaults): see
``scripts/eval_floor.py`` and docs/search.md.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..index.fulltext import STOPWORDS
from . import rerank

# What a hit's words are read from: the memory's own full-text fields (its body included, its
# neighbours' words not: a turn is not evidence for what the turn next to it says).
EVIDENCE_FIELDS = ("title", "summary", "trigger", "body", "tags", "when")


@dataclass(frozen=True, slots=True)
class QueryWords:
    """The query's stemmed content words, each with its IDF in the vault."""

    weights: Mapping[str, float]

    @classmethod
    def of(cls, query: str, documents: int, frequency: Mapping[str, int],
           subjects: Collection[str] = frozenset()) -> QueryWords:
        """``frequency``: stemmed word -> how many of the vault's ``documents`` carry it;
        ``subjects``: the stemmed words of the tags people gave (see the module)."""
        rarest = idf(documents, 0)
        return cls({word: rarest if word in subjects else idf(documents, frequency.get(word, 0))
                    for word in content_stems(query)})

    def coverage(self, terms: Iterable[str]) -> float:
        """The IDF-weighted share of the query's words among ``terms`` (stemmed), in [0, 1]."""
        total = sum(self.weights.values())
        if total <= 0:
            return 0.0
        present = set(terms)
        return sum(w for word, w in self.weights.items() if word in present) / total


def content_stems(query: str) -> list[str]:
    """The stemmed words of ``query`` without function words (all of them when nothing else is left)."""
    tokens = rerank.words(query)
    content = [t for t in tokens if t.casefold() not in STOPWORDS] or tokens
    return list(dict.fromkeys(rerank.stems(" ".join(content))))


def named_subjects(stems: Iterable[str], subjects: Mapping[str, str],
                   carried: Mapping[str, set[str]]) -> tuple[str, ...]:
    """The vault's subjects (``subjects``: stem -> the tag it comes from) that the query's stemmed
    content words ``stems`` name and that a candidate carries (``carried``: stem -> the candidates
    carrying it), as the tags spell them, in the query's order."""
    named = (subjects[stem] for stem in stems if stem in subjects and carried.get(stem))
    return tuple(dict.fromkeys(named))


def idf(documents: int, frequency: int) -> float:
    """log((N + 1) / (df + 0.5)), never below 0: a word no memory carries weighs most."""
    return max(0.0, math.log((documents + 1) / (frequency + 0.5)))


def evidence(cosines: Mapping[str, float], coverage: float) -> float:
    """A hit's evidence: its best cosine with the query plus the share of the query it covers."""
    return max(cosines.values(), default=0.0) + coverage


@dataclass(frozen=True, slots=True)
class Floors:
    """A hit clears them with evidence at least ``evidence``, or a cosine at least ``meaning``
    alone (a paraphrase that shares no word with the memory)."""

    evidence: float
    meaning: float

    def cleared(self, evidence: float, meaning: float) -> bool:
        return evidence >= self.evidence or meaning >= self.meaning


@dataclass(slots=True)
class Best:
    """The best evidence and the best cosine among a search's candidates, and the vault's subjects
    the query names that a candidate carries (as their tags spell them)."""

    floors: Floors
    evidence: float = 0.0
    meaning: float = 0.0
    subjects: tuple[str, ...] = ()

    def add(self, evidence: float, meaning: float) -> None:
        self.evidence = max(self.evidence, evidence)
        self.meaning = max(self.meaning, meaning)

    @property
    def floored(self) -> bool:
        """Whether a candidate clears the floors."""
        return self.floors.cleared(self.evidence, self.meaning)

    @property
    def clears(self) -> bool:
        """Whether the search answers its hits: a candidate clears the floors, or the query names
        one of the vault's subjects and a candidate carries it (see the module)."""
        return self.floored or bool(self.subjects)

    def describe(self) -> str:
        return (f"the best evidence is {self.evidence:.2f}, below the relevance floor {self.floors.evidence:.2f}, "
                f"and the closest meaning {self.meaning:.2f}, below {self.floors.meaning:.2f}")

    def describe_subjects(self) -> str:
        """The notice of a search answered for the subjects it names alone."""
        named = ", ".join(self.subjects)
        return (f"no memory matches closely ({self.describe()}), but the query names {named}, a subject of the "
                f"vault's memories: the closest are listed, marked weak")

    def to_json(self) -> dict[str, Any]:
        return {"best": round(self.evidence, 4), "meaning": round(self.meaning, 4),
                "floor": self.floors.evidence, "meaning_floor": self.floors.meaning, "subjects": list(self.subjects)}


def describe(value: float, meaning: float, coverage: float, floors: Floors) -> str:
    """The ``--explain`` line of a hit's evidence."""
    parts = f"closest meaning {meaning:.2f} + query words covered {coverage:.2f}"
    if value >= floors.evidence:
        return f"evidence {value:.2f} ({parts}): above the relevance floor {floors.evidence:.2f}"
    if meaning >= floors.meaning:
        return (f"evidence {value:.2f} ({parts}): below the relevance floor {floors.evidence:.2f}, but its meaning "
                f"alone reaches {floors.meaning:.2f}")
    return (f"weak: evidence {value:.2f} ({parts}) is below the relevance floor {floors.evidence:.2f}, and its "
            f"meaning below {floors.meaning:.2f}")
