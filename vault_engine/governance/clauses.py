"""What a merge keeps of the memory it absorbs: every clause the survivor does not already say.

A near-duplicate is close, not equal.  "Staging uses the small instance
size" absorbing "Staging uses the small instance size, except during load
tests when it must use xlarge" would keep the rule and lose its exception,
and the absorbed file leaves with the trash after ``vault.trash_days``.  So
the survivor's text becomes the union of the two, decided offline and
deterministically by the *content words* (words outside the stopword list,
numbers included) each text has:

- nothing to add: every content word of the absorbed text is in the
  survivor's title, summary or body (a copy, a shorter version), or a
  sentence adds one plain word only ("using" for "with": rewording);
- **the longer text**: the absorbed body says the survivor's body word for
  word, in order, and more (the rule and then its exception, ", always"):
  it becomes the survivor's body;
- **appended**: otherwise each sentence of the absorbed text that adds two
  content words or more, or a number or code ("Ask Ana before a Friday
  deploy", "up to 5 times"), is added in its order as a last paragraph of
  the survivor's body.  A heavy paraphrase adds its reworded sentences: what
  a person might search for stays findable.

Either way the survivor's file holds what both said for as long as it lives,
and search for a word only the absorbed text had finds the survivor.  The
merge action records the body's before and after value, so a rollback
restores both files as they were.
"""

from __future__ import annotations

from ..format.memory import Memory, normalize_text, split_detail
from ..format.text import STOPWORDS
from ..patterns import lazy_pattern
from .similarity import words

_SENTENCE = lazy_pattern(r"(?<=[.!?])\s+|\n+")
_WORD = lazy_pattern(r"\w+")


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say something (case folded, stopwords aside, numbers kept)."""
    return {w for w in words(text) if w not in STOPWORDS}


def _in_order(text: str) -> list[str]:
    return [w for w in _WORD.findall(normalize_text(text)) if w not in STOPWORDS]


def _says_in_order(longer: str, shorter: str) -> bool:
    """Whether the content words of ``shorter`` appear in ``longer`` in the same order."""
    remaining = iter(_in_order(longer))
    return all(word in remaining for word in _in_order(shorter))


def _adds(new: set[str]) -> bool:
    """Whether words a sentence adds say something new: two or more, or a number or code."""
    return len(new) >= 2 or any(any(c.isdigit() for c in w) for w in new)


def _said(memory: Memory) -> str:
    return f"{memory.title}\n{memory.summary or ''}\n{split_detail(memory.body)[0]}"


def missing_sentences(survivor: Memory, absorbed: Memory) -> list[str]:
    """The sentences of ``absorbed`` (its title, then its body) with a content word ``survivor`` lacks."""
    known = content_words(_said(survivor))
    out: list[str] = []
    for part in _SENTENCE.split(f"{absorbed.title}\n{split_detail(absorbed.body)[0]}"):
        sentence = part.strip()
        if sentence and _adds(content_words(sentence) - known) and sentence not in out:
            known |= content_words(sentence)  # the title restated by the body adds nothing twice
            out.append(sentence)
    return out


def united_text(survivor: Memory, absorbed: Memory) -> tuple[dict[str, str], str] | None:
    """(the survivor's new body, and summary when that changes too; how: "the longer text" or "N sentences
    appended") once ``absorbed`` is merged into it; None when the survivor already says all the absorbed says.

    The longer text brings its summary along when that too says the survivor's summary and more (a summary
    written from the shorter body would go on showing only the rule in search results)."""
    own, theirs = split_detail(survivor.body)[0].strip(), split_detail(absorbed.body)[0].strip()
    if content_words(theirs) - content_words(_said(survivor)) and _says_in_order(theirs, own):
        fields = {"body": theirs + "\n"}
        if absorbed.summary and survivor.summary != absorbed.summary and \
                _says_in_order(absorbed.summary, survivor.summary or ""):
            fields["summary"] = absorbed.summary
        return fields, "the longer text"
    missing = missing_sentences(survivor, absorbed)
    if not missing:
        return None
    appended = " ".join(s if s[-1] in ".!?;:" else s + "." for s in missing)
    count = f"{len(missing)} sentence{'s' if len(missing) > 1 else ''}"
    return {"body": f"{own}\n\n{appended}\n" if own else appended + "\n"}, f"{count} appended"
