"""The catalog: one row of metadata per indexed memory.

Lives in ``.memvault/catalog.sqlite``.  It is the record of what the indexes
hold (id, path, content hash), which sync plans against, and it carries what
search needs to filter, rank and show a hit without opening a single file:
scope, project, type, trust, lifecycle, status, title, summary, trigger, path
selectors, links, the sender, the boost signals, and the memory that holds its content
now (a merged or compacted one's survivor).  Written last by sync, so a crash
mid-sync leaves an older catalog that simply re-plans the unfinished work.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..format.memory import Memory, memory_text, text_digest
from ..format.text import link_text
from ..format.threads import Turn, thread_of, turn_text
from ..store import ID_SUFFIX, Entry
from .derived import gist
from .guard import IndexDb, stale_on_error

SCHEMA_VERSION = "7"  # 7: the length of the body (chars)
COLUMNS = (
    "id", "path", "hash", "status", "type", "scope", "project", "trust", "lifecycle", "tier",
    "title", "summary", "trigger", "paths", "tags", "links", "created", "updated", "occurred_at",
    "proof_count", "applied", "dup_key", "tasks", "operations", "phases", "authority", "recall", "importance",
    "last_applied", "source", "thread", "gist", "sender", "successor", "chars",
)
JSON_COLUMNS = ("paths", "tags", "links", "applied", "tasks", "operations", "phases")
TUPLE_COLUMNS = ("paths", "tags", "links", "tasks", "operations", "phases")


@dataclass(frozen=True, slots=True)
class CatalogRow:
    """What the indexes know about one memory."""

    id: str
    path: str
    hash: str
    status: str  # active | trashed
    type: str
    scope: str
    project: str
    trust: str
    lifecycle: str
    tier: str
    title: str
    summary: str
    trigger: str
    paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    created: datetime | None = None
    updated: datetime | None = None
    occurred_at: date | datetime | None = None
    proof_count: int = 1
    applied: dict[str, int] = field(default_factory=dict)
    dup_key: str = ""
    tasks: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    authority: str = "explicit"
    recall: str = "active"
    importance: float = 0.5
    last_applied: datetime | None = None
    source: str = ""
    thread: str = ""  # the conversation a turn belongs to (see format/threads.py), else ""
    gist: str = ""  # what the indexes read as its summary (see derived.gist): a turn's text to its neighbours
    sender: str = ""  # who it came from in a shared vault ("": not known)
    successor: str = ""  # the memory holding its content now (merged into, compacted into, superseded by), else ""
    chars: int = 0  # the length of its body: how much a turn says on its own (see retrieval/rerank.py, thread)

    @property
    def in_trash(self) -> bool:
        return self.status == "trashed"

    @property
    def current(self) -> bool:
        """Neither trashed nor superseded: what search and pages show."""
        return self.status == "active" and self.lifecycle != "superseded"


def row_from_memory(memory: Memory, path: str, digest: str, *, trashed: bool) -> CatalogRow:
    return CatalogRow(
        id=memory.id, path=path, hash=digest, status="trashed" if trashed else "active",
        type=memory.type, scope=memory.scope, project=memory.project or "", trust=memory.trust,
        lifecycle=memory.lifecycle, tier=memory.tier, title=memory.title, summary=memory.summary,
        trigger=memory.trigger, paths=tuple(memory.paths), tags=tuple(memory.tags), links=tuple(memory.links),
        created=memory.created, updated=memory.updated, occurred_at=memory.occurred_at,
        proof_count=memory.proof_count, applied=dict(memory.applied), dup_key=text_digest(memory_text(memory)),
        tasks=tuple(memory.tasks), operations=tuple(memory.operations), phases=tuple(memory.phases),
        authority=memory.authority, recall=memory.recall, importance=float(memory.importance),
        last_applied=memory.last_applied, source=memory.source, thread=(thread_of(memory.source) or ("", ""))[0],
        gist=gist(memory), sender=memory.sender or "", successor=successor(memory), chars=len(memory.body),
    )


def successor(memory: Memory) -> str:
    """The id of the memory that holds ``memory``'s content now: the one governance merged it into
    (``merged_into``), the digest it was compacted into, or the one superseding it; else ""."""
    for key in ("merged_into", "compacted_into"):
        value = memory.extra.get(key)
        if isinstance(value, str) and value:
            return value
    return memory.superseded_by or ""


def row_from_entry(entry: Entry, digest: str) -> CatalogRow:
    return row_from_memory(entry.memory, entry.path, digest, trashed=entry.in_trash)


def _moment_text(value: date | datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _datetime(text: str | None) -> datetime | None:
    return None if not text else datetime.fromisoformat(text)


def _moment(text: str | None) -> date | datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text) if "T" in text else date.fromisoformat(text)


_APPLIED_CACHE: dict[str, dict[str, int]] = {}


def _applied(text: str) -> dict[str, int]:
    """Outcome counts; most rows share a handful of values, so their decoding is cached."""
    cached = _APPLIED_CACHE.get(text)
    if cached is None:
        cached = json.loads(text)
        if len(_APPLIED_CACHE) < 4096:
            _APPLIED_CACHE[text] = cached
    return dict(cached)


def _encode(row: CatalogRow) -> tuple[Any, ...]:
    values: list[Any] = []
    for name in COLUMNS:
        value = getattr(row, name)
        if name in JSON_COLUMNS:
            value = json.dumps(list(value) if isinstance(value, tuple) else value, sort_keys=True)
        elif name in ("created", "updated", "occurred_at", "last_applied"):
            value = _moment_text(value)
        values.append(value)
    return tuple(values)


def _decode(values: tuple[Any, ...]) -> CatalogRow:
    data = dict(zip(COLUMNS, values, strict=True))
    for name in TUPLE_COLUMNS:
        data[name] = () if data[name] == "[]" else tuple(json.loads(data[name]))
    data["applied"] = _applied(data["applied"])
    data["created"] = _datetime(data["created"])
    data["updated"] = _datetime(data["updated"])
    data["last_applied"] = _datetime(data["last_applied"])
    data["occurred_at"] = _moment(data["occurred_at"])
    return CatalogRow(**data)


_KINDS = {"proof_count": "INTEGER", "importance": "REAL", "chars": "INTEGER"}
TABLE = "CREATE TABLE IF NOT EXISTS memories (id TEXT PRIMARY KEY, {})".format(
    ", ".join(f"{name} {_KINDS.get(name, 'TEXT')}" for name in COLUMNS[1:])
)

THREAD_INDEX = "CREATE INDEX IF NOT EXISTS memories_thread ON memories (thread) WHERE thread != ''"


class Catalog(IndexDb):
    """The catalog of one vault."""

    what = "catalog"

    def __init__(self, path: Path):
        super().__init__(path, [TABLE], {"version": SCHEMA_VERSION})
        try:
            self._create_thread_index()
        except BaseException:
            self.close()
            raise

    @stale_on_error("catalog")
    def _create_thread_index(self) -> None:
        # After the version check: an older catalog has no thread column.
        self._db.execute(THREAD_INDEX)

    @stale_on_error("catalog")
    def records(self) -> dict[str, tuple[str, str]]:
        """id -> (path, content hash) of every indexed memory."""
        return {i: (p, h) for i, p, h in self._db.execute("SELECT id, path, hash FROM memories")}

    @stale_on_error("catalog")
    def listing(self) -> list[CatalogRow]:
        """Every row with just what pages show (no selectors, links or signals): cheap at any size."""
        cursor = self._db.execute(
            "SELECT id, path, status, type, scope, project, trust, lifecycle, tier, title, summary FROM memories"
        )
        return [
            CatalogRow(id=i, path=p, hash="", status=st, type=ty, scope=sc, project=pr, trust=tr, lifecycle=lc,
                       tier=ti, title=t, summary=su, trigger="")
            for i, p, st, ty, sc, pr, tr, lc, ti, t, su in cursor
        ]

    @stale_on_error("catalog")
    def standing(self, project: str | None) -> list[CatalogRow]:
        """Current memories in scope (global, plus ``project``'s) that may apply without matching
        the task's words: core profile, passive or both recall, the hot tier, or with any selector."""
        cursor = self._db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM memories WHERE status = 'active' AND lifecycle != 'superseded'"
            " AND (scope = 'global' OR (project != '' AND project = ?))"
            " AND (type = 'core-profile' OR recall IN ('passive', 'both') OR tier = 'hot'"
            " OR paths != '[]' OR tasks != '[]'"
            " OR operations != '[]' OR phases != '[]') ORDER BY id",
            (project or "",),
        )
        return [_decode(values) for values in cursor]

    @stale_on_error("catalog")
    def of_project(self, project: str, limit: int) -> list[CatalogRow]:
        """The current memories of ``project`` (not its documents), the most recently updated first."""
        cursor = self._db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM memories WHERE status = 'active' AND lifecycle != 'superseded'"
            " AND scope = 'project' AND project = ? AND type != 'document' ORDER BY updated DESC, id LIMIT ?",
            (project, limit),
        )
        return [_decode(values) for values in cursor]

    @stale_on_error("catalog")
    def get(self, ids: Iterable[str]) -> dict[str, CatalogRow]:
        wanted = list(dict.fromkeys(ids))
        out: dict[str, CatalogRow] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ", ".join("?" * len(part))
            cursor = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM memories WHERE id IN ({marks})", part)
            for values in cursor:
                row = _decode(values)
                out[row.id] = row
        return out

    @stale_on_error("catalog")
    def light(self) -> list[tuple[str, str, str, str, str, str, str, tuple[str, ...]]]:
        """(id, status, lifecycle, trust, type, scope, project, path selectors) of every row: what filters read."""
        cursor = self._db.execute("SELECT id, status, lifecycle, trust, type, scope, project, paths FROM memories")
        return [
            (i, st, lc, tr, ty, sc, pr, tuple(json.loads(pa)) if pa != "[]" else ())
            for i, st, lc, tr, ty, sc, pr, pa in cursor
        ]

    @stale_on_error("catalog")
    def resolve(self, targets: Iterable[str]) -> dict[str, str]:
        """Link text (an id, ``[[note]]``, a file stem or a title) -> the id it points to."""
        out: dict[str, str] = {}
        for target in targets:
            key = link_text(target)
            if not key:
                continue
            stem = key.rsplit("/", 1)[-1].removesuffix(".md")
            found = self._db.execute(
                "SELECT id FROM memories WHERE id = ? OR lower(title) = lower(?) OR path = ? OR path LIKE ? "
                "ORDER BY (id = ?) DESC, (status = 'active') DESC, id LIMIT 1",
                (key, key, key if key.endswith(".md") else key + ".md", f"%/{stem}.md", key),
            ).fetchone()
            if found is None:  # a file named with its id's end (``release-day-a3991s.md``) by its slug
                found = next((row for row in self._db.execute(
                    "SELECT id, path FROM memories WHERE path LIKE ? ORDER BY (status = 'active') DESC, id",
                    (f"%/{stem}-{'_' * ID_SUFFIX}.md",)) if row[1].endswith(f"/{stem}-{row[0][-ID_SUFFIX:]}.md")),
                    None)
            if found:
                out[target] = str(found[0])
        return out

    @stale_on_error("catalog")
    def has_threads(self) -> bool:
        """Whether any indexed memory is a turn of a conversation."""
        return self._db.execute("SELECT 1 FROM memories WHERE thread != '' LIMIT 1").fetchone() is not None

    @stale_on_error("catalog")
    def threads(self, keys: Iterable[str] | None = None) -> dict[str, list[Turn]]:
        """The indexed turns, neither trashed nor superseded, of each thread in ``keys`` (None: of
        every thread, in one query)."""
        wanted = None if keys is None else [k for k in dict.fromkeys(keys) if k]
        out: dict[str, list[Turn]] = {key: [] for key in wanted or ()}
        query = "SELECT thread, id, source, title, gist FROM memories WHERE {} AND status = 'active'" \
                " AND lifecycle != 'superseded'"
        rows: Iterable[tuple[str, str, str, str, str]]
        if wanted is None:
            rows = self._db.execute(query.format("thread != ''"))
        else:
            rows = (row for key in wanted for row in self._db.execute(query.format("thread = ?"), (key,)))
        for key, memory_id, source, title, text in rows:
            position = (thread_of(source) or ("", ""))[1]
            out.setdefault(key, []).append(Turn(memory_id, position, turn_text(title, text)))
        return out

    @stale_on_error("catalog")
    def tag_shares(self) -> dict[str, float]:
        """Each tag (case folded) with the share of current memories (neither trashed nor
        superseded) that carry it."""
        counts: dict[str, int] = {}
        total = 0
        for (tags,) in self._db.execute(
            "SELECT tags FROM memories WHERE status = 'active' AND lifecycle != 'superseded'"
        ):
            total += 1
            if tags != "[]":
                for tag in {str(t).casefold() for t in json.loads(tags)}:
                    counts[tag] = counts.get(tag, 0) + 1
        return {tag: n / total for tag, n in sorted(counts.items())}

    @stale_on_error("catalog")
    def given_tags(self) -> frozenset[str]:
        """The tags, as written, that a person or an importer gave current memories: those of
        every memory that is not inferred (an inferred memory's tags are the engine's choice)."""
        tags: set[str] = set()
        for (row,) in self._db.execute(
            "SELECT tags FROM memories WHERE status = 'active' AND lifecycle != 'superseded' "
            "AND authority != 'inferred' AND tags != '[]'"
        ):
            tags.update(str(t) for t in json.loads(row))
        return frozenset(tags)

    @stale_on_error("catalog")
    def untagged_titles(self) -> tuple[int, list[str]]:
        """(how many current memories there are, the titles of those without a tag)."""
        total = 0
        titles: list[str] = []
        for title, tags in self._db.execute(
            "SELECT title, tags FROM memories WHERE status = 'active' AND lifecycle != 'superseded'"
        ):
            total += 1
            if tags == "[]":
                titles.append(str(title))
        return total, titles

    @stale_on_error("catalog")
    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    @stale_on_error("catalog")
    def apply(self, upserts: Iterable[CatalogRow], deletes: Iterable[str]) -> None:
        """Replace rows by id and delete others, in one transaction."""
        marks = ", ".join("?" * len(COLUMNS))
        with self.writing():
            self._db.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in deletes])
            self._db.executemany(f"INSERT OR REPLACE INTO memories VALUES ({marks})", [_encode(r) for r in upserts])
