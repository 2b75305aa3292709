"""The experience journal: append-only JSONL events, one file per month.

Each line is one event ``{"id", "kind", "memory", "payload", "ts"}`` with a
stable event id.  Appending an id that is already present is a no-op, so a
retried operation never counts twice.  A torn line (a crash mid-append) or an
invalid one never stops a reader; the next append starts on a fresh line.
The journal of an open vault repairs itself once: the unreadable lines move
to a file under ``.memvault/journal-damaged/``, the journal file is rewritten
without them, a ``journal-repair`` event says what moved where, and one
warning says so (see :meth:`Journal.repair`).  What the events mean for each
memory (its replay) is :mod:`vault_engine.history`'s.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import fsio, locks
from .errors import JournalError
from .format.ids import new_event_id
from .format.redact import redact_data
from .format.yamlfmt import format_datetime
from .patterns import lazy_pattern

log = logging.getLogger(__name__)

REPAIR_KIND = "journal-repair"  # the event saying which unreadable lines a repair moved where
PURGE_DECLINED = "purge-declined"  # a permanent forget from another machine that did not see this text
DAMAGED_DIR = "journal-damaged"  # in the vault's state folder: the lines repairs moved out of the journal
# Payload keys that may hold memory text (at any depth); a permanent forget replaces them by a hash.
TEXT_FIELDS = frozenset({"title", "summary", "trigger", "text", "quote", "body", "old_title", "reason"})
_MONTH = lazy_pattern(r"[0-9]{4}-[0-9]{2}")


@dataclass(frozen=True, slots=True)
class Event:
    """One journal event."""

    kind: str
    memory: str
    payload: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_event_id)
    ts: str = field(default_factory=lambda: format_datetime(datetime.now(UTC)))

    def to_line(self) -> str:
        record = {"id": self.id, "kind": self.kind, "memory": self.memory, "payload": self.payload, "ts": self.ts}
        return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"

    @property
    def month(self) -> str:
        return self.ts[:7]


def _event_from(record: Any) -> Event | None:
    if not isinstance(record, dict):
        return None
    try:
        kind, memory, event_id, ts = record["kind"], record["memory"], record["id"], record["ts"]
        payload = record.get("payload") or {}
    except KeyError:
        return None
    if not all(isinstance(v, str) for v in (kind, memory, event_id, ts)) or not isinstance(payload, dict):
        return None
    return Event(kind=kind, memory=memory, payload=payload, id=event_id, ts=ts)


def _read_line(raw: bytes) -> Event | None:
    """The event on one journal line, or None when the line is torn or invalid."""
    if not raw.strip():
        return None
    try:
        return _event_from(json.loads(raw))
    except ValueError:  # includes UnicodeDecodeError
        return None


class Journal:
    """The journal folder of one vault.

    With ``lock`` (the vault's writer lock, which every append holds) and ``aside`` (a folder
    outside the journal) unreadable lines are repaired once, when met (see :meth:`repair`);
    without them they are skipped with a warning each time they are read.
    """

    def __init__(self, folder: Path, *, lock: locks.WriterLock | None = None, aside: Path | None = None):
        self.folder = folder
        self.lock = lock
        self.aside = aside
        self.warnings: list[str] = []
        self._ids: set[str] | None = None
        self._signature: tuple[tuple[str, int], ...] = ()
        self._damaged = False  # whether the files known_ids last read hold an unreadable line
        self._repairing = False

    def files(self) -> list[Path]:  # never a symlink (fsio.listed), nor any file in a linked folder
        return fsio.listed(self.folder, "*.jsonl")[0]

    def events(self, kinds: Iterable[str] | None = None) -> Iterator[Event]:
        """Every readable event in order (only those of ``kinds`` when given); torn or invalid lines
        become warnings."""
        self.warnings = [f"{self._shown(p)} is a symlink; not read" for p in fsio.listed(self.folder, "*.jsonl")[1]]
        damaged: list[str] = []
        # A line is parsed only when it names one of the kinds (a cheap byte search first).
        needles = tuple(f'"{kind}"'.encode() for kind in kinds) if kinds is not None else None
        wanted = frozenset(kinds) if kinds is not None else None
        for path in self.files():
            try:
                data = fsio.read_no_follow(path)
            except OSError as exc:
                raise JournalError(f"cannot read journal: {exc.strerror}", path=path) from None
            lines = data.split(b"\n")
            for number, raw in enumerate(lines, start=1):
                if not raw.strip():
                    continue
                if needles is not None and not any(needle in raw for needle in needles):
                    continue
                event = _read_line(raw)
                if event is None:
                    damaged.append(f"{self._shown(path)}:{number}: {_what(number, len(lines))}")
                    continue
                if wanted is None or event.kind in wanted:
                    yield event
        if damaged:
            repaired = self.repair()
            self.warnings += repaired if repaired is not None else [f"{line} skipped" for line in damaged]
            for message in self.warnings:
                log.warning("%s", message)

    def signature(self) -> tuple[tuple[str, int], ...]:
        out = []
        for path in self.files():
            try:
                out.append((path.name, path.stat().st_size))
            except OSError:
                continue
        return tuple(out)

    def known_ids(self) -> set[str]:
        """Ids of every event on disk (cached until a journal file changes)."""
        signature = self.signature()
        if self._ids is None or signature != self._signature:
            ids: set[str] = set()
            damaged = False
            for path in self.files():
                for raw in fsio.read_no_follow(path).split(b"\n"):
                    # Only readable events count: the id of a torn line must not block
                    # the retry that writes the same event again.
                    event = _read_line(raw)
                    if event is not None:
                        ids.add(event.id)
                    elif raw.strip():
                        damaged = True
            self._ids, self._signature, self._damaged = ids, signature, damaged
        return self._ids

    def append(self, events: Iterable[Event]) -> list[Event]:
        """Append events whose ids are new; returns the ones written.  An unreadable line in the
        journal is repaired first (see :meth:`repair`)."""
        known = self.known_ids()
        if self._damaged and not self._repairing:
            repaired = self.repair()
            for message in repaired or ():
                self.warnings.append(message)
                log.warning("%s", message)
            known = self.known_ids()
        fresh: list[Event] = []
        batch: set[str] = set()
        for event in events:
            if not _MONTH.fullmatch(event.month):  # the month names the file: never a path of its own
                raise JournalError(f"event {event.id} has an invalid timestamp {event.ts!r}", path=self.folder)
            if event.id in known or event.id in batch:
                continue
            batch.add(event.id)
            fresh.append(replace(event, payload=redact_data(event.payload)))  # no secret reaches the journal
        by_month: dict[str, list[str]] = {}
        for event in fresh:
            by_month.setdefault(event.month, []).append(event.to_line())
        for month, lines in sorted(by_month.items()):
            if self.folder.is_symlink():  # a month file that is one: fsio.append_line never writes through it
                raise JournalError("is a symlink; memvault does not write through it", path=self._shown(self.folder))
            fsio.append_line(self.folder / f"{month}.jsonl", "".join(lines))
        # Only now: ids of a failed write must not count as written.
        known.update(batch)
        self._signature = self.signature()
        return fresh

    def _shown(self, path: Path) -> str:
        """``path`` as a message names it: relative to the vault (the journal folder's parent)."""
        return (path.relative_to(self.folder.parent) if path.is_relative_to(self.folder.parent) else path).as_posix()

    def repair(self) -> list[str] | None:
        """Move every unreadable line (torn by a crash mid-append, or invalid) out of the journal.

        The lines of each damaged file go first to a file of their own in ``aside``, byte for byte
        (nothing is lost); then the journal file is rewritten without them, atomically; then a
        ``journal-repair`` event per file names the lines, their size and digest, and where they
        went.  The writer lock is held throughout, so a line another writer is appending right
        now is never taken for a torn one.

        Returns one message per repaired file (none: nothing to repair), or None when the journal
        cannot be repaired now (no lock or folder given, or another writer holds the lock).
        """
        if self.lock is None or self.aside is None or self._repairing:
            return None
        with self.lock.try_hold() as held:
            if not held:
                return None
            self._repairing = True
            try:
                return self._repair(self.aside)
            finally:
                self._repairing = False
                self._ids = None

    def _repair(self, aside: Path) -> list[str]:
        events: list[Event] = []
        messages: list[str] = []
        fsio.remove_temps(aside, lambda name: name.endswith(".txt"))  # of a repair a crash cut short
        for path in self.files():
            lines = fsio.read_no_follow(path).split(b"\n")
            bad = [n for n, raw in enumerate(lines, start=1) if raw.strip() and _read_line(raw) is None]
            if not bad:
                continue
            event_id = new_event_id()
            removed = b"".join(lines[n - 1] + b"\n" for n in bad)
            kept = aside / f"{path.stem}.{event_id}.txt"
            fsio.write_atomic(kept, removed)  # first: a crash from here on loses nothing
            rest = b"\n".join(raw for n, raw in enumerate(lines, start=1) if n not in bad)
            fsio.write_atomic(path, rest if not rest or rest.endswith(b"\n") else rest + b"\n")
            payload = {"file": self._shown(path), "lines": bad, "bytes": len(removed),
                       "sha256": hashlib.sha256(removed).hexdigest(), "kept": self._shown(kept)}
            events.append(Event(REPAIR_KIND, "", payload, id=event_id))
            what = _what(bad[0], len(lines)) if len(bad) == 1 else f"{len(bad)} unreadable lines"
            messages.append(f"{payload['file']}:{','.join(map(str, bad))}: {what} moved to {payload['kept']}; "
                            "the journal is repaired")
        self.append(events)
        return messages

    def scrub(self, memory_ids: set[str]) -> int:
        """Replace every text payload of events about ``memory_ids`` by its hash.

        Returns the number of events scrubbed.  Files are rewritten atomically.
        """
        scrubbed = 0
        for path in self.files():
            # Split at b"\n" only: str.splitlines() would also cut lines at U+2028 or
            # U+0085 inside JSON strings, and those events would escape the scrub.
            lines = fsio.read_no_follow(path).split(b"\n")
            changed = False
            out: list[bytes] = []
            for line in lines:
                event = _read_line(line)
                touches = event is not None and (
                    event.memory in memory_ids
                    or any(isinstance(v, str) and v in memory_ids for v in event.payload.values())
                )
                payload = _hashed(event.payload) if event is not None and touches else None
                # No text anywhere in it, or already hashed (scrubbing is idempotent): kept as it is.
                if event is None or payload in (None, event.payload) or event.payload.get("scrubbed") is True:
                    out.append(line)
                    continue
                payload["scrubbed"] = True
                out.append(Event(event.kind, event.memory, payload, event.id, event.ts).to_line()[:-1].encode("utf-8"))
                changed = True
                scrubbed += 1
            if changed:
                fsio.write_atomic(path, b"\n".join(out))
        self._ids = None
        return scrubbed


def _what(number: int, count: int) -> str:
    """Unreadable line ``number`` of ``count``: only the last can lack its newline (a crash mid-append)."""
    return "torn last line" if number == count else "invalid line"


def _hashed(value: Any) -> Any:
    """``value`` with the text of every :data:`TEXT_FIELDS` key, at any depth, replaced by its hash."""
    if isinstance(value, dict):
        return {k: hash_text(v) if k in TEXT_FIELDS and isinstance(v, str) else _hashed(v) for k, v in value.items()}
    return [_hashed(v) for v in value] if isinstance(value, list) else value


def hash_text(text: str) -> str:
    """The stand-in kept for scrubbed text."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
