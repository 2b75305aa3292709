"""Documents and tool outputs: chunked into linked ``document`` memories, raw text in full.

- :func:`chunk` cuts a text into pieces of at most ``size`` characters, at the
  last paragraph break, else line break, else sentence end, else word
  boundary before ``size`` (else hard); each next piece starts about
  ``overlap`` characters before the previous one ended.  Leaving out each
  piece's overlap, the pieces put together are the text exactly.
- :func:`ingest_document` redacts secrets first, then writes one ``document``
  memory per piece in one atomic batch: each part holds its piece byte for
  byte, links to the previous and next part, and carries the document's
  digest (``document_sha256``) and its place (``part: i/n``).  The same
  content ingested again writes nothing and returns the existing parts.
- :func:`remember_output` keeps a long tool output the same way and returns a
  short reference to put in its place; a short output is not stored.

A person who ingests a document asked for it: the parts are
``authority: explicit`` and start ``proven``.  A local file is trusted as
``learned``; a tool output is ``external`` (it may carry anything a tool
fetched), so it never reaches a context manifest or a default search on its
own; its reference names the id to expand.  Every part is journalled as an
``import`` event (what :func:`~vault_engine.history.replay` reads for a new
memory), with ``origin``, the document's digest, the part and the number of
secrets redacted from the whole document.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from .. import store
from ..clock import now
from ..errors import ForgottenContent, InvalidInput
from ..format.characters import check, scrub
from ..format.ids import new_memory_id
from ..format.memory import SCOPES, Memory, from_fields, memory_text
from ..format.redact import redact, redact_counted
from ..format.text import PARAGRAPH_BREAK
from ..history import forgotten_as, forgotten_digests
from ..journal import Event
from ..limits import MAX_DOCUMENT, check_length
from ..llm.base import RECALLS, Digest, Llm
from ..patterns import lazy_pattern
from ..store import Scan
from ..vault import Vault

DIGEST_KEY = "document_sha256"
PART_KEY = "part"
DOCUMENT_TRUST = "learned"
OUTPUT_TRUST = "external"

_SENTENCE = lazy_pattern(r"[.!?][\"'”’)\]]*[ \t]+|[。！？][\"'”’)\]]*")
_SENTENCE_START = lazy_pattern(r"(?:[.!?][\"'”’)\]]*[ \t]+|[。！？][\"'”’)\]]*|\n[ \t]*)(?=\S)")


# ---------------------------------------------------------------- chunking


def chunk_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each piece :func:`chunk` cuts (``text[start:end]``).

    Ends strictly increase and the last is ``len(text)``; each start lies at
    most ``overlap`` characters before the previous end, so
    ``text[previous_end:end]`` over all pieces is the text exactly.

    Raises:
        InvalidInput: unless ``size > overlap >= 0``.
    """
    if isinstance(size, bool) or isinstance(overlap, bool) or not (size > overlap >= 0):
        raise InvalidInput(f"chunk size must be larger than the overlap, and the overlap 0 or more "
                           f"(got chunk size {size}, overlap {overlap})")
    spans: list[tuple[int, int]] = []
    start, previous_end, length = 0, 0, len(text)
    while start < length:
        limit = start + size
        if limit >= length:
            spans.append((start, length))
            break
        # A boundary counts past the first quarter of the window (no tiny pieces) and
        # past the previous end (every piece adds text).
        floor = max(start + size // 4, previous_end + 1)
        end = _cut(text, start, floor, limit)
        spans.append((start, end))
        previous_end = end
        start = _next_start(text, max(end - overlap, start + 1), end) if overlap else end
    return spans


def chunk(text: str, size: int, overlap: int) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, each next one starting up to ``overlap``
    characters before the previous one ended (see :func:`chunk_spans`); ``[]`` for an empty text.

    Raises:
        InvalidInput: unless ``size > overlap >= 0``.
    """
    return [text[start:end] for start, end in chunk_spans(text, size, overlap)]


def _cut(text: str, start: int, floor: int, limit: int) -> int:
    """Where the piece starting at ``start`` is cut: at most at ``limit``, at least at ``floor``."""
    paragraph = None
    for match in PARAGRAPH_BREAK.finditer(text, start, limit):
        if match.end() >= floor:
            paragraph = match.end()
    if paragraph is not None:
        return paragraph
    line = text.rfind("\n", floor - 1, limit)
    if line >= 0:
        return line + 1
    sentence = None
    for match in _SENTENCE.finditer(text, start, limit):
        if match.end() >= floor:
            sentence = match.end()
    if sentence is not None:
        return sentence
    for position in range(limit, floor - 1, -1):  # after whitespace, before a word
        if text[position - 1].isspace() and not text[position].isspace():
            return position
    return limit


def _next_start(text: str, target: int, end: int) -> int:
    """Where the next piece starts: the first sentence or line start in the first half of the
    overlap, else the first word start, at or after ``target`` and before ``end``; else ``target``."""
    half = target + (end - target) // 2
    for match in _SENTENCE_START.finditer(text, max(target - 8, 0), min(half + 1, end)):
        if match.end() >= target:
            return match.end()
    for position in range(target, end):
        if not text[position].isspace() and text[position - 1].isspace():
            return position
    return target


# ---------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Part:
    """One stored part of a document."""

    id: str
    path: str
    title: str
    summary: str
    part: str  # "i/n"


@dataclass(frozen=True, slots=True)
class DocumentResult:
    """What :func:`ingest_document` did."""

    parts: list[Part]
    duplicate: bool  # True: the same content was ingested before; nothing was written
    document_sha256: str
    source: str  # of a duplicate: the source the parts were stored from
    redactions: int  # secrets replaced by [REDACTED] before anything was written
    chars: int  # characters of the (redacted) document

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.parts]

    @property
    def chunks(self) -> int:
        return len(self.parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "duplicate": self.duplicate,
            "ids": self.ids,
            "parts": [{"id": p.id, "path": p.path, "part": p.part, "title": p.title, "summary": p.summary}
                      for p in self.parts],
            "chunks": self.chunks,
            "document_sha256": self.document_sha256,
            "source": self.source,
            "redactions": self.redactions,
            "chars": self.chars,
        }


@dataclass(frozen=True, slots=True)
class OutputResult:
    """What :func:`remember_output` did: stored (with a reference to show instead) or not."""

    stored: bool
    text: str  # the output as given
    source: str
    min_chars: int
    document: DocumentResult | None = None
    reference: str = ""  # what to show in place of the output (empty when not stored)
    ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"stored": self.stored, "source": self.source, "chars": len(self.text),
                                "min_chars": self.min_chars}
        if self.document is None:
            data["text"] = self.text
            return data
        first = self.document.parts[0]
        data.update({
            "duplicate": self.document.duplicate,
            "id": first.id,
            "ids": self.ids,
            "title": first.title,
            "summary": first.summary,
            "expand": f"memvault show {first.id} --depth 2",
            "redactions": self.document.redactions,
            "reference": self.reference,
        })
        return data


# ---------------------------------------------------------------- ingestion


def document_digest(text: str) -> str:
    """The identity of a document's content: sha256 of its (redacted) text, exactly."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _existing(scan: Scan, digest: str) -> tuple[list[Part], str]:
    """The active parts of the document with ``digest``, in order, and the source they were stored from."""
    found = []
    for entry in scan.active():
        m = entry.memory
        if m.type == "document" and m.extra.get(DIGEST_KEY) == digest:
            found.append((m, Part(m.id, entry.path, m.title, m.summary, str(m.extra.get(PART_KEY, "")))))

    def order(item: tuple[Memory, Part]) -> tuple[int, str]:
        number = item[1].part.split("/", 1)[0]
        return (int(number) if number.isdigit() else 0, item[1].id)

    found.sort(key=order)
    return [part for _, part in found], (found[0][0].source if found else "")


def _clean(digest: Digest, fallback: str) -> Digest:
    """A digest's fields redacted and within the schema (whichever model wrote them)."""
    title = " ".join(redact(scrub(digest.title)).split()) or fallback
    recall = digest.recall if digest.recall in RECALLS else "active"
    tags = tuple(dict.fromkeys(t for t in (" ".join(redact(scrub(str(t))).split()) for t in digest.tags) if t))
    return Digest(title=title, summary=redact(scrub(digest.summary)).strip(),
                  trigger=redact(scrub(digest.trigger)).strip(), recall=recall, tags=tags)


def ingest_document(vault: Vault, text: str, /, *, source: str, llm: Llm, chunk_size: int | None = None,
                    overlap: int | None = None, project: str | None = None, scope: str | None = None,
                    trust: str = DOCUMENT_TRUST, origin: str = "ingest-doc") -> DocumentResult:
    """Store ``text`` as linked ``document`` memories, one per chunk (see the module docs).

    ``chunk_size`` and ``overlap`` default to ``[ingest]`` in the vault's settings.
    The model is asked for every part before anything is written: when it
    fails (:class:`~vault_engine.errors.LlmUnavailable`), nothing is written.

    Raises:
        InvalidInput: an empty document or one longer than ``MAX_DOCUMENT``, a bad chunk size or overlap, or a
            project scope without a project.
        ForgottenContent: a part's text was permanently forgotten.
        LlmUnavailable: the model could not digest a part.
    """
    check_length(text, MAX_DOCUMENT, "the document" if origin == "ingest-doc" else "the tool output")
    with vault.batch():  # one sync at the end, whichever way it ends
        return _ingest(vault, text, source=source, llm=llm, chunk_size=chunk_size, overlap=overlap,
                       project=project, scope=scope, trust=trust, origin=origin)


def _ingest(vault: Vault, text: str, /, *, source: str, llm: Llm, chunk_size: int | None, overlap: int | None,
            project: str | None, scope: str | None, trust: str, origin: str) -> DocumentResult:
    settings = vault.config.ingest
    size = settings.chunk_size if chunk_size is None else chunk_size
    overlap = settings.overlap if overlap is None else overlap
    scope = scope or ("project" if project else "global")
    if scope not in SCOPES:
        raise InvalidInput(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")
    if scope == "project" and not project:
        raise InvalidInput("a project scope needs a project key")
    if not source.strip():
        raise InvalidInput("a document needs a source")
    source = redact(check(source, "source"))  # a URI may carry user:password@ or a token
    clean, redactions = redact_counted(scrub(text))  # a document's controls made visible, never refused
    if not clean.strip():
        raise InvalidInput("the document is empty")
    spans = chunk_spans(clean, size, overlap)
    digest = document_digest(clean)

    def duplicate(found: tuple[list[Part], str]) -> DocumentResult:
        return DocumentResult(found[0], True, digest, found[1], redactions, len(clean))

    scan = vault.scan()
    existing = _existing(scan, digest)
    if existing[0]:
        return duplicate(existing)
    # The model is asked outside the writer lock: other writers never wait for it.
    tags = scan.tags()
    digests: list[Digest] = []
    for start, end in spans:
        answer = _clean(llm.digest(clean[start:end], list(tags), kind="document"), "Untitled document")
        digests.append(answer)
        tags += [t for t in answer.tags if t not in tags]  # later parts reuse the earlier parts' tags
    memories = _parts(spans, digests, clean, digest, scope=scope, project=project, trust=trust, source=source,
                      sender=vault.sender)
    ids = [m.id for m in memories]
    with vault.transaction() as tx:
        events = list(vault.journal.events())
        forgotten = forgotten_digests(events)
        for memory in memories:
            blocked = forgotten_as(forgotten, memory_text(memory))
            if blocked is not None:
                raise ForgottenContent(f"part {memory.extra[PART_KEY]} of this document was permanently "
                                       f"forgotten ({blocked}); nothing was ingested")
        scan = vault.scan()
        existing = _existing(scan, digest)
        if existing[0]:  # ingested by another writer meanwhile
            return duplicate(existing)
        used = set(scan.entries) | {e.memory for e in events}
        if used & set(ids):  # pragma: no cover - ids are fresh ULIDs
            raise InvalidInput("a new memory id is already used in this vault; try again")
        taken: set[str] = set()
        writes: list[tuple[str, Memory, None]] = []
        parts: list[Part] = []
        journal: list[Event] = []
        for memory in memories:
            rel = store.choose_path(vault.root, store.folder_for(memory), memory, taken)
            taken.add(rel)
            writes.append((rel, memory, None))
            parts.append(Part(memory.id, rel, memory.title, memory.summary, str(memory.extra[PART_KEY])))
            journal.append(Vault.add_event(memory, "import", origin=origin, source=source,
                                           **{DIGEST_KEY: digest, PART_KEY: memory.extra[PART_KEY]},
                                           redactions=redactions))
        tx.write_many(writes)
        tx.record(*journal)
    return DocumentResult(parts, False, digest, source, redactions, len(clean))


def _parts(spans: list[tuple[int, int]], digests: list[Digest], clean: str, digest: str, *, scope: str,
           project: str | None, trust: str, source: str, sender: str | None = None) -> list[Memory]:
    """One linked ``document`` memory per span of ``clean`` (each links to its neighbours)."""
    stamp = now()
    count = len(spans)
    ids = [new_memory_id() for _ in spans]
    memories: list[Memory] = []
    for number, ((start, end), answer) in enumerate(zip(spans, digests, strict=True), start=1):
        links = [ids[number - 2]] if number > 1 else []
        links += [ids[number]] if number < count else []
        fields: dict[str, Any] = {
            "id": ids[number - 1],
            "title": answer.title if count == 1 else f"{answer.title} ({number}/{count})",
            "type": "document",
            "scope": scope,
            "project": project,
            "authority": "explicit",
            "trust": trust,
            "lifecycle": "proven",
            "recall": answer.recall,
            "tier": "cold",
            "summary": answer.summary,
            "trigger": answer.trigger,
            "tags": list(answer.tags),
            "links": links,
            "source": source,
            "sender": sender,
            "created": stamp,
            "updated": stamp,
            DIGEST_KEY: digest,
            PART_KEY: f"{number}/{count}",
        }
        memories.append(from_fields({k: v for k, v in fields.items() if v is not None}, clean[start:end],
                                    path="<document>"))
    return memories


def tool_source(name: str) -> str:
    """``tool:NAME`` from ``NAME`` or ``tool:NAME``.

    Raises:
        InvalidInput: the tool name is empty.
    """
    name = name.strip()
    bare = name[len("tool:"):] if name.startswith("tool:") else name
    if not bare.strip():
        raise InvalidInput("name the tool: --source tool:NAME")
    return f"tool:{bare.strip()}"


def reference(result: DocumentResult) -> str:
    """The short block that stands in for a stored output: where it is, what it says, how to read it."""
    first = result.parts[0]
    noun = "part" if result.chunks == 1 else "parts"
    lines = [
        f"[output of {result.source} stored in memvault: {result.chars} characters, {result.chunks} {noun}"
        + (", already stored before" if result.duplicate else "") + "]",
        f"id: {first.id}",
        f"title: {first.title}",
        f"summary: {first.summary}",
    ]
    if result.chunks > 1:
        lines.append("parts: " + " ".join(result.ids) + " (each links to the next)")
    if result.redactions:
        lines.append(f"redacted: {result.redactions} secret{'' if result.redactions == 1 else 's'}")
    lines.append(f"expand: memvault show {first.id} --depth 2")
    return "\n".join(lines) + "\n"


def remember_output(vault: Vault, text: str, /, *, source: str, llm: Llm, min_chars: int | None = None,
                    project: str | None = None) -> OutputResult:
    """Keep a long tool output as a ``document`` and return a short reference to it.

    An output shorter than ``min_chars`` (default ``[ingest] tool_output_min_chars``;
    whitespace at either end not counted) is not stored: the result says so and
    carries the text unchanged.

    Raises:
        InvalidInput: no tool name, or ``min_chars`` below 0.
        LlmUnavailable: the model could not digest a part (nothing is written).
    """
    with vault.batch():
        return _remember_output(vault, text, source=source, llm=llm, min_chars=min_chars, project=project)


def _remember_output(vault: Vault, text: str, /, *, source: str, llm: Llm, min_chars: int | None,
                     project: str | None) -> OutputResult:
    source = tool_source(source)
    limit = vault.config.ingest.tool_output_min_chars if min_chars is None else min_chars
    if limit < 0:
        raise InvalidInput(f"the minimum length must be 0 or more, got {limit}")
    if len(text.strip()) < limit or not text.strip():
        return OutputResult(False, text, source, limit)
    result = ingest_document(vault, text, source=source, llm=llm, project=project, trust=OUTPUT_TRUST,
                             origin="remember-output")
    return OutputResult(True, text, source, limit, result, reference(result), result.ids)
