"""The absolute relevance floor: whether a hit is evidence that the vault holds what the query asks.

Ranks and fused scores are relative: the best of ten unrelated memories still ranks first with a
confident score.  A hit's *evidence* is absolute instead, and it is read from the query and that
one memory alone, so the verdict for a (query, memory) pair is the same in a vault of one memory
and of ten thousand, and does not change when an unrelated memory is added:

- the closest meaning any of its vectors has to the query (the best cosine over its lanes), plus
- the share of the query's words it carries (title, summary, trigger, body, tags and
  ``occurred_at`` in words, stemmed as the full-text index stems them), each word weighted by how
  rare it is in English (:mod:`rarity`: "use" says little, "repository" more, a name, a number or
  a tool's name most).  Read from the vault instead, as it once was, rarity was degenerate in a
  small vault: in a one-memory vault every word of the memory was "in every memory" and weighed
  nothing, so "how should I write tests" could not find "Tests use pytest fixtures".

A word that names one of the vault's subjects (a tag a person or an importer gave: a person in a
chat log, a project, a topic), or the name untagged memories lead with (:mod:`subjects`), weighs
the most a word can: it says what the question is about.  An inferred memory's tags (the
compacter's choice of frequent words) name no subject.

A hit clears the floors when its evidence reaches ``relevance_floor`` or its meaning alone reaches
``meaning_floor`` (a close paraphrase).  A hit that carries the query's *specific* words
(:class:`Specifics`: every number and identifier, and one of the names it capitalises) clears lower
floors (``named_relevance_floor``, ``named_meaning_floor``): a person may say the rest in other
words ("who is my boss" of "My manager is Priya"), but never a name or an id, so "what did Caroline
research" is not answered by a memory about someone else's research, however close its meaning, nor
"customer 2077" by a memory of customer 1042.  A query with no specific word is held to the lower
floors by every memory.

A search none of whose candidates (the whole shortlist, not only the page returned) clears them
answers no hits (``weak`` asks for them anyway, each marked); when any clears them, every hit is
returned and the ones below are marked weak (a turn found through its neighbours is often weak on
its own and still the answer).  A search that names one of the vault's subjects, carried by one of
its candidates, is answered too, its hits marked weak, with a notice saying so ("What European
countries has Maria been to?" of Maria's chat log, whose turns say Spain and England).  A
stranger's name is no subject of the vault, so a question about someone else is still answered
with nothing.  The context director's search is the same, so a task the vault holds nothing about
gets no memory "relevant to the task".

The four floors (``retrieval.relevance_floor``, ``meaning_floor``, ``named_relevance_floor``,
``named_meaning_floor``) were chosen
leave-one-out over three suites: the development conversations of LoCoMo with foreign questions
(``benchmarks/floor_locomo.py``), a small-vault suite of everyday memories at sizes 1 to 300
(``python -m benchmarks.small_vaults``); see docs/search.md.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..format.dates import CALENDAR_WORDS
from ..format.text import STOPWORDS
from . import rarity, rerank

# What a hit's words are read from: the memory's own full-text fields (its body included, its
# neighbours' words not: a turn is not evidence for what the turn next to it says).
EVIDENCE_FIELDS = ("title", "summary", "trigger", "body", "tags", "when")


@dataclass(frozen=True, slots=True)
class QueryWords:
    """The query's stemmed content words, each with its weight: its rarity in English."""

    weights: Mapping[str, float]

    @classmethod
    def of(cls, query: str, subjects: Collection[str] = frozenset()) -> QueryWords:
        """``subjects``: the stemmed words of the tags people gave (see the module).  Every other
        word weighs its rarity in English (:mod:`rarity`), not in the vault, so the weights, and
        the verdict for a (query, memory) pair, are the same whatever else the vault holds."""
        surface = surface_words(query)
        top = rarity.rarest()
        return cls({stem: top if stem in subjects else rarity.weight(surface.get(stem, stem), stem)
                    for stem in content_stems(query)})

    def coverage(self, terms: Iterable[str]) -> float:
        """The weighted share of the query's words among ``terms`` (stemmed), in [0, 1]."""
        total = sum(self.weights.values())
        if total <= 0:
            return 0.0
        present = set(terms)
        return sum(w for word, w in self.weights.items() if word in present) / total


@lru_cache(maxsize=64)
def _words(query: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each word of ``query`` as written, with its stems: the one pass of the index's analyzer that
    the content words, the weights and the specific words of a search all read."""
    return tuple((token, tuple(rerank.stems(token))) for token in rerank.words(query))


def content_words(query: str) -> list[tuple[str, tuple[str, ...]]]:
    """The words of ``query`` as written, without function words, each with its stems."""
    return [w for w in _words(query) if w[0].casefold() not in STOPWORDS and w[1]]


def content_stems(query: str) -> list[str]:
    """The stemmed words of ``query`` without function words (all of them when nothing else is left)."""
    content = content_words(query) or list(_words(query))
    return list(dict.fromkeys(stem for _token, stems in content for stem in stems))


@dataclass(frozen=True, slots=True)
class Specifics:
    """The query's specific words, stemmed: what a paraphrase cannot say in other words.

    ``codes`` are numbers and words English does not list (:mod:`rarity`: a tool's name, an id,
    "pnpm", "1042", "AWS"; not the start of a word it lists, "prod" or "repo", which a paraphrase
    may spell out): a memory must carry every one.  ``names`` are the words capitalised past
    the query's first word ("Caroline", "European"): a memory must carry one of them, since a question
    may name a person and a place and be answered by a memory of one."""

    codes: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    numbers: frozenset[str] = frozenset()  # the codes written with a digit: "2077", "e1102"
    kinds: frozenset[str] = frozenset()  # the words a number follows: "customer" of "customer 2077"

    @classmethod
    def of(cls, query: str) -> Specifics:
        codes: set[str] = set()
        names: set[str] = set()
        numbers: set[str] = set()
        kinds: set[str] = set()
        words = _words(query)
        dated = _date_parts([token for token, _stems in words])
        previous: tuple[str, ...] = ()  # the stems of the word before, when it is a content word and no code
        for n, (token, stems) in enumerate(words):
            if token.casefold() in STOPWORDS:
                previous = ()
                continue
            unlisted = rarity.rank(token, stems[0] if stems else None) == rarity.unknown_rank()
            if any(c.isdigit() for c in token):
                codes.update(stems)
                if n not in dated:  # a day or a year names a time, not one of a kind of things
                    numbers.update(stems)
                    kinds.update(previous)
                previous = ()
                continue
            if unlisted and not rarity.abbreviates(token):
                codes.update(stems)
                previous = ()
                continue
            if n > 0 and token[:1].isupper() and not token.isupper():
                # An abbreviation English lists (PR, UI, API) may be spelled out: a capital makes a
                # word a name only when a small letter follows it.
                names.update(stems)
            previous = stems
        return cls(frozenset(codes), frozenset(names - codes), frozenset(numbers), frozenset(kinds - codes))

    @property
    def words(self) -> frozenset[str]:
        return self.codes | self.names

    def carried_by(self, terms: Collection[str]) -> bool:
        """Whether a memory carrying the stemmed ``terms`` carries the query's specific words."""
        return self.codes <= set(terms) and (not self.names or bool(self.names & set(terms)))

    def other_instance(self, terms: Collection[str], text: str) -> tuple[str, ...]:
        """The numbers by which a memory (carrying the stemmed ``terms``, reading ``text``) names another
        thing of the kind the query names by its number: "Customer 1042 is on the Enterprise plan" of
        "which plan is customer 2077 on" gives ("1042",).  Empty when it carries the query's numbers,
        not the word they follow, or no number of its own (a rule for every customer is no other
        customer).  Only numbers (words with a digit) name things so: a word English does not list
        ("pnpm", a typo) is a name to carry, not one of a kind."""
        if not self.kinds or self.numbers <= set(terms) or not self.kinds & set(terms):
            return ()
        own = [token for token, stems in _words(text) if token.casefold() not in STOPWORDS
               and any(c.isdigit() for c in token) and not set(stems) & self.numbers]
        return tuple(dict.fromkeys(own))

    def unlike(self, others: Sequence[str]) -> str:
        """What a hit's reason adds when it names another thing by ``others`` (see :meth:`other_instance`)."""
        if not others:
            return ""
        return f"; still weak: it names {', '.join(others)} where the query names {', '.join(sorted(self.numbers))}"


def _date_parts(tokens: Sequence[str]) -> set[int]:
    """The positions of the numbers that write a date with the name of a month, a season or a day
    ("25 February, 2022", "May 23, 2023", "summer 2021"): next to the name, or next to a number that is."""
    dated: set[int] = set()
    months = [n for n, token in enumerate(tokens) if token.casefold() in CALENDAR_WORDS]
    for month in months:
        for step in (-1, 1):
            at = month + step
            while 0 <= at < len(tokens) and any(c.isdigit() for c in tokens[at]):
                dated.add(at)
                at += step
    return dated


def surface_words(query: str) -> dict[str, str]:
    """Each stemmed word of ``query`` -> the word as written (the first that stems to it)."""
    out: dict[str, str] = {}
    for token, stems in _words(query):
        for stem in stems:
            out.setdefault(stem, token)
    return out


def named_subjects(stems: Iterable[str], subjects: Mapping[str, str],
                   carried: Mapping[str, set[str]]) -> tuple[str, ...]:
    """The vault's subjects (``subjects``: stem -> the tag it comes from) that the query's stemmed
    content words ``stems`` name and that a candidate carries (``carried``: stem -> the candidates
    carrying it), as the tags spell them, in the query's order."""
    named = (subjects[stem] for stem in stems if stem in subjects and carried.get(stem))
    return tuple(dict.fromkeys(named))


def evidence(cosines: Mapping[str, float], coverage: float) -> float:
    """A hit's evidence: its best cosine with the query plus the share of the query it covers."""
    return max(cosines.values(), default=0.0) + coverage


@dataclass(frozen=True, slots=True)
class Floors:
    """A hit clears them with evidence at least ``evidence`` or a cosine at least ``meaning`` (a close
    paraphrase that shares no word with the memory); a hit that carries every specific word of the
    query (its names, numbers and identifiers: a paraphrase may say the rest in other words, never
    those) clears the lower ``named_evidence`` or ``named_meaning`` too."""

    evidence: float
    meaning: float
    named_evidence: float = 9.0
    named_meaning: float = 9.0

    def cleared(self, evidence: float, meaning: float, names_carried: bool = False) -> bool:
        if evidence >= self.evidence or meaning >= self.meaning:
            return True
        return names_carried and (evidence >= self.named_evidence or meaning >= self.named_meaning)


@dataclass(slots=True)
class Best:
    """The best evidence and the best cosine among a search's candidates (and among those that carry
    the query's specific words), and the vault's subjects the query names that a candidate carries
    (as their tags spell them)."""

    floors: Floors
    evidence: float = 0.0
    meaning: float = 0.0
    named_evidence: float = 0.0
    named_meaning: float = 0.0
    subjects: tuple[str, ...] = ()

    def add(self, evidence: float, meaning: float, names_carried: bool = False) -> None:
        self.evidence = max(self.evidence, evidence)
        self.meaning = max(self.meaning, meaning)
        if names_carried:
            self.named_evidence = max(self.named_evidence, evidence)
            self.named_meaning = max(self.named_meaning, meaning)

    @property
    def floored(self) -> bool:
        """Whether a candidate clears the floors."""
        return (self.floors.cleared(self.evidence, self.meaning)
                or self.floors.cleared(self.named_evidence, self.named_meaning, names_carried=True))

    @property
    def clears(self) -> bool:
        """Whether the search answers its hits: a candidate clears the floors, or the query names
        one of the vault's subjects and a candidate carries it (see the module)."""
        return self.floored or bool(self.subjects)

    def describe(self) -> str:
        floors = self.floors
        text = (f"the best evidence is {self.evidence:.2f}, below the relevance floor {floors.evidence:.2f}, "
                f"and the closest meaning {self.meaning:.2f}, below {floors.meaning:.2f}")
        if floors.named_evidence <= 1 or floors.named_meaning <= 1:
            text += (f"; among the memories that carry the query's names, numbers and identifiers, "
                     f"{self.named_evidence:.2f} and {self.named_meaning:.2f}, below {floors.named_evidence:.2f} "
                     f"and {floors.named_meaning:.2f}")
        return text

    def describe_subjects(self) -> str:
        """The notice of a search answered for the subjects it names alone."""
        named = ", ".join(self.subjects)
        return (f"no memory matches closely ({self.describe()}), but the query names {named}, a subject of the "
                f"vault's memories: the closest are listed, marked weak")

    def to_json(self) -> dict[str, Any]:
        floors = self.floors
        return {"best": round(self.evidence, 4), "meaning": round(self.meaning, 4),
                "floor": floors.evidence, "meaning_floor": floors.meaning,
                "named": {"best": round(self.named_evidence, 4), "meaning": round(self.named_meaning, 4),
                          "floor": floors.named_evidence, "meaning_floor": floors.named_meaning},
                "subjects": list(self.subjects)}


def describe(value: float, meaning: float, coverage: float, floors: Floors, names_carried: bool = False) -> str:
    """The ``--explain`` line of a hit's evidence."""
    parts = f"closest meaning {meaning:.2f} + query words covered {coverage:.2f}"
    if value >= floors.evidence:
        return f"evidence {value:.2f} ({parts}): above the relevance floor {floors.evidence:.2f}"
    if meaning >= floors.meaning:
        return (f"evidence {value:.2f} ({parts}): below the relevance floor {floors.evidence:.2f}, but its meaning "
                f"alone reaches {floors.meaning:.2f}")
    if names_carried and floors.cleared(value, meaning, names_carried=True):
        return (f"evidence {value:.2f} ({parts}): it carries the query's names, numbers and identifiers, and "
                f"clears the floors for such a memory ({floors.named_evidence:.2f}, or meaning "
                f"{floors.named_meaning:.2f})")
    return (f"weak: evidence {value:.2f} ({parts}) is below the relevance floor {floors.evidence:.2f}, and its "
            f"meaning below {floors.meaning:.2f}")
