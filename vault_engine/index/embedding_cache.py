"""The embedding cache: one vector per (model, text), kept outside every vault.

Content-addressed: a vector's key is the SHA-256 of the model's name and the
text as the model reads it (:func:`model_text`: whitespace runs collapsed, cut
where the model would cut it anyway).  It lives in memvault's cache folder
(``[cache] dir``; by default ``$XDG_CACHE_HOME/memvault``, else
``~/.cache/memvault``), not in a vault's ``.memvault/``, so that rebuilding the
indexes, an index format upgrade, ``rm -rf .memvault`` or a fresh clone of a
shared vault on the same machine embeds nothing that was embedded before.

Bounded: ``[cache] embeddings_mb``.  When a write takes the cache past its
bound, the vectors used least recently are evicted until it holds 90% of it
(a vector's use time is its last write or the last sync that read it).
``memvault cache status`` shows what it holds, ``memvault cache clear``
empties it.

A cache never fails the work it speeds up: a damaged file is deleted and
started afresh, and one that cannot be written (a read-only home, a full
disk) is left alone, with one notice (:mod:`.notices`), while the vectors are
computed as if it were empty.

Nor does it change an answer.  A vector that reads back wrong (zeroed, NaN,
its numbers shuffled, another text's vector under this key) would rank the
vault silently wrong, and a rebuild would copy it back in.  So each row keeps
a CRC-32 of its key and its bytes, written with it, and every vector read is
checked: finite, of unit length (within :data:`UNIT_TOLERANCE`) and matching
its checksum.  A vector that fails is a miss, computed again and rewritten,
with one notice; ``sync --full`` reads through the same check.  The check
costs little next to reading the rows (``python -m benchmarks.cache_check``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import sqlite3
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from . import notices
from .embedder import DelegatingEmbedder
from .guard import newer

if TYPE_CHECKING:
    from .embedder import Embedder

FILE = "embeddings.sqlite"
SCHEMA_VERSION = "2"  # 2: a checksum with every vector (a cache of version 1 is started afresh)


UNIT_TOLERANCE = 1e-3  # a stored vector's length may differ from 1 by this much (float32 rounding is ~1e-7)
ROW_OVERHEAD = 64  # bytes a row costs beside its vector (key, model id, use time, B-tree)
KEEP_AFTER_EVICTION = 0.9
_PART = 500  # keys per SQL statement

TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, model TEXT NOT NULL, vec BLOB NOT NULL,"
    " used INTEGER NOT NULL, sum INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used)",
)


def model_text(text: str, max_tokens: int) -> str:
    """``text`` as the model reads it: whitespace runs collapsed (the tokenizer splits on them and
    drops them) and cut after ``2 * max_tokens`` words, past which the model has truncated anyway.

    Each word gives at least one token unless it is made only of characters the tokenizer
    deletes (control and format characters), so the words kept give the model more tokens than
    its window holds: the vector is the one the whole text gets.
    """
    words = text.split()
    return " ".join(words[: 2 * max_tokens]) if len(words) > 2 * max_tokens else " ".join(words)


def key_of(model: str, text: str) -> bytes:
    return hashlib.sha256(f"{model}\x00{text}".encode("utf-8", "surrogatepass")).digest()[:16]


def checksum(key: bytes, vec: bytes) -> int:
    """The CRC-32 of a row's key and vector bytes: a vector moved under another key fails it too."""
    return zlib.crc32(vec, zlib.crc32(key))


def sound(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Which rows of ``vectors`` are finite and of unit length (what every embedder gives)."""
    with np.errstate(all="ignore"):
        lengths = np.linalg.norm(vectors.astype(np.float64), axis=1)
    return np.asarray(np.isfinite(vectors).all(axis=1) & (np.abs(lengths - 1.0) <= UNIT_TOLERANCE), dtype=np.bool_)


class _Newer(Exception):
    """The cache was written by a newer memvault: it is left alone, not started afresh."""


@dataclass(frozen=True, slots=True)
class CacheStatus:
    path: Path
    vectors: int
    bytes: int  # the file's size on disk
    max_bytes: int
    per_model: Mapping[str, int]
    problem: str | None = None  # why the cache is not in use, when it is not
    graphs: Mapping[str, int] = dataclasses.field(default_factory=dict)  # the model's int8 graphs: name -> bytes


class EmbeddingCache:
    """Vectors by (model, text) in one SQLite file; every method degrades to a miss on failure."""

    def __init__(self, folder: Path, max_bytes: int):
        self.folder = folder
        self.path = folder / FILE
        self.max_bytes = max_bytes
        self.problem: str | None = None  # set once the cache failed; it is then not used again
        self.rejected = 0  # vectors read that failed their check (computed again by the caller)
        self.verify = True  # check every vector read (off only to measure what the check costs)
        self._db: sqlite3.Connection | None = None
        self._count: int | None = None  # vectors held, counted once then kept up to date (at most, on replaces)

    # ------------------------------------------------------------ connection

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is not None or self.problem is not None:
            return self._db
        for attempt in (1, 2):
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=NORMAL")
                    for table in TABLES:
                        db.execute(table)
                    db.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (SCHEMA_VERSION,))
                    found = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
                    if newer(found, SCHEMA_VERSION):  # another install's, newer: not ours to delete
                        raise _Newer(f"it was written by a newer memvault (version {found}; this one reads "
                                     f"{SCHEMA_VERSION})")
                    if found != SCHEMA_VERSION:
                        raise sqlite3.DatabaseError(f"cache version {found}")
                except BaseException:
                    db.close()
                    raise
                self._db = db
                return db
            except (sqlite3.OperationalError, _Newer) as exc:  # busy, read-only, full, newer: not damage
                self._fail(exc)
                return None
            except sqlite3.DatabaseError as exc:  # damaged or another version: a cache, so start afresh
                if attempt == 2:
                    self._fail(exc)
                    return None
                self._remove_files()
            except OSError as exc:
                self._fail(exc)
                return None
        return None

    def _fail(self, exc: BaseException) -> None:
        self.problem = f"the embedding cache at {self.path} is not used ({exc}); vectors are computed afresh"
        notices.note("embedding-cache", f"notice: {self.problem}")
        self.close()

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                Path(str(self.path) + suffix).unlink()

    def close(self) -> None:
        self._count = None
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    @contextlib.contextmanager
    def _writing(self, db: sqlite3.Connection) -> Iterator[None]:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ vectors

    def get_many(self, model: str, dim: int, texts: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The cached vectors of ``texts`` (model texts, see :func:`model_text`); misses are absent.
        Their use time is renewed, so what a vault keeps reading is what the cache keeps."""
        db = self._connect() if self.max_bytes > 0 else None  # a cache turned off is only read by status
        if db is None or not texts:
            return {}
        keys = {key_of(model, text): text for text in dict.fromkeys(texts)}
        found: dict[str, npt.NDArray[np.float32]] = {}
        wanted = list(keys)
        try:
            rows: list[tuple[bytes, bytes, int]] = []
            for start in range(0, len(wanted), _PART):
                part = wanted[start : start + _PART]
                marks = ", ".join("?" * len(part))
                rows += db.execute(
                    f"SELECT key, vec, sum FROM vectors WHERE key IN ({marks}) AND model = ?", (*part, model)
                ).fetchall()
            found = self._checked(rows, keys, dim)
            if found:
                now = int(time.time())
                hits = [key_of(model, text) for text in found]
                with self._writing(db):
                    for start in range(0, len(hits), _PART):
                        part = hits[start : start + _PART]
                        marks = ", ".join("?" * len(part))
                        db.execute(f"UPDATE vectors SET used = ? WHERE key IN ({marks})", (now, *part))
        except sqlite3.DatabaseError as exc:
            self._fail(exc)
            return found
        return found

    def _checked(self, rows: Sequence[tuple[bytes, bytes, int]], keys: Mapping[bytes, str], dim: int
                 ) -> dict[str, npt.NDArray[np.float32]]:
        """The vectors of ``rows`` (key, bytes, checksum) that pass their check, by text; a row of
        another size is a miss too (and is overwritten)."""
        rows = [row for row in rows if len(row[1]) == 4 * dim]
        if not rows:
            return {}
        vectors = np.frombuffer(b"".join(vec for _key, vec, _sum in rows), dtype=np.float32).reshape(len(rows), dim)
        if not self.verify:
            return {keys[bytes(key)]: vectors[n] for n, (key, _vec, _sum) in enumerate(rows)}
        good = sound(vectors)
        found = {keys[bytes(key)]: vectors[n] for n, (key, vec, total) in enumerate(rows)
                 if good[n] and checksum(bytes(key), vec) == total}
        if len(found) < len(rows):
            self.rejected += len(rows) - len(found)
            notices.note("embedding-cache-damaged", f"notice: vectors in the embedding cache at {self.path} failed "
                                                    "their check (not finite, not of unit length, or not matching "
                                                    "their checksum); computed them again")
        return found

    def put_many(self, model: str, items: Sequence[tuple[str, npt.NDArray[np.float32]]]) -> None:
        """Keep the vectors of ``items`` (model text, vector), then evict down to the bound.  A vector
        that would fail its check when read (not finite, not of unit length) is not kept."""
        db = self._connect() if self.max_bytes > 0 else None
        if db is None or not items:
            return
        now = int(time.time())
        vectors = [np.asarray(vector, dtype=np.float32) for _text, vector in items]
        fit = sound(np.vstack(vectors)) if len({v.shape for v in vectors}) == 1 else [True] * len(vectors)
        rows = []
        for (text, _), vector, ok in zip(items, vectors, fit, strict=True):
            if ok:
                key, vec = key_of(model, text), vector.tobytes()
                rows.append((key, model, vec, now, checksum(key, vec)))
        if not rows:
            return
        try:
            with self._writing(db):
                db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)
            self._evict(db, len(rows[0][2]), len(rows))
        except sqlite3.DatabaseError as exc:
            self._fail(exc)

    def forget(self, texts: Sequence[str]) -> int:
        """Delete the vectors of ``texts`` (model texts) of every model; how many were held.

        Content-addressed vectors outlive the memory they were made for: a text permanently
        forgotten must not leave its vector here, for the next vault that meets it to find."""
        db = self._connect()
        if db is None or not texts:
            return 0
        try:
            models = [str(row[0]) for row in db.execute("SELECT DISTINCT model FROM vectors")]
            keys = [key_of(model, text) for model in models for text in dict.fromkeys(texts)]
            gone = 0
            with self._writing(db):
                for start in range(0, len(keys), _PART):
                    part = keys[start : start + _PART]
                    marks = ", ".join("?" * len(part))
                    gone += db.execute(f"DELETE FROM vectors WHERE key IN ({marks})", part).rowcount
            return gone
        except sqlite3.DatabaseError as exc:
            self._fail(exc)
            return 0

    def _evict(self, db: sqlite3.Connection, vector_bytes: int, added: int) -> None:
        """Drop the least recently used vectors while the cache holds more than its bound.  The count
        is read once per connection (a scan of the table), then kept: ``added`` rows were written."""
        row_bytes = vector_bytes + ROW_OVERHEAD
        if self._count is None:
            self._count = int(db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
        else:
            self._count += added
        if self._count * row_bytes <= self.max_bytes:
            return
        count = int(db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])  # exact, before evicting
        keep = int(self.max_bytes * KEEP_AFTER_EVICTION) // row_bytes
        if count > keep and count * row_bytes > self.max_bytes:
            with self._writing(db):
                db.execute("DELETE FROM vectors WHERE key IN (SELECT key FROM vectors ORDER BY used, key LIMIT ?)",
                           (count - keep,))
            count = keep
        self._count = count

    # ------------------------------------------------------------ the command

    def status(self) -> CacheStatus:
        db = self._connect() if self.path.exists() else None
        per_model: dict[str, int] = {}
        if db is not None:
            try:
                per_model = {str(m): int(n) for m, n in
                             db.execute("SELECT model, COUNT(*) FROM vectors GROUP BY model ORDER BY model")}
            except sqlite3.DatabaseError as exc:
                self._fail(exc)
        size = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                size += Path(str(self.path) + suffix).stat().st_size
        return CacheStatus(self.path, sum(per_model.values()), size, self.max_bytes, per_model, self.problem)

    def clear(self) -> int:
        """Empty the cache (its file is removed); how many vectors it held."""
        held = self.status().vectors
        self.close()
        self._remove_files()
        self.problem = None
        return held


class KeptVectors(DelegatingEmbedder):
    """An embedder whose vectors are read from the cache, and kept there when it did not hold them.

    For the texts asked again and again, such as the task a session starts with: the next
    process reads the vector instead of loading the model (a hook's 0.3-0.6 s).  The vector
    read is the one the model gives: a text's vector is the same alone or in a batch
    (:mod:`.model_graph`), and the same for the text as the model reads it (:func:`model_text`).
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache, max_tokens: int):
        super().__init__(embedder)
        self.cache, self.max_tokens = cache, max_tokens

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        read = [model_text(text, self.max_tokens) for text in texts]
        found = self.cache.get_many(self.name, self.dim, read)
        missing = {key: text for key, text in zip(read, texts, strict=True) if key not in found}
        if missing:
            fresh = self.inner.embed(list(missing.values()))
            kept = list(zip(missing, fresh, strict=True))
            self.cache.put_many(self.name, kept)
            found.update(kept)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.ascontiguousarray(np.vstack([found[key] for key in read]), dtype=np.float32)
