"""The full-text index: Tantivy BM25 over title, summary, trigger, body and tags.

Lives in ``.memvault/fulltext/``; raw (untokenised) fields hold the values
search filters on.  Text in scripts written without spaces (Chinese, Japanese, ...) is
indexed as overlapping character bigrams, and queries are split the same way
(:mod:`segment`).  A ``VERSION`` file records the schema: any mismatch,
or an index Tantivy cannot open, raises :class:`IndexStale` so the caller
rebuilds it from the files.  tantivy is imported only when an index is opened.
"""

from __future__ import annotations

import gc
import hashlib
import re
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import IndexStale, VaultError
from ..format.text import STOPWORDS, clip, whole_fragment
from ..patterns import lazy_pattern
from . import segment
from .guard import newer, written_by_newer

SCHEMA_VERSION = "memvault-fulltext-4"  # 3: bigrams of the scripts written without spaces; 4: the id's key
TEXT_FIELDS = ("title", "summary", "trigger", "body", "tags", "context", "when")
UNSTORED = ("body", "context", "when")
RAW_FIELDS = ("id", "type", "scope", "project", "trust", "lifecycle", "tier", "status", "hash", "path")
KEY_FIELDS = ("key_high", "key_low")  # fast columns: each document's id as numbers (:func:`id_key`)
BOOSTS = {"title": 2.0, "summary": 1.5, "trigger": 1.2, "tags": 1.5, "body": 1.0, "context": 0.3, "when": 1.0}
_TERM = lazy_pattern(r"\w+", re.UNICODE)
WRITER_HEAP = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class TextHit:
    id: str
    score: float
    snippet: str


def _schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    for name in TEXT_FIELDS:
        builder.add_text_field(name, stored=name not in UNSTORED, tokenizer_name="en_stem")
    for name in RAW_FIELDS:
        builder.add_text_field(name, stored=True, tokenizer_name="raw")
    for name in KEY_FIELDS:
        builder.add_unsigned_field(name, stored=False, indexed=False, fast=True)
    return builder.build()


def id_key(memory_id: str) -> tuple[int, int]:
    """A memory id as the two numbers the index keeps beside it: its 128-bit BLAKE2b digest.

    A hit's id is then read from two fast columns, not from its stored document: a few
    microseconds for a search's hundred hits, where reading the documents took half a
    millisecond.  128 bits make two ids with one key as unlikely as two memories given one id."""
    digest = hashlib.blake2b(memory_id.encode("utf-8"), digest_size=16).digest()
    return int.from_bytes(digest[:8], "big"), int.from_bytes(digest[8:], "big")


def query_terms(text: str) -> str:
    """User text reduced to plain terms, so query syntax in it can never misfire; a run of a
    script written without spaces is its bigrams, as the index holds it (:mod:`segment`)."""
    terms = [t.casefold() for t in segment.words(text, _TERM)]  # lower case: AND, OR, NOT are never operators
    content = [t for t in terms if t not in STOPWORDS]
    return " ".join(content or terms)


class FullTextIndex:
    """One vault's Tantivy index."""

    def __init__(self, folder: Path):
        import tantivy

        self.folder = folder
        self._tantivy = tantivy
        version = folder / "VERSION"
        if folder.exists():
            found = version.read_text(errors="replace").strip() if version.exists() else ""
            if newer(found, SCHEMA_VERSION):
                raise written_by_newer("full-text index", found, SCHEMA_VERSION, folder)
            if found != SCHEMA_VERSION:
                raise IndexStale("full-text index is from another version; it will be rebuilt", path=folder)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            self.index = tantivy.Index(_schema(), path=str(folder), reuse=True)
            self._names = _Names()
        except (ValueError, OSError) as exc:
            raise IndexStale(f"full-text index cannot be opened ({exc}); it will be rebuilt", path=folder) from None
        if not version.exists():
            from ..fsio import write_atomic

            write_atomic(version, SCHEMA_VERSION + "\n")

    @staticmethod
    def remove(folder: Path) -> None:
        for _attempt in range(5):  # a file created meanwhile (a merge finishing) fails one pass
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                return
            gc.collect()
            time.sleep(0.05)
        raise IndexStale("full-text index folder cannot be removed; delete it by hand", path=folder)

    def apply(self, upserts: Iterable[Mapping[str, Any]], deletes: Iterable[str]) -> None:
        """Replace documents by id and delete others, in one commit.

        Raises:
            VaultError: the disk is full (the index keeps its last commit).
            IndexStale: Tantivy could not write the index for another reason.
        """
        try:
            self._apply(upserts, deletes)
        except (ValueError, OSError) as exc:
            text = str(exc)
            if "StorageFull" in text or "No space left" in text:
                raise VaultError("cannot write the full-text index: disk is full; free some space, "
                                 "then run `memvault sync`", path=self.folder) from None
            raise IndexStale(f"full-text index cannot be written ({text[:200]}); it will be rebuilt",
                             path=self.folder) from None

    def _apply(self, upserts: Iterable[Mapping[str, Any]], deletes: Iterable[str]) -> None:
        writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)
        try:
            for memory_id in deletes:
                writer.delete_documents_by_term("id", memory_id)
            for fields in upserts:
                writer.delete_documents_by_term("id", str(fields["id"]))
                doc = self._tantivy.Document()
                for name in TEXT_FIELDS + RAW_FIELDS:
                    value = fields.get(name)
                    if value is None:
                        continue
                    for item in value if isinstance(value, (list, tuple)) else [value]:
                        doc.add_text(name, segment.indexed(str(item)) if name in TEXT_FIELDS else str(item))
                for name, number in zip(KEY_FIELDS, id_key(str(fields["id"])), strict=True):
                    doc.add_unsigned(name, number)
                writer.add_document(doc)
            writer.commit()
        finally:
            writer.wait_merging_threads()
        self.index.reload()

    def records(self) -> dict[str, tuple[str, str]]:
        """id -> (path, content hash) of every indexed document."""
        searcher = self.index.searcher()
        out: dict[str, tuple[str, str]] = {}
        if not searcher.num_docs:
            return out
        result = searcher.search(self._tantivy.Query.all_query(), limit=searcher.num_docs)
        for _score, address in result.hits:
            doc = searcher.doc(address)
            out[str(doc.get_first("id"))] = (str(doc.get_first("path")), str(doc.get_first("hash")))
        return out

    def hashes(self) -> dict[str, str]:
        """id -> content hash of every indexed document."""
        return {memory_id: digest for memory_id, (_path, digest) in self.records().items()}

    def count(self) -> int:
        return int(self.index.searcher().num_docs)

    def carriers(self, terms: Iterable[str], ids: Sequence[str], fields: Sequence[str]) -> dict[str, set[str]]:
        """Stemmed term -> which of the documents ``ids`` carry it in any of ``fields`` (one query per term)."""
        tantivy = self._tantivy
        schema = self.index.schema
        searcher = self.index.searcher()
        # Which documents match, not how well: both sides scored as constants (a third faster than BM25 on each).
        among = tantivy.Query.const_score_query(tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "id", i)) for i in ids]), 0.0)
        out: dict[str, set[str]] = {}
        for term in terms:
            anywhere = tantivy.Query.const_score_query(tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, tantivy.Query.term_query(schema, f, term)) for f in fields]), 0.0)
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, anywhere), (tantivy.Occur.Must, among)])
            found = searcher.search(query, limit=max(1, len(ids)), count=False)
            out[term] = set(self._names.ids(searcher, [address for _score, address in found.hits]))
        return out

    def frequencies(self, terms: Iterable[str], fields: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(indexed documents, stemmed term -> how many documents carry it in any of ``fields``).

        A term's count is its largest count over the fields (a lower bound of the union that
        costs one dictionary lookup per field)."""
        searcher = self.index.searcher()
        out: dict[str, int] = {}
        for term in terms:
            out[term] = max((int(searcher.doc_freq(name, term)) for name in fields), default=0)
        return int(searcher.num_docs), out

    def search(
        self,
        text: str,
        limit: int,
        filters: Mapping[str, Iterable[str]] | None = None,
        *,
        any_of: Sequence[Sequence[tuple[str, str]]] = (),
        exclude: Sequence[tuple[str, str]] = (),
        snippet_count: int = 1000,
        boosts: Mapping[str, float] | None = None,
    ) -> list[TextHit]:
        """BM25 hits for ``text``.

        ``filters`` maps raw fields to allowed values; each group of ``any_of``
        must match at least one (field, value); no ``exclude`` pair may match.
        Only the first ``snippet_count`` hits get a highlighted snippet.
        """
        terms = query_terms(text)
        if not terms:
            return []
        weights = {**BOOSTS, **(boosts or {})}
        tantivy = self._tantivy
        schema = self.index.schema
        parsed, _errors = self.index.parse_query_lenient(
            terms, default_field_names=[f for f in TEXT_FIELDS if weights.get(f, 1.0) > 0], field_boosts=weights
        )
        groups = [[(field, v) for v in values] for field, values in (filters or {}).items()]
        clauses = [(tantivy.Occur.Must, parsed)]
        for group in [*groups, *any_of]:
            options = [(tantivy.Occur.Should, tantivy.Query.term_query(schema, f, v)) for f, v in group]
            clauses.append((tantivy.Occur.Must, tantivy.Query.boolean_query(options)))
        for field, value in exclude:
            clauses.append((tantivy.Occur.MustNot, tantivy.Query.term_query(schema, field, value)))
        query = tantivy.Query.boolean_query(clauses)
        searcher = self.index.searcher()
        result = searcher.search(query, limit=limit, count=False)
        snippets = _Snippets(tantivy, searcher, parsed, schema)
        ids = self._names.ids(searcher, [address for _score, address in result.hits])
        return [TextHit(memory_id, float(score), snippets.of(searcher.doc(address)) if rank < snippet_count else "")
                for rank, (memory_id, (score, address)) in enumerate(zip(ids, result.hits, strict=True))]


NAMES_SLACK = 1024  # ids held beyond twice the documents before they are learned again


class _Names:
    """Hits' memory ids by their keys (:func:`id_key`), each learned from its document once.

    A key is derived from its id, so what is learned holds for every later searcher, whatever
    was written, deleted or merged since.  The ids of deleted documents are not known here (another
    process may delete them): when twice as many ids are held as the index has documents, they are
    forgotten and learned again, so a long-running server holds no more than that."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[int, int], str] = {}

    def ids(self, searcher: Any, addresses: Sequence[Any]) -> list[str]:
        """The memory id of each document at ``addresses``, in order."""
        if not addresses:
            return []
        if len(self._by_key) > 2 * searcher.num_docs + NAMES_SLACK:
            self._by_key.clear()
        found = list(addresses)
        high, low = (searcher.fast_field_values(name, found) for name in KEY_FIELDS)
        out = []
        for key, address in zip(zip(high, low, strict=True), found, strict=True):
            known = self._by_key.get(key)
            if known is None:
                known = str(searcher.doc(address).get_first("id"))
                if id_key(known) == key:  # a document without its key (None) is read every time
                    self._by_key[key] = known
            out.append(known)
        return out


SNIPPET_CHARS = 160


class _Snippets:
    """A hit's snippet: the best fragment of its summary, at most :data:`SNIPPET_CHARS` characters.

    A summary with bigrams (:mod:`segment`) is about three times as long in the index as it
    reads, so its fragment is taken from three times as many indexed characters, then read as
    it was written."""

    def __init__(self, tantivy: Any, searcher: Any, query: Any, schema: Any):
        self._tantivy = tantivy
        self._args = (searcher, query, schema)
        self._by_chars: dict[int, Any] = {}

    def of(self, doc: Any) -> str:
        summary = doc.get_first("summary")
        # Bigrams are set off by EDGE; a text without runs keeps any EDGE it was written with.
        if not isinstance(summary, str) or segment.EDGE not in summary or not segment.has_runs(summary):
            fragment = str(self._generator(SNIPPET_CHARS).snippet_from_doc(doc).fragment())
            return whole_fragment(str(summary or ""), fragment)
        fragment = self._generator(3 * SNIPPET_CHARS).snippet_from_doc(doc).fragment()
        return clip(whole_fragment(segment.readable(summary), segment.readable(fragment)), SNIPPET_CHARS)

    def _generator(self, chars: int) -> Any:
        if chars not in self._by_chars:
            made = self._tantivy.SnippetGenerator.create(*self._args, "summary")
            made.set_max_num_chars(chars)
            self._by_chars[chars] = made
        return self._by_chars[chars]
