"""How much a word says, read from the language rather than from the vault.

A search's relevance decision weighs the query's words by how rare they are (a word most texts
use says little about what the query is after; a name or an identifier says most).  Read from the
vault itself, rarity is degenerate while the vault is small: in a vault of one memory every word
of that memory is "in every memory" and weighs nothing, so the verdict for a (query, memory) pair
changed when an unrelated memory was added.  Here rarity comes from English at large, so it is the
same in a vault of one memory and of ten thousand.

The source is the embedding model's own WordPiece vocabulary (``index/assets/tokenizer.json``,
shipped with memvault): after its special tokens and single characters, BERT's vocabulary lists
whole words in the order of their frequency in the corpus it was built from (English Wikipedia and
books: "the", "of", "and", "in", ...).  By Zipf's law a word's frequency falls as one over its
rank, so a word at rank ``r`` turns up in about ``k / r`` of memory-sized texts, and its inverse
document frequency is ``log(r / k)`` (``k`` = :data:`SHARE_SCALE`).  A word the vocabulary has no
whole entry for (an identifier, a tool's name, a number, a word in another language) is rarer than
every word it lists and weighs most.  Plural and inflected forms are looked up as written and then
by their stem, so "tests" and "test" weigh about the same.
"""

from __future__ import annotations

import bisect
import json
import math
from functools import lru_cache
from pathlib import Path

VOCABULARY = Path(__file__).resolve().parent.parent / "index" / "assets" / "tokenizer.json"
FIRST_WORD = "the"  # the vocabulary's most frequent whole word: ranks count from it
# A word at rank r is in about SHARE_SCALE / r of memory-sized texts (a few dozen words each, with
# Zipf's law's 0.1 / r share of running words): log(r / SHARE_SCALE) is its inverse document frequency.
SHARE_SCALE = 3.0
MIN_STEM = 4  # a shorter stem is another word ("AWS" stems to "aw"), not a form of this one


@lru_cache(maxsize=1)
def _ranks() -> dict[str, int]:
    """Whole word -> its frequency rank (1 for "the"), from the model's vocabulary."""
    vocab: dict[str, int] = json.loads(VOCABULARY.read_text(encoding="utf-8"))["model"]["vocab"]
    first = vocab[FIRST_WORD]
    return {word: token - first + 1 for word, token in vocab.items()
            if token >= first and word.isalpha() and not word.startswith("##")}


def prepare() -> None:
    """Read the vocabulary now (once per process), before a search needs it: a cold search calls
    this before its query is embedded, so when a child embeds it (:mod:`~vault_engine.index.prefetch`)
    the read overlaps the wait."""
    _ranks()


@lru_cache(maxsize=1)
def unknown_rank() -> int:
    """The rank given to a word the vocabulary does not list whole: past every word it lists."""
    return 2 * max(_ranks().values())


def rank(word: str, stem: str | None = None) -> int:
    """``word``'s frequency rank in English (case-folded; by ``stem`` when the word itself is not listed
    and the stem is long enough to be a form of it)."""
    ranks = _ranks()
    folded = word.casefold()
    found = ranks.get(folded)
    if found is None and stem and len(stem) >= MIN_STEM:
        found = ranks.get(stem.casefold())
    return found if found is not None else unknown_rank()


@lru_cache(maxsize=1)
def _sorted_words() -> list[str]:
    return sorted(_ranks())


def abbreviates(word: str) -> bool:
    """Whether ``word`` (one the vocabulary does not list) starts a word it lists: "prod" of
    "production", "repo" of "repository", "config" of "configuration"; a name or an id ("pnpm",
    "globex") starts none."""
    folded = word.casefold()
    if len(folded) < MIN_STEM - 1:
        return False
    words = _sorted_words()
    at = bisect.bisect_left(words, folded)
    return at < len(words) and words[at].startswith(folded) and words[at] != folded


def weight(word: str, stem: str | None = None) -> float:
    """``word``'s inverse document frequency in English: log(rank / SHARE_SCALE), never below 0."""
    return max(0.0, math.log(rank(word, stem) / SHARE_SCALE))


def rarest() -> float:
    """The weight of a word the vocabulary does not list (the most a word weighs)."""
    return math.log(unknown_rank() / SHARE_SCALE)
