"""Conversation ingestion: turns go into a session buffer, spans of the buffer become episodes.

A session's uncompacted turns live in ``.memvault/sessions/<session>.jsonl``,
one JSON object per turn, appended durably after secret redaction (a secret
never reaches that file either).  One-off instructions ("not this time") are
never buffered.  For each incoming turn, :func:`ingest`:

1. senses the turn against the buffer (only once the buffer holds
   ``ingest.min_turns`` turns: nothing is compacted below that);
2. on a topic shift, or a load at or above ``ingest.load_threshold``,
   compacts the buffer first; the triggering turn starts the next buffer;
3. appends the turn, and compacts when the buffer reaches ``ingest.max_buffer``.

``flush`` compacts whatever remains, even one or two turns, and records the
session as closed (see :func:`session_record`).

Compaction asks the language model for a digest (title, summary, a trigger
written from the agent's side, a recall mode, 1-3 tags reusing the vault's
tags) and writes an ``episode`` memory (inferred, trial, learned, source
``session:<name>``) whose body holds every turn in full, byte for byte, under
a heading per turn.  The episode is linked both ways to the most recent
memories sharing one of its tags (case-insensitive).  Files are written and
journalled under the vault writer lock; only then is the buffer cut, with an
atomic rewrite.  So whatever stops a compaction (the model unavailable, the
vault busy) leaves every turn buffered: :class:`IngestDeferred` says so, and
the next ingest or flush retries.  Compacting a span that is already stored
(a crash after the write, before the cut) writes nothing twice.

Input (:func:`parse_turns`, see :mod:`.transcripts`) is JSONL or plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import fsio, locks, store
from ..clock import now
from ..errors import IngestDeferred, InvalidInput, LlmDeferred, LlmUnavailable, VaultError
from ..format.characters import scrub
from ..format.chat_turns import LABELS, parse_ts
from ..format.ids import new_memory_id
from ..format.memory import Memory, from_fields, memory_text, text_digest
from ..format.redact import redact_counted
from ..format.text import clip
from ..format.yamlfmt import format_datetime
from ..history import forgotten_as, forgotten_digests
from ..journal import PURGE_DECLINED, Event
from ..llm.base import RECALLS, Digest, Turn
from .transcripts import FORMATS as FORMATS  # re-exported: what callers of ingest read turns with
from .transcripts import check_session as check_session
from .transcripts import is_one_off_instruction as is_one_off_instruction
from .transcripts import parse_jsonl as parse_jsonl
from .transcripts import parse_text as parse_text
from .transcripts import parse_turns as parse_turns
from .transcripts import turn_from_record

if TYPE_CHECKING:
    from ..llm.base import Llm
    from ..store import Scan
    from ..vault import Transaction, Vault

SESSIONS_DIR = f"{store.STATE_DIR}/sessions"
DEFAULT_SESSION = "default"
LINK_LIMIT = 5  # an episode links to at most this many memories sharing a tag (the most recent)
MAX_TAGS = 3
SESSION_LOCK_TIMEOUT = 120.0  # another ingest of the same session may be waiting for the model


# ---------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Episode:
    """One compacted span of a session."""

    id: str
    path: str
    title: str
    turns: int
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    # created: a new file; existing: the same span was already stored (nothing written twice);
    # forgotten: the span's text was permanently forgotten, so it is not stored again
    action: str = "created"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "title": self.title, "turns": self.turns,
                "tags": list(self.tags), "links": list(self.links), "action": self.action}


@dataclass(slots=True)
class IngestResult:
    """What one :func:`ingest` call did."""

    session: str
    received: int = 0  # turns in the input
    buffered: int = 0  # turns appended to the buffer
    one_off: int = 0  # one-off instructions left out
    redacted: int = 0  # secrets redacted from the buffered turns
    episodes: list[Episode] = field(default_factory=list)
    pending: int = 0  # turns left in the buffer afterwards
    closed: bool = False  # flushed: the session record says closed
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "received": self.received, "buffered": self.buffered,
                "one_off": self.one_off, "redacted": self.redacted,
                "episodes": [e.to_json() for e in self.episodes], "pending": self.pending,
                "closed": self.closed, "warnings": list(self.warnings)}


# ---------------------------------------------------------------- rendering


def episode_body(turns: Sequence[Turn]) -> str:
    """The episode body: per turn a ``### <role> · <ts>`` heading, a blank line, the content (exact, but for
    the characters no memory may hold, made visible: see :func:`~vault_engine.format.characters.scrub`)."""
    parts = []
    for turn in turns:
        heading = f"### {turn.role}" + (f" · {turn.ts}" if turn.ts else "")
        content = turn.content if turn.content.endswith("\n") else turn.content + "\n"
        parts.append(f"{heading}\n\n{content}")
    return scrub("\n".join(parts))


def transcript(turns: Sequence[Turn]) -> str:
    """What the compacter reads: ``Role: content`` paragraphs."""
    return "\n\n".join(f"{turn.role.capitalize()}: {turn.content.strip()}" for turn in turns)


# ---------------------------------------------------------------- the buffer


@dataclass(frozen=True, slots=True)
class Buffered:
    """A buffered turn (already redacted) and the number of secrets redacted from it."""

    turn: Turn
    redacted: int = 0

    def to_line(self) -> str:
        record: dict[str, Any] = {"role": self.turn.role, "content": self.turn.content}
        if self.turn.ts:
            record["ts"] = self.turn.ts
        if self.redacted:
            record["redacted"] = self.redacted
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def buffer_path(root: Path, session: str) -> Path:
    return root / SESSIONS_DIR / f"{check_session(session)}.jsonl"


def read_buffer(root: Path, session: str, warnings: list[str] | None = None) -> list[Buffered]:
    """The buffered turns of ``session``; unreadable lines (a torn last line) are skipped with a warning."""
    path = buffer_path(root, session)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise VaultError(f"cannot read the session buffer: {exc.strerror}", path=path) from None
    out: list[Buffered] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            turn = turn_from_record(record) if isinstance(record, dict) else None
            count = record.get("redacted", 0) if isinstance(record, dict) else 0
        except (ValueError, RecursionError, InvalidInput):
            turn, count = None, 0
        if turn is None:
            if warnings is not None:
                warnings.append(f"{SESSIONS_DIR}/{path.name}:{number}: unreadable buffered turn skipped")
            continue
        out.append(Buffered(turn, count if isinstance(count, int) and not isinstance(count, bool) else 0))
    return out


def pending_turns(vault: Vault, session: str) -> int:
    """How many turns ``session`` holds in its buffer."""
    return len(read_buffer(vault.root, session))


# ---------------------------------------------------------------- the session record


def record_path(root: Path, session: str) -> Path:
    return root / SESSIONS_DIR / f"{check_session(session)}.json"


def session_record(vault: Vault, session: str) -> dict[str, Any]:
    """The session's record: ``{"session", "episodes": [ids, oldest first], "closed_at": text or None}``."""
    try:
        data = json.loads(record_path(vault.root, session).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    episodes = data.get("episodes") if isinstance(data, dict) else None
    closed = data.get("closed_at") if isinstance(data, dict) else None
    return {"session": session,
            "episodes": [e for e in episodes if isinstance(e, str)] if isinstance(episodes, list) else [],
            "closed_at": closed if isinstance(closed, str) else None}


def _save_record(vault: Vault, session: str, record: dict[str, Any]) -> None:
    fsio.write_atomic(record_path(vault.root, session),
                      json.dumps(record, ensure_ascii=False, sort_keys=True, indent=1) + "\n")


# ---------------------------------------------------------------- ingest


def ingest(vault: Vault, turns: Iterable[Turn], *, session: str = DEFAULT_SESSION, llm: Llm,
           flush: bool = False, project: str | None = None) -> IngestResult:
    """Buffer ``turns`` in ``session``, compacting spans into episodes as they close (see the module).

    ``project``: the project the conversation was about; its episodes are stored under it
    (global episodes without one).

    Raises:
        InvalidInput: a bad session name, or learning is off (``vault.learning = false``).
        IngestDeferred: a compaction could not finish (``LlmDeferred`` when the model could not
            answer); every turn is buffered, episodes written before it stay written.
        VaultBusy: another ingest holds the session for too long (nothing was buffered).
    """
    check_session(session)
    if not vault.config.vault.learning:
        raise InvalidInput("learning is off (vault.learning = false): conversations are not ingested")
    result = IngestResult(session)
    with vault.batch(sync_on_error=True):  # episodes written before a failure are indexed too
        _ingest(vault, list(turns), session, llm, flush, result, project)
    return result


def _ingest(vault: Vault, turns: list[Turn], session: str, llm: Llm, flush: bool, result: IngestResult,
            project: str | None) -> None:
    settings = vault.config.ingest
    max_buffer = max(1, settings.max_buffer)
    lock = locks.WriterLock(vault.root / SESSIONS_DIR / f"{session}.lock",
                           max(SESSION_LOCK_TIMEOUT, vault.config.vault.lock_timeout),
                           what=f"ingesting into session '{session}'")
    with lock.hold():
        compacter = _Compacter(vault, session, llm, read_buffer(vault.root, session, result.warnings), result,
                               project)
        failure: VaultError | None = None
        result.received = len(turns)
        try:  # a buffer left full by an earlier failure is compacted first, new turns or not
            while len(compacter.buffer) >= max_buffer:
                compacter.compact(max_buffer)
        except VaultError as exc:
            failure = exc
        for turn in turns:
            if is_one_off_instruction(turn):
                result.one_off += 1
                continue
            content, count = redact_counted(scrub(turn.content))  # a transcript's controls made visible
            item = Buffered(Turn(turn.role, content, turn.ts), count)
            if failure is None:
                try:
                    while len(compacter.buffer) >= max_buffer:  # left long by an earlier failure
                        compacter.compact(max_buffer)
                    if len(compacter.buffer) >= settings.min_turns:
                        sense = llm.sense([b.turn for b in compacter.buffer], item.turn)
                        if sense.topic_shift or float(sense.load) >= settings.load_threshold:
                            compacter.compact(len(compacter.buffer))  # this turn starts the next buffer
                except VaultError as exc:
                    failure = exc
            compacter.append(item)
            result.buffered += 1
            result.redacted += count
            if failure is None and len(compacter.buffer) >= max_buffer:
                try:
                    compacter.compact(len(compacter.buffer))
                except VaultError as exc:
                    failure = exc
        if flush and failure is None:
            try:
                while compacter.buffer:
                    compacter.compact(min(len(compacter.buffer), max_buffer))
                compacter.close()
                result.closed = True
            except VaultError as exc:
                failure = exc
        result.pending = len(compacter.buffer)
    if failure is not None:
        if isinstance(failure, LlmUnavailable):
            raise LlmDeferred(failure, result) from failure
        raise IngestDeferred(failure, result) from failure


class _Compacter:
    """The buffer of one session (the caller holds the session lock) and its compaction into episodes."""

    def __init__(self, vault: Vault, session: str, llm: Llm, buffer: list[Buffered], result: IngestResult,
                 project: str | None = None):
        self.vault = vault
        self.project = project
        self.session = session
        self.llm = llm
        self.buffer = buffer
        self.result = result
        self.path = buffer_path(vault.root, session)
        self.reopened = False

    def append(self, item: Buffered) -> None:
        fsio.append_line(self.path, item.to_line())
        self.buffer.append(item)
        if not self.reopened:  # new turns after a flush reopen the session
            record = session_record(self.vault, self.session)
            if record["closed_at"] is not None:
                _save_record(self.vault, self.session, {**record, "closed_at": None})
            self.reopened = True

    def close(self) -> None:
        record = session_record(self.vault, self.session)
        _save_record(self.vault, self.session, {**record, "closed_at": format_datetime(now())})

    def compact(self, count: int) -> Episode:
        """Write the first ``count`` buffered turns as one episode, then cut them from the buffer."""
        span = self.buffer[:count]
        turns = [b.turn for b in span]
        digest = self.llm.digest(transcript(turns), self.vault.scan().tags(), kind="conversation")
        stamp = now()
        vault = self.vault
        with vault.transaction() as tx:
            scan = vault.scan()
            memory, redacted = build_episode(digest, turns, self.session, scan, stamp, self.project)
            text = text_digest(memory_text(memory))
            forgotten = forgotten_digests(vault.journal.events(("purge", PURGE_DECLINED)))
            stored = next((e for e in scan.active()
                           if e.memory.lifecycle != "superseded" and text_digest(memory_text(e.memory)) == text),
                          None)
            blocked = forgotten_as(forgotten, memory_text(memory))
            if blocked is not None:
                episode = Episode(blocked, "", memory.title, len(turns), action="forgotten")
            elif stored is not None:  # written before the buffer was cut (a crash, then a retry)
                episode = Episode(stored.memory.id, stored.path, stored.memory.title, len(turns),
                                  stored.memory.tags, stored.memory.links, action="existing")
            else:
                episode = self._write(tx, memory, scan, len(turns), sum(b.redacted for b in span) + redacted)
        # Only now, with the episode stored and journalled, are its turns cut from the buffer.
        rest = self.buffer[count:]
        fsio.write_atomic(self.path, "".join(b.to_line() for b in rest))
        self.buffer = rest
        if episode.action == "created":
            record = session_record(vault, self.session)
            _save_record(vault, self.session, {**record, "episodes": [*record["episodes"], episode.id]})
        self.result.episodes.append(episode)
        return episode

    def _write(self, tx: Transaction, memory: Memory, scan: Scan, turns: int, redacted: int) -> Episode:
        vault = self.vault
        related = linked_memories(memory, scan)
        memory = memory.replace(links=tuple(e.memory.id for e in related), sender=memory.sender or vault.sender)
        rel = store.choose_path(vault.root, store.folder_for(memory), memory)
        tx.write(rel, memory)
        events = [vault.add_event(memory, source=memory.source, session=self.session, turns=turns,
                                  tags=list(memory.tags), links=list(memory.links), redacted=redacted,
                                  by=self.llm.name)]
        wanted = {t.casefold() for t in memory.tags}
        for entry in related:
            other = entry.memory
            if memory.id not in other.links:
                tx.write(entry.path, other.replace(links=(*other.links, memory.id)), entry.parsed)
            shared = sorted({t for t in other.tags if t.casefold() in wanted})
            events.append(Event("link", other.id, {"to": memory.id, "reason": f"shared tag {', '.join(shared)}",
                                                   "source": memory.source}))
        tx.record(*events)
        return Episode(memory.id, rel, memory.title, turns, memory.tags, memory.links)


# ---------------------------------------------------------------- building an episode


def _one_line(text: str) -> str:
    return " ".join(text.split())


def episode_tags(tags: Iterable[str], existing: Iterable[str], said: str = "",
                 fallback: str = "conversation") -> tuple[str, ...]:
    """1-3 tags: each spelled as the vault already spells it (case-insensitive), no repeats.

    A speaker label ("user", "assistant") is not a topic: it is dropped unless
    the turns themselves (``said``) use the word.
    """
    known = {t.casefold(): t for t in existing}
    out: dict[str, str] = {}
    for tag in tags:
        clean = clip(_one_line(str(tag)), 64)
        if not clean:
            continue
        if clean.casefold() in LABELS and not re.search(rf"(?i)\b{re.escape(clean)}\b", said):
            continue
        out.setdefault(clean.casefold(), known.get(clean.casefold(), clean))
        if len(out) == MAX_TAGS:
            break
    return tuple(out.values()) or (known.get(fallback, fallback),)


def build_episode(digest: Digest, turns: Sequence[Turn], session: str, scan: Scan,
                  stamp: datetime, project: str | None = None) -> tuple[Memory, int]:
    """The episode memory for ``turns`` (without links) and the number of secrets redacted from the digest;
    stored under ``project`` when given, else global."""
    redacted = 0

    def clean(value: Any, limit: int) -> str:
        nonlocal redacted
        text, count = redact_counted(_one_line(scrub(str(value or ""))))
        redacted += count
        return clip(text, limit)

    title = clean(digest.title, 120) or f"Conversation in session {session}"
    summary = clean(digest.summary, 600) or title
    trigger = clean(digest.trigger, 300)
    tags = episode_tags([clean(t, 64) for t in (digest.tags or ())], scan.tags(),
                        "\n".join(t.content for t in turns))
    recall = digest.recall if digest.recall in RECALLS else "active"
    fields: dict[str, Any] = {
        "id": new_memory_id(),
        "title": title,
        "type": "episode",
        "scope": "project" if project else "global",
        "authority": "inferred",
        "trust": "learned",
        "lifecycle": "trial",
        "recall": recall,
        "tier": "cold",
        "importance": 0.5,
        "summary": summary,
        "trigger": trigger,
        "tags": list(tags),
        "source": f"session:{session}",
        "created": stamp,
        "updated": stamp,
    }
    if project:
        fields["project"] = project
    first = turns[0].ts if turns else None
    if first:
        fields["occurred_at"] = parse_ts(first)
    return from_fields(fields, episode_body(turns), path="<new episode>"), redacted


def linked_memories(memory: Memory, scan: Scan, limit: int = LINK_LIMIT) -> list[store.Entry]:
    """The ``limit`` most recent memories sharing a tag with ``memory`` (case-insensitive) that may be linked:
    active, not plain notes, not superseded, not digests."""
    wanted = {t.casefold() for t in memory.tags}
    floor = datetime.min.replace(tzinfo=UTC)
    found = [
        entry for entry in scan.active()
        if entry.memory.id != memory.id and not entry.memory.plain and entry.memory.lifecycle != "superseded"
        and not entry.memory.extra.get("digest") and wanted & {t.casefold() for t in entry.memory.tags}
    ]
    found.sort(key=lambda e: (e.memory.created or e.memory.updated or floor, e.memory.id), reverse=True)
    return found[:limit]
