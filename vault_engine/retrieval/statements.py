"""What a memory states, as two of them are compared: its words, the values it names, its negations.

A *value* is what makes one statement about the same thing differ from another: a number (with
its unit word, "600 seconds"; a number word, "three", counts as its digits), a version, a date,
a path, an address, an identifier (``make_user_3``, ``Alice1``, ``E1102``), a quoted string, a
capitalised name.  Texts are compared case- and punctuation-blind.

- :func:`same_statement`: two texts state the same thing (true duplicates, fit to fold into
  one hit): the same values and names, the same negations and, unless their texts are already
  known equal, nearly the same words (stemmed, function words aside): one says every word the
  other says, and at most a few more.
- :func:`differing_values`: two texts state the same thing except for their values (a
  conflict, "the TTL is 600 seconds" and "the TTL is 3600 seconds"): aligned word by word, they
  agree on at least two in three words, and every place they differ holds a value on both
  sides.  Where an identifier differs, they are about different things (``make_user_1`` and
  ``make_user_2``), not in conflict.

Governance reads the same number and negation patterns when it judges contradictions.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from ..format.text import STOPWORDS
from ..patterns import lazy_pattern
from .rerank import stems

NEGATION = lazy_pattern(
    r"\b(?:not|no|never|none|nothing|neither|nor|cannot|\w+n't|without|stopped|disabled|deprecated|dropped|"
    r"abandoned|avoids?|avoided|avoiding|lacks?|lacking|refrain|refrains)\b",
    re.I,
)
NUMBER = lazy_pattern(r"\d+(?:[.,:]\d+)*")
SAME_WORDS = 0.8  # a reworded text is the same statement when this share of the words (Dice) is shared
# Two texts differ only in values when they agree on at least two in three of their words, in order.
SHARED_IN_ORDER = (2, 3)

# Words joined by inner punctuation stay one token: 3.6, v1.2.3, 2024-05-01, tests/factories.py,
# alice@example.com, make_user_3, don't; a comma joins digits only (1,000).
_TOKEN = lazy_pattern(r"\w+(?:(?:[./:@+'-]|(?<=\d),(?=\d))\w+)*")
_QUOTED = lazy_pattern(r"\"[^\"\n]{1,120}\"|“[^”\n]{1,120}”|`[^`\n]{1,120}`|(?<!\w)'[^'\n]{1,120}'(?!\w)")
# 600, 1,000, 3.11, 2024-05-01, 600s, 10ms, v2.1
_QUANTITY = lazy_pattern(rf"(?:{NUMBER.pattern})(?:[/-]\d+)*(?:[a-z]{{1,3}})?|v(?:{NUMBER.pattern})", re.I)
_ABBREVIATION = lazy_pattern(r"(?:\w\.)+\w", re.I)  # e.g, i.e
_SENTENCE_GAP = lazy_pattern(r"[.!?:;\n]")
# What ends a label: a colon, or a dash set off by spaces ("Customer 1042: ...", "Server 3 - ...").
_LABEL_END = lazy_pattern(r":(?=\s)|\s[-\u2013\u2014]\s")
_NUMBER_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
                 "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12"}
# Token kinds.  Values of these kinds may conflict; identifiers name different things instead.
NUMBER_KIND, QUOTED, REFERENCE, NAME, IDENTIFIER = "number", "quoted", "reference", "name", "identifier"
WORD, LEADING = "word", "leading"  # a plain word; a capitalised word opening a sentence (maybe a name)
CONFLICTING = frozenset({NUMBER_KIND, QUOTED, REFERENCE, NAME})
_VALUE_KINDS = frozenset({NUMBER_KIND, QUOTED, REFERENCE, IDENTIFIER})


@dataclass(frozen=True, slots=True)
class Statement:
    """One text read for comparison."""

    tokens: tuple[str, ...]  # case folded, in order
    raw: tuple[str, ...]  # as written, for showing a value
    kinds: tuple[str, ...]
    values: frozenset[str]  # numbers, quoted strings, references and identifiers, normalised
    names: frozenset[str]  # the stems of capitalised words
    words: frozenset[str]  # the stems of every word that is not a value or a function word
    negations: frozenset[str]
    label: int = 0  # tokens before a label's colon or dash ("Customer 1042: gold plan"); 0: no label


def _kind(folded: str, raw: str, quoted: bool, leading: bool) -> str:
    """What a token is (see the kinds above): ``folded`` is ``raw`` case folded."""
    if folded in _NUMBER_WORDS:
        return NUMBER_KIND
    # Most tokens are letters only: no quantity, reference or identifier, so none of these tests.
    if not folded.isalpha():
        kind = _symbolic_kind(folded)
        if kind is not None:
            return kind
    if quoted:
        return QUOTED
    if raw[:1].isupper() and folded not in STOPWORDS:
        return LEADING if leading else NAME
    return WORD


def _symbolic_kind(folded: str) -> str | None:
    """A number, a reference or an identifier, by the digits and signs in ``folded``; None: none of them."""
    if _QUANTITY.fullmatch(folded):
        return NUMBER_KIND
    if "/" in folded or "@" in folded:
        return REFERENCE
    if "_" in folded or any(c.isdigit() for c in folded):
        return IDENTIFIER
    if ("." in folded or ":" in folded) and not _ABBREVIATION.fullmatch(folded):
        return REFERENCE
    return None


def _canonical(token: str, kind: str) -> str:
    if kind == NUMBER_KIND:
        token = _NUMBER_WORDS.get(token, token)
        return re.sub(r"(?<=\d),(?=\d)", "", token)
    return token


@lru_cache(maxsize=65536)
def _stems(token: str) -> tuple[str, ...]:
    return tuple(stems(token))


@lru_cache(maxsize=8192)
def statement_of(text: str) -> Statement:
    """``text`` read for comparison (cached: a hit's text is read once per search, and again only when it changes)."""
    flat = unicodedata.normalize("NFKC", text).replace("’", "'")
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(flat)]
    tokens: list[str] = []
    raw: list[str] = []
    kinds: list[str] = []
    previous_end: int | None = None
    starts: list[int] = []
    for match in _TOKEN.finditer(flat):
        begin, end = match.span()
        starts.append(begin)
        written = match.group(0)
        folded = written.casefold()
        # A single space between two tokens is no sentence gap (the common case, without a search).
        leading = previous_end is None or (
            (begin - previous_end != 1 or flat[previous_end] != " ")
            and _SENTENCE_GAP.search(flat, previous_end, begin) is not None)
        inside = bool(quoted) and any(start < begin and end < stop for start, stop in quoted)
        tokens.append(folded)
        raw.append(written)
        kinds.append(_kind(folded, written, inside, leading))
        previous_end = end
    values = frozenset(_canonical(t, k) for t, k in zip(tokens, kinds, strict=True) if k in _VALUE_KINDS)
    names = frozenset(s for t, k in zip(tokens, kinds, strict=True) if k in (NAME, LEADING) for s in _stems(t))
    words = frozenset(s for t, k in zip(tokens, kinds, strict=True)
                      if k not in _VALUE_KINDS and t not in STOPWORDS for s in _stems(t))
    negations = frozenset(t for t in tokens if NEGATION.fullmatch(t))
    return Statement(tuple(tokens), tuple(raw), tuple(kinds), values, names, words, negations,
                     _label(flat, starts))


def _label(flat: str, starts: list[int]) -> int:
    """How many of the tokens (starting at ``starts``) come before the first label end of ``flat``; 0 when
    none does, or when the label would be the whole text."""
    found = _LABEL_END.search(flat)
    if found is None:
        return 0
    count = sum(1 for start in starts if start < found.start())
    return count if 0 < count < len(starts) else 0


def overlap(a: Statement, b: Statement) -> float:
    """Dice overlap of the two texts' words (1.0 when neither has any)."""
    total = len(a.words) + len(b.words)
    return 2 * len(a.words & b.words) / total if total else 1.0


def same_statement(a: Statement, b: Statement, *, same_text: bool = False) -> bool:
    """Whether ``a`` and ``b`` state the same thing with the same values.

    ``same_text``: their main texts are known to be equal once normalised (the same digest);
    the rest (a title, a trigger) must still name the same values, but may be worded otherwise.
    A name one side capitalises counts as present when the other side has the word at all.
    """
    if a.values != b.values or a.negations != b.negations:
        return False
    if not (a.names <= b.words and b.names <= a.words):
        return False
    if same_text:
        return True
    # Reworded: one says every word the other says, and little more ("tabs" for "spaces" is another statement).
    return (a.words <= b.words or b.words <= a.words) and overlap(a, b) >= SAME_WORDS


def differing_values(a: Statement, b: Statement) -> list[tuple[str, str]] | None:
    """The values ``a`` and ``b`` state differently, as (a's, b's) pairs, when that is all they differ in.

    None when the two are not the same statement with other values: they disagree on more than
    one word in three, a place where they differ holds no value on one side (or is an added or
    a dropped word), an identifier differs, or one negates what the other does not.
    """
    if a.negations != b.negations or not a.tokens or not b.tokens:
        return None
    matcher = SequenceMatcher(None, a.tokens, b.tokens, autojunk=False)
    shared = sum(block.size for block in matcher.get_matching_blocks())
    part, whole = SHARED_IN_ORDER
    if whole * shared < part * max(len(a.tokens), len(b.tokens)):
        return None
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        kinds_a, kinds_b = a.kinds[i1:i2], b.kinds[j1:j2]
        if tag != "replace" or IDENTIFIER in kinds_a or IDENTIFIER in kinds_b:
            return None
        if not CONFLICTING.intersection(kinds_a) or not CONFLICTING.intersection(kinds_b):
            return None
        pair = (_shown(a, i1, i2), _shown(b, j1, j2))
        if pair not in out:
            out.append(pair)
    return out or None


def _shown(statement: Statement, start: int, end: int) -> str:
    """The tokens ``start:end`` as written, with the unit word that follows a number ("600 seconds")."""
    words = list(statement.raw[start:end])
    if (statement.kinds[end - 1] == NUMBER_KIND and end < len(statement.tokens)
            and statement.kinds[end] == WORD and statement.tokens[end] not in STOPWORDS
            and statement.tokens[end].isalpha()):
        words.append(statement.raw[end])
    return " ".join(words)


def prefix_tokens(statement: Statement, rarity: dict[str, int]) -> list[tuple[str, int]]:
    """The rarest (token, occurrence) items a text must share with any text it can differ from
    only in values (see :func:`differing_values`): a text agreeing with it on two in three of
    its words shares one of these (prefix filtering, in the order ``rarity`` gives)."""
    seen: dict[str, int] = {}
    ranked = []  # (rarity, token, occurrence): sorted as the items by (rarity, item), with no key function
    for token in statement.tokens:
        seen[token] = occurrence = seen.get(token, 0) + 1
        ranked.append((rarity.get(token, 0), token, occurrence))
    ranked.sort()
    part, whole = SHARED_IN_ORDER
    needed = -(-len(ranked) * part // whole)  # at least this many shared
    return [(token, occurrence) for _rarity, token, occurrence in ranked[: len(ranked) - needed + 1]]
