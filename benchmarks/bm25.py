"""A plain BM25 baseline, as the benchmark papers run it: Okapi BM25 over lower-case alphanumeric
tokens with a small stopword list (``rank_bm25.BM25Okapi``'s formula and defaults: k1 1.5, b 0.75,
a negative IDF raised to a quarter of the mean IDF), documents ranked by score, ties by position."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset("""
a an and are as at be but by did do does for from had has have he her his how i in is it its me my of on or our
she so that the their them they this to was we were what when where which who why will with you your
""".split())
K1 = 1.5
B = 0.75
EPSILON = 0.25


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class Bm25:
    """One corpus, scored for any query."""

    def __init__(self, documents: Sequence[str]):
        self.docs = [Counter(tokens(d)) for d in documents]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = sum(self.lengths) / max(1, len(self.docs))
        frequency: Counter[str] = Counter()
        for doc in self.docs:
            frequency.update(doc.keys())
        n = len(self.docs)
        idf = {word: math.log(n - f + 0.5) - math.log(f + 0.5) for word, f in frequency.items()}
        floor = EPSILON * (sum(idf.values()) / len(idf)) if idf else 0.0
        self.idf = {word: value if value >= 0 else floor for word, value in idf.items()}

    def scores(self, query: str) -> list[float]:
        words = tokens(query)
        out = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            norm = K1 * (1 - B + B * length / self.average) if self.average else K1
            out.append(sum(self.idf.get(w, 0.0) * doc[w] * (K1 + 1) / (doc[w] + norm) for w in words if doc[w]))
        return out

    def ranking(self, query: str) -> list[int]:
        """Document positions, best first."""
        scores = self.scores(query)
        return sorted(range(len(scores)), key=lambda i: (-scores[i], i))
