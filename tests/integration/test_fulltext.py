"""The real Tantivy index."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.errors import IndexStale
from vault_engine.index import fulltext
from vault_engine.index.fulltext import FullTextIndex, query_terms

pytestmark = pytest.mark.slow


def _doc(memory_id: str, title: str, body: str, **raw: str) -> dict[str, object]:
    return {"id": memory_id, "title": title, "summary": title, "trigger": "", "body": body, "tags": ["t"],
            "type": "fact", "scope": raw.get("scope", "global"), "project": raw.get("project", ""),
            "trust": raw.get("trust", "learned"), "lifecycle": "proven", "tier": "cold",
            "hash": raw.get("hash", "h"), "path": f"memories/{memory_id}.md"}


def test_bm25_finds_rare_tokens_and_filters_hold(tmp_path: Path) -> None:
    index = FullTextIndex(tmp_path / "ft")
    index.apply([
        _doc("m-a", "Connection resets", "The client fails with ERR_CONN_RESET 0x80072746 under load."),
        _doc("m-b", "Fixtures", "Use pytest fixtures from conftest.", scope="project", project="p1"),
        _doc("m-c", "Other", "Nothing about errors here."),
    ], [])
    hits = index.search("0x80072746", limit=5)
    assert [h.id for h in hits] == ["m-a"]
    assert [h.id for h in index.search("fixtures", 5, {"project": ["p1"]})] == ["m-b"]
    assert index.search("fixtures", 5, {"project": ["p2"]}) == []
    assert index.search("fixtures", 5, {"scope": ["global"]}) == []


def test_query_syntax_in_user_text_is_harmless(tmp_path: Path) -> None:
    index = FullTextIndex(tmp_path / "ft")
    index.apply([_doc("m-a", "Title", "alpha beta")], [])
    assert query_terms('title:"x" AND -alpha (') == "title x alpha"
    assert [h.id for h in index.search('-alpha OR title:(', 5)] == ["m-a"]
    assert index.search("  ::: ", 5) == []


def test_upsert_replaces_delete_removes_and_hashes_persist(tmp_path: Path) -> None:
    folder = tmp_path / "ft"
    index = FullTextIndex(folder)
    index.apply([_doc("m-a", "Old words", "old", hash="h1")], [])
    index.apply([_doc("m-a", "New words", "new", hash="h2"), _doc("m-b", "B", "b")], [])
    assert index.count() == 2
    assert index.search("old", 5) == []
    index.apply([], ["m-b"])
    reopened = FullTextIndex(folder)
    assert reopened.hashes() == {"m-a": "h2"}


def test_version_mismatch_and_garbage_are_stale(tmp_path: Path) -> None:
    folder = tmp_path / "ft"
    FullTextIndex(folder)
    (folder / "VERSION").write_text("something-else\n")
    with pytest.raises(IndexStale):
        FullTextIndex(folder)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "VERSION").write_text("memvault-fulltext-1\n")
    (broken / "meta.json").write_text("{garbage")
    with pytest.raises(IndexStale):
        FullTextIndex(broken)


def test_a_snippet_keeps_the_punctuation_and_brackets_that_close_its_sentence(tmp_path: Path) -> None:
    index = FullTextIndex(tmp_path / "ft")
    index.apply([_doc("m-a", "Errors use problem+json (RFC 7807).", "Every API error answers problem+json."),
                 _doc("m-b", "\"Retry budget\": three tries per request.", "Retries.")], [])
    assert [h.snippet for h in index.search("problem json errors", 5)] == ["Errors use problem+json (RFC 7807)."]
    assert [h.snippet for h in index.search("retry budget", 5)] == ['"Retry budget": three tries per request.']


class _CountingSearcher:
    """A Tantivy searcher that counts the stored documents read through it."""

    def __init__(self, searcher: object, reads: list[int]):
        self._searcher = searcher
        self._reads = reads

    def doc(self, address: object) -> object:
        self._reads.append(1)
        return self._searcher.doc(address)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._searcher, name)


class _CountingIndex:
    def __init__(self, index: object, reads: list[int]):
        self._index = index
        self._reads = reads

    def searcher(self) -> _CountingSearcher:
        return _CountingSearcher(self._index.searcher(), self._reads)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._index, name)


def test_hit_ids_are_read_from_their_keys_once_learned_and_stay_right_after_rewrites(tmp_path: Path) -> None:
    folder = tmp_path / "ft"
    writer = FullTextIndex(folder)
    writer.apply([_doc(f"m-{n}", f"Shared topic {n}", f"shared words, number {n}") for n in range(8)], [])
    reader = FullTextIndex(folder)
    reads: list[int] = []
    reader.index = _CountingIndex(reader.index, reads)
    ids = [f"m-{n}" for n in range(8)]
    assert reader.carriers(["share"], ids, ["body"]) == {"share": set(ids)}
    assert len(reads) == 8  # each id read from its document once ...
    assert reader.carriers(["share", "number"], ids, ["body"]) == {"share": set(ids), "number": set(ids)}
    assert len(reads) == 8  # ... then from the key columns alone
    # Rewrites, deletes and new documents over many commits (Tantivy merges segments and
    # renumbers documents): every id still reads right, with what the documents say.
    for round_ in range(12):
        writer.apply([_doc(f"m-{round_ % 8}", f"Rewritten {round_}", f"shared words again {round_}"),
                      _doc(f"m-new-{round_}", "New", "shared words too")], [f"m-new-{round_ - 1}"] if round_ else [])
    writer.apply([], ["m-3"])
    reader.index.reload()
    expected = {hit.id for hit in FullTextIndex(folder).search("shared", 50)}
    assert expected == {*ids, "m-new-11"} - {"m-3"}
    assert {hit.id for hit in reader.search("shared", 50, snippet_count=0)} == expected
    assert reader.carriers(["share"], sorted(expected), ["body"]) == {"share": expected}


def test_the_ids_a_reader_learned_are_forgotten_when_they_outnumber_the_documents_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process deletes documents without this reader knowing: a long-running server keeps no
    more ids than twice the documents (and the slack), and still reads every hit right."""
    monkeypatch.setattr(fulltext, "NAMES_SLACK", 0)
    folder = tmp_path / "ft"
    writer = FullTextIndex(folder)
    reader = FullTextIndex(folder)
    for round_ in range(6):
        writer.apply([_doc(f"m-{round_}-{n}", "Turn", f"shared words {n}") for n in range(5)],
                     [f"m-{round_ - 1}-{n}" for n in range(5)] if round_ else [])
        reader.index.reload()
        found = {hit.id for hit in reader.search("shared", 50, snippet_count=0)}
        assert found == {f"m-{round_}-{n}" for n in range(5)}
        assert len(reader._names._by_key) <= 2 * 5 + 5  # learned this round, at most twice the documents before


def test_an_index_a_newer_memvault_wrote_is_refused_and_left_alone(tmp_path: Path) -> None:
    from vault_engine.errors import IndexNewer
    from vault_engine.index.fulltext import SCHEMA_VERSION

    folder = tmp_path / "ft"
    FullTextIndex(folder).apply([_doc("m-a", "kept", "kept")], [])
    prefix, number = SCHEMA_VERSION.rsplit("-", 1)
    (folder / "VERSION").write_text(f"{prefix}-{int(number) + 1}\n")
    files = sorted(p.name for p in folder.iterdir())
    with pytest.raises(IndexNewer, match="full-text index was written by a newer memvault"):
        FullTextIndex(folder)
    assert sorted(p.name for p in folder.iterdir()) == files
