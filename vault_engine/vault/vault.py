"""The vault's core operations: add, import, show, list, correct, forget, feedback, rollback, trash, status.

Every write takes the vault writer lock, writes files atomically
(write-first-then-remove for moves) and records a journal event, so each
change can be explained, replayed and undone.
"""

from __future__ import annotations

import builtins
import functools
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from .. import config as config_mod
from .. import fsio, store
from ..config import VaultConfig
from ..errors import ForgottenContent, IndexStale, InvalidInput, NothingToUndo, VaultError
from ..format.ids import derived_event_id, is_valid_id, new_event_id, new_memory_id
from ..format.memory import ENUMS, OUTCOMES, Memory, ParsedFile, from_fields, memory_text, render, text_digest
from ..format.redact import redact, redact_data
from ..format.text import is_one_off, make_summary, make_title
from ..format.yamlfmt import format_datetime
from ..governance.classify import resident_chars
from ..journal import Event, Journal, MemoryState, feedback_superseded, forgotten_digests, replay
from ..store import Entry, Scan

if TYPE_CHECKING:
    from ..governance.audit import Audit
    from ..governance.maintain import MaintainReport
    from ..index.embedder import Embedder
    from ..index.sync import Progress, SyncReport
    from ..llm.base import Llm
    from ..retrieval.searcher import Searcher, SearchRequest, SearchResult

P = ParamSpec("P")
R = TypeVar("R")


def indexed(method: Callable[P, R]) -> Callable[P, R]:
    """Run a write, then bring the indexes up to date when the vault syncs automatically.

    The write has happened by then: a failing sync becomes ``index_warning``,
    never an error that would hide a saved memory.
    """

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        self = args[0]
        assert isinstance(self, Vault)
        depth = getattr(self._nesting, "depth", 0)
        self._nesting.depth = depth + 1
        try:
            with fsio.recording() as touched:
                result = method(*args, **kwargs)
        finally:
            self._nesting.depth = depth
        if depth == 0:  # the outermost write syncs once, after releasing the writer lock
            self.after_write(touched)
        return result

    return wrapper


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@dataclass(frozen=True, slots=True)
class AddResult:
    id: str
    path: str
    created: bool  # False: the same text already existed and gained evidence
    notice: str | None = None


@dataclass(frozen=True, slots=True)
class ImportResult:
    added: list[str]
    merged: list[str]
    errors: list[VaultError]


@dataclass(frozen=True, slots=True)
class ChangeResult:
    """What a correct, forget, rollback or restore did."""

    action: str
    id: str
    path: str | None
    related: str | None = None
    event: str | None = None
    conflicts: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    """What one reported outcome did to a memory."""

    action: str  # recorded | promoted | superseded | already-recorded
    id: str
    path: str
    outcome: str
    old_lifecycle: str
    lifecycle: str
    applied: dict[str, int]
    last_applied: datetime | None
    application: str | None
    event: str


@dataclass(frozen=True, slots=True)
class ReplayDiff:
    id: str
    path: str
    key: str
    file_value: Any
    journal_value: Any


@dataclass(slots=True)
class Status:
    vault: str
    memories: int
    by_type: dict[str, int]
    by_lifecycle: dict[str, int]
    by_tier: dict[str, int]
    trash: int
    invalid: list[str]
    hot_chars: int
    hot_budget: int
    journal_events: int
    journal_warnings: list[str]
    index: str
    index_state: str  # current | stale | missing | unreadable
    embedding_model: str


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What a person or agent asks to remember."""

    text: str
    title: str | None = None
    type: str = "fact"
    klass: str | None = None
    scope: str | None = None
    project: str | None = None
    paths: Sequence[str] = ()
    tasks: Sequence[str] = ()
    operations: Sequence[str] = ()
    phases: Sequence[str] = ()
    tags: Sequence[str] = ()
    trust: str = "learned"
    authority: str = "explicit"
    recall: str | None = None
    tier: str | None = None
    importance: float = 0.5
    source: str = "user"
    summary: str | None = None
    trigger: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Vault:
    """One open vault."""

    def __init__(self, root: Path, config: VaultConfig | None = None, *, auto_sync: bool = False,
                 embedder: Embedder | None = None, progress: Progress | None = None):
        self.root = root
        self.config = config if config is not None else config_mod.load(root)
        self.journal = Journal(root / store.JOURNAL_DIR)
        self.lock = fsio.WriterLock(root / store.STATE_DIR / "lock", self.config.vault.lock_timeout)
        # Syncs exclude each other, not writers: a writer never waits for the model.
        self.index_lock = fsio.WriterLock(root / store.STATE_DIR / "index.lock",
                                          max(60.0, self.config.vault.lock_timeout), what="updating the search indexes")
        self.auto_sync = auto_sync
        self.progress = progress
        self.index_warning: str | None = None
        self._nesting = threading.local()
        self._searcher: Searcher | None = None
        self.last_sync: SyncReport | None = None
        self._embedder = embedder
        self._llm: Llm | None = None
        self._parsed: store.ParseCache = {}  # unchanged files are not parsed twice by one process

    @classmethod
    def open(cls, explicit: Path | None = None, *, auto_sync: bool = False,
             progress: Progress | None = None) -> Vault:
        """Discover and open the vault (see :func:`store.discover`).

        With ``auto_sync`` (and ``vault.auto_sync`` on in the config) every
        write leaves the search indexes current.
        """
        root = store.discover(explicit)
        config = config_mod.load(root)
        return cls(root, config, auto_sync=auto_sync and config.vault.auto_sync, progress=progress)

    def embedder(self) -> Embedder:
        """The embedding model (loaded once per process, on first use)."""
        if self._embedder is None:
            from ..index.embedder import shared_embedder

            self._embedder = shared_embedder(self.config.embedding, self.root / store.STATE_DIR / "models")
        return self._embedder

    def llm(self) -> Llm:
        """The language model of this vault (``[llm]``; offline without a key), chosen once per vault."""
        if self._llm is None:
            from ..llm.select import select

            self._llm = select(self.config.llm, load_chars=self.config.ingest.load_chars)
        return self._llm

    def after_write(self, touched: Iterable[Path]) -> None:
        """Sync the indexes for files just written (when the vault syncs automatically)."""
        if not self.auto_sync:
            return
        rels = []
        for path in touched:
            try:
                rels.append(path.relative_to(self.root).as_posix())
            except ValueError:
                continue
        try:
            self.last_sync = self.sync(paths=rels)
        except VaultError as exc:
            self.index_warning = f"warning: search indexes not updated ({exc.one_line()}); run `memvault sync`"

    # ------------------------------------------------------------ reading

    def scan(self) -> Scan:
        return store.scan(self.root, self._parsed)

    def entry(self, memory_id: str, scan: Scan | None = None) -> Entry:
        """The memory with ``memory_id``.

        Raises:
            MemoryNotFound: no file has that id.
            MemoryFileError: the file holding that id is invalid (its own error, with path and line).
        """
        if not is_valid_id(memory_id) and not memory_id.startswith("note-"):
            raise InvalidInput(f"not a memory id: {memory_id!r}")
        scan = scan or self.scan()
        if memory_id not in scan.entries:
            for problem in scan.problems:
                if problem.path is not None and self._mentions_id(problem.path, memory_id):
                    raise problem
        return scan.get(memory_id)

    def find(self, memory_id: str) -> Entry:
        """:meth:`entry` for readers, without reading the whole vault: the file the catalog
        names for ``memory_id`` when it still holds that id, else :meth:`entry` (a scan)."""
        rel = self._catalog_paths([memory_id]).get(memory_id)
        if rel is not None:
            try:
                entry = store.read_entry(self.root, rel)
            except (VaultError, OSError):
                entry = None
            if entry is not None and entry.memory.id == memory_id:
                return entry
        return self.entry(memory_id)

    def _catalog_paths(self, memory_ids: Iterable[str]) -> dict[str, str]:
        """id -> path as last indexed (empty when the indexes are missing or unreadable)."""
        from ..index.catalog import Catalog

        path = self.root / store.STATE_DIR / "catalog.sqlite"
        if not path.exists():
            return {}
        try:
            catalog = Catalog(path)
            try:
                return {i: row.path for i, row in catalog.get(memory_ids).items()}
            finally:
                catalog.close()
        except (VaultError, OSError):
            return {}

    def links_of(self, memory: Memory) -> builtins.list[dict[str, str | None]]:
        """:meth:`resolve_links` from the catalog (no scan); each resolved id is checked on disk,
        so a stale catalog costs a scan, never a wrong answer."""
        from ..index.catalog import Catalog

        path = self.root / store.STATE_DIR / "catalog.sqlite"
        if memory.links and path.exists():
            try:
                catalog = Catalog(path)
                try:
                    targets = catalog.resolve(memory.links)
                finally:
                    catalog.close()
            except (VaultError, OSError):
                targets = None
            if targets is not None and len(targets) == len(set(memory.links)):
                paths = self._catalog_paths(set(targets.values()))
                if all(self._holds(paths.get(i), i) for i in set(targets.values())):
                    return [{"link": link, "id": targets[link]} for link in memory.links]
        return self.resolve_links(memory, self.scan()) if memory.links else []

    def _holds(self, rel: str | None, memory_id: str) -> bool:
        return rel is not None and self._mentions_id(rel, memory_id)

    def _mentions_id(self, rel: str, memory_id: str) -> bool:
        """Whether the (invalid) file at ``rel`` names ``memory_id`` in its header."""
        try:
            with store.inside(self.root, rel).open("rb") as handle:
                head = handle.read(64 * 1024)
        except (OSError, VaultError):
            return False
        pattern = rb"(?m)^id:[ \t]*['\"]?" + re.escape(memory_id.encode()) + rb"['\"]?[ \t]*(#|$)"
        return re.search(pattern, head) is not None

    def list(
        self,
        *,
        type: str | None = None,
        scope: str | None = None,
        project: str | None = None,
        lifecycle: str | None = None,
        tier: str | None = None,
        trust: str | None = None,
        include_trash: bool = False,
    ) -> tuple[list[Entry], list[VaultError]]:
        """Memories matching every given filter, ordered by path."""
        filters = (("type", type), ("scope", scope), ("lifecycle", lifecycle), ("tier", tier), ("trust", trust))
        for key, value in filters:
            if value is not None and value not in ENUMS[key]:
                raise InvalidInput(f"unknown {key} {value!r}; expected one of {', '.join(ENUMS[key])}")
        result = self.scan()
        out = []
        for entry in result.entries.values():
            m = entry.memory
            if entry.in_trash and not include_trash:
                continue
            if (
                (type and m.type != type)
                or (scope and m.scope != scope)
                or (project and m.project != project)
                or (lifecycle and m.lifecycle != lifecycle)
                or (tier and m.tier != tier)
                or (trust and m.trust != trust)
            ):
                continue
            out.append(entry)
        out.sort(key=lambda e: e.path)
        return out, result.problems

    # `builtins.list` below: inside this class `list` names the method Vault.list.
    def resolve_links(self, memory: Memory, scan: Scan) -> builtins.list[dict[str, str | None]]:
        """Each link of ``memory`` with the id it points to (None when dangling)."""
        by_key: dict[str, str] = {}
        for entry in scan.active():
            stem = entry.path.rsplit("/", 1)[-1][:-3]
            by_key.setdefault(stem.lower(), entry.memory.id)
            by_key.setdefault(entry.memory.title.lower(), entry.memory.id)
        out = []
        for link in memory.links:
            target = link.strip()
            if target.startswith("[[") and target.endswith("]]"):
                target = target[2:-2].split("|", 1)[0].split("#", 1)[0]
            resolved = target if target in scan.entries else by_key.get(target.lower())
            out.append({"link": link, "id": resolved})
        return out

    # ------------------------------------------------------------ writing helpers

    def _forgotten(self) -> dict[str, str]:
        return forgotten_digests(self.journal.events())

    def _build(self, request: NewMemory, stamp: datetime) -> Memory:
        text = redact(request.text.strip("\n")).rstrip() + "\n"
        if not text.strip():
            raise InvalidInput("memory text is empty")
        scope = request.scope or ("project" if request.project else "global")
        core = request.type == "core-profile"
        fields: dict[str, Any] = {
            "id": new_memory_id(),
            "title": redact(request.title.strip()) if request.title and request.title.strip() else make_title(text),
            "type": request.type,
            "class": request.klass,
            "scope": scope,
            "project": redact(request.project) if request.project else None,
            "paths": list(request.paths),
            "tasks": list(request.tasks),
            "operations": list(request.operations),
            "phases": list(request.phases),
            "authority": request.authority,
            "trust": request.trust,
            "lifecycle": "proven" if request.authority == "explicit" else "trial",
            "recall": request.recall or ("passive" if core else "active"),
            "tier": request.tier or ("hot" if core else "cold"),
            "importance": request.importance,
            "summary": redact(request.summary) if request.summary else make_summary(text),
            "trigger": redact(request.trigger) if request.trigger else "",
            "tags": [redact(tag) for tag in request.tags],
            "source": redact(request.source),  # a document URI may carry user:password@
            "created": stamp,
            "updated": stamp,
            **request.extra,
        }
        return from_fields({k: v for k, v in fields.items() if v is not None}, text, path="<new memory>")

    @staticmethod
    def add_event(memory: Memory, kind: str = "add", **details: Any) -> Event:
        """The journal event of a new memory: what replay needs of it, plus ``details``."""
        return Event(
            kind,
            memory.id,
            {
                "authority": memory.authority,
                "lifecycle": memory.lifecycle,
                "title": memory.title,
                "text_sha256": text_digest(memory_text(memory)),
                "type": memory.type,
                "proof_count": memory.proof_count,
                "applied": {k: v for k, v in memory.applied.items() if v},
                **details,
            },
        )

    def _fold_evidence(self, entry: Entry, source: str, stamp: datetime) -> tuple[Memory, Event]:
        memory = entry.memory
        # The baseline: what replay starts from when this is the first event it meets about the memory.
        baseline = {"lifecycle": memory.lifecycle, "authority": memory.authority, "proof_count": memory.proof_count,
                    "applied": {k: v for k, v in memory.applied.items() if v}}
        event = Event("evidence", memory.id, {"source": source, "baseline": baseline})
        updated = memory.replace(
            proof_count=memory.proof_count + 1,
            evidence=(*memory.evidence, {"event": event.id, "source": source}),
            updated=stamp,
        )
        return updated, event

    # ------------------------------------------------------------ add / import

    @indexed
    def add(self, request: NewMemory, *, allow_one_off: bool = False, allow_forgotten: bool = False) -> AddResult:
        """Remember one memory; the same text twice adds evidence instead of a duplicate.

        Raises:
            InvalidInput: empty text, a one-off instruction, or bad field values.
            ForgottenContent: the text was permanently forgotten.
        """
        phrase = is_one_off(request.text)
        if phrase and not allow_one_off:
            raise InvalidInput(
                f"not stored: '{phrase}' marks a one-off instruction, not a lasting memory (use --force to keep it)"
            )
        stamp = now()
        memory = self._build(request, stamp)
        self._check_learning(memory)
        digest = text_digest(memory_text(memory))
        with self.lock.hold():
            forgotten = self._forgotten()
            if digest in forgotten and not allow_forgotten:
                raise ForgottenContent(
                    f"this text was permanently forgotten ({forgotten[digest]}) and is not re-learned"
                )
            scan = self.scan()
            for entry in scan.active():
                if text_digest(memory_text(entry.memory)) == digest and entry.memory.lifecycle != "superseded":
                    updated, event = self._fold_evidence(entry, memory.source, stamp)
                    store.write(self.root, entry.path, updated, entry.parsed)
                    self.journal.append([event])
                    return AddResult(entry.memory.id, entry.path, False,
                                     "the same text was already remembered; evidence added")
            notice: str | None = None
            if memory.tier == "hot":
                memory, notice = self._admit_hot(memory, scan, stamp)
            rel = store.choose_path(self.root, store.folder_for(memory), memory)
            store.write(self.root, rel, memory)
            self.journal.append([self.add_event(memory)])
        return AddResult(memory.id, rel, True, notice)

    def _admit_hot(self, memory: Memory, scan: Scan, stamp: datetime) -> tuple[Memory, str | None]:
        """Run the hot tier's overflow before a hot write; a memory that still does not fit goes cold."""
        from ..governance.actions import View
        from ..governance.maintain import Executor, vetoes
        from ..governance.tiers import admit

        view = View.from_scan(scan, stamp, self.config, self.root, vetoes(self.journal))
        actions, memory, notice = admit(view, memory)
        if actions:
            executor = Executor(self, scan, stamp)
            for action in actions:
                executor.apply(action)
            moved = ", ".join(a.memory for a in actions)
            notice = (notice + "; " if notice else "") + f"hot tier overflow moved {moved} to cold"
        return memory, notice

    @indexed
    def import_jsonl(self, lines: Iterable[str], source_name: str = "<stdin>") -> ImportResult:
        """Bulk add: one JSON object per line (frontmatter keys plus ``body``).

        Valid lines are imported even when others fail; each failure carries its line number.
        """
        stamp = now()
        errors: list[VaultError] = []
        parsed: list[tuple[int, Memory]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.append(InvalidInput(f"not valid JSON: {exc.msg}", path=source_name, line=number))
                continue
            except (ValueError, RecursionError):  # a number with too many digits, or nesting too deep
                errors.append(InvalidInput("not valid JSON: a value is too large or too deeply nested",
                                           path=source_name, line=number))
                continue
            if not isinstance(record, dict):
                errors.append(InvalidInput("each line must be a JSON object", path=source_name, line=number))
                continue
            try:
                parsed.append((number, self._from_record(record, stamp, source_name, number)))
            except VaultError as exc:
                exc.path, exc.line = source_name, number
                errors.append(exc)
        added: list[str] = []
        merged: list[str] = []
        with self.lock.hold():
            journal_events = list(self.journal.events())
            forgotten = forgotten_digests(journal_events)
            scan = self.scan()
            used_ids = set(scan.entries) | {e.memory for e in journal_events}
            by_digest = {
                text_digest(memory_text(e.memory)): e for e in scan.active() if e.memory.lifecycle != "superseded"
            }
            pending: dict[str, tuple[str, Memory, ParsedFile | None]] = {}  # id -> (path, memory, original)
            taken: set[str] = set()
            events: list[Event] = []
            for number, memory in parsed:
                digest = text_digest(memory_text(memory))
                if digest in forgotten:
                    errors.append(ForgottenContent(
                        f"text was permanently forgotten ({forgotten[digest]}); not imported",
                        path=source_name, line=number,
                    ))
                    continue
                if memory.id in used_ids:
                    errors.append(InvalidInput(
                        f"id {memory.id} is already used in this vault; ids are never reused",
                        path=source_name, line=number,
                    ))
                    continue
                existing = by_digest.get(digest)
                if existing is not None:
                    current = pending.get(existing.memory.id)
                    base = Entry(existing.path, ParsedFile(current[1], "")) if current else existing
                    updated, event = self._fold_evidence(base, memory.source, stamp)
                    pending[existing.memory.id] = (existing.path, updated, existing.parsed)
                    events.append(event)
                    merged.append(existing.memory.id)
                    continue
                rel = store.choose_path(self.root, store.folder_for(memory), memory, taken)
                taken.add(rel)
                used_ids.add(memory.id)
                pending[memory.id] = (rel, memory, None)
                by_digest[digest] = Entry(rel, ParsedFile(memory, ""))
                events.append(self.add_event(memory, "import"))
                added.append(memory.id)
            writes = [
                (store.inside(self.root, rel), render(memory, original))
                for rel, memory, original in pending.values()
            ]
            fsio.write_many_atomic(writes)
            self.journal.append(events)
        return ImportResult(added, merged, errors)

    def _from_record(self, record: dict[str, Any], stamp: datetime, source_name: str, number: int) -> Memory:
        record = dict(record)
        body = record.pop("body", "")
        if not isinstance(body, str):
            raise InvalidInput("key 'body' must be text")
        body = redact(body)
        if body and not body.endswith("\n"):
            body += "\n"
        record.setdefault("id", new_memory_id())
        record.setdefault("type", "fact")  # as for `add`
        if "title" not in record and body.strip():
            record["title"] = make_title(body)
        if "summary" not in record and body.strip():
            record["summary"] = make_summary(body)
        if record.get("project") and "scope" not in record:
            record["scope"] = "project"
        record.setdefault("authority", "explicit")
        record.setdefault("lifecycle", "proven" if record["authority"] == "explicit" else "trial")
        if record.get("type") == "core-profile":
            record.setdefault("tier", "hot")
            record.setdefault("recall", "passive")
        record.setdefault("created", stamp)
        record.setdefault("updated", stamp)
        for key in record:  # every value a secret could hide in (tags, source, evidence, unknown keys)
            if key != "id":
                record[key] = redact_data(record[key])
        memory = from_fields(record, body, path=source_name)
        if not memory_text(memory).strip():
            raise InvalidInput("memory has no text (body, summary or title)")
        self._check_learning(memory)
        return memory

    def _check_learning(self, memory: Memory) -> None:
        """With ``vault.learning = false`` nothing new is inferred; explicit memories still are added."""
        if memory.authority == "inferred" and not self.config.vault.learning:
            raise InvalidInput("learning is off (vault.learning = false): inferred memories are not stored; "
                               "add it as explicit (--authority explicit) or turn learning on")

    # ------------------------------------------------------------ correct

    @indexed
    def correct(self, memory_id: str, text: str, title: str | None = None) -> ChangeResult:
        """Write a new version of a memory; the old one becomes superseded (history kept)."""
        if not text.strip():
            raise InvalidInput("correction text is empty")
        stamp = now()
        with self.lock.hold():
            scan = self.scan()
            if self.finish_corrections(scan, memory_id):  # one of this memory that a crash cut short
                scan = self.scan()
            old = self.entry(memory_id, scan)
            if old.in_trash:
                raise InvalidInput(f"{memory_id} is in the trash; restore it before correcting it")
            body = redact(text.strip("\n")).rstrip() + "\n"
            if old.memory.lifecycle == "superseded":
                newer = scan.entries.get(old.memory.superseded_by or "")
                if (newer is not None and not newer.in_trash and newer.memory.supersedes == memory_id
                        and text_digest(memory_text(newer.memory)) == text_digest(body)):
                    # The same correction again (a caller retrying after a crash or a lost answer): done already.
                    done = next((e.id for e in self.journal.events(("correct",))
                                 if e.memory == memory_id and e.payload.get("new") == newer.memory.id), None)
                    return ChangeResult("corrected", newer.memory.id, newer.path, related=memory_id, event=done)
                raise InvalidInput(f"{memory_id} is superseded by {old.memory.superseded_by or 'a newer version'}; "
                                   "correct that one instead")
            event_id = new_event_id()
            new = old.memory.replace(
                id=new_memory_id(),
                title=redact(title.strip()) if title and title.strip() else old.memory.title,
                body=body,
                summary=make_summary(body),
                authority="explicit",
                lifecycle="proven",
                supersedes=memory_id,
                superseded_by=None,
                evidence=(*old.memory.evidence, {"event": event_id, "source": "user"}),
                proof_count=1,
                applied={k: 0 for k in old.memory.applied},
                last_applied=None,
                created=stamp,
                updated=stamp,
                plain=False,
            )
            superseded = old.memory.replace(
                lifecycle="superseded", superseded_by=new.id, tier="cold", updated=stamp, plain=False
            )
            event = Event(
                "correct",
                memory_id,
                {
                    "new": new.id,
                    "old_lifecycle": old.memory.lifecycle,
                    "old_tier": old.memory.tier,
                    "title": new.title,
                    "text_sha256": text_digest(body),
                },
                id=event_id,
            )
            folder = old.path.rsplit("/", 1)[0] if "/" in old.path else store.folder_for(new)
            store.ensure_unchanged(self.root, old.path, old.parsed)  # before the new version exists
            rel = store.choose_path(self.root, folder, new)
            store.write(self.root, rel, new)
            store.write(self.root, old.path, superseded, old.parsed)
            self.journal.append([event])
        return ChangeResult("corrected", new.id, rel, related=memory_id, event=event.id)

    def finish_corrections(self, scan: Scan, memory_id: str | None = None) -> builtins.list[str]:
        """Complete the corrections a crash cut short (of ``memory_id`` alone, when given); returns the
        new versions' ids.  The caller holds the writer lock.

        :meth:`correct` writes the new version (the old one's evidence plus the correction's event id),
        then marks the old one superseded, then journals the correction under that event id.  A new
        version whose event id the journal lacks, and that no other event names, is what a crash in
        between leaves: the old memory is marked superseded by it (unless it is already) and the event
        is written, as the correction would have.
        """
        known = self.journal.known_ids()
        finished: builtins.list[str] = []
        states: dict[str, MemoryState] | None = None
        named: set[str] | None = None  # every memory id the journal names
        for entry in sorted(scan.entries.values(), key=lambda e: e.memory.id):
            new = entry.memory
            old = scan.entries.get(new.supersedes or "")
            if entry.in_trash or old is None or old.in_trash or (memory_id is not None and old.memory.id != memory_id):
                continue
            count = len(old.memory.evidence)
            if len(new.evidence) <= count or new.evidence[:count] != old.memory.evidence:
                continue
            mark = new.evidence[count]
            event_id = mark.get("event")
            if (set(mark) != {"event", "source"} or not isinstance(event_id, str)
                    or not event_id.startswith("e-") or event_id in known):
                continue
            if named is None:
                named = set()
                for event in self.journal.events():
                    named.update(governed_ids(event) if event.kind == "govern" else {event.memory})
                    if isinstance(event.payload.get("new"), str):
                        named.add(event.payload["new"])
            if new.id in named:  # journalled otherwise (a governance supersession, say): not a crash's trace
                continue
            payload: dict[str, Any] = {"new": new.id, "title": new.title,
                                       "text_sha256": text_digest(memory_text(new)), "recovered": True}
            if old.memory.superseded_by is None and old.memory.lifecycle != "superseded":
                payload.update(old_lifecycle=old.memory.lifecycle, old_tier=old.memory.tier)
                superseded = old.memory.replace(lifecycle="superseded", superseded_by=new.id, tier="cold",
                                                updated=now(), plain=False)
                store.write(self.root, old.path, superseded, old.parsed)
            elif old.memory.superseded_by == new.id:
                # Marked already: its lifecycle before the correction is the journal's (its tier is lost).
                if states is None:
                    states = replay(self.journal.events())
                state = states.get(old.memory.id)
                payload["old_lifecycle"] = state.lifecycle if state and state.lifecycle != "superseded" else "proven"
            else:
                continue  # superseded by another memory since: a person's doing, left alone
            self.journal.append([Event("correct", old.memory.id, payload, id=event_id)])
            known = self.journal.known_ids()
            finished.append(new.id)
        return finished

    # ------------------------------------------------------------ forget / trash

    def trash_path(self, entry: Entry, taken: set[str] | None = None) -> str:
        """A free path in the trash for ``entry`` (its file name when free), not among ``taken``."""
        memory = entry.memory
        name = entry.path.rsplit("/", 1)[-1]
        suffix = memory.id[-6:] if memory.id.startswith("m-") else memory.id[:12]
        stem = name[:-3]
        while len(f"{stem}-{suffix}.md".encode("utf-8", "surrogateescape")) > 255:  # a file name's limit
            stem = stem[:-1]
        for dest in (f"{store.TRASH_DIR}/{name}", f"{store.TRASH_DIR}/{stem}-{suffix}.md",
                     f"{store.TRASH_DIR}/{store.slugify(memory.id, 120)}.md"):
            if not (self.root / dest).exists() and dest not in (taken or ()):
                return dest
        return f"{store.TRASH_DIR}/{store.slugify(memory.id, 100)}-{new_event_id()[-8:]}.md"

    def move_to_trash(self, entry: Entry, stamp: datetime, reason: str, dest: str | None = None) -> str:
        """Move ``entry`` to the trash (write the trash copy, then remove the file); returns the new path.

        ``dest`` (from :meth:`trash_path`) names the trash file; by default a free one is chosen.
        """
        memory = entry.memory.replace(
            trashed_at=stamp,
            expires_at=stamp + timedelta(days=self.config.vault.trash_days),
            trashed_from=entry.path,
            updated=stamp,
            plain=False,
            extra={**entry.memory.extra, "trash_reason": reason},
        )
        dest = dest or self.trash_path(entry)
        store.ensure_unchanged(self.root, entry.path, entry.parsed)  # a change made meanwhile is not dropped
        store.move(self.root, entry.path, dest, memory, None)
        return dest

    def move_out_of_trash(self, entry: Entry, stamp: datetime, dest: str | None = None) -> str:
        """Move a trashed ``entry`` back to where it came from (``dest`` when given); returns the new path."""
        extra = {k: v for k, v in entry.memory.extra.items() if k != "trash_reason"}
        memory = entry.memory.replace(trashed_at=None, expires_at=None, trashed_from=None, updated=stamp, extra=extra)
        dest = dest or entry.memory.trashed_from
        if dest:
            try:
                store.inside(self.root, dest)
            except VaultError:
                dest = None
        if not dest or (self.root / dest).exists() or not dest.endswith(".md"):
            dest = store.choose_path(self.root, store.folder_for(memory), memory)
        store.ensure_unchanged(self.root, entry.path, entry.parsed)  # a change made meanwhile is not dropped
        store.move(self.root, entry.path, dest, memory, None)
        return dest

    @indexed
    def forget(self, memory_id: str, *, permanent: bool = False) -> ChangeResult:
        """Move a memory to the trash with a tombstone, or purge every trace of it."""
        stamp = now()
        with self.lock.hold():
            scan = self.scan()
            entry = self.entry(memory_id, scan)
            if not permanent:
                if entry.in_trash:
                    raise InvalidInput(f"{memory_id} is already in the trash (use --permanent to purge it)")
                event = Event("forget", memory_id, {"title": entry.memory.title})
                dest = self.move_to_trash(entry, stamp, "forget")
                self.journal.append([event])
                return ChangeResult("forgotten", memory_id, dest, event=event.id)
            digest = text_digest(memory_text(entry.memory))
            fsio.remove(store.inside(self.root, entry.path))
            self.journal.scrub({memory_id})
            event = Event("purge", memory_id, {"permanent": True, "text_sha256": digest})
            self.journal.append([event])
        return ChangeResult("purged", memory_id, None, event=event.id)

    def trash_list(self) -> builtins.list[Entry]:
        return sorted(self.scan().trashed(), key=lambda e: e.path)

    @indexed
    def restore(self, memory_id: str) -> ChangeResult:
        """Bring a memory back from the trash to where it was."""
        stamp = now()
        with self.lock.hold():
            entry = self.entry(memory_id)
            if not entry.in_trash:
                raise InvalidInput(f"{memory_id} is not in the trash")
            dest = self.move_out_of_trash(entry, stamp)
            event = Event("restore", memory_id, {})
            self.journal.append([event])
        return ChangeResult("restored", memory_id, dest, event=event.id)

    @indexed
    def trash_empty(self, *, expired_only: bool = False) -> builtins.list[str]:
        """Delete trashed memories for good (only expired ones with ``expired_only``)."""
        stamp = now()
        purged = []
        with self.lock.hold():
            events = []
            for entry in sorted(self.scan().trashed(), key=lambda e: e.path):
                expires = entry.memory.expires_at
                if expired_only and (expires is None or expires > stamp):
                    continue
                fsio.remove(store.inside(self.root, entry.path))
                kind = "trash-expire" if expired_only else "purge"
                events.append(Event(kind, entry.memory.id, {"permanent": False}))
                purged.append(entry.memory.id)
            self.journal.append(events)
        return purged

    # ------------------------------------------------------------ feedback

    @indexed
    def feedback(self, memory_id: str, outcome: str, *, application: str | None = None) -> FeedbackResult:
        """Record how a delivered memory worked out; counters, and for inferred memories the lifecycle.

        ``used-successfully`` promotes a trial memory to proven; ``corrected`` and
        ``contributed-to-failure`` supersede an inferred memory (undo with
        :meth:`rollback`); explicit memories only count.  With ``application``
        (the id of the journal event that delivered the memory) the same outcome
        reported twice for that application counts once.

        Raises:
            InvalidInput: an unknown outcome, a plain note, a trashed or superseded
                memory, or an application that did not deliver this memory.
            MemoryNotFound: no memory has that id.
        """
        if outcome not in OUTCOMES:
            raise InvalidInput(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOMES)}")
        stamp = now()
        with self.lock.hold():
            entry = self.entry(memory_id)
            memory = entry.memory
            if application is not None:
                event_id = derived_event_id("feedback", application, memory_id, outcome)
                if event_id in self.journal.known_ids():  # reported before: the file already counts it
                    return FeedbackResult("already-recorded", memory_id, entry.path, outcome, memory.lifecycle,
                                          memory.lifecycle, dict(memory.applied), memory.last_applied,
                                          application, event_id)
            else:
                event_id = new_event_id()
            if memory.plain:
                raise InvalidInput(f"{memory_id} is a plain note without memvault frontmatter; "
                                   "feedback is kept only on memories")
            if entry.in_trash:
                raise InvalidInput(f"{memory_id} is in the trash; restore it before giving feedback")
            if memory.lifecycle == "superseded":
                newer = memory.superseded_by
                hint = f"give feedback on {newer}" if newer else f"undo with `memvault rollback {memory_id}`"
                raise InvalidInput(f"{memory_id} is superseded; {hint}")
            if application is not None:
                self._check_delivered(memory_id, application)
            updated = apply_outcome(memory, outcome, stamp)
            payload: dict[str, Any] = {
                "outcome": outcome,
                "authority": memory.authority,
                "old_lifecycle": memory.lifecycle,
                "lifecycle": updated.lifecycle,
            }
            if application is not None:
                payload["application"] = application
            event = Event("feedback", memory_id, payload, id=event_id, ts=format_datetime(stamp))
            store.write(self.root, entry.path, updated, entry.parsed)
            self.journal.append([event])
        if updated.lifecycle == memory.lifecycle:
            action = "recorded"
        else:
            action = "promoted" if updated.lifecycle == "proven" else "superseded"
        return FeedbackResult(action, memory_id, entry.path, outcome, memory.lifecycle, updated.lifecycle,
                              dict(updated.applied), updated.last_applied, application, event.id)

    def _check_delivered(self, memory_id: str, application: str) -> None:
        """Raise unless journal event ``application`` is an application that delivered ``memory_id``."""
        for event in self.journal.events():
            if event.id != application:
                continue
            if event.kind != "application":
                raise InvalidInput(f"{application} is a {event.kind} event, not an application")
            ids = event.payload.get("ids")
            if isinstance(ids, builtins.list) and memory_id in ids:
                return
            break
        else:
            raise InvalidInput(f"memory {memory_id} was not delivered in application {application} "
                               "(no such application in the journal)")
        raise InvalidInput(f"memory {memory_id} was not delivered in application {application}")

    # ------------------------------------------------------------ rollback

    @indexed
    def rollback(self, memory_id: str | None = None, *, event_id: str | None = None) -> ChangeResult:
        """Undo the last correct, forget, superseding feedback or governance action of ``memory_id``
        (or exactly the journal event ``event_id``).

        A correction is undone from either of its versions; a feedback that
        superseded an inferred memory gets its earlier lifecycle back (its
        counters stay: the outcome was reported); a governance action (a merge,
        supersession, tier move, link, tag rewrite, decay or compaction) is
        undone from any memory it touched.
        """
        stamp = now()
        with self.lock.hold():
            events = list(self.journal.events())
            undone = {str(e.payload.get("undoes")) for e in events if e.kind == "rollback"}
            purged = {e.memory for e in events if e.kind in ("purge", "trash-expire")}
            if event_id is not None:
                chosen = next((e for e in events if e.id == event_id), None)
                if chosen is None:
                    raise NothingToUndo(f"no journal event {event_id}")
                if chosen.id in undone:
                    raise NothingToUndo(f"{event_id} was already rolled back")
                memory_id = chosen.memory
            if memory_id is None:
                raise InvalidInput("name a memory id or an event id to roll back")
            if memory_id in purged and event_id is None:
                raise NothingToUndo(f"{memory_id} was deleted for good; it cannot be rolled back")
            target = None
            for event in reversed(events):
                if event.id in undone or (event_id is not None and event.id != event_id):
                    continue
                if event.kind == "govern" and memory_id in governed_ids(event) and (
                        event_id is not None or event.payload.get("kind") != "repair"):  # a repair undoes nothing
                    target = event
                    break
                if event.kind == "forget" and event.memory == memory_id:
                    target = event
                    break
                if event.kind == "correct" and memory_id in (event.memory, event.payload.get("new")):
                    target = event
                    break
                if feedback_superseded(event) and event.memory == memory_id:
                    target = event
                    break
            if target is None:
                if event_id is not None:
                    raise NothingToUndo(f"{event_id} is not a correction, forget, superseding feedback or "
                                        "governance action")
                raise NothingToUndo(f"no correction, forget, superseding feedback or governance action of "
                                    f"{memory_id} to roll back")
            if target.kind == "correct" and target.memory in purged:
                raise NothingToUndo(f"{target.memory} was deleted for good; its correction cannot be rolled back")
            scan = self.scan()
            if target.kind == "govern":
                from ..governance.maintain import undo

                touched, conflicts = undo(self, target, stamp)
                action = str(target.payload.get("kind", "govern"))
                event = Event("rollback", memory_id, {"undoes": target.id, "kind": "govern", "action": action,
                                                      "conflicts": conflicts})
                self.journal.append([event])
                related = ", ".join(i for i in touched if i != memory_id) or None
                return ChangeResult(f"undid {action}", memory_id, None, related, event.id, conflicts=conflicts)
            if target.kind == "forget":
                entry = self.entry(memory_id, scan)
                if not entry.in_trash:
                    raise NothingToUndo(f"{memory_id} is no longer in the trash")
                dest = self.move_out_of_trash(entry, stamp)
                result = ChangeResult("restored", memory_id, dest)
            elif target.kind == "feedback":
                entry = self.entry(memory_id, scan)
                if entry.memory.lifecycle != "superseded":
                    raise NothingToUndo(f"{memory_id} is no longer superseded; its feedback has nothing to undo")
                lifecycle = str(target.payload["old_lifecycle"])
                store.write(self.root, entry.path, entry.memory.replace(lifecycle=lifecycle), entry.parsed)
                result = ChangeResult("reinstated", memory_id, entry.path)
            else:
                old_id, new_id = target.memory, str(target.payload["new"])
                old = self.entry(old_id, scan)
                new = scan.entries.get(new_id)
                if new is not None and new.memory.lifecycle == "superseded":
                    raise NothingToUndo(f"{new_id} was corrected again; roll back {new.memory.superseded_by} first")
                restored = old.memory.replace(
                    lifecycle=str(target.payload.get("old_lifecycle", "proven")),
                    superseded_by=None,
                    tier=str(target.payload.get("old_tier", old.memory.tier)),
                    updated=stamp,
                )
                store.write(self.root, old.path, restored, old.parsed)
                if new is not None and not new.in_trash:
                    self.move_to_trash(new, stamp, "rollback")
                result = ChangeResult("rolled-back", old_id, old.path, related=new_id)
            event = Event("rollback", memory_id, {"undoes": target.id, "kind": target.kind})
            self.journal.append([event])
        return ChangeResult(result.action, result.id, result.path, result.related, event.id)

    # ------------------------------------------------------------ journal replay

    def _replay_plan(self) -> builtins.list[tuple[Entry, builtins.list[ReplayDiff]]]:
        """Each file whose lifecycle or counters disagree with the journal, with the differences."""
        states = replay(self.journal.events())
        plan = []
        for entry in self.scan().entries.values():
            state = states.get(entry.memory.id)
            if state is None or entry.memory.plain:
                continue
            diffs = [
                ReplayDiff(entry.memory.id, entry.path, key, file_value, journal_value)
                for key, file_value, journal_value in _compare(entry.memory, state)
            ]
            if diffs:
                plan.append((entry, diffs))
        return plan

    def replay_diff(self) -> builtins.list[ReplayDiff]:
        """Where the files' lifecycle and counters differ from what the journal tells."""
        return [diff for _, diffs in self._replay_plan() for diff in diffs]

    @indexed
    def replay_apply(self) -> builtins.list[ReplayDiff]:
        """Rewrite lifecycle and counters of every file that disagrees with the journal."""
        applied: builtins.list[ReplayDiff] = []
        with self.lock.hold():
            self.finish_corrections(self.scan())  # the journal is completed, not the files undone
            for entry, diffs in self._replay_plan():
                updates: dict[str, Any] = {d.key: d.journal_value for d in diffs}
                if updates.get("last_applied"):
                    stamp_text = str(updates["last_applied"]).replace("Z", "+00:00")
                    updates["last_applied"] = datetime.fromisoformat(stamp_text)
                store.write(self.root, entry.path, entry.memory.replace(**updates), entry.parsed)
                applied.extend(diffs)
        return applied

    # ------------------------------------------------------------ governance

    @indexed
    def maintain(self, *, dry_run: bool = False, now: datetime | None = None,
                 embedder: Embedder | None = None, replan: bool = False) -> MaintainReport:
        """Run the governance pipeline (see :mod:`vault_engine.governance.maintain`)."""
        from ..governance.maintain import maintain

        return maintain(self, dry_run=dry_run, now=now, embedder=embedder, replan=replan)

    def audit(self, *, now: datetime | None = None) -> Audit:
        """A read-only health report (see :mod:`vault_engine.governance.audit`)."""
        from ..governance.audit import audit

        return audit(self, now=now)

    # ------------------------------------------------------------ indexes

    def sync(self, *, full: bool = False, embedder: Embedder | None = None,
             paths: Iterable[str] | None = None) -> SyncReport:
        """Bring the search indexes in line with the files (only ``paths``, relative, when given)."""
        from ..index.sync import Indexes, sync

        model = embedder if embedder is not None else self.embedder()
        with self.index_lock.hold():
            indexes = Indexes(self.root, model, vocabulary=self.config.retrieval.weight_expansion > 0)
            try:
                try:
                    return sync(self.root, indexes, full=full, progress=self.progress, paths=paths)
                except IndexStale as exc:  # damage found past the open: rebuild from the files
                    indexes.notice = f"notice: {exc.one_line()}"
                    return sync(self.root, indexes, full=True, progress=self.progress)
            finally:
                indexes.close()

    def search(self, request: SearchRequest) -> SearchResult:
        """Hybrid search; builds the indexes first when they are missing or unreadable."""

        notice = None
        if not (self.root / store.STATE_DIR / "catalog.sqlite").exists():
            report = self.sync()
            notice = report.notice or f"notice: built the search indexes ({report.plan.summary()})"
        elif self._unbuilt():  # being built, or left empty by a rebuild cut short (a full disk, no model, Ctrl-C)
            if self.index_lock.held():  # being built right now: a reader never waits for it
                notice = ("notice: the search indexes are being built by another memvault process; "
                          "results may be incomplete until it is done")
            else:  # the files decide
                report = self.sync()
                if not report.plan.empty:
                    built = f"notice: the search indexes were empty; built them ({report.plan.summary()})"
                    notice = report.notice or built
        for attempt in (1, 2, 3):
            problem = None
            try:
                result = self._search_once(request)
            except IndexStale as exc:
                if attempt == 3:
                    raise
                problem = exc.one_line()
            if problem is None:
                result.notice = notice
                return result
            # Unreadable or from another version: rebuild from the files (outside the
            # handler, so nothing of the failed attempt is held open), then search again.
            # A sync first: it drops just the stale part and refills it, keeping the vectors
            # of unchanged text (a full rebuild re-embeds the whole vault); then a full one.
            report = self.sync(full=attempt == 2)
            notice = f"notice: {problem}; rebuilt ({report.plan.summary()})"
        raise AssertionError("unreachable")

    def _unbuilt(self) -> bool:
        """Whether the catalog exists but lists nothing (an empty vault, or a rebuild cut short)."""
        searcher = self._searcher
        if searcher is not None and searcher.is_current():
            return searcher.indexed == 0
        from ..index.catalog import Catalog

        try:
            catalog = Catalog(self.root / store.STATE_DIR / "catalog.sqlite")
            try:
                return catalog.count() == 0
            finally:
                catalog.close()
        except VaultError:  # unreadable: the search that follows rebuilds it
            return False

    def searcher(self) -> Searcher:
        """A searcher kept open while the indexes stay as they were (in a long-lived process,
        repeated searches and context deliveries pay the loading once)."""
        from ..retrieval.searcher import Searcher

        searcher = self._searcher
        if searcher is not None and not searcher.is_current():
            searcher.close()
            searcher = self._searcher = None
        if searcher is None:
            searcher = self._searcher = Searcher(self.root, self.config, self.embedder())
        return searcher

    def _search_once(self, request: SearchRequest) -> SearchResult:
        searcher = self.searcher()
        try:
            return searcher.search(request)
        except IndexStale:
            searcher.close()
            self._searcher = None
            raise

    # ------------------------------------------------------------ status

    def status(self) -> Status:
        scan = self.scan()
        active = [e.memory for e in scan.active()]
        events = list(self.journal.events())
        hot = [m for m in active if m.tier == "hot" and m.lifecycle != "superseded"]
        from ..index.sync import freshness

        index_state, index_text = freshness(self.root)
        return Status(
            vault=str(self.root),
            memories=len(active),
            by_type=dict(sorted(Counter(m.type for m in active).items())),
            by_lifecycle=dict(sorted(Counter(m.lifecycle for m in active).items())),
            by_tier=dict(sorted(Counter(m.tier for m in active).items())),
            trash=sum(1 for _ in scan.trashed()),
            invalid=[p.one_line() for p in scan.problems],
            hot_chars=sum(resident_chars(m) for m in hot),
            hot_budget=self.config.tiers.hot_budget_chars,
            journal_events=len(events),
            journal_warnings=list(self.journal.warnings),
            index=index_text,
            index_state=index_state,
            embedding_model=self.config.embedding.model,
        )


def governed_ids(event: Event) -> set[str]:
    """Every memory id a ``govern`` journal event touched."""
    p = event.payload
    ids = {event.memory}
    for key in ("trash", "create", "related", "purge"):
        value = p.get(key)
        if isinstance(value, builtins.list):
            ids.update(v for v in value if isinstance(v, str))
    if isinstance(p.get("changes"), dict):
        ids.update(p["changes"])
    return ids


def apply_outcome(memory: Memory, outcome: str, stamp: datetime) -> Memory:
    """``memory`` after one reported ``outcome`` (pure: the plan of :meth:`Vault.feedback`).

    Explicit memories only count: feedback never overrides what a person set.
    """
    applied = {**memory.applied, outcome: memory.applied.get(outcome, 0) + 1}
    lifecycle = memory.lifecycle
    if outcome == "used-successfully" and lifecycle == "trial":
        lifecycle = "proven"
    elif outcome in ("corrected", "contributed-to-failure") and memory.authority == "inferred":
        lifecycle = "superseded"
    return memory.replace(applied=applied, last_applied=stamp, lifecycle=lifecycle)


def _compare(memory: Memory, state: MemoryState) -> list[tuple[str, Any, Any]]:
    out: list[tuple[str, Any, Any]] = []
    if memory.lifecycle != state.lifecycle:
        out.append(("lifecycle", memory.lifecycle, state.lifecycle))
    if memory.superseded_by != state.superseded_by and state.lifecycle == "superseded":
        out.append(("superseded_by", memory.superseded_by, state.superseded_by))
    if memory.proof_count != state.proof_count:
        out.append(("proof_count", memory.proof_count, state.proof_count))
    if dict(memory.applied) != state.applied:
        out.append(("applied", dict(memory.applied), dict(state.applied)))
    return out
