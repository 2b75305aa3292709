"""Subjects: whom or what a memory is about, given as tags or read from the words it leads with.

A tag a person or an importer gave names a memory's subject (a chat importer tags each turn with
its speaker).  Most notes people import carry no tag: they say whom they are about in their text,
and they say it first ("Caroline: I went to the support group", "Priya moved the launch to May").
An untagged memory's *inferred subject* is the first capitalised word of its title (a function
word such as "The" and an acronym such as "API" aside), when that word leads the titles of many
memories of the vault (at least ``drop_tag_share`` of them): a name the vault keeps coming back
to, as a tag would be, and leads at least :data:`MIN_TITLES` of them.  A word that leads a handful
of titles ("Yesterday", "Met") names nothing the vault is about, and a memory whose title leads
with no such word has no inferred subject.  Since the first word of a note is often no name at all
("Write commit messages in the imperative mood", "Use pnpm"), a query names an inferred subject
only by writing it as a name: capitalised past its first word ("What did Caroline paint?"), the
words :func:`lanes.vector_query` reads as names too; "write a haiku about tea" names none.
A memory with tags has none inferred: its tags say whom it is about, unless it is an inferred
memory, whose tags (the compacter's choice of frequent words) name no subject.

What follows from a subject is the same for a given and an inferred one: the re-ranker's tag
feature prefers the memories of the subject a query names, the vector query leaves the name out
(:func:`lanes.vector_query`), and the relevance floor counts the name as the query's most telling
word (:mod:`relevance`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..format.text import STOPWORDS
from ..patterns import lazy_pattern

_WORD = lazy_pattern(r"[^\W\d_]+", re.UNICODE)
MIN_TITLES = 3  # a name the vault keeps coming back to leads several titles, not one or two


def query_names(query: str) -> frozenset[str]:
    """The words ``query`` writes as names (capitalised past its first word, not all capitals),
    case folded."""
    words = _WORD.findall(query)
    return frozenset(w.casefold() for w in words[1:] if w[:1].isupper() and not w.isupper())


def leading_name(title: str) -> str | None:
    """The first capitalised word of ``title`` that is not a function word ("The", "I"), as
    written; None when it has none.  An all-capital word (an acronym: "API") is not a name."""
    for match in _WORD.finditer(title):
        word = match.group()
        if word[:1].isupper() and not word.isupper() and word.casefold() not in STOPWORDS:
            return word
    return None


@dataclass(frozen=True, slots=True)
class Inferred:
    """The vault's inferred subjects: each leading name (case folded) with the share of current
    memories whose title leads with it, those at least the threshold share."""

    shares: Mapping[str, float]
    written: Mapping[str, str] = field(default_factory=dict)  # folded -> as first written

    @classmethod
    def of(cls, titles: Iterable[str], total: int, min_share: float) -> Inferred:
        """From the titles of the untagged memories among ``total`` current ones."""
        counts: dict[str, int] = {}
        written: dict[str, str] = {}
        for title in titles:
            name = leading_name(title)
            if name is not None:
                folded = name.casefold()
                counts[folded] = counts.get(folded, 0) + 1
                written.setdefault(folded, name)
        if total <= 0:
            return cls({})
        shares = {name: n / total for name, n in sorted(counts.items())
                  if n >= MIN_TITLES and n / total >= min_share}
        return cls(shares, {name: written[name] for name in shares})

    def named_by(self, query: str) -> Inferred:
        """The subjects ``query`` writes as names (see the module)."""
        names = query_names(query)
        return Inferred({n: v for n, v in self.shares.items() if n in names},
                        {n: v for n, v in self.written.items() if n in names})

    def subject_of(self, title: str) -> str | None:
        """An untagged memory's inferred subject (case folded), from its title."""
        name = leading_name(title)
        if name is None:
            return None
        folded = name.casefold()
        return folded if folded in self.shares else None
