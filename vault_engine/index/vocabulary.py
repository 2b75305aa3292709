"""The vault's vocabulary: one embedding per word the vault uses, for query expansion.

BM25 finds only the words a query spells out; a search for "martial arts"
misses the memory about kickboxing.  The vocabulary (``.memvault/vocabulary.sqlite``,
WAL mode, like the vector index) stores an embedding for every content word
that occurs in the vault, so a query word can be widened to the vault's own
words that mean nearly the same thing ("instruments" -> "clarinet", "violin").
Expansion draws only from words the vault contains: every added term can match.

The table only grows: a word that leaves the vault keeps its row, which costs
a little space and at worst an expansion term that matches nothing.  Lookup
loads all vectors once into a contiguous float32 matrix and scores every query
word against every term with a single matrix product.  That product is bound by
memory bandwidth, not arithmetic: it costs about 0.2 ms per 1,000 terms of 384
dimensions on the one BLAS thread the package allows (2 ms at 10,000 terms).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..errors import IndexStale
from ..format.text import STOPWORDS
from ..patterns import lazy_pattern
from .guard import ModelIndexDb, stale_on_error

SCHEMA_VERSION = "1"
MIN_LENGTH = 3
_BLOCK = 4096  # rows read from SQLite before they are copied into the matrix
PREFIX = 5  # terms sharing this many leading letters with a query word are its inflections: BM25 stems them
_WORD = lazy_pattern(r"[^\W\d_]+")

TABLE = "CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY, vec BLOB NOT NULL)"


def vocabulary_terms(text: str) -> set[str]:
    """The content words of ``text``: casefolded letters-only words of 3+ letters, stopwords dropped."""
    words = (match.casefold() for match in _WORD.findall(text))
    return {word for word in words if len(word) >= MIN_LENGTH and word not in STOPWORDS}


def _variant(term: str, word: str) -> bool:
    """Whether ``term`` looks like an inflection of ``word`` (or the word itself).

    They share their first five letters, or all the letters of the shorter one
    when either has fewer ("pet" / "pets", "instrument" / "instruments").
    """
    need = min(PREFIX, len(term), len(word))
    return term[:need] == word[:need]


@dataclass(frozen=True, slots=True)
class Expansion:
    term: str  # the vault term added to the query
    source: str  # the query word it stands in for
    similarity: float


class Vocabulary(ModelIndexDb):
    """Persistent word vectors of one vault for one embedding model."""

    what = "vocabulary"

    def __init__(self, path: Path, model: str, dim: int):
        super().__init__(path, [TABLE], SCHEMA_VERSION, model, dim)
        self._matrix: npt.NDArray[np.float32] | None = None
        self._terms: list[str] = []
        self._rank: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # each term's place in sorted order
        self._version = -1  # PRAGMA data_version when the matrix was loaded

    @stale_on_error("vocabulary")
    def missing(self, terms: Iterable[str]) -> list[str]:
        """The ``terms`` that have no stored vector yet, sorted."""
        wanted = sorted(set(terms))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ", ".join("?" * len(part))
            found.update(row[0] for row in self._db.execute(f"SELECT term FROM terms WHERE term IN ({marks})", part))
        return [term for term in wanted if term not in found]

    def add(self, terms: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Store (or replace) one vector per term, row ``i`` of ``vectors`` for ``terms[i]``, in one transaction."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape != (len(terms), self.dim):
            raise ValueError(f"expected a {len(terms)}x{self.dim} matrix for {len(terms)} terms, got {vectors.shape}")
        self._put([(term, vectors[n].tobytes()) for n, term in enumerate(terms)])

    @stale_on_error("vocabulary")
    def _put(self, rows: list[tuple[str, bytes]]) -> None:
        with self.writing():
            self._db.executemany("INSERT OR REPLACE INTO terms VALUES (?, ?)", rows)
        self._matrix = None

    @stale_on_error("vocabulary")
    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM terms").fetchone()[0])

    @stale_on_error("vocabulary")
    def clear(self) -> None:
        self._db.execute("DELETE FROM terms")
        self._matrix = None

    def invalidate(self) -> None:
        """Drop the in-memory matrix; the next :meth:`expand` reloads it."""
        self._matrix = None

    @stale_on_error("vocabulary")
    def _load(self) -> npt.NDArray[np.float32]:
        """All vectors as one contiguous ``dim x terms`` matrix (cached until the table changes)."""
        # Another process (a sync beside a server) may have added terms: SQLite's counter says so cheaply.
        version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        if self._matrix is not None and version == self._version:
            return self._matrix
        self._db.execute("BEGIN")  # one snapshot for the count and the rows
        try:
            count = int(self._db.execute("SELECT COUNT(*) FROM terms").fetchone()[0])
            # Terms are columns: for a handful of query rows, BLAS streams this layout fastest (the product
            # is memory-bound).  Filled through a small row buffer: one copy of the vectors in memory.
            matrix = np.empty((self.dim, count), dtype=np.float32)
            block = np.empty((min(count, _BLOCK), self.dim), dtype=np.float32)
            terms: list[str] = []
            width = self.dim * 4
            for n, (term, vec) in enumerate(self._db.execute("SELECT term, vec FROM terms ORDER BY rowid")):
                if n >= count or len(vec) != width:
                    raise IndexStale("vocabulary has a damaged row; it will be rebuilt", path=self.path)
                block[n % _BLOCK] = np.frombuffer(vec, dtype=np.float32)
                terms.append(str(term))
                if n % _BLOCK == _BLOCK - 1:
                    matrix[:, n + 1 - _BLOCK : n + 1] = block.T
            if len(terms) % _BLOCK:
                done = len(terms) - len(terms) % _BLOCK
                matrix[:, done : len(terms)] = block[: len(terms) - done].T
        finally:
            self._db.execute("COMMIT")
        rank = np.empty(len(terms), dtype=np.int64)
        rank[sorted(range(len(terms)), key=terms.__getitem__)] = np.arange(len(terms))
        self._matrix, self._terms, self._rank, self._version = matrix[:, : len(terms)], terms, rank, version
        return self._matrix

    def _ranked(self, line: npt.NDArray[np.float32], floor: float, want: int) -> Iterator[int]:
        """Rows of ``line`` scoring at least ``floor``, best first (ties by term), sorting only what is read."""
        candidates = np.flatnonzero(line >= floor)
        head = want * 4 + 32  # room for skipped variants; the rest is sorted only if the walk gets there
        if len(candidates) > head:
            values = line[candidates]
            cut = values[np.argpartition(-values, head - 1)[head - 1]]  # split by value: ties stay together
            first, rest = candidates[values >= cut], candidates[values < cut]
        else:
            first, rest = candidates, candidates[:0]
        for part in (first, rest):
            yield from part[np.lexsort((self._rank[part], -line[part]))].tolist()

    def expand(
        self,
        words: Sequence[str],
        vectors: npt.NDArray[np.float32],
        *,
        per_word: int = 3,
        min_similarity: float = 0.6,
        exclude: Collection[str] = (),
    ) -> list[Expansion]:
        """Vault terms that mean nearly what the query ``words`` mean (row ``i`` of ``vectors`` embeds ``words[i]``).

        Per word, the stored terms with cosine similarity at least ``min_similarity``,
        best first, at most ``per_word``; never the word itself, an inflection of
        it (or of any word of a phrase), of a term already taken for it, or a term
        in ``exclude``: BM25 stemming covers inflections.  A term found for two
        words is kept once, with its best similarity.  Ordered by similarity, then term.
        """
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape != (len(words), self.dim):
            raise ValueError(f"expected a {len(words)}x{self.dim} matrix for {len(words)} words, got {vectors.shape}")
        matrix = self._load()
        if not matrix.shape[1] or not len(words) or per_word <= 0:
            return []
        scores = vectors @ matrix  # (words, terms): every cosine in one product
        blocked = {term.casefold() for term in exclude}
        best: dict[str, Expansion] = {}
        for row, word in enumerate(words):
            parts = [part.casefold() for part in _WORD.findall(word)] or [word.casefold()]
            line = scores[row]
            taken: list[str] = []  # also skips inflections of a term already taken ("musician" after "musicians")
            for at in self._ranked(line, min_similarity, per_word):
                term = self._terms[at]
                folded = term.casefold()
                if folded in blocked or any(_variant(folded, other) for other in (*parts, *taken)):
                    continue
                found = Expansion(term, word, float(line[at]))
                if term not in best or found.similarity > best[term].similarity:
                    best[term] = found
                taken.append(folded)
                if len(taken) == per_word:
                    break
        return sorted(best.values(), key=lambda e: (-e.similarity, e.term))
