"""Turns of a conversation are indexed with their neighbours, and stay so as turns change."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from vault_engine.index.catalog import Catalog
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.vectors import VectorStore
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.store import STATE_DIR
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow


def turn(vault: Vault, position: str, text: str, thread: str = "chat-1") -> str:
    return vault.add(NewMemory(text, title=text[:40], summary=text, source=f"conversation:{thread}#{position}")).id


def context_hits(vault: Vault, query: str) -> list[str]:
    """Ids whose full-text match came only through the context field (their own text lacks the words)."""
    return [h.id for h in vault.search(SearchQuery(query, limit=10)).hits if "fts" in h.lanes]


def lanes_of(vault: Vault, memory_id: str) -> set[str]:
    store = VectorStore(vault.root / STATE_DIR / "vectors.sqlite", HashEmbedder().name, HashEmbedder().dim)
    try:
        rows = store._db.execute("SELECT lane FROM vectors WHERE id = ?", (memory_id,)).fetchall()
        return {lane for (lane,) in rows}
    finally:
        store.close()


def test_turns_get_a_context_lane_and_field_that_follow_their_neighbours(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())
    first = turn(vault, "D1:1", "Did you go to the pottery workshop on Friday?")
    second = turn(vault, "D1:2", "Yes, and I loved it!")
    third = turn(vault, "D1:10", "What are you making next?")
    loner = vault.add(NewMemory("Kilns run hot; check the vents.")).id

    assert "context" in lanes_of(vault, second)
    assert "context" not in lanes_of(vault, loner)  # not a turn of a conversation
    # "pottery" is only in the first turn: the second matches through its neighbour, the third
    # (after the second, "D1:10" sorting after "D1:2") does not.
    found = context_hits(vault, "pottery workshop")
    assert first in found and second in found and third not in found

    # Editing the first turn re-indexes its neighbour: the old words no longer reach it.
    vault.correct(first, "Did you go to the glassblowing class on Friday?")
    found = context_hits(vault, "glassblowing")
    assert second in found
    assert second not in context_hits(vault, "pottery workshop")

    # Removing the middle turn makes the first and the third neighbours.
    vault.forget(second)
    assert third in context_hits(vault, "glassblowing")
    catalog = Catalog(vault.root / STATE_DIR / "catalog.sqlite")
    try:
        every = catalog.threads()  # all threads in one query, as search reads them
        assert every == catalog.threads(["chat-1"])
        assert second not in {t.id for t in every["chat-1"]} and first not in {t.id for t in every["chat-1"]}
        assert catalog.has_threads()
    finally:
        catalog.close()


def vector_of(vault: Vault, memory_id: str, lane: str) -> np.ndarray:
    store = VectorStore(vault.root / STATE_DIR / "vectors.sqlite", HashEmbedder().name, HashEmbedder().dim)
    try:
        vector = store.vector(memory_id, lane)
        assert vector is not None, (memory_id, lane)
        return np.array(vector)
    finally:
        store.close()


def test_a_turns_context_vector_is_composed_from_its_neighbours_vectors(make_vault: Callable[..., Vault]) -> None:
    """No text is embedded for the context lane: its vector is the normalised mean of the turn's
    and its neighbours' summary vectors, and it follows a neighbour's correction."""
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())
    first = turn(vault, "D1:1", "Did you go to the pottery workshop on Friday?")
    second = turn(vault, "D1:2", "Yes, and I loved it!")
    third = turn(vault, "D1:3", "What are you making next?")

    def expected(*ids: str) -> np.ndarray:
        total = np.sum([vector_of(vault, i, "summary") for i in ids], axis=0)
        return total / np.linalg.norm(total)

    assert np.allclose(vector_of(vault, second, "context"), expected(first, second, third), atol=1e-6)
    assert np.allclose(vector_of(vault, first, "context"), expected(first, second), atol=1e-6)
    current = vault.correct(third, "Shall we book the glassblowing class?").id  # a new memory in its place
    assert current != third
    assert np.allclose(vector_of(vault, second, "context"), expected(first, second, current), atol=1e-6)


def test_explain_names_the_context_lane_only_for_turns(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())
    turn(vault, "1", "We adopted a kitten named Luna.")
    turn(vault, "2", "She sleeps all day.")
    vault.add(NewMemory("Kittens need vaccines at eight weeks."))
    for hit in vault.search(SearchQuery("kitten")).hits:
        has_lane = any(line.startswith("vector context") for line in hit.why)
        assert has_lane == (hit.title != "Kittens need vaccines at eight weeks")


LONG_TURN = ("We finally went to the coast last weekend. The drive took four hours because of the roadworks. "
             "The kids slept most of the way, thankfully. On Sunday morning we rented a small boat and "
             "the highlight was a pod of dolphins swimming right beside it.")


def test_a_turn_without_a_written_summary_is_read_whole_by_its_neighbours_and_its_own_lanes(
        make_vault: Callable[..., Vault]) -> None:
    """A derived summary clips a long turn (the dolphins are past its 240 characters); the lanes and
    the neighbours' context read the whole turn, and an incremental sync (the unchanged neighbour
    read back from the catalog) gives the vectors a rebuild gives."""
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())

    def raw_turn(position: str, text: str) -> str:
        return vault.add(NewMemory(text, source=f"conversation:chat-1#{position}")).id

    first = raw_turn("D1:1", LONG_TURN)
    assert "dolphins" not in vault.find(first).memory.summary  # the file keeps the short derived summary
    second = raw_turn("D1:2", "Wow, what a trip!")
    third = raw_turn("D1:3", "Did the kids like the boat?")  # the first turn is unchanged: read from the catalog
    whole = HashEmbedder().embed([" ".join(LONG_TURN.split())])[0]
    assert np.allclose(vector_of(vault, first, "summary"), whole, atol=1e-6)
    incremental = vector_of(vault, second, "context")
    total = whole + vector_of(vault, second, "summary") + vector_of(vault, third, "summary")
    assert np.allclose(incremental, total / np.linalg.norm(total), atol=1e-6)
    vault.sync(full=True)
    assert np.allclose(vector_of(vault, second, "context"), incremental, atol=1e-6)
