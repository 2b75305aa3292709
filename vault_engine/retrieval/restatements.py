"""Whether two statements are about the same thing: the question before any contradiction, merge or conflict.

"Customer 1042 is on the Enterprise plan" and "Customer 2077 is on the
Enterprise plan" share every word but one number, yet neither replaces the
other: the number names *which* customer, it is not a value *of* the
customer.  "The staging DB is on port 5432" and "... on port 5433" differ the
same way, and there the newer one does replace the older.  What tells them
apart is where the differing word stands:

- both texts are read sentence by sentence; each sentence of one is paired
  with the sentence of the other that shares the most of its words, and the
  two are aligned token by token;
- a place where they differ matters only when it holds an **identifier** on
  both sides: a number, a version, a date, a code (``ABC-12``, ``B12``), a
  path, a host, a name inside the sentence, a capital letter alone ("service
  A"); plain words that differ are rewording ("year" / "twelve months");
- the sentence's **subject** is what comes before its main verb ("Customer
  1042" | "is on the Enterprise plan"; "Server rack 3" | "is in room B12";
  "Important rule number 3: the service 3" | "must always log ..."), except
  in a passive with an agent, where the agent is the subject ("Python 3.11 is
  used by" | "service A": the version is service A's value);
- an identifier that differs in the subject makes two **distinct** facts
  (never merged, never superseded); one that differs only after the verb is
  **the same subject with another value** (a supersession when the rest
  agrees);
- once the texts differ in an identifier, one plain word that differs in the
  subject names another thing too ("the billing service listens on port
  8080" / "the search service ... 9090"); a capitalised word opening the
  only sentence that differs is a name ("Alice owns checkout" / "Bob owns
  checkout"), while in longer texts such a word is as often rewording
  ("Each" / "Every") and does not count.

The main verb is the first auxiliary or modal ("is", "must", "will"), or the
first word in a verb's form that does not follow a determiner: a third
person form ("owns", "serves") or past form ("shipped"), or a plain form
after a plural noun or a pronoun ("entries expire", "we deploy").  A sentence
with no verb found has no subject to tell apart: its differing identifiers
count as values, as they did before this test existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from ..format.text import STOPWORDS, UPDATE_MARKERS
from ..patterns import lazy_pattern
from .statements import (
    IDENTIFIER,
    LEADING,
    NAME,
    NUMBER_KIND,
    QUOTED,
    REFERENCE,
    WORD,
    Statement,
    statement_of,
)

_IDENTIFYING = frozenset({NUMBER_KIND, IDENTIFIER, REFERENCE, NAME, LEADING, QUOTED})
# Colons stay inside a sentence: "Important rule number 3: the service 3 must ..." is one statement.
_SENTENCE = lazy_pattern(r"(?<=[.!?;])\s+|\n+")
_COUNTERPART = 0.5  # share of words (Dice) at which two sentences are one statement told twice
_SHORT = 30  # tokens: a text this short states one fact, so a noun that differs names another thing

_AUXILIARIES = frozenset("""
is are was were be been am has have had does do did will would shall should can could may might must
cannot can't won't isn't aren't wasn't weren't doesn't don't didn't hasn't haven't shouldn't mustn't
""".split())
_BE = frozenset({"is", "are", "was", "were", "be", "been", "am", "isn't", "aren't", "wasn't", "weren't"})
_VERBS = frozenset("""
use own keep run store send handle deploy listen live host serve review need require belong point talk write
read call depend take get start end expire retry log ship support pay sit stay hold contain cover allow block
fail pass lead manage maintain build test release publish receive return save load fetch push pull sync rotate
scale page alert notify show list track expect prefer like want hate reach replace move migrate switch break
mean cost last open close follow apply back own report trigger wrap print handle set reset go come work
""".split())
_IRREGULAR = frozenset("""
ran kept sent held built written wrote shown taken got gone went came made paid led left set put read run
""".split())
_PRONOUNS = frozenset({"i", "we", "you", "they", "he", "she", "it", "people", "users", "everyone"})
_DETERMINERS = frozenset("""
the a an its their our my your his her this that these those each every any some no
""".split())
_COUNTERS = frozenset({"number", "no", "nr", "num", "id", "#"})  # "rule number 3": the noun is "rule"


def _verb_form(token: str) -> bool:
    """A word in one of a verb's forms: the plain form, third person, past, or an irregular past."""
    if token in _VERBS or token in _IRREGULAR:
        return True
    for suffix, add in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("d", "")):
        if token.endswith(suffix) and token[: len(token) - len(suffix)] + add in _VERBS:
            return True
    return token.endswith("ed") and len(token) > 4 and token[-3] == token[-4] and token[:-3] in _VERBS  # shipped


def _participle(token: str) -> bool:
    return token in _IRREGULAR or (token.endswith(("ed", "en")) and len(token) >= 4)


def _plural_noun(token: str) -> bool:
    return token.endswith("s") and not token.endswith(("ss", "us", "is")) and token not in STOPWORDS


def main_verb(tokens: tuple[str, ...], kinds: tuple[str, ...]) -> int | None:
    """The index of the sentence's main verb (None when no word reads as one)."""
    plural = False  # a plural noun came first: "entries expire", "release notes for Atlas v3 live"
    for i in range(1, len(tokens)):
        token, before = tokens[i], tokens[i - 1]
        plural = plural or _plural_noun(before)
        if kinds[i] in _IDENTIFYING and kinds[i] != LEADING:
            continue
        if token in _AUXILIARIES:
            return i
        if before in _DETERMINERS or not _verb_form(token):
            continue
        if token not in _VERBS or before in _PRONOUNS or plural:
            return i
    return None


def subject_span(tokens: tuple[str, ...], kinds: tuple[str, ...], label: int = 0) -> tuple[int, int]:
    """[start, end) of the tokens naming what the sentence is about: before its main verb; with no verb,
    its label (the ``label`` tokens before a colon or dash: "Customer 1042: gold plan"); else (0, 0)."""
    verb = main_verb(tokens, kinds)
    if verb is None:
        return (0, label)
    if tokens[verb] in _BE and verb + 2 < len(tokens) and _participle(tokens[verb + 1]) \
            and "by" in tokens[verb + 2:]:
        start = tokens.index("by", verb + 2) + 1  # "Python 3.11 is used by service A": about service A
        return (start, len(tokens))
    return (0, verb)


@dataclass(frozen=True, slots=True)
class Judgement:
    """What two statements differ in: identifiers naming different things, or values of one thing."""

    distinct: tuple[str, str, str] | None = None  # (what they name, older's identifier, newer's)
    values: tuple[tuple[str, str], ...] = ()  # (older's value, newer's) of one subject

    def reason(self) -> str:
        """Why, in a person's words: "distinct: they name different customers (1042, 2077)" or
        "same subject, other value (5432 -> 5433)"; "" when neither."""
        if self.distinct is not None:
            noun, a, b = self.distinct
            return f"distinct: they name different {noun} ({a}, {b})"
        if self.values:
            return "same subject, other value (" + ", ".join(f"{a} -> {b}" for a, b in self.values) + ")"
        return ""


def plural(noun: str) -> str:
    """An English noun's plural by its ending ("customer" -> "customers", "rack" -> "racks", "policy" -> "policies")."""
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


_DAY = lazy_pattern(r"\d{4}-\d\d-\d\d")


def _named(tokens: tuple[str, ...], kinds: tuple[str, ...], start: int, end: int, subject_end: int) -> str:
    """What the identifier at ``start:end`` names, in the plural: a version ("Python 3.11", not "room 4.12"),
    else the plain noun right before it ("customer 1042", "rule number 3") or after it in the subject ("the 2026-03-01
    release"), else a host or a path by its form; "subjects" when nothing says ("Alice owns ...")."""
    token = tokens[start]
    i = start - 1
    while i >= 0 and tokens[i] in _COUNTERS:
        i -= 1
    if kinds[start] == NUMBER_KIND and "." in token:  # "Python 3.11", unless a plain word names it ("room 4.12")
        return plural(tokens[i]) if i >= 0 and kinds[i] == WORD and tokens[i] not in STOPWORDS \
            and tokens[i].isalpha() else "versions"
    for j in (i, end if end < subject_end else -1):
        if j >= 0 and kinds[j] in (LEADING, WORD) and tokens[j] not in STOPWORDS and tokens[j].isalpha():
            return plural(tokens[j])
    if _DAY.fullmatch(token):
        return "dates"
    if "/" in token:
        return "paths"
    if "." in token and kinds[start] in (REFERENCE, IDENTIFIER):
        return "hosts"
    return "subjects"


def _holds_identifier(statement: Statement, start: int, end: int) -> bool:
    """A number, a code, a reference, a quoted string or a name inside the sentence (a capital letter
    alone, "service A", included) among the tokens ``start:end``."""
    return any((kind in _IDENTIFYING and kind != LEADING) or (len(raw) == 1 and raw.isupper())
               for kind, raw in zip(statement.kinds[start:end], statement.raw[start:end], strict=True))


def _leading_names(a: Statement, b: Statement, i1: int, i2: int, j1: int, j2: int) -> bool:
    """Both sides are capitalised words opening the sentence ("Alice" / "Bob"; not "Do not" / "Don't")."""
    kinds = a.kinds[i1:i2] + b.kinds[j1:j2]
    return (i2 > i1 and j2 > j1 and set(kinds) <= {LEADING, NAME}
            and not any("'" in t for t in a.tokens[i1:i2] + b.tokens[j1:j2]))


def _plain(statement: Statement, start: int, end: int) -> bool:
    return end > start and all(kind in (WORD, LEADING) and token not in STOPWORDS and token.isalpha()
                               for kind, token in zip(statement.kinds[start:end], statement.tokens[start:end],
                                                      strict=True))


def _other_thing(a: Statement, b: Statement, places: list[tuple[int, int, int, int]],
                 spans: tuple[tuple[int, int], tuple[int, int]], newer: frozenset[str]) -> tuple[str, str, str] | None:
    """In a short statement, plain words that name another thing: (what, a's words, b's words), or None.

    Only where every place that replaces words replaces plain words (a clause added elsewhere aside), and
    they stand in the subject ("the payments service" / "the billing service deploys on Fridays") or right
    after a determiner ("... for the client cache" / "... for the account gateway"), where a noun stands; a
    verb or an adverb that differs is rewording ("prefers" / "likes")."""
    replaced = [p for p in places if p[0] < p[1] and p[2] < p[3]]
    # A plain word on each side: a replaced place may run on into an added clause ("client cache" /
    # "account gateway, except during load tests") or hold a function word ("the preview cluster" / "staging").
    if not replaced or not all(any(_plain(a, i, i + 1) for i in range(i1, i2)) and
                               any(_plain(b, j, j + 1) for j in range(j1, j2)) for i1, i2, j1, j2 in replaced):
        return None
    for i1, i2, j1, j2 in replaced:
        if _switched(a, i1, i2, newer):
            return None
        in_subject = spans[0][0] <= i1 < spans[0][1] and spans[1][0] <= j1 < spans[1][1]
        if in_subject or (i1 > 0 and a.tokens[i1 - 1] in _DETERMINERS):
            head = spans[0][1] - 1  # the subject's last word: its noun ("the old deploy script")
            noun = plural(a.tokens[head]) if in_subject and head >= i2 and _plain(a, head, head + 1) else "things"
            return (noun, _shown(a, i1, i2), _shown(b, j1, j2))
    return None


_NUMBERED = frozenset({NUMBER_KIND, IDENTIFIER})


def _other_numbered_subject(a: Statement, b: Statement) -> tuple[str, str, str] | None:
    """Two sentences whose subjects are the same words around one number or code that differs ("Customer
    3150" / "Customer 2077", "rack 3" / "rack 4"): (what they name, a's identifier, b's), whatever the
    rest says; None otherwise (no subject found, no such identifier, or other words in the subject)."""
    spans = subject_span(a.tokens, a.kinds, a.label), subject_span(b.tokens, b.kinds, b.label)
    numbered = [[i for i in range(start, end) if statement.kinds[i] in _NUMBERED]
                for statement, (start, end) in zip((a, b), spans, strict=True)]
    if any(len(found) != 1 for found in numbered):
        return None
    (at_a,), (at_b,) = numbered
    rest = [[t for i, t in enumerate(statement.tokens[start:end], start) if i != at and t not in STOPWORDS]
            for statement, (start, end), at in zip((a, b), spans, (at_a, at_b), strict=True)]
    if not rest[0] or rest[0] != rest[1] or a.tokens[at_a] == b.tokens[at_b]:
        return None
    return (_named(a.tokens, a.kinds, at_a, at_a + 1, spans[0][1]), a.raw[at_a], b.raw[at_b])


def _shown(statement: Statement, start: int, end: int) -> str:
    """The words ``start:end`` as written, at most three (a place may run on into an added clause)."""
    words = statement.raw[start:end]
    return " ".join(words) if len(words) <= 3 else " ".join(words[:3]) + " …"


def _said(statement: Statement, start: int, end: int) -> list[str]:
    """The words of ``start:end`` that could name something: neither stopwords nor update markers."""
    return [t for t in statement.tokens[start:end] if t not in STOPWORDS and t not in UPDATE_MARKERS]


def _said_as_written(statement: Statement, start: int, end: int) -> str:
    return " ".join(raw for raw, token in zip(statement.raw[start:end], statement.tokens[start:end], strict=True)
                    if token not in STOPWORDS and token not in UPDATE_MARKERS)


def _switched(a: Statement, i1: int, i2: int, newer: frozenset[str]) -> bool:
    """Whether the newer text (``newer``: its tokens) still names what the older sentence had at this place:
    "redis handles sessions" / "valkey now handles sessions instead of redis" is a switch of one subject, not
    another thing (a title that leaves "instead of redis" out included)."""
    named = [token for token in a.tokens[i1:i2] if token not in STOPWORDS]
    return bool(named) and all(token in newer for token in named)


@lru_cache(maxsize=65536)  # a memory is compared with each of its neighbours
def _statements(text: str) -> tuple[Statement, ...]:
    """The distinct sentences of ``text`` (a title restated by the body counted once), read for comparison."""
    seen: dict[tuple[str, ...], Statement] = {}
    for part in _SENTENCE.split(text):
        statement = statement_of(part.strip())
        if statement.tokens and statement.tokens not in seen:
            seen[statement.tokens] = statement
    return tuple(seen.values())


def _dice(a: set[str], b: set[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


def compare_texts(older: str, newer: str) -> Judgement:
    """How the statements of ``newer`` differ from the ones of ``older`` they restate (see the module)."""
    old, fresh = _statements(older), _statements(newer)
    old_sets = [set(s.tokens) for s in old]
    old_seen = {s.tokens for s in old}
    values: list[tuple[str, str]] = []
    renamed_only: list[tuple[Statement, Statement, int, int, int, int]] = []  # sentences differing in a name
    changed = [s for s in fresh if s.tokens not in old_seen]
    newer_tokens = frozenset(t for s in fresh for t in s.tokens)
    short = sum(len(s.tokens) for s in old) <= _SHORT and sum(len(s.tokens) for s in fresh) <= _SHORT
    for new in changed if old else []:
        score, index = max((_dice(set(new.tokens), words), n) for n, words in enumerate(old_sets))
        if score < _COUNTERPART:
            # Told in other words, but about another thing of one kind: "Customer 3150 is on the Pro plan" /
            # "Customer 2077 moved to the Enterprise plan".  Short texts only: one fact each, so the two
            # sentences are what the texts say (in a longer one, "Step 3 uploads ..." may be a step added).
            other = _other_numbered_subject(old[index], new) if short else None
            if other is not None:
                return Judgement(distinct=other)
            continue
        counterpart = old[index]
        spans = (subject_span(counterpart.tokens, counterpart.kinds, counterpart.label),
                 subject_span(new.tokens, new.kinds, new.label))
        matcher = SequenceMatcher(None, counterpart.tokens, new.tokens, autojunk=False)
        places = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
        # A place holds an identifier when both sides do ("year" / "twelve months" is rewording).
        identifying = [_holds_identifier(counterpart, i1, i2) and _holds_identifier(new, j1, j2)
                       for i1, i2, j1, j2 in places]
        if len(places) == 1 and not identifying[0] and _leading_names(counterpart, new, *places[0]):
            renamed_only.append((counterpart, new, *places[0]))
        if not any(identifying):
            if short:
                other = _other_thing(counterpart, new, places, spans, newer_tokens)
                if other is not None:
                    return Judgement(distinct=other)
            continue  # plain words reworded
        # Besides its values, one plain word of the subject differs: "the billing service listens on port
        # 8080" / "the search service ... 9090" name two services; so do "our staging database runs on port
        # 6543" / "the staging cache now runs on port 6380" (a determiner that differs, or a "now" the newer
        # one adds, is no word of what they name).
        plain = [p for p, named in zip(places, identifying, strict=True)
                 if not named and (_said(counterpart, p[0], p[1]) or _said(new, p[2], p[3]))]
        renamed = len(plain) == 1 and len(_said(counterpart, plain[0][0], plain[0][1])) == 1 \
            and len(_said(new, plain[0][2], plain[0][3])) == 1
        for (i1, i2, j1, j2), named in zip(places, identifying, strict=True):
            if (not named and (not renamed or (i1, i2, j1, j2) not in plain)) or \
                    _switched(counterpart, i1, i2, newer_tokens):
                continue
            a, b = " ".join(counterpart.raw[i1:i2]), " ".join(new.raw[j1:j2])
            if not named:  # the word that names something, without a "now" beside it
                a, b = _said_as_written(counterpart, i1, i2), _said_as_written(new, j1, j2)
            if i1 < i2 and j1 < j2 and (spans[0][0] <= i1 < spans[0][1] or spans[1][0] <= j1 < spans[1][1]):
                noun = _named(counterpart.tokens, counterpart.kinds, i1, i2, max(spans[0][1], i2)) if named else \
                    plural(counterpart.tokens[i2]) if i2 < spans[0][1] else "subjects"
                return Judgement(distinct=(noun, a, b))
            if named and (a, b) not in values:
                values.append((a, b))
    if short and len(renamed_only) == 1 and len(changed) == 1 and len(old) == len(fresh):
        # Only the capitalised words opening the one sentence of a short text that differs: "Alice owns
        # checkout" / "Bob owns checkout".  In longer texts such a word is as often rewording ("Each" / "Every",
        # the one word a copy of a long note changed).
        counterpart, new, i1, i2, j1, j2 = renamed_only[0]
        start, end = subject_span(counterpart.tokens, counterpart.kinds, counterpart.label)
        if start <= i1 < end:
            return Judgement(distinct=("subjects", " ".join(counterpart.raw[i1:i2]), " ".join(new.raw[j1:j2])))
    return Judgement(values=tuple(values))
