"""Only true duplicates fold; conflicting values are shown side by side; the current version is shown.

Real vaults on disk with the real indexes: the deterministic fake embedder where the rule is
checked, the real offline model and the CLI where a user would see it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from click.testing import Result

from vault_engine.index.fakes import HashEmbedder
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj")
TTL_600 = "CDN cache TTL for static assets is 600 seconds."
TTL_3600 = "CDN cache TTL for static assets is 3600 seconds."


def factory(n: int) -> str:
    name = NAMES[n - 1]
    return (f"Test factory make_user_{n} builds a user named {name}{n} with the email {name.lower()}{n}@example.com, "
            "the role tester, an active account and a default profile, for the fixtures in tests/factories.py.")


def note(memory_id: str, body: str, updated: str, extra: str = "", title: str | None = None) -> str:
    """A memory file titled ``title``, else as ``add`` titles ``body`` (its first sentence)."""
    return (f"---\nid: {memory_id}\ntitle: {title or body.rstrip('.')}\ntype: fact\nauthority: explicit\n"
            f"lifecycle: proven\n{extra}created: {updated}\nupdated: {updated}\n---\n{body}\n")


def live(vault: Vault) -> Vault:
    return Vault(vault.root, auto_sync=True, embedder=HashEmbedder())


def closest_pair(vault: Vault, ids: list[str]) -> float:
    """The highest summary-vector cosine among ``ids``: at or above 0.95, the old rule folded them."""
    vectors = vault.searcher().vectors
    found = [v for v in (vectors.vector(i) for i in ids) if v is not None]
    return max(float(np.dot(a, b)) for n, a in enumerate(found) for b in found[n + 1:])


def test_twelve_memories_sharing_a_template_are_all_returned(make_vault: Callable[..., Vault]) -> None:
    vault = live(make_vault())
    made = [vault.add(NewMemory(factory(n), title=f"Test factory make_user_{n}")).id for n in range(1, 13)]
    assert closest_pair(vault, made) >= vault.config.retrieval.duplicate_similarity
    hits = vault.search(SearchQuery("test factory user", limit=50)).hits
    assert sorted(h.id for h in hits) == sorted(made)
    assert all(not h.duplicates and not h.conflicts for h in hits)


def test_the_same_sentence_written_otherwise_folds_into_the_most_recently_updated(
        make_vault: Callable[..., Vault]) -> None:
    older, newer, other = "m-01aaaaaaaaaaaaaaaaaaaaaaaa", "m-01bbbbbbbbbbbbbbbbbbbbbbbb", "m-01cccccccccccccccccccccc"
    vault = live(make_vault({
        "memories/global/a.md": note(older, "the payment webhook retries three times, with exponential backoff",
                                     "2025-01-10T09:00:00Z"),
        "memories/global/b.md": note(newer, "The payment webhook retries three times with exponential backoff.",
                                     "2026-02-01T09:00:00Z"),
        "memories/global/c.md": note(other, "The payment webhook secret rotates monthly.", "2025-06-01T09:00:00Z"),
    }))
    vault.sync()
    hits = vault.search(SearchQuery("payment webhook retries backoff")).hits
    ids = [h.id for h in hits]
    assert newer in ids and older not in ids and other in ids
    shown = hits[ids.index(newer)]
    assert shown.duplicates == [older]
    assert f"near-duplicates folded in: {older}" in shown.why


def test_correcting_a_memory_into_a_duplicate_of_an_older_one_shows_the_correction(
        make_vault: Callable[..., Vault]) -> None:
    lowercase, wrong = "m-01aaaaaaaaaaaaaaaaaaaaaaaa", "m-01bbbbbbbbbbbbbbbbbbbbbbbb"
    an_hour_ago = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    vault = live(make_vault({
        # Its trigger makes it outrank the correction: without the rule it would be shown, the correction hidden.
        "memories/global/a.md": note(lowercase, "deploys go through the release pipeline on tuesdays", an_hour_ago,
                                     "trigger: when deploying on tuesdays\n"),
        # A title someone wrote: the correction keeps it (a title made from the text would follow the text).
        "memories/global/b.md": note(wrong, "Deploys go through the release pipeline after the standup.",
                                     "2025-02-10T09:00:00Z", title="When we ship"),
    }))
    vault.sync()
    corrected = vault.correct(wrong, "Deploys go through the release pipeline on Tuesdays.").id
    hits = vault.search(SearchQuery("deploys tuesdays release pipeline")).hits
    assert [h.id for h in hits] == [corrected]  # the older lowercase one folds into the correction
    assert hits[0].duplicates == [lowercase]
    place = f"the current version of its duplicates (updated last): shown in the place of {lowercase}"
    assert any(w.startswith(place) for w in hits[0].why)


def test_a_correction_that_keeps_a_title_with_another_value_is_not_hidden(make_vault: Callable[..., Vault]) -> None:
    lowercase, wrong = "m-01aaaaaaaaaaaaaaaaaaaaaaaa", "m-01bbbbbbbbbbbbbbbbbbbbbbbb"
    vault = live(make_vault({
        "memories/global/a.md": note(lowercase, "deploys go through the release pipeline on tuesdays.",
                                     "2025-01-10T09:00:00Z"),
        "memories/global/b.md": note(wrong, "Deploys go through the release pipeline on Mondays.",
                                     "2025-02-10T09:00:00Z", title="Deploys through the release pipeline on Mondays"),
    }))
    vault.sync()
    corrected = vault.correct(wrong, "Deploys go through the release pipeline on Tuesdays.").id
    # The same text as the older memory, but the title someone wrote, kept, still says Mondays: both are shown.
    ids = [h.id for h in vault.search(SearchQuery("deploys tuesdays release pipeline")).hits]
    assert corrected in ids and lowercase in ids and wrong not in ids


def test_conflicting_values_are_returned_side_by_side(make_vault: Callable[..., Vault]) -> None:
    vault = live(make_vault())
    low = vault.add(NewMemory(TTL_600)).id
    for n in range(8):
        vault.add(NewMemory(f"Static assets note {n}: the bundle for page {n} is built by the asset pipeline."))
    high = vault.add(NewMemory(TTL_3600)).id
    hits = vault.search(SearchQuery("CDN cache TTL static assets", limit=20)).hits
    ids = [h.id for h in hits]
    assert low in ids and high in ids
    first = min(ids.index(low), ids.index(high))
    assert {ids[first], ids[first + 1]} == {low, high}
    by_id = {h.id: h for h in hits}
    assert by_id[low].conflicts == [high] and by_id[high].conflicts == [low]
    assert f"states a different value than {high}: 600 seconds vs 3600 seconds" in by_id[low].why


def test_the_cli_shows_conflicts_in_json_explain_and_plain_output(run_cli: Callable[..., Result]) -> None:
    """With the real offline model, as a user runs it."""
    low = json.loads(run_cli("add", TTL_600, "--json").output)["id"]
    high = json.loads(run_cli("add", TTL_3600, "--json").output)["id"]
    run_cli("add", "Images are served from the CDN edge in Frankfurt.")
    data = json.loads(run_cli("search", "CDN cache TTL static assets", "--json").output)
    ids = [h["id"] for h in data["hits"]]
    assert {ids[0], ids[1]} == {low, high}
    by_id = {h["id"]: h for h in data["hits"]}
    assert by_id[low]["conflicts"] == [high] and by_id[high]["conflicts"] == [low]
    assert by_id[low]["duplicates"] == [] and by_id[high]["duplicates"] == []
    explained = run_cli("search", "CDN cache TTL static assets", "--explain").output
    assert f"- states a different value than {low}: 3600 seconds vs 600 seconds" in explained
    assert f"- states a different value than {high}: 600 seconds vs 3600 seconds" in explained
    plain = run_cli("search", "CDN cache TTL static assets").output
    assert f"conflicts with {low}: states another value" in plain
    assert f"conflicts with {high}: states another value" in plain


def test_the_cli_returns_every_template_memory_with_the_real_model(run_cli: Callable[..., Result]) -> None:
    made = [json.loads(run_cli("add", factory(n), "--title", f"Test factory make_user_{n}", "--json").output)["id"]
            for n in range(1, 13)]
    data = json.loads(run_cli("search", "test factory user", "--limit", "50", "--json").output)
    assert sorted(h["id"] for h in data["hits"]) == sorted(made)
    assert all(h["duplicates"] == [] for h in data["hits"])


def test_a_merged_memory_is_not_offered_while_its_survivor_is_folded_into_a_hit(
        make_vault: Callable[..., Vault]) -> None:
    merged, survivor, current = ("m-01aaaaaaaaaaaaaaaaaaaaaaaa", "m-01bbbbbbbbbbbbbbbbbbbbbbbb",
                                 "m-01cccccccccccccccccccccc")
    vault = live(make_vault({
        "memories/global/a.md": note(merged, "The payment webhook retries three times with exponential backoff!",
                                     "2025-01-01T09:00:00Z", f"merged_into: {survivor}\n"),
        "memories/global/b.md": note(survivor, "the payment webhook retries three times, with exponential backoff",
                                     "2025-01-10T09:00:00Z"),
        "memories/global/c.md": note(current, "The payment webhook retries three times with exponential backoff.",
                                     "2026-02-01T09:00:00Z"),
    }))
    vault.sync()
    vault.forget(merged)
    result = vault.search(SearchQuery("payment webhook retries backoff"))
    assert [h.id for h in result.hits] == [current] and result.hits[0].duplicates == [survivor]
    assert result.revivable == []
