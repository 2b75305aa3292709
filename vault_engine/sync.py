"""Sync planning: compare the files with what the indexes hold.

:func:`plan_changes` is pure: given each memory's (path, content digest) on
disk and in the index, it returns the :class:`ChangeSet` to apply.  A file
whose bytes are unchanged but whose path moved is a *move* (no re-embedding);
a changed digest is a *modification*.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import store
from .errors import IndexStale, MemoryFileError, VaultError
from .fsio import write_atomic
from .index.embedder import Embedder
from .index.fulltext import FullTextIndex
from .index.vectors import VectorRow, VectorStore
from .index_pages import write_pages
from .memory import Memory, content_digest
from .store import Entry


@dataclass(frozen=True, slots=True)
class Located:
    """Where a memory's file is and which bytes it holds."""

    path: str
    digest: str


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What sync must do, by memory id."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.added or self.modified or self.moved or self.deleted)

    def summary(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.modified)} modified, {len(self.moved)} moved, "
            f"{len(self.deleted)} deleted, {self.unchanged} unchanged"
        )


def plan_changes(disk: Mapping[str, Located], indexed: Mapping[str, Located]) -> ChangeSet:
    """The changes that bring ``indexed`` in line with ``disk`` (both keyed by memory id)."""
    added, modified, moved = [], [], []
    unchanged = 0
    for memory_id in sorted(disk):
        now = disk[memory_id]
        before = indexed.get(memory_id)
        if before is None:
            added.append(memory_id)
        elif before.digest != now.digest:
            modified.append(memory_id)
        elif before.path != now.path:
            moved.append(memory_id)
        else:
            unchanged += 1
    deleted = sorted(set(indexed) - set(disk))
    return ChangeSet(tuple(added), tuple(modified), tuple(moved), tuple(deleted), unchanged)


# ---------------------------------------------------------------- reading the disk


@dataclass(frozen=True, slots=True)
class DiskFile:
    """One memory file as sync sees it; ``entry`` is set only when the file had to be parsed."""

    path: str
    digest: str
    memory_id: str
    entry: Entry | None


@dataclass(slots=True)
class DiskState:
    files: dict[str, DiskFile]  # memory id -> file
    problems: list[VaultError]
    parsed: int
    stat_cache: dict[str, list[Any]]


def read_disk(root: Path, stat_cache: Mapping[str, Sequence[Any]]) -> DiskState:
    """Every memory file's id and digest, parsing only files whose bytes changed.

    ``stat_cache`` maps a path to ``[mtime_ns, size, digest, id]`` from the last sync;
    a file with the same mtime and size is not even read.
    """
    chosen: dict[str, DiskFile] = {}
    problems: list[VaultError] = []
    cache: dict[str, list[Any]] = {}
    parsed = 0
    for rel, path, problem in store.iter_markdown(root):
        if problem is not None or path is None:
            problems.append(MemoryFileError(problem or "unreadable", path=rel))
            continue
        try:
            info = path.stat()
        except OSError:
            continue
        known = stat_cache.get(rel)
        entry: Entry | None = None
        if known and len(known) == 4 and known[0] == info.st_mtime_ns and known[1] == info.st_size:
            digest, memory_id = str(known[2]), str(known[3])
        else:
            try:
                data = store.read_bytes(root, rel)
                digest = content_digest(data)
                if known and len(known) == 4 and known[2] == digest:
                    memory_id = str(known[3])
                else:
                    entry = store.entry_from_bytes(rel, data)
                    parsed += 1
                    memory_id = entry.memory.id
            except MemoryFileError as exc:
                problems.append(exc)
                continue
        cache[rel] = [info.st_mtime_ns, info.st_size, digest, memory_id]
        candidate = DiskFile(rel, digest, memory_id, entry)
        current = chosen.get(memory_id)
        if current is None:
            chosen[memory_id] = candidate
            continue
        keep, duplicate = store.resolve_duplicate(memory_id, current.path, candidate.path)
        chosen[memory_id] = current if keep == current.path else candidate
        problems.append(duplicate)
    return DiskState(chosen, problems, parsed, cache)


# ---------------------------------------------------------------- documents


def embedding_texts(memory: Memory, embedder: Embedder) -> list[tuple[str, int, str]]:
    """(lane, chunk, text) to embed for a memory: the dual path of summary, trigger and body."""
    out = [("summary", 0, memory.summary or memory.title)]
    if memory.trigger.strip():
        out.append(("trigger", 0, memory.trigger))
    body = memory.body.strip()
    if body:
        out += [("body", n, piece) for n, piece in enumerate(embedder.chunks(body))]
    return out


def text_fingerprint(texts: Sequence[tuple[str, int, str]]) -> str:
    """What the vectors of a memory depend on: re-embed only when this changes."""
    return content_digest(json.dumps(texts, ensure_ascii=False).encode("utf-8"))


def fulltext_document(entry: Entry, digest: str) -> dict[str, Any]:
    m = entry.memory
    return {
        "id": m.id, "title": m.title, "summary": m.summary, "trigger": m.trigger, "body": m.body,
        "tags": list(m.tags), "type": m.type, "scope": m.scope, "project": m.project or "",
        "trust": m.trust, "lifecycle": m.lifecycle, "tier": m.tier,
        "status": "trashed" if entry.in_trash else "active", "hash": digest, "path": entry.path,
    }


# ---------------------------------------------------------------- apply

STAT_CACHE = "sync-files.json"
EMBED_BATCH = 256


@dataclass(slots=True)
class SyncReport:
    """What one sync did."""

    plan: ChangeSet
    parsed: int
    embedded: int
    problems: list[VaultError]
    notice: str | None = None


class Indexes:
    """The derived indexes of one vault, rebuilt automatically when stale."""

    def __init__(self, root: Path, embedder: Embedder):
        self.state_dir = root / store.STATE_DIR
        self.embedder = embedder
        self.notice: str | None = None
        self.fulltext, self.vectors = self._open()

    def _paths(self) -> tuple[Path, Path]:
        return self.state_dir / "fulltext", self.state_dir / "vectors.sqlite"

    def _open(self) -> tuple[FullTextIndex, VectorStore]:
        ft_path, vec_path = self._paths()
        try:
            return FullTextIndex(ft_path), VectorStore(vec_path, self.embedder.name, self.embedder.dim)
        except IndexStale as exc:
            self.notice = f"notice: {exc.one_line()}"
            self._remove()
            return FullTextIndex(ft_path), VectorStore(vec_path, self.embedder.name, self.embedder.dim)

    def _remove(self) -> None:
        ft_path, vec_path = self._paths()
        FullTextIndex.remove(ft_path)
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                Path(str(vec_path) + suffix).unlink()
        with contextlib.suppress(FileNotFoundError):
            (self.state_dir / STAT_CACHE).unlink()

    def rebuild(self) -> None:
        """Drop both indexes (and the stat cache) and start empty."""
        self.vectors.close()
        self._remove()
        self.fulltext, self.vectors = self._open()

    def close(self) -> None:
        self.vectors.close()


def _load_stat_cache(path: Path) -> dict[str, list[Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def sync(root: Path, indexes: Indexes, *, full: bool = False) -> SyncReport:
    """Bring both indexes in line with the files (the caller holds the writer lock)."""
    if full:
        indexes.rebuild()
    cache_path = indexes.state_dir / STAT_CACHE
    old_cache = _load_stat_cache(cache_path)
    disk = read_disk(root, old_cache)
    records = indexes.fulltext.records()
    indexed = {memory_id: Located(path, digest) for memory_id, (path, digest) in records.items()}
    plan = plan_changes({i: Located(f.path, f.digest) for i, f in disk.files.items()}, indexed)
    vector_hashes = indexes.vectors.hashes()
    # Vectors lost or torn while the text index kept its documents are redone too.
    missing_vectors = [i for i in disk.files if i in indexed and i not in vector_hashes and i not in plan.modified]

    documents: list[dict[str, Any]] = []
    pending: list[tuple[str, str, list[tuple[str, int, str]]]] = []
    parsed = disk.parsed
    for memory_id in (*plan.added, *plan.modified, *plan.moved, *missing_vectors):
        file = disk.files[memory_id]
        entry = file.entry
        if entry is None:
            try:
                entry = store.read_entry(root, file.path)
            except MemoryFileError as exc:
                disk.problems.append(exc)
                continue
            parsed += 1
        documents.append(fulltext_document(entry, file.digest))
        texts = embedding_texts(entry.memory, indexes.embedder)
        fingerprint = text_fingerprint(texts)
        if vector_hashes.get(memory_id) != fingerprint:
            pending.append((memory_id, fingerprint, texts))

    embedded = 0
    flat = [text for _, _, texts in pending for _, _, text in texts]
    vectors: list[Any] = []
    for start in range(0, len(flat), EMBED_BATCH):
        vectors.extend(indexes.embedder.embed(flat[start : start + EMBED_BATCH]))
        embedded = len(vectors)
    position = 0
    items = []
    for memory_id, fingerprint, texts in pending:
        rows = [VectorRow(lane, chunk, vectors[position + n]) for n, (lane, chunk, _) in enumerate(texts)]
        position += len(texts)
        items.append((memory_id, fingerprint, rows))
    if items:
        indexes.vectors.put_many(items)
    if plan.deleted:
        indexes.vectors.delete(plan.deleted)
    if documents or plan.deleted:
        indexes.fulltext.apply(documents, plan.deleted)
    if not plan.empty or not (root / store.INDEX_PAGE).exists():
        write_pages(root, store.scan(root).entries.values())
    if disk.stat_cache != old_cache:
        write_atomic(cache_path, json.dumps(disk.stat_cache, sort_keys=True, separators=(",", ":")))
    return SyncReport(plan, parsed, embedded, disk.problems, indexes.notice)
