"""Documents and tool outputs: chunking, ingestion as linked document memories, remembered outputs."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_engine.errors import ForgottenContent, InvalidInput, LlmUnavailable
from vault_engine.format.memory import Memory
from vault_engine.history import replay
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.sync import freshness
from vault_engine.ingest.documents import (
    DIGEST_KEY,
    chunk,
    chunk_spans,
    document_digest,
    ingest_document,
    remember_output,
    tool_source,
)
from vault_engine.llm.base import Digest, Sense, Turn
from vault_engine.llm.offline import OfflineLlm
from vault_engine.vault import NewMemory, Vault

SECRET = "sk-ant-api03-Zx8vQ2mN4pL6kR1tY7wE3uI9oA5sD0fG"


def prose(paragraphs: int, seed: int = 7) -> str:
    """Paragraphs of sentences of ordinary words, separated by blank lines."""
    rng = random.Random(seed)
    words = ("deploy pipeline cluster release helm chart rollback service ingress secret volume "
             "replica node scheduler budget quota").split()
    out = []
    for _ in range(paragraphs):
        sentences = []
        for _ in range(rng.randint(2, 6)):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(5, 14)))
            sentences.append(body[0].upper() + body[1:] + ".")
        out.append(" ".join(sentences))
    return "\n\n".join(out) + "\n"


def files(vault: Vault) -> dict[str, bytes]:
    """Every file of the vault except derived state, with its bytes."""
    return {p.relative_to(vault.root).as_posix(): p.read_bytes() for p in sorted(vault.root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(vault.root).parts}


def journal_lines(vault: Vault) -> list[str]:
    return [line for p in vault.journal.files() for line in p.read_text(encoding="utf-8").splitlines() if line]


def get(vault: Vault, memory_id: str) -> Memory:
    return vault.scan().get(memory_id).memory


class FakeLlm:
    """Records what it is asked; fails on the ``fail_on``-th digest; answers with fixed fields."""

    def __init__(self, fail_on: int | None = None, title: str = "A part", tags: Sequence[str] = ("docs",),
                 recall: str = "active", summary: str = "What the part says."):
        self.fail_on = fail_on
        self.calls: list[tuple[str, list[str], str]] = []
        self.answer = Digest(title=title, summary=summary, trigger="When I need the part", recall=recall,
                             tags=tuple(tags))

    @property
    def name(self) -> str:
        return "fake"

    def sense(self, buffer: Sequence[Turn], turn: Turn) -> Sense:
        return Sense(False, 0.0)

    def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
        self.calls.append((text, list(existing_tags), kind))
        if self.fail_on is not None and len(self.calls) >= self.fail_on:
            raise LlmUnavailable("the model is rate limited; retry later")
        return self.answer

    def detail(self, text: str) -> str:
        return text[:100]


# ---------------------------------------------------------------- chunking


def test_empty_text_has_no_chunks() -> None:
    assert chunk("", 100, 10) == []
    assert chunk_spans("", 100, 10) == []


@pytest.mark.parametrize(("size", "overlap"), [(10, 10), (10, 11), (0, 0), (5, -1), (-3, -5)])
def test_size_must_exceed_overlap_which_must_not_be_negative(size: int, overlap: int) -> None:
    with pytest.raises(InvalidInput, match="chunk size must be larger than the overlap"):
        chunk("some text", size, overlap)


def test_text_within_size_is_one_chunk() -> None:
    text = "One short paragraph.\n\nAnother one.\n"
    assert chunk(text, len(text), 5) == [text]
    assert chunk(text, 2000, 200) == [text]


def test_paragraph_break_preferred_over_line_and_sentence() -> None:
    first = "A" * 50 + " first paragraph ends here.\n\n"  # paragraph break at ~80
    later = "Line one of the second paragraph.\nLine two. Sentence three. Sentence four and more words"
    text = first + later + " tail " * 20
    chunks = chunk(text, 120, 0)
    assert chunks[0] == first
    assert "".join(chunks) == text


def test_line_break_preferred_over_sentence() -> None:
    first = "B" * 40 + " first line.\n"  # the only line break, at ~53
    text = first + "Sentence one is here. Sentence two is here. Words words words words" + " more" * 30
    chunks = chunk(text, 120, 0)
    assert chunks[0] == first
    assert "".join(chunks) == text


def test_sentence_end_preferred_over_word_boundary() -> None:
    first = "C" * 40 + " ends a sentence. "
    text = first + "then many words without any sentence end at all " * 5
    chunks = chunk(text, 120, 0)
    assert chunks[0] == first
    assert "".join(chunks) == text


def test_word_boundary_when_no_sentence_ends() -> None:
    text = " ".join(["word"] * 100)
    chunks = chunk(text, 37, 0)
    assert "".join(chunks) == text
    for piece in chunks[:-1]:
        assert len(piece) <= 37
        assert piece.endswith(" ")  # never cut inside a word


def test_hard_cut_without_any_boundary() -> None:
    text = "x" * 95
    spans = chunk_spans(text, 20, 5)
    assert spans[:3] == [(0, 20), (15, 35), (30, 50)]
    assert spans[-1][1] == 95
    assert all(end - start <= 20 for start, end in spans)


def test_boundaries_in_the_first_quarter_are_skipped() -> None:
    # A paragraph break at 10 would leave a tiny first piece: the later sentence end wins.
    text = "Tiny one.\n\n" + "Long sentence with many words in it that keeps going. " * 3 + "z" * 200
    first = chunk(text, 120, 0)[0]
    assert len(first) > 30
    assert first.endswith(". ")


def test_overlap_is_present_bounded_and_starts_at_a_word() -> None:
    text = prose(40)
    spans = chunk_spans(text, 400, 80)
    assert len(spans) > 5
    for (_, previous_end), (start, end) in itertools.pairwise(spans):
        assert 0 < previous_end - start <= 80
        assert end - start <= 400
        assert not text[start].isspace() and text[start - 1].isspace()


def test_overlap_prefers_a_sentence_start() -> None:
    text = prose(30, seed=3)
    spans = chunk_spans(text, 500, 120)
    sentence_starts = 0
    for start, _ in spans[1:]:
        before = text[:start].rstrip(" \t")
        if before.endswith((".", "\n")):
            sentence_starts += 1
    assert sentence_starts >= len(spans[1:]) // 2


def test_tiny_sizes() -> None:
    assert chunk("abc", 1, 0) == ["a", "b", "c"]
    assert chunk("a b", 2, 1) == ["a ", " b"]
    for text in ("abcdef", "a b c d", "x.\n\ny"):
        for size in (1, 2, 3):
            for overlap in range(size):
                _check_spans(text, size, overlap)


def test_huge_input_is_chunked_exactly() -> None:
    text = prose(6000, seed=11)  # about 2.4 MB
    assert len(text) > 1_000_000
    spans = chunk_spans(text, 2000, 200)
    assert len(spans) > 1000
    rebuilt = []
    previous = 0
    for start, end in spans:
        assert end - start <= 2000
        assert start <= previous < end
        rebuilt.append(text[previous:end])
        previous = end
    assert "".join(rebuilt) == text


def _check_spans(text: str, size: int, overlap: int) -> None:
    spans = chunk_spans(text, size, overlap)
    assert chunk(text, size, overlap) == [text[s:e] for s, e in spans]
    if not text:
        assert spans == []
        return
    previous = 0
    rebuilt = []
    for index, (start, end) in enumerate(spans):
        assert 0 <= start < end <= len(text)
        assert end - start <= size
        assert previous - overlap <= start <= previous if index else start == 0
        assert end > previous
        rebuilt.append(text[previous:end])
        previous = end
    assert previous == len(text)
    assert "".join(rebuilt) == text


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab .!?\n\t\"')x。Zé")), max_size=600),
    size=st.integers(min_value=1, max_value=120),
    data=st.data(),
)
def test_chunks_without_overlap_rebuild_the_text(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    _check_spans(text, size, overlap)


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=3000), size=st.integers(min_value=2, max_value=400))
def test_chunks_of_any_unicode_rebuild_the_text(text: str, size: int) -> None:
    _check_spans(text, size, size // 3)


# ---------------------------------------------------------------- ingest_document


def test_ingest_creates_linked_documents_with_raw_text(vault: Vault) -> None:
    text = prose(30)
    result = ingest_document(vault, text, source="document:file:///tmp/ops.md", llm=OfflineLlm(),
                             chunk_size=600, overlap=100)
    spans = chunk_spans(text, 600, 100)
    assert not result.duplicate and result.chunks == len(spans) > 3
    scan = vault.scan()
    memories = [scan.get(i).memory for i in result.ids]
    for number, (memory, (start, end)) in enumerate(zip(memories, spans, strict=True), start=1):
        assert memory.body == text[start:end]  # byte for byte
        assert memory.type == "document"
        assert (memory.authority, memory.trust, memory.lifecycle, memory.tier) == (
            "explicit", "learned", "proven", "cold")
        assert memory.source == "document:file:///tmp/ops.md"
        assert memory.extra[DIGEST_KEY] == document_digest(text)
        assert memory.extra["part"] == f"{number}/{len(spans)}"
        assert memory.title.endswith(f"({number}/{len(spans)})")
        assert memory.summary and memory.trigger.startswith("When I need")
        assert scan.get(memory.id).path.startswith("episodes/global/")
    for index, memory in enumerate(memories):
        expected = [m.id for m in (memories[index - 1] if index else None,
                                   memories[index + 1] if index + 1 < len(memories) else None) if m]
        assert list(memory.links) == expected
    # the files on disk hold the bodies exactly
    for part in result.parts:
        raw = (vault.root / part.path).read_text(encoding="utf-8")
        assert raw.endswith(get(vault, part.id).body)


def test_ingest_keeps_awkward_text_byte_for_byte(vault: Vault) -> None:
    text = "\n---\nnot: frontmatter\n---\r\nCRLF line\r\n\n  indented é ü 中文\n" + "word " * 80 + "\n```\ncode\n```"
    result = ingest_document(vault, text, source="document:stdin", llm=OfflineLlm(), chunk_size=150, overlap=30)
    spans = chunk_spans(text, 150, 30)
    assert [get(vault, i).body for i in result.ids] == [text[s:e] for s, e in spans]
    assert vault.scan().problems == []


def test_ingest_in_a_project(vault: Vault) -> None:
    result = ingest_document(vault, prose(3), source="document:stdin", llm=OfflineLlm(),
                             project="github.com/acme/api")
    entry = vault.scan().get(result.ids[0])
    assert entry.path.startswith("episodes/projects/github.com-acme-api/")
    assert (entry.memory.scope, entry.memory.project) == ("project", "github.com/acme/api")
    assert result.chunks == 1 and "(1/1)" not in entry.memory.title


def test_ingest_uses_the_vault_settings_by_default(vault: Vault) -> None:
    text = prose(20)
    assert len(text) > 2000
    result = ingest_document(vault, text, source="document:stdin", llm=OfflineLlm())
    assert result.chunks == len(chunk(text, 2000, 200))


def test_same_content_twice_is_a_no_op(vault: Vault) -> None:
    text = prose(25)
    first = ingest_document(vault, text, source="document:a", llm=OfflineLlm(), chunk_size=700, overlap=70)
    before_files, before_journal = files(vault), journal_lines(vault)
    llm = FakeLlm()
    again = ingest_document(vault, text, source="document:b", llm=llm, chunk_size=300, overlap=10)
    assert again.duplicate and again.ids == first.ids
    assert [p.part for p in again.parts] == [p.part for p in first.parts]
    assert files(vault) == before_files
    assert journal_lines(vault) == before_journal
    assert llm.calls == []  # nothing was even digested


def test_a_changed_document_is_ingested_again(vault: Vault) -> None:
    first = ingest_document(vault, prose(5), source="document:a", llm=OfflineLlm())
    second = ingest_document(vault, prose(5) + "One more line.\n", source="document:a", llm=OfflineLlm())
    assert not second.duplicate and set(first.ids).isdisjoint(second.ids)


def test_a_forgotten_document_can_be_ingested_again(vault: Vault) -> None:
    text = prose(4)
    first = ingest_document(vault, text, source="document:a", llm=OfflineLlm())
    for memory_id in first.ids:
        vault.forget(memory_id)
    again = ingest_document(vault, text, source="document:a", llm=OfflineLlm())
    assert not again.duplicate and again.ids != first.ids


def test_permanently_forgotten_text_is_not_ingested_again(vault: Vault) -> None:
    text = prose(2)
    first = ingest_document(vault, text, source="document:a", llm=OfflineLlm())
    vault.forget(first.ids[0], permanent=True)
    before = files(vault)
    with pytest.raises(ForgottenContent, match="permanently forgotten"):
        ingest_document(vault, text, source="document:a", llm=OfflineLlm())
    assert files(vault) == before


def test_secrets_are_redacted_before_anything_is_written(vault: Vault) -> None:
    text = prose(10) + f"\nThe deploy key is {SECRET} and must not leak.\n" + prose(10, seed=2)
    result = ingest_document(vault, text, source="document:a", llm=OfflineLlm(), chunk_size=500, overlap=50)
    assert result.redactions == 1
    for rel, data in files(vault).items():
        assert SECRET.encode() not in data, rel
    bodies = "".join(get(vault, i).body for i in result.ids)
    assert "[REDACTED]" in bodies
    events = [json.loads(line) for line in journal_lines(vault)]
    assert {e["payload"]["redactions"] for e in events} == {1}
    assert result.document_sha256 == document_digest(text.replace(SECRET, "[REDACTED]"))


def test_secrets_from_the_model_are_redacted_too(vault: Vault) -> None:
    llm = FakeLlm(title=f"Key {SECRET}", summary=f"Uses {SECRET}.", recall="sometimes")
    result = ingest_document(vault, prose(2), source="document:a", llm=llm)
    memory = get(vault, result.ids[0])
    assert SECRET not in memory.title and SECRET not in memory.summary
    assert memory.recall == "active"  # an unknown recall mode falls back to active


def test_tags_are_reused_from_the_vault(vault: Vault) -> None:
    vault.add(NewMemory("Helm charts live in deploy/charts", tags=("helm",)))
    vault.add(NewMemory("Rollbacks go through helm releases", tags=("helm", "rollback")))
    vault.add(NewMemory("An old fact about quotas", tags=("quota",)))
    spy = FakeLlm(tags=("rollback", "new-tag"))
    ingest_document(vault, prose(12), source="document:a", llm=spy, chunk_size=400, overlap=40)
    assert len(spy.calls) > 1
    assert spy.calls[0][1] == ["helm", "quota", "rollback"]  # most used first
    assert "new-tag" in spy.calls[1][1]  # later parts reuse the earlier parts' tags
    assert {kind for _, _, kind in spy.calls} == {"document"}
    text = "Helm releases make rollback easy. Every helm chart is versioned.\n"
    result = ingest_document(vault, text, source="document:b", llm=OfflineLlm())
    assert "helm" in get(vault, result.ids[0]).tags


def test_model_failure_writes_nothing(vault: Vault) -> None:
    before_files, before_journal = files(vault), journal_lines(vault)
    llm = FakeLlm(fail_on=3)
    with pytest.raises(LlmUnavailable, match="rate limited"):
        ingest_document(vault, prose(20), source="document:a", llm=llm, chunk_size=300, overlap=30)
    assert len(llm.calls) == 3
    assert files(vault) == before_files
    assert journal_lines(vault) == before_journal


@pytest.mark.parametrize("text", ["", "   \n\n\t"])
def test_empty_document_is_refused(vault: Vault, text: str) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        ingest_document(vault, text, source="document:a", llm=OfflineLlm())


def test_bad_chunk_settings_are_refused_before_the_model_is_asked(vault: Vault) -> None:
    llm = FakeLlm()
    with pytest.raises(InvalidInput, match="chunk size"):
        ingest_document(vault, prose(2), source="document:a", llm=llm, chunk_size=100, overlap=100)
    assert llm.calls == []


def test_journal_replay_agrees_with_the_files(vault: Vault) -> None:
    result = ingest_document(vault, prose(15), source="document:a", llm=OfflineLlm(), chunk_size=500, overlap=50)
    events = [e for e in vault.journal.events() if e.memory in result.ids]
    assert [e.kind for e in events] == ["import"] * result.chunks
    assert {e.payload["origin"] for e in events} == {"ingest-doc"}
    assert [e.payload["part"] for e in events] == [p.part for p in result.parts]
    states = replay(vault.journal.events())
    assert all((states[i].lifecycle, states[i].authority) == ("proven", "explicit") for i in result.ids)
    assert vault.replay_diff() == []


def test_writes_keep_the_indexes_current(make_vault: Callable[..., Vault]) -> None:
    plain = make_vault()
    vault = Vault(plain.root, auto_sync=True, embedder=HashEmbedder())
    ingest_document(vault, prose(8), source="document:a", llm=OfflineLlm(), chunk_size=500, overlap=50)
    assert vault.last_sync is not None
    assert freshness(vault.root)[0] == "current"


# ---------------------------------------------------------------- remember_output


def test_short_output_is_not_stored(vault: Vault) -> None:
    before = files(vault)
    text = "\x1b[32mok\x1b[0m 3 passed\n"
    result = remember_output(vault, text, source="tool:pytest", llm=OfflineLlm(), min_chars=100)
    assert not result.stored and result.text == text and result.reference == ""
    assert result.to_json()["text"] == text
    assert files(vault) == before


def test_long_output_is_stored_with_a_reference(vault: Vault) -> None:
    text = "".join(f"tests/test_{i}.py::test_case PASSED [{i}%]\n" for i in range(100))
    result = remember_output(vault, text, source="tool:pytest", llm=OfflineLlm(), min_chars=1500)
    assert result.stored and result.document is not None and result.ids == result.document.ids
    first = get(vault, result.ids[0])
    assert first.type == "document" and first.source == "tool:pytest"
    assert (first.authority, first.trust, first.lifecycle) == ("explicit", "external", "proven")
    assert "".join(get(vault, i).body for i in result.ids).startswith(text[:1000])
    assert f"id: {first.id}" in result.reference
    assert f"title: {first.title}" in result.reference
    assert f"summary: {first.summary}" in result.reference
    assert f"memvault show {first.id} --depth 2" in result.reference
    assert len(result.reference) < len(text) // 2
    event = next(e for e in vault.journal.events() if e.memory == first.id)
    assert event.payload["origin"] == "remember-output"


def test_the_same_output_twice_is_stored_once(vault: Vault) -> None:
    text = "line of output that is long enough\n" * 60
    first = remember_output(vault, text, source="tool:grep", llm=OfflineLlm(), min_chars=100)
    before = files(vault)
    again = remember_output(vault, text, source="tool:grep", llm=OfflineLlm(), min_chars=100)
    assert again.stored and again.document is not None and again.document.duplicate
    assert again.ids == first.ids and files(vault) == before
    assert "already stored before" in again.reference


def test_the_default_threshold_comes_from_the_settings(vault: Vault) -> None:
    limit = vault.config.ingest.tool_output_min_chars
    short = remember_output(vault, "y" * (limit - 1), source="tool:x", llm=OfflineLlm())
    long = remember_output(vault, "y " * limit, source="tool:x", llm=OfflineLlm())
    assert (short.stored, long.stored) == (False, True)


def test_tool_source_names() -> None:
    assert tool_source("pytest") == "tool:pytest"
    assert tool_source("tool:pytest") == "tool:pytest"
    for bad in ("", "tool:", "  "):
        with pytest.raises(InvalidInput, match="tool:NAME"):
            tool_source(bad)


def test_remember_output_refuses_a_negative_threshold(vault: Vault) -> None:
    with pytest.raises(InvalidInput, match="0 or more"):
        remember_output(vault, "text", source="tool:x", llm=OfflineLlm(), min_chars=-1)
