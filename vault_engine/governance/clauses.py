"""What a merge keeps of the memory it absorbs: every clause the survivor does not already say.

A near-duplicate is close, not equal.  "Staging uses the small instance
size" absorbing "Staging uses the small instance size, except during load
tests when it must use xlarge" would keep the rule and lose its exception,
and the absorbed file leaves with the trash after ``vault.trash_days``.  So
the survivor's text becomes the union of the two, decided offline and
deterministically by the *content words* (words outside the stopword list,
numbers included) each text has:

- nothing to add: every content word of the absorbed text is in the
  survivor's title, summary or body (a copy, a shorter version);
- **the longer text**: the absorbed body has every content word of the
  survivor's and more (the rule and its exception): it becomes the
  survivor's body;
- **appended**: otherwise each sentence of the absorbed text with a content
  word the survivor lacks is added, in its order, as a last paragraph of the
  survivor's body ("always use make deploy").  A paraphrase adds its
  reworded sentences: what a person might search for stays findable.

Either way the survivor's file holds what both said for as long as it lives,
and search for a word only the absorbed text had finds the survivor.  The
merge action records the body's before and after value, so a rollback
restores both files as they were.
"""

from __future__ import annotations

import re

from ..format.memory import Memory, split_detail
from ..index.fulltext import STOPWORDS
from .similarity import words

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say something (case folded, stopwords aside, numbers kept)."""
    return {w for w in words(text) if w not in STOPWORDS}


def _said(memory: Memory) -> str:
    return f"{memory.title}\n{memory.summary or ''}\n{split_detail(memory.body)[0]}"


def missing_sentences(survivor: Memory, absorbed: Memory) -> list[str]:
    """The sentences of ``absorbed`` (its title, then its body) with a content word ``survivor`` lacks."""
    known = content_words(_said(survivor))
    out: list[str] = []
    for part in _SENTENCE.split(f"{absorbed.title}\n{split_detail(absorbed.body)[0]}"):
        sentence = part.strip()
        if sentence and content_words(sentence) - known and sentence not in out:
            known |= content_words(sentence)  # the title restated by the body adds nothing twice
            out.append(sentence)
    return out


def united_body(survivor: Memory, absorbed: Memory) -> tuple[str, str] | None:
    """(the survivor's new body, how it was made: "the longer text" or "N sentences appended") once
    ``absorbed`` is merged into it; None when the survivor already says everything the absorbed one does."""
    missing = missing_sentences(survivor, absorbed)
    if not missing:
        return None
    own, theirs = split_detail(survivor.body)[0].strip(), split_detail(absorbed.body)[0].strip()
    if content_words(_said(survivor)) <= content_words(theirs) and len(theirs) > len(own):
        return theirs + "\n", "the longer text"
    appended = " ".join(s if s[-1] in ".!?;:" else s + "." for s in missing)
    count = f"{len(missing)} sentence{'s' if len(missing) > 1 else ''}"
    return (f"{own}\n\n{appended}\n" if own else appended + "\n"), f"{count} appended"
