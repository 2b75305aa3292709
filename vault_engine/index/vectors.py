"""The vector index: embeddings keyed by memory id, lane and chunk, with exact cosine search.

Vectors live in SQLite (``.memvault/vectors.sqlite``, WAL mode: crash-safe,
readers never blocked by the writer), each row tagged with the content hash
of the memory it was computed from, so sync re-embeds only what changed.
A memory whose text changed is first *queued* (the ``pending`` table: the
texts to embed and their fingerprint) and its old vectors dropped; the fill
(:mod:`.filling`) embeds the queue and settles each memory's rows and its
queue entry in one transaction.  Search loads every row once into one contiguous float32 matrix and scores a
query with a single matrix-vector product (:mod:`.matvec`: in two halves side by side for a large
vault); a memory's score in a lane is its best chunk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..errors import IndexStale
from . import matvec
from .guard import ModelIndexDb, stale_on_error

SCHEMA_VERSION = "2"
LANES = ("summary", "trigger", "body", "context", "sentence")


@dataclass(frozen=True, slots=True)
class VectorRow:
    lane: str
    chunk: int
    vector: npt.NDArray[np.float32]


TABLE = (
    "CREATE TABLE IF NOT EXISTS vectors (id TEXT NOT NULL, lane TEXT NOT NULL, chunk INTEGER NOT NULL,"
    " hash TEXT NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (id, lane, chunk))"
)
# Added beside the vectors without a new schema version: an older engine ignores it (and the
# memories it lists have no vectors, which that engine's next full sync repairs).
QUEUE = "CREATE TABLE IF NOT EXISTS pending (id TEXT PRIMARY KEY, hash TEXT NOT NULL, texts TEXT NOT NULL)"


@dataclass(frozen=True, slots=True)
class Pending:
    """A memory waiting for its vectors: the fingerprint and the (lane, chunk, text) to embed."""

    id: str
    hash: str
    texts: tuple[tuple[str, int, str], ...]


class VectorStore(ModelIndexDb):
    """Persistent vectors of one vault for one embedding model."""

    what = "vector index"

    def __init__(self, path: Path, model: str, dim: int):
        super().__init__(path, [TABLE, QUEUE], SCHEMA_VERSION, model, dim)
        self._matrix: npt.NDArray[np.float32] | None = None
        self._ids: list[str] = []
        self._row_id: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._index: dict[str, int] | None = None
        self._first_row: list[npt.NDArray[np.int64]] = []
        self._lane_bounds: list[tuple[int, int]] = []  # each lane's rows: one slice of the matrix

    @stale_on_error("vector index")
    def hashes(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        """The fingerprint of the texts each memory's vectors are (or, queued, will be) computed
        from (of ``ids``, or all)."""
        out: dict[str, str] = {}
        for table in ("vectors", "pending"):
            if ids is None:
                out.update(self._db.execute(f"SELECT DISTINCT id, hash FROM {table}").fetchall())
                continue
            wanted = list(ids)
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ", ".join("?" * len(part))
                out.update(self._db.execute(f"SELECT DISTINCT id, hash FROM {table} WHERE id IN ({marks})", part))
        return out

    @stale_on_error("vector index")
    def queue(self, items: Iterable[Pending], deleted: Iterable[str] = ()) -> None:
        """In one transaction: queue each memory's texts (its old vectors dropped: they no longer
        say what it says) and drop the vectors and queue entries of ``deleted``."""
        items = list(items)
        gone = [(memory_id,) for memory_id in deleted]
        if not items and not gone:
            return
        with self.writing():
            self._db.executemany("DELETE FROM vectors WHERE id = ?", [(item.id,) for item in items] + gone)
            self._db.executemany("DELETE FROM pending WHERE id = ?", gone)
            self._db.executemany("INSERT OR REPLACE INTO pending VALUES (?, ?, ?)", [
                (item.id, item.hash, json.dumps(item.texts, ensure_ascii=False)) for item in items])
        self._matrix = None

    @stale_on_error("vector index")
    def pending(self, limit: int | None = None) -> list[Pending]:
        """The queued memories in the order they were queued (at most ``limit``)."""
        rows = self._db.execute("SELECT id, hash, texts FROM pending ORDER BY rowid LIMIT ?",
                                (-1 if limit is None else limit,))
        return [Pending(memory_id, digest, tuple((str(lane), int(chunk), str(text))
                                                 for lane, chunk, text in json.loads(texts)))
                for memory_id, digest, texts in rows]

    @stale_on_error("vector index")
    def pending_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM pending").fetchone()[0])

    @stale_on_error("vector index")
    def memories(self) -> int:
        """How many memories have vectors."""
        return int(self._db.execute("SELECT COUNT(DISTINCT id) FROM vectors").fetchone()[0])

    @stale_on_error("vector index")
    def settle(self, items: Iterable[tuple[str, str, Sequence[VectorRow]]]) -> int:
        """Store the vectors of queued memories, each (id, fingerprint, rows) only while the queue
        still holds that fingerprint (a sync may have queued newer text meanwhile); in one
        transaction.  Returns how many were stored."""
        stored = 0
        with self.writing():
            for memory_id, digest, rows in items:
                if self._db.execute("SELECT 1 FROM pending WHERE id = ? AND hash = ?",
                                    (memory_id, digest)).fetchone() is None:
                    continue
                self._write(memory_id, digest, rows)
                self._db.execute("DELETE FROM pending WHERE id = ?", (memory_id,))
                stored += 1
        self._matrix = None
        return stored

    def _write(self, memory_id: str, digest: str, rows: Sequence[VectorRow]) -> None:
        self._db.execute("DELETE FROM vectors WHERE id = ?", (memory_id,))
        self._db.executemany(
            "INSERT INTO vectors VALUES (?, ?, ?, ?, ?)",
            [(memory_id, row.lane, row.chunk, digest, np.asarray(row.vector, dtype=np.float32).tobytes())
             for row in rows],
        )

    @stale_on_error("vector index")
    def put_many(self, items: Iterable[tuple[str, str, Sequence[VectorRow]]]) -> None:
        """Replace the vectors of each (id, content hash, rows) in one transaction."""
        with self.writing():
            for memory_id, digest, rows in items:
                self._write(memory_id, digest, rows)
                self._db.execute("DELETE FROM pending WHERE id = ?", (memory_id,))
        self._matrix = None

    @stale_on_error("vector index")
    def delete(self, ids: Iterable[str]) -> None:
        gone = [(i,) for i in ids]
        with self.writing():
            self._db.executemany("DELETE FROM vectors WHERE id = ?", gone)
            self._db.executemany("DELETE FROM pending WHERE id = ?", gone)
        self._matrix = None

    def clear(self) -> None:
        self._db.execute("DELETE FROM vectors")
        self._db.execute("DELETE FROM pending")
        self._matrix = None

    @stale_on_error("vector index")
    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    @stale_on_error("vector index")
    def _load(self) -> npt.NDArray[np.float32]:
        if self._matrix is not None:
            return self._matrix
        self._db.execute("BEGIN")  # one snapshot for the count and the rows
        try:
            return self._fill()
        finally:
            self._db.execute("COMMIT")

    def _fill(self) -> npt.NDArray[np.float32]:
        count = self.count()
        per_lane = {str(lane): int(n) for lane, n in self._db.execute(
            "SELECT lane, COUNT(*) FROM vectors GROUP BY lane")}
        if sum(per_lane.values()) != count:
            raise IndexStale("vector index changed while loading; it will be rebuilt", path=self.path)
        # Rows are laid out lane by lane (in LANES order, unknown lanes last), each lane in table
        # order: a lane is one contiguous slice, scanned alone without copying.
        bounds: list[tuple[int, int]] = []
        at = 0
        for lane in LANES:
            bounds.append((at, at + per_lane.get(lane, 0)))
            at += per_lane.get(lane, 0)
        ends = [end for _start, end in bounds] + [count]
        slots = [start for start, _end in bounds] + [at]
        # Filled row by row: one copy of the vectors in memory, however large the vault.
        matrix = np.empty((count, self.dim), dtype=np.float32)
        ids: list[str] = []
        index: dict[str, int] = {}
        row_id = np.empty(count, dtype=np.int32)
        lane_number = {lane: n for n, lane in enumerate(LANES)}
        for memory_id, lane, vec in (
            # Table order (rowid) is a sequential scan, 10-100x faster than the primary-key order;
            # put_many writes a memory's rows together and in chunk order, which is all search needs.
            self._db.execute("SELECT id, lane, vec FROM vectors ORDER BY rowid")
        ):
            number = lane_number.get(lane, -1)
            slot = slots[number]
            if slot >= ends[number]:
                raise IndexStale("vector index changed while loading; it will be rebuilt", path=self.path)
            slots[number] += 1
            matrix[slot] = np.frombuffer(vec, dtype=np.float32)
            if memory_id not in index:
                index[memory_id] = len(ids)
                ids.append(memory_id)
            row_id[slot] = index[memory_id]
        if slots != ends:
            raise IndexStale("vector index changed while loading; it will be rebuilt", path=self.path)
        self._matrix, self._ids, self._row_id = matrix, ids, row_id
        self._index = index
        self._lane_bounds = bounds
        self._first_row = []
        for start, end in bounds:
            first = np.full(len(ids), -1, dtype=np.int64)
            lane_rows = np.arange(start, end)
            # Each lane keeps table order (chunks ascending): the reverse assignment leaves each id's first row.
            first[row_id[lane_rows[::-1]]] = lane_rows[::-1]
            self._first_row.append(first)
        return matrix

    def invalidate(self) -> None:
        """Drop the in-memory matrix; the next search reloads it."""
        self._matrix = None
        self._index = None

    @stale_on_error("vector index")
    def ids(self) -> list[str]:
        """Stored memory ids in the order masks given to :meth:`search` follow."""
        self._load()
        return self._ids

    @stale_on_error("vector index")
    def has(self, memory_id: str) -> bool:
        """Whether ``memory_id`` has vectors."""
        self._load()
        return self._index is not None and memory_id in self._index

    @stale_on_error("vector index")
    def vector(self, memory_id: str, lane: str = "summary") -> npt.NDArray[np.float32] | None:
        """The first stored vector of ``memory_id`` in ``lane`` (None when absent)."""
        matrix = self._load()
        number = self._index.get(memory_id) if self._index is not None else None
        if number is None or lane not in LANES:
            return None
        row = int(self._first_row[LANES.index(lane)][number])
        return matrix[row] if row >= 0 else None

    @stale_on_error("vector index")
    def search(
        self,
        query: npt.NDArray[np.float32],
        limit: int,
        allowed: npt.NDArray[np.bool_] | None = None,
    ) -> dict[str, list[tuple[str, float]]]:
        """Per lane, the best ``limit`` memories by cosine similarity (best chunk per memory).

        ``allowed`` is a mask over :meth:`ids`: memories outside it are never returned.
        """
        matrix = self._load()
        out: dict[str, list[tuple[str, float]]] = {lane: [] for lane in LANES}
        if not len(matrix):
            return out
        scores = matvec.scores(matrix, np.asarray(query, dtype=np.float32))
        if allowed is not None:
            scores[~allowed[self._row_id]] = -np.inf
        for number, lane in enumerate(LANES):
            start, end = self._lane_bounds[number]
            if start == end:
                continue
            take = min(end - start, limit * (16 if lane == "sentence" else 4))
            lane_scores = scores[start:end]
            picked = (np.argpartition(-lane_scores, take - 1)[:take] if take < end - start
                      else np.arange(end - start))
            picked = picked[np.argsort(-lane_scores[picked], kind="stable")]
            seen: set[int] = set()
            for at in picked:
                value = float(lane_scores[at])
                if value == -np.inf:
                    break
                memory = int(self._row_id[start + at])
                if memory in seen:
                    continue
                seen.add(memory)
                out[lane].append((self._ids[memory], value))
                if len(out[lane]) == limit:
                    break
        return out

    @stale_on_error("vector index")
    def closest_of(self, query: npt.NDArray[np.float32], ids: Iterable[str],
                   lanes: Iterable[str] = LANES) -> list[tuple[str, float]]:
        """``ids`` by their best cosine with ``query`` over the first row of each of ``lanes``,
        best first (ids without such rows are left out)."""
        matrix = self._load()
        index = self._index or {}
        wanted = [memory_id for memory_id in dict.fromkeys(ids) if memory_id in index]
        if not wanted or not len(matrix):
            return []
        numbers = np.array([index[memory_id] for memory_id in wanted], dtype=np.int64)
        query = np.asarray(query, dtype=np.float32)
        best = np.full(len(wanted), -np.inf, dtype=np.float32)
        for lane in dict.fromkeys(lanes):
            if lane not in LANES:
                continue
            rows = self._first_row[LANES.index(lane)][numbers]
            present = rows >= 0
            if present.any():
                best[present] = np.maximum(best[present], matrix[rows[present]] @ query)
        order = np.argsort(-best, kind="stable")
        return [(wanted[at], float(best[at])) for at in order if best[at] > -np.inf]
