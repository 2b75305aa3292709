"""Words of the scripts written without spaces between them: overlapping character bigrams.

Chinese, Japanese, Thai (and Korean, whose spaces fall between phrases with their particles
attached) do not mark where a word ends, so the full-text index cannot split them at spaces:
"数据库备份每天凌晨两点在上海服务器上运行" would be one token that no query matches.  Each
*run* of such characters becomes its overlapping bigrams instead (数据 据库 库备 备份 ...), a
one-character run its character, as Lucene's ``CJKBigramFilter`` does; a query's runs become
bigrams the same way, so any two or more characters of a memory's text find it.  Text outside
the runs is left exactly as it is: a text with none of these characters is not changed at all.

The runs are made of the letters, digits and combining marks of Han (with 々 〆 〇),
Hiragana, Katakana (with ー), Hangul, Thai, Lao, Myanmar and Khmer; anything else (a space,
punctuation such as 。 or ・, a Latin letter, a digit 0-9) ends a run.  A combining mark
Tantivy does not count as part of a word (a Thai tone mark) splits the bigram it sits in, the
same way in a memory and in a query.

:func:`spaced` is the form words are read from (queries, the re-ranker's and the relevance
floor's words); :func:`indexed` is the form the index stores and tokenizes, the bigrams joined
by invisible characters so that :func:`readable` gives the original text back for snippets.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from ..patterns import lazy_pattern

# The scripts written without spaces between words, as code-point ranges; which of their
# characters are letters is decided by their Unicode category.
_BMP_SCRIPTS = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u3005-\u3007"  # 々 〆 〇
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended A
    "\uac00-\ud7ff"  # Hangul syllables, Jamo extended B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
)
_ASTRAL_SCRIPTS = "\U00020000-\U0003134f"  # CJK extensions B-H, compatibility supplement
_SPAN = lazy_pattern(f"[{_BMP_SCRIPTS}{_ASTRAL_SCRIPTS}]+")
# Looking for a character of these scripts in text that has none (nearly all English text) is
# the cost every text pays: the two halves apart are twice as fast as the whole class (Python's
# regular expressions look a character up in a table only when the class lies below U+10000).
_BMP = lazy_pattern(f"[{_BMP_SCRIPTS}]")
_ASTRAL = lazy_pattern(f"[{_ASTRAL_SCRIPTS}]")

# In the indexed form: a run's bigrams are joined by JOIN, the run is set off by EDGE; Tantivy
# splits words at both (neither is a letter), and :func:`readable` takes them out again.
JOIN = "\u2060"  # word joiner
EDGE = "\u200b"  # zero-width space
_UNJOIN = lazy_pattern(JOIN + ".", re.DOTALL)


def has_runs(text: str) -> bool:
    """Whether ``text`` holds a run: a letter or digit of a script written without spaces."""
    if not _may_have_runs(text):
        return False
    return any(True for match in _SPAN.finditer(text) for _run in runs(match.group()))


def _may_have_runs(text: str) -> bool:
    """Whether ``text`` has a character of these scripts (a letter or not)."""
    if text.isascii():
        return False
    if _BMP.search(text):
        return True
    # A character past U+FFFF takes two UTF-16 units: only then is the astral class looked for.
    return len(text.encode("utf-16-le", "surrogatepass")) > 2 * len(text) and _ASTRAL.search(text) is not None


def wholly_in_runs(text: str) -> bool:
    """Whether ``text`` has a run and no letter outside its runs (digits and punctuation aside):
    a query written in these scripts alone."""
    return has_runs(text) and not any(char.isalpha() for char in _SPAN.sub(" ", text))


def runs(span: str) -> Iterator[str]:
    """The runs of one stretch of these scripts: a letter or digit, then letters, digits and
    combining marks; punctuation and symbols end a run (a mark before any letter is no run)."""
    start = None
    for n, char in enumerate(span):
        kind = unicodedata.category(char)[0]
        if start is None and kind in "LN":
            start = n
        elif start is not None and kind not in "LNM":
            yield span[start:n]
            start = None
    if start is not None:
        yield span[start:]


def bigrams(run: str) -> list[str]:
    """A run's overlapping character bigrams; a one-character run is its character."""
    if len(run) < 2:
        return [run]
    return [run[n : n + 2] for n in range(len(run) - 1)]


def words(text: str, word: re.Pattern[str]) -> list[str]:
    """The words of ``text`` in order: ``word``'s matches outside the runs, each run's bigrams."""
    if not _may_have_runs(text):
        return word.findall(text)
    out: list[str] = []
    at = 0
    for match in _SPAN.finditer(text):
        out.extend(word.findall(text, at, match.start()))
        out.extend(gram for run in runs(match.group()) for gram in bigrams(run))
        at = match.end()
    out.extend(word.findall(text, at))
    return out


def spaced(text: str) -> str:
    """``text`` with each run replaced by its bigrams between spaces (the same text when it has none)."""
    if not has_runs(text):
        return text
    return _SPAN.sub(lambda m: _render(m.group(), " ", " "), text)


def indexed(text: str) -> str:
    """``text`` as the full-text index stores and tokenizes it: each run's bigrams joined by
    :data:`JOIN` and set off by :data:`EDGE`, so :func:`readable` gives ``text`` back."""
    if not has_runs(text):
        return text
    # The two invisible characters mean something here: ones the text held become spaces
    # (Tantivy splits words at them, so the words are the same).
    text = text.replace(JOIN, " ").replace(EDGE, " ")
    return _SPAN.sub(lambda m: _render(m.group(), JOIN, EDGE), text)


def _render(span: str, join: str, edge: str) -> str:
    """One stretch of these scripts with each run as its bigrams, joined by ``join`` and set off
    by ``edge``; what lies between the runs stays as it was."""
    out: list[str] = []
    at = 0
    for run in runs(span):
        start = span.index(run, at)
        out.append(span[at:start])
        out.append(edge + join.join(bigrams(run)) + edge)
        at = start + len(run)
    out.append(span[at:])
    return "".join(out)


def readable(text: str) -> str:
    """Indexed text (or any stretch of it that starts and ends at a word) as it was written."""
    if JOIN not in text and EDGE not in text:
        return text
    return _UNJOIN.sub("", text).replace(EDGE, "")
