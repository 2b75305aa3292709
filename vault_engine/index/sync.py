"""Sync planning: compare the files with what the indexes hold.

:func:`plan_changes` is pure: given each memory's (path, content digest) on
disk and in the index, it returns the :class:`ChangeSet` to apply.  A file
whose bytes are unchanged but whose path moved is a *move* (no re-embedding);
a changed digest is a *modification*.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import store
from ..errors import IndexStale, MemoryFileError, VaultError
from ..format.memory import Memory, content_digest
from ..format.text import sentences
from ..fsio import remove_temps, write_atomic
from ..retrieval import threads
from ..retrieval.dates import date_words
from ..store import Entry
from .catalog import Catalog, CatalogRow, row_from_entry
from .embedder import Embedder
from .fulltext import FullTextIndex
from .pages import listed, write_pages
from .vectors import VectorRow, VectorStore
from .vocabulary import Vocabulary, vocabulary_terms


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


def _read_one(root: Path, rel: str, path: Path, known: Sequence[Any] | None,
              problems: list[VaultError]) -> tuple[DiskFile, list[Any], bool] | None:
    """One file's (DiskFile, stat-cache entry, parsed?), or None when it cannot be used."""
    try:
        info = path.stat()
    except OSError:
        return None
    if known and len(known) == 4 and known[0] == info.st_mtime_ns and known[1] == info.st_size:
        return DiskFile(rel, str(known[2]), str(known[3]), None), list(known), False
    try:
        data = store.read_bytes(root, rel)
        digest = content_digest(data)
        if known and len(known) == 4 and known[2] == digest:
            return DiskFile(rel, digest, str(known[3]), None), [info.st_mtime_ns, info.st_size, digest, known[3]], False
        entry = store.entry_from_bytes(rel, data)
    except MemoryFileError as exc:
        problems.append(exc)
        if not known or len(known) != 4:
            return None
        # A file that is invalid for a while (mid-edit) keeps what the indexes
        # hold; its cached stat stays old, so it is read again next time.
        return DiskFile(rel, str(known[2]), str(known[3]), None), list(known), False
    memory_id = entry.memory.id
    return DiskFile(rel, digest, memory_id, entry), [info.st_mtime_ns, info.st_size, digest, memory_id], True


def _choose(chosen: dict[str, DiskFile], candidate: DiskFile, dropped: dict[str, list[str]]) -> None:
    current = chosen.get(candidate.memory_id)
    if current is None:
        chosen[candidate.memory_id] = candidate
        return
    keep, _ = store.resolve_duplicate(candidate.memory_id, current.path, candidate.path)
    chosen[candidate.memory_id] = current if keep == current.path else candidate
    dropped.setdefault(candidate.memory_id, []).append(current.path if keep == candidate.path else candidate.path)


def read_disk(root: Path, stat_cache: Mapping[str, Sequence[Any]]) -> DiskState:
    """Every memory file's id and digest, parsing only files whose bytes changed.

    ``stat_cache`` maps a path to ``[mtime_ns, size, digest, id]`` from the last sync;
    a file with the same mtime and size is not even read.
    """
    problems: list[VaultError] = []
    files: list[tuple[str, Path]] = []
    for rel, path, problem in store.iter_markdown(root):
        if problem is not None or path is None:
            problems.append(MemoryFileError(problem or "unreadable", path=rel))
        else:
            files.append((rel, path))
    state = DiskState({}, problems, 0, {})
    _read_files(root, files, stat_cache, state)
    return state


def _read_files(root: Path, files: Iterable[tuple[str, Path]], stat_cache: Mapping[str, Sequence[Any]],
                state: DiskState) -> None:
    """Read ``files`` into ``state``: one file per id (duplicates reported), the stat cache, the parse count."""
    dropped: dict[str, list[str]] = {}
    for rel, path in files:
        found = _read_one(root, rel, path, stat_cache.get(rel), state.problems)
        if found is None:
            continue
        candidate, state.stat_cache[rel], was_parsed = found
        state.parsed += was_parsed
        _choose(state.files, candidate, dropped)
    for memory_id, paths in dropped.items():  # each naming the copy in use, once all are seen
        state.problems += [store.duplicate_problem(memory_id, state.files[memory_id].path, p) for p in paths]


def _through_symlink(root: Path, rel: str) -> bool:
    """Whether ``rel`` is a symlink or lies below one."""
    path = root
    for part in rel.split("/"):
        path = path / part
        if path.is_symlink():
            return True
    return False


def read_paths(root: Path, rels: Iterable[str], stat_cache: Mapping[str, Sequence[Any]],
               records: Mapping[str, tuple[str, str]]) -> tuple[DiskState, dict[str, Located]]:
    """Like :func:`read_disk` for just ``rels``; also what the index held for them.

    Returns the files found (by id) and the index records that they, or the
    files gone from ``rels``, concern: planning over the two gives the same
    changes a full walk would, without touching any other file.
    """
    wanted = sorted({rel for rel in rels if store.is_memory_path(rel)})
    changed = set(wanted)
    # The cache keeps every other file's entry; the changed ones are re-read (or gone).
    state = DiskState({}, [], 0, {rel: list(v) for rel, v in stat_cache.items() if rel not in changed})
    # A symlink, or a folder that is one, is never followed (as in a full walk): the file may live
    # outside the vault, and file watchers report changes below a symlinked folder as the vault's own.
    present = [(rel, root / rel) for rel in wanted if not _through_symlink(root, rel) and (root / rel).is_file()]
    _read_files(root, present, stat_cache, state)
    chosen, problems = state.files, state.problems
    for memory_id, file in list(chosen.items()):
        held = records.get(memory_id)
        if held and held[0] != file.path and held[0] not in changed and (root / held[0]).is_file():
            keep, duplicate = store.resolve_duplicate(memory_id, held[0], file.path)
            problems.append(duplicate)
            if keep == held[0]:
                del chosen[memory_id]
    by_path = {path: memory_id for memory_id, (path, _digest) in records.items() if path in changed}
    concerned = set(chosen) | set(by_path.values())
    indexed = {i: Located(*records[i]) for i in concerned if i in records}
    return state, indexed


# ---------------------------------------------------------------- documents


def embedding_texts(memory: Memory, embedder: Embedder,
                    context: tuple[str, str] = ("", "")) -> list[tuple[str, int, str]]:
    """(lane, chunk, text) to embed for a memory: the dual path of summary, trigger and body,
    and for a turn of a conversation the turn between its neighbours (``context``: before, after)."""
    out = [("summary", 0, memory.summary or memory.title)]
    if memory.trigger.strip():
        out.append(("trigger", 0, memory.trigger))
    body = memory.body.strip()
    if body:
        out += [("body", n, piece) for n, piece in enumerate(embedder.chunks(body))]
    around = threads.embedding_context(threads.turn_text(memory.title, memory.summary), *context)
    if around:
        out.append(("context", 0, around))
    # Each sentence alone: a passage's mean embedding blurs the one sentence a question is about.
    # Only short memories (a fact, a turn of a conversation): long ones are covered by body chunks,
    # and a sentence lane for them would multiply the vectors search scans.  A sentence alone
    # also loses its subject ("She gave it to me"), so it carries the memory's tags (or title).
    pieces = sentences(f"{memory.summary or memory.title}\n\n{body}", limit=SENTENCES_PER_MEMORY + 1)
    if 1 < len(pieces) <= SENTENCES_PER_MEMORY:
        subject = ", ".join(memory.tags) or memory.title
        out += [("sentence", n, piece if piece.casefold().startswith(subject.casefold()) else f"{subject}: {piece}")
                for n, piece in enumerate(pieces)]
    return out


def text_fingerprint(texts: Sequence[tuple[str, int, str]]) -> str:
    """What the vectors of a memory depend on: re-embed only when this changes."""
    return content_digest(json.dumps(texts, ensure_ascii=False).encode("utf-8"))


def fulltext_document(entry: Entry, digest: str, context: tuple[str, str] = ("", "")) -> dict[str, Any]:
    m = entry.memory
    when = m.occurred_at.date() if isinstance(m.occurred_at, datetime) else m.occurred_at
    return {
        "id": m.id, "title": m.title, "summary": m.summary, "trigger": m.trigger, "body": m.body,
        "tags": list(m.tags), "context": "\n".join(part for part in context if part),
        "when": date_words(when) if when is not None else "",
        "type": m.type, "scope": m.scope, "project": m.project or "", "trust": m.trust, "lifecycle": m.lifecycle,
        "tier": m.tier,
        "status": "trashed" if entry.in_trash else "active", "hash": digest, "path": entry.path,
    }


# ---------------------------------------------------------------- apply

STAT_CACHE = "sync-files.json"
SENTENCES_PER_MEMORY = 8  # memories with more sentences get no sentence lane
EMBED_BATCH = 256
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class SyncReport:
    """What one sync did."""

    plan: ChangeSet
    parsed: int
    embedded: int
    problems: list[VaultError]
    notice: str | None = None
    seconds_embedding: float = 0.0


class Indexes:
    """The derived indexes of one vault, rebuilt automatically when any part is stale."""

    def __init__(self, root: Path, embedder: Embedder, *, vocabulary: bool = False):
        self.state_dir = root / store.STATE_DIR
        self.embedder = embedder
        self.keeps_vocabulary = vocabulary  # query expansion is on ([retrieval] weight_expansion > 0)
        self.notice: str | None = None
        self.fulltext, self.vectors, self.catalog = self._open()

    def _paths(self) -> tuple[Path, Path, Path]:
        return self.state_dir / "fulltext", self.state_dir / "vectors.sqlite", self.state_dir / "catalog.sqlite"

    def _try_open(self) -> tuple[FullTextIndex, VectorStore, Catalog]:
        # Tantivy last: an index it holds open must not be deleted under it when another part is stale.
        ft_path, vec_path, cat_path = self._paths()
        catalog = Catalog(cat_path)
        try:
            catalog.records()
            vectors = VectorStore(vec_path, self.embedder.name, self.embedder.dim)
        except IndexStale:
            catalog.close()
            raise
        try:
            fulltext = FullTextIndex(ft_path)
        except IndexStale:
            vectors.close()
            catalog.close()
            raise
        return fulltext, vectors, catalog

    def _open(self) -> tuple[FullTextIndex, VectorStore, Catalog]:
        """Open every part; a stale part alone is dropped (the next sync refills it from the
        files: vectors whose text did not change are kept), anything else drops all."""
        stale: Path | None = None
        try:
            return self._try_open()
        except IndexStale as exc:
            self.notice = f"notice: {exc.one_line()}"
            stale = Path(exc.path) if exc.path else None
        # Outside the handler: its traceback would keep the half-opened parts alive.
        if stale is not None and stale in self._paths():
            self._remove(only=stale)
        else:
            self._remove()
        try:
            return self._try_open()
        except IndexStale as exc:  # a second part was stale too
            self.notice = f"notice: {exc.one_line()}"
        self._remove()
        return self._try_open()

    def _remove(self, only: Path | None = None) -> None:
        ft_path, vec_path, cat_path = self._paths()
        if only in (None, ft_path):
            FullTextIndex.remove(ft_path)
        for base in (vec_path, cat_path):
            if only not in (None, base):
                continue
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    Path(str(base) + suffix).unlink()
        if only is None:
            with contextlib.suppress(FileNotFoundError):
                (self.state_dir / STAT_CACHE).unlink()
            remove_vocabulary(self.state_dir)

    def rebuild(self) -> None:
        """Drop every index (and the stat cache) and start empty."""
        self.close()
        self._remove()
        self.fulltext, self.vectors, self.catalog = self._open()

    def close(self) -> None:
        self.vectors.close()
        self.catalog.close()

    def vocabulary(self) -> Vocabulary:
        """The vocabulary for query expansion; one from another model or damaged is started afresh."""
        path = self.state_dir / VOCABULARY
        try:
            return Vocabulary(path, self.embedder.name, self.embedder.dim)
        except IndexStale:
            remove_vocabulary(self.state_dir)
            return Vocabulary(path, self.embedder.name, self.embedder.dim)


VOCABULARY = "vocabulary.sqlite"


def remove_vocabulary(state_dir: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (state_dir / (VOCABULARY + suffix)).unlink()


def update_vocabulary(indexes: Indexes, rows: Sequence[CatalogRow]) -> int:
    """Embed the words of ``rows`` (titles, summaries, triggers, tags) the vocabulary lacks; an
    empty vocabulary beside a filled catalog (new, or dropped) takes every row's words.
    Returns how many words were added."""
    vocabulary = indexes.vocabulary()
    try:
        if not vocabulary.count():
            rows = [*indexes.catalog.listing(), *rows]
        words: set[str] = set()
        for row in rows:
            words |= vocabulary_terms(f"{row.title} {row.summary} {row.trigger} {' '.join(row.tags)}")
        missing = vocabulary.missing(words)
        for start in range(0, len(missing), EMBED_BATCH):
            part = missing[start : start + EMBED_BATCH]
            vocabulary.add(part, indexes.embedder.embed(part))
        return len(missing)
    finally:
        vocabulary.close()


def _load_stat_cache(path: Path) -> dict[str, list[Any]]:
    """The stat cache; unreadable, or any entry not ``[mtime_ns, size, digest, id]``, is left out (re-read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {rel: known for rel, known in data.items()
            if isinstance(known, list) and len(known) == 4 and all(type(v) is int for v in known[:2])
            and all(isinstance(v, str) for v in known[2:])}


FRESHNESS_STATES = ("current", "stale", "missing", "unreadable")


def freshness(root: Path) -> tuple[str, str]:
    """How the indexes compare with the files, read-only (nothing is parsed twice or written):
    a state (one of :data:`FRESHNESS_STATES`) and a sentence for people."""
    state = root / store.STATE_DIR
    if not (state / "catalog.sqlite").exists():
        return "missing", "not built (run `memvault sync`, or any search builds it)"
    try:
        catalog = Catalog(state / "catalog.sqlite")
        try:
            records = catalog.records()
        finally:
            catalog.close()
    except IndexStale as exc:
        return "unreadable", f"unreadable ({exc.message}); the next sync or search rebuilds it"
    disk = read_disk(root, _load_stat_cache(state / STAT_CACHE))
    indexed = {i: Located(path, digest) for i, (path, digest) in records.items()}
    plan = plan_changes({i: Located(f.path, f.digest) for i, f in disk.files.items()}, indexed)
    if plan.empty:
        return "current", f"current ({plan.unchanged} memories indexed)"
    return "stale", f"stale: {plan.summary()} (run `memvault sync` or keep `memvault watch` running)"


def _embed(embedder: Embedder, texts: list[str], progress: Progress | None) -> list[Any]:
    """Vectors of ``texts`` in their order, computed shortest first.

    Batches of similar length carry little padding: on CPU this more than
    doubles the model's throughput on a mixed vault.
    """
    order = sorted(range(len(texts)), key=lambda n: len(texts[n]))
    vectors: list[Any] = [None] * len(texts)
    done = 0
    for start in range(0, len(order), EMBED_BATCH):
        part = order[start : start + EMBED_BATCH]
        for n, vector in zip(part, embedder.embed([texts[n] for n in part]), strict=True):
            vectors[n] = vector
        done += len(part)
        if progress is not None:
            progress(done, len(texts))
    return vectors


Around = dict[str, tuple[threads.Turn | None, threads.Turn | None]]


def _thread_changes(root: Path, catalog: Catalog, entries: Mapping[str, tuple[Entry, str]],
                    deleted: Sequence[str], disk: DiskState) -> tuple[Around, dict[str, tuple[Entry, str]]]:
    """Neighbours of every turn in the threads this sync touches, and the untouched turns whose
    neighbours changed (read from disk here: their context lane and field must be redone)."""
    if not catalog.has_threads() and not any(threads.thread_of(e.memory.source) for e, _ in entries.values()):
        return {}, {}  # no conversation turns anywhere: nothing to look up
    old_rows = catalog.get([*entries, *deleted])
    keys = {row.thread for row in old_rows.values() if row.thread}
    new_turns: dict[str, threads.Turn] = {}
    for memory_id, (entry, _digest) in entries.items():
        placed = threads.thread_of(entry.memory.source)
        if placed is None:
            continue
        keys.add(placed[0])
        if not entry.in_trash and entry.memory.lifecycle != "superseded":
            new_turns[memory_id] = threads.Turn(
                memory_id, placed[1], threads.turn_text(entry.memory.title, entry.memory.summary))
    if not keys:
        return {}, {}
    around: Around = {}
    changed: set[str] = set()
    for key, members in catalog.threads(keys).items():
        before = threads.neighbours(members)
        kept = [t for t in members if t.id not in entries and t.id not in deleted]
        kept += [t for i, t in new_turns.items()
                 if (threads.thread_of(entries[i][0].memory.source) or ("", ""))[0] == key]
        after = threads.neighbours(kept)
        around.update(after)
        changed |= {i for i in after if i not in entries
                    and threads.context_of(i, after) != threads.context_of(i, before)}
    extra: dict[str, tuple[Entry, str]] = {}
    rows = catalog.get(changed)
    for memory_id in sorted(changed):
        known = disk.files.get(memory_id)
        rel = known.path if known else rows[memory_id].path if memory_id in rows else None
        if rel is None:
            continue
        try:
            data = store.read_bytes(root, rel)
            entry = store.entry_from_bytes(rel, data)
        except MemoryFileError as exc:
            disk.problems.append(exc)
            continue
        if entry.memory.id == memory_id:
            extra[memory_id] = (entry, content_digest(data))
    return around, extra


def _remove_temps(root: Path, state_dir: Path) -> None:
    """The temp files of pages and of the stat cache that a sync cut short left (the caller holds
    the index lock, which every writer of those files holds)."""
    folders = [root]
    projects = root / "memories" / "projects"
    if projects.is_dir() and not projects.is_symlink():
        folders += [p for p in projects.iterdir() if p.is_dir() and not p.is_symlink()]
    for folder in folders:
        remove_temps(folder, lambda name: name == store.INDEX_PAGE)
    remove_temps(state_dir, lambda name: name == STAT_CACHE)


def sync(root: Path, indexes: Indexes, *, full: bool = False, progress: Progress | None = None,
         paths: Iterable[str] | None = None) -> SyncReport:
    """Bring every index in line with the files (the caller holds the index lock).

    With ``paths`` (relative paths that changed), only those files are looked
    at; otherwise the whole vault is walked (cheaply: unchanged stats are not read).
    Order of writes: vectors, full text, pages, catalog, stat cache.  The catalog
    is the record sync plans against, so a crash before its commit just re-plans
    the rest; a walk of the whole vault removes the temp files such a crash left.
    """
    if full:
        indexes.rebuild()
    if paths is None or full:
        _remove_temps(root, indexes.state_dir)
    cache_path = indexes.state_dir / STAT_CACHE
    old_cache = _load_stat_cache(cache_path)
    records = indexes.catalog.records()
    targeted = paths is not None and not full and bool(records)
    if targeted:
        assert paths is not None
        disk, indexed = read_paths(root, paths, old_cache, records)
    else:
        disk = read_disk(root, old_cache)
        indexed = {memory_id: Located(path, digest) for memory_id, (path, digest) in records.items()}
    plan = plan_changes({i: Located(f.path, f.digest) for i, f in disk.files.items()}, indexed)
    vector_hashes = indexes.vectors.hashes(disk.files) if targeted else indexes.vectors.hashes()
    touched = set(plan.added) | set(plan.modified) | set(plan.moved)
    repair: list[str] = []
    if not targeted:
        # Parts lost or torn while the catalog kept its rows (a crash, a deleted
        # folder) are redone too: missing vectors, or a full-text index out of step.
        repair = [i for i in disk.files if i in indexed and i not in touched and i not in vector_hashes]
        if indexes.fulltext.count() != len(indexed):
            repair = [i for i in disk.files if i in indexed and i not in touched]

    documents: list[dict[str, Any]] = []
    rows: list[CatalogRow] = []
    pending: list[tuple[str, str, list[tuple[str, int, str]]]] = []
    parsed = disk.parsed
    entries: dict[str, tuple[Entry, str]] = {}
    for memory_id in (*plan.added, *plan.modified, *plan.moved, *repair):
        file = disk.files[memory_id]
        entry = file.entry
        if entry is None:
            try:
                entry = store.read_entry(root, file.path)
            except MemoryFileError as exc:
                disk.problems.append(exc)
                continue
            parsed += 1
        entries[memory_id] = (entry, file.digest)
    around, extra = _thread_changes(root, indexes.catalog, entries, plan.deleted, disk)
    if extra:
        vector_hashes.update(indexes.vectors.hashes(extra))
    parsed += len(extra)
    entries.update(extra)
    for memory_id, (entry, digest) in entries.items():
        context = threads.context_of(memory_id, around)
        documents.append(fulltext_document(entry, digest, context))
        rows.append(row_from_entry(entry, digest))
        texts = embedding_texts(entry.memory, indexes.embedder, context)
        fingerprint = text_fingerprint(texts)
        if vector_hashes.get(memory_id) != fingerprint:
            pending.append((memory_id, fingerprint, texts))

    flat = [text for _, _, texts in pending for _, _, text in texts]
    started = time.perf_counter()
    vectors = _embed(indexes.embedder, flat, progress)
    seconds = time.perf_counter() - started
    position = 0
    items = []
    for memory_id, fingerprint, texts in pending:
        vector_rows = [VectorRow(lane, chunk, vectors[position + n]) for n, (lane, chunk, _) in enumerate(texts)]
        position += len(texts)
        items.append((memory_id, fingerprint, vector_rows))
    if items:
        indexes.vectors.put_many(items)
    if plan.deleted:
        indexes.vectors.delete(plan.deleted)
    if documents or plan.deleted:
        indexes.fulltext.apply(documents, plan.deleted)
    before = indexes.catalog.get(row.id for row in rows) if rows else {}
    # Pages list titles and summaries: an edit to a body alone leaves them as they are.
    listed_change = bool(plan.added or plan.deleted or plan.moved) or any(
        row.id not in before or listed(before[row.id]) != listed(row) for row in rows
    )
    # Files whose stat changed while no record did: touched, or changed back since a sync that was cut
    # short after writing its pages; the pages are compared again (and rewritten only when they differ).
    unsettled = plan.empty and disk.stat_cache != old_cache
    if listed_change or unsettled or not (root / store.INDEX_PAGE).exists():
        # Before the catalog commit, from the rows about to be committed: a crash in between leaves
        # the catalog as it was, so the next sync plans the same changes and writes the pages again.
        listing = {row.id: row for row in indexes.catalog.listing()}
        listing.update((row.id, row) for row in rows)
        for memory_id in plan.deleted:
            listing.pop(memory_id, None)
        write_pages(root, listing.values())
    if rows or plan.deleted:
        indexes.catalog.apply(rows, plan.deleted)
    # After the catalog: derived from it, and refilled from it when lost.
    if indexes.keeps_vocabulary:
        update_vocabulary(indexes, rows)
    if disk.stat_cache != old_cache:
        write_atomic(cache_path, json.dumps(disk.stat_cache, sort_keys=True, separators=(",", ":")))
    return SyncReport(plan, parsed, len(vectors), disk.problems, indexes.notice, seconds)
