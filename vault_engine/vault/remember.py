"""Remembering: one memory (``add``) or many (``import_jsonl``); the same text twice adds evidence."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from .. import senders, store
from ..clock import now
from ..errors import ForgottenContent, InvalidInput, VaultError
from ..format import chat_turns
from ..format.characters import check, check_data, escape_data
from ..format.ids import new_memory_id
from ..format.kinds import Scope
from ..format.memory import Memory, ParsedFile, from_fields, memory_text, text_digest, words_digest
from ..format.redact import holds_secret, redact, redact_counted, redact_data
from ..format.text import is_one_off, make_summary, make_title
from ..history import forgotten_as, forgotten_digests
from ..journal import Event
from ..limits import MAX_DOCUMENT, MAX_TEXT, check_fields, check_length, too_long
from ..store import Entry, Scan
from .ports import Open as Vault
from .results import AddResult, Escaped, ImportResult, NewMemory
from .scope import folds_into, placement

RECORD_KEY = "record_sha256"  # in the journal events of an import: which record each came from

def checked(request: NewMemory) -> NewMemory:
    """``request`` with every text in it normalised (line ends, byte-order marks).

    Raises:
        InvalidInput: a field holds a character no memory may hold (see :mod:`~vault_engine.format.characters`).
    """
    def one(value: str | None, name: str) -> str | None:
        return None if value is None else check(value, name)

    def many(values: Iterable[str], name: str) -> tuple[str, ...]:
        return tuple(check(value, f"{name}[{number}]") for number, value in enumerate(values))

    return dataclasses.replace(
        request, text=check(request.text, "text"), title=one(request.title, "title"),
        summary=one(request.summary, "summary"), trigger=one(request.trigger, "trigger"),
        project=one(request.project, "project"), source=check(request.source, "source"),
        sender=one(request.sender, "sender"), tags=many(request.tags, "tags"), paths=many(request.paths, "paths"),
        tasks=many(request.tasks, "tasks"), operations=many(request.operations, "operations"),
        phases=many(request.phases, "phases"), extra=check_data(request.extra, "extra"),
    )


def build(request: NewMemory, stamp: datetime, sender: str | None = None) -> tuple[Memory, int]:
    """The new memory ``request`` asks for, stamped ``stamp`` (text and fields checked, then redacted),
    and how many secrets were redacted from what was given; from ``sender`` unless the request names
    its own."""
    request = checked(request)
    secrets = 0

    def scrub(value: str) -> str:
        nonlocal secrets
        clean, found = redact_counted(value)
        secrets += found
        return clean

    text = scrub(request.text.strip("\n")).rstrip() + "\n"
    if not text.strip():
        raise InvalidInput("memory text is empty")
    scope, project = placement(request.scope, request.project, request.current_project, type=request.type,
                               klass=request.klass)
    core = request.type == "core-profile"
    fields: dict[str, Any] = {
        "id": new_memory_id(),
        "title": scrub(request.title.strip()) if request.title and request.title.strip() else make_title(text),
        "type": request.type,
        "class": request.klass,
        "scope": scope,
        "project": scrub(project) if project else None,
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
        "summary": scrub(request.summary) if request.summary else make_summary(text),
        "trigger": scrub(request.trigger) if request.trigger else "",
        "tags": [scrub(tag) for tag in request.tags],
        "source": scrub(request.source),  # a document URI may carry user:password@
        "sender": senders.clean(request.sender or sender),
        "created": stamp,
        "updated": stamp,
        **request.extra,
    }
    return from_fields({k: v for k, v in fields.items() if v is not None}, text, path="<new memory>"), secrets


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


def fold_evidence(entry: Entry, source: str, stamp: datetime, **details: Any) -> tuple[Memory, Event]:
    """``entry`` seen again from ``source``: one more proof, and the event that says so (with ``details``)."""
    memory = entry.memory
    # The baseline: what replay starts from when this is the first event it meets about the memory.
    baseline = {"lifecycle": memory.lifecycle, "authority": memory.authority, "proof_count": memory.proof_count,
                "applied": {k: v for k, v in memory.applied.items() if v}}
    event = Event("evidence", memory.id, {"source": source, "baseline": baseline, **details})
    updated = memory.replace(
        proof_count=memory.proof_count + 1,
        evidence=(*memory.evidence, {"event": event.id, "source": source}),
        updated=stamp,
    )
    return updated, event


def add(vault: Vault, request: NewMemory, *, allow_one_off: bool = False, allow_forgotten: bool = False) -> AddResult:
    """Remember one memory; the same text twice adds evidence instead of a duplicate.

    Raises:
        InvalidInput: empty text or longer than ``MAX_TEXT``, a one-off instruction, or bad field values.
        ForgottenContent: the text was permanently forgotten.
    """
    check_length(request.text, MAX_TEXT, "memory text")
    check_fields(title=request.title, summary=request.summary, trigger=request.trigger, tags=request.tags,
                 paths=request.paths)
    phrase = is_one_off(request.text)
    if phrase and not allow_one_off:
        raise InvalidInput(
            f"not stored: '{phrase}' marks a one-off instruction, not a lasting memory (use --force to keep it)"
        )
    stamp = now()
    memory, secrets = build(request, stamp, vault.sender)
    secret = "a secret in what was given is stored as [REDACTED]" if secrets else None
    check_learning(vault, memory)
    digest = text_digest(memory_text(memory))
    with vault.transaction() as tx:
        blocked = forgotten_as(forgotten_digests(vault.journal.events()), memory_text(memory))
        if blocked is not None and not allow_forgotten:
            raise ForgottenContent(f"this text was permanently forgotten ({blocked}) and is not re-learned")
        scan = vault.scan()
        said = words_digest(memory_text(memory))  # "Use pnpm, not npm." and "use pnpm not npm": one memory
        for entry in scan.active():
            if entry.memory.lifecycle == "superseded" or not _folds(memory, entry.memory):
                continue
            existing = memory_text(entry.memory)
            if words_digest(existing) == said:  # the same text has the same words: one digest per memory
                same = text_digest(existing) == digest
                updated, event = fold_evidence(entry, memory.source, stamp)
                tx.write(entry.path, updated, entry.parsed)
                tx.record(event)
                kept = "the same text was" if same else "the same words (case and punctuation aside) were"
                return AddResult(entry.memory.id, entry.path, False,
                                 _joined(f"{kept} already remembered; evidence added", secret), *_where(entry.memory))
        from ..governance.tiers import route

        memory, notice = route(memory, vault.config, chosen=request.tier is not None)
        if memory.tier == "hot":
            memory, admitted = _admit_hot(vault, memory, scan, stamp)
            notice = admitted or notice
        rel = store.choose_path(vault.root, store.folder_for(memory), memory)
        tx.write(rel, memory)
        tx.record(add_event(memory))
    return AddResult(memory.id, rel, True, _joined(notice, secret), *_where(memory))


def _joined(*notices: str | None) -> str | None:
    """The notices that are there, in one line."""
    return "; ".join(n for n in notices if n) or None


def _folds(new: Memory, existing: Memory) -> bool:
    """Whether ``new`` adds evidence to ``existing`` (same text): never across a project's wall."""
    return folds_into(new.scope, new.project, existing.scope, existing.project)


def _where(memory: Memory) -> tuple[Scope, str | None]:
    """(scope, project) of ``memory``: a project only for a project memory."""
    return memory.scope, memory.project if memory.scope == "project" else None


def _admit_hot(vault: Vault, memory: Memory, scan: Scan, stamp: datetime) -> tuple[Memory, str | None]:
    """Run the hot tier's overflow before a hot write; a memory that still does not fit goes cold."""
    from ..governance.actions import View
    from ..governance.maintain import Executor, vetoes
    from ..governance.tiers import admit

    view = View.from_scan(scan, stamp, vault.config, vault.root, vetoes(vault.journal))
    actions, memory, notice = admit(view, memory)
    if actions:
        executor = Executor(vault, scan, stamp)
        for action in actions:
            executor.apply(action)
        moved = ", ".join(a.memory for a in actions)
        notice = (notice + "; " if notice else "") + f"hot tier overflow moved {moved} to cold"
    return memory, notice


def import_jsonl(vault: Vault, lines: Iterable[str], source_name: str = "<stdin>") -> ImportResult:
    """Bulk add: one JSON object per line (frontmatter keys plus ``body``).

    Valid lines are imported even when others fail; each failure carries its line number.
    A record imported before (the same JSON object, whatever file or line it came from) changes
    nothing: a retried import neither adds it again nor counts it as more evidence.  A character
    no memory may hold is kept as its ``⟨U+XXXX⟩`` escape (see :func:`~vault_engine.format.characters.escape`),
    and the result names each record stored so (``escaped``).
    """
    stamp = now()
    errors: list[VaultError] = []
    escapes: dict[int, dict[str, list[str]]] = {}
    parsed = _parse_lines(vault, lines, stamp, source_name, errors, escapes)
    added: list[str] = []
    merged: list[str] = []
    unchanged: list[str] = []
    with vault.transaction() as tx:
        journal_events = list(vault.journal.events())
        imported = imported_records(journal_events)
        forgotten = forgotten_digests(journal_events)
        scan = vault.scan()
        used_ids = set(scan.entries) | {e.memory for e in journal_events}
        by_digest: dict[str, list[Entry]] = {}  # text digest -> the memories of that text, any place
        for e in scan.active():
            if e.memory.lifecycle != "superseded":
                by_digest.setdefault(text_digest(memory_text(e.memory)), []).append(e)
        pending: dict[str, tuple[str, Memory, ParsedFile | None]] = {}  # id -> (path, memory, original)
        taken: set[str] = set()
        events: list[Event] = []
        for number, memory, record in parsed:
            digest = text_digest(memory_text(memory))
            blocked = forgotten_as(forgotten, memory_text(memory))
            if blocked is not None:
                errors.append(ForgottenContent(
                    f"text was permanently forgotten ({blocked}); not imported",
                    path=source_name, line=number,
                ))
                continue
            if record in imported:  # imported before (a retry, or the same line twice): already counted
                unchanged.append(imported[record])
                continue
            if memory.id in used_ids:
                errors.append(InvalidInput(
                    f"id {memory.id} is already used in this vault; ids are never reused",
                    path=source_name, line=number,
                ))
                continue
            existing = next((e for e in by_digest.get(digest, ()) if _folds(memory, e.memory)), None)
            if existing is not None:
                current = pending.get(existing.memory.id)
                base = Entry(existing.path, ParsedFile(current[1], "")) if current else existing
                updated, event = fold_evidence(base, memory.source, stamp, **{RECORD_KEY: record})
                pending[existing.memory.id] = (existing.path, updated, existing.parsed)
                events.append(event)
                merged.append(existing.memory.id)
                imported[record] = existing.memory.id
                continue
            rel = store.choose_path(vault.root, store.folder_for(memory), memory, taken)
            taken.add(rel)
            used_ids.add(memory.id)
            pending[memory.id] = (rel, memory, None)
            by_digest.setdefault(digest, []).append(Entry(rel, ParsedFile(memory, "")))
            events.append(add_event(memory, "import", **{RECORD_KEY: record}))
            added.append(memory.id)
            imported[record] = memory.id
        tx.write_many(list(pending.values()))
        tx.record(*events)
    kept = {imported[record] for _n, _m, record in parsed if record in imported} - set(unchanged)
    escaped = [Escaped(number, tuple(escapes[number].items())) for number, memory, record in parsed
               if number in escapes and imported.get(record) in kept]
    return ImportResult(added, merged, errors, unchanged, escaped)


def record_digest(record: dict[str, Any]) -> str:
    """The identity of one imported record: sha256 of the JSON object as data (key order and
    spacing aside)."""
    canonical = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    # A lone surrogate (a "\ud800" escape, kept as its escape) is hashed as its code unit.
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def imported_records(events: Iterable[Event]) -> dict[str, str]:
    """Each record digest the journal's imports name (as an ``import`` or an ``evidence``
    event), mapped to the memory it became or added to."""
    return {str(e.payload[RECORD_KEY]): e.memory for e in events
            if e.kind in ("import", "evidence") and isinstance(e.payload.get(RECORD_KEY), str)}


def _parse_lines(vault: Vault, lines: Iterable[str], stamp: datetime, source_name: str,
                 errors: list[VaultError], escapes: dict[int, dict[str, list[str]]]) -> list[tuple[int, Memory, str]]:
    """The memories of the valid lines, with their line number and record digest; each invalid
    line adds its error to ``errors``, each valid one that needed escapes its fields to ``escapes``."""
    parsed: list[tuple[int, Memory, str]] = []
    thread = ""  # the conversation of a chat export's turns, named when the first one is read
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if len(line) > MAX_DOCUMENT:  # refused unparsed (the command line reads no more of it than this)
            refused = too_long("line", MAX_DOCUMENT, path=source_name)
            refused.line = number
            errors.append(refused)
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
        escaped: dict[str, list[str]] = {}
        try:
            digest = record_digest(record)
            if chat_turns.is_chat_turn(record):  # a chat export's turn: stored as one, beside its neighbours
                thread = thread or chat_turns.thread_name(source_name, line)
                turn = chat_turns.as_memory_record(record, thread, number)
                if turn is None:
                    continue
                record = turn
            parsed.append((number, _from_record(vault, record, stamp, source_name, escaped), digest))
        except VaultError as exc:
            exc.path, exc.line = source_name, number
            errors.append(exc)
            continue
        if escaped:
            escapes[number] = escaped
    return parsed


def _from_record(vault: Vault, record: dict[str, Any], stamp: datetime, source_name: str,
                 escaped: dict[str, list[str]]) -> Memory:
    """The memory of one record; a character no memory may hold in a value is escaped (each field so
    goes into ``escaped``); in a key it is refused."""
    record = {check(key, "a key"): escape_data(value, key, escaped) for key, value in record.items()}
    body = record.pop("body", "")
    if not isinstance(body, str):
        raise InvalidInput("key 'body' must be text")
    check_length(body, MAX_TEXT, "body")
    body = redact(body)
    if body and not body.endswith("\n"):
        body += "\n"
    record.setdefault("id", new_memory_id())
    if isinstance(record["id"], str) and holds_secret(record["id"]):  # an id names the file and every event
        raise InvalidInput("key 'id' looks like a secret (an API key or a token): leave it out and memvault makes one")
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
    if vault.sender:  # a record may name its own sender
        record.setdefault("sender", vault.sender)
    for key in record:  # every value a secret could hide in (tags, source, evidence, unknown keys)
        if key != "id":
            record[key] = redact_data(record[key])
    memory = from_fields(record, body, path=source_name)
    if not memory_text(memory).strip():
        raise InvalidInput("memory has no text (body, summary or title)")
    check_learning(vault, memory)
    return memory


def check_learning(vault: Vault, memory: Memory) -> None:
    """With ``vault.learning = false`` nothing new is inferred; explicit memories still are added."""
    if memory.authority == "inferred" and not vault.config.vault.learning:
        raise InvalidInput("learning is off (vault.learning = false): inferred memories are not stored; "
                           "add it as explicit (--authority explicit) or turn learning on")
