"""A new user's vault, with the real model and indexes: a handful of memories answer the questions
a person asks in their own words, unrelated questions stay quiet, and the verdict for a (question,
memory) pair does not change when an unrelated memory is added."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.conftest import run_memvault
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.server.requests import SearchRequest as ServiceSearch
from vault_engine.server.service import MemoryService
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

PNPM = "In this repository use pnpm, never npm, for every install"


def test_the_readme_first_commands_find_the_memory_they_added() -> None:
    """The README's own first commands, in a fresh HOME (the default vault), as a new user types them."""
    added = run_memvault("add", "Tests use pytest fixtures, not setUp", "--project", "github.com/acme/api",
                         "--path", "tests/**")
    assert added.returncode == 0, added.stderr
    memory_id = added.stdout.strip().split()[-1]
    found = run_memvault("search", "how should I write tests", "--project", "github.com/acme/api", "--json")
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert [h["id"] for h in answer["hits"]][:1] == [memory_id]
    assert answer["hits"][0]["weak"] is False
    plain = run_memvault("search", "how should I write tests", "--project", "github.com/acme/api")
    assert "no matches" not in plain.stdout and "Tests use pytest fixtures" in plain.stdout


@pytest.mark.parametrize("query", ["how do I install the dependencies here?", "which package manager should I use?"])
def test_a_one_memory_vault_answers_a_paraphrase(vault_of: Callable[[list[str]], tuple[Vault, list[str]]],
                                                  query: str) -> None:
    vault, made = vault_of([PNPM])
    result = vault.search(SearchQuery(query))
    assert [h.id for h in result.hits] == made
    assert not result.hits[0].weak and result.notice is None


@pytest.mark.parametrize("query", ["what is the weather in Paris", "how do I renew my passport",
                                   "who won the football world cup in 2014"])
def test_a_one_memory_vault_stays_quiet_for_an_unrelated_question(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]], query: str) -> None:
    vault, _made = vault_of([PNPM])
    result = vault.search(SearchQuery(query))
    assert result.hits == [] and result.weak_left_out == 1


def test_a_question_with_typos_says_which_words_no_memory_has(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    """Typed in a hurry, a question matches no word and little meaning: the notice says which words no
    memory holds, so the person sees the typo rather than an empty vault."""
    vault, _made = vault_of(["Our staging database runs on port 6543"])
    result = vault.search(SearchQuery("stagng databse port"))
    assert result.hits == [] and result.notice is not None
    assert "no memory has the words 'stagng', 'databse'; 1 weak match left out" in result.notice
    quiet = vault.search(SearchQuery("what is the weather in Paris")).notice or ""
    assert "no memory has the words 'weather', 'Paris'" in quiet
    answered = vault.search(SearchQuery("which port does the staging database use"))
    assert answered.hits and answered.notice is None  # nothing to say when it answers


def test_the_verdict_does_not_change_when_an_unrelated_memory_is_added(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    """Before, with word weights read from the vault: refused with one memory, answered with two."""
    vault, made = vault_of([PNPM])
    queries = ["how do I install the dependencies here?", "which package manager should I use?",
               "what is the weather in Paris"]
    before = {q: vault.search(SearchQuery(q, weak=True)).hits for q in queries}
    vault.add(NewMemory("Lunch is usually at noon in the office canteen"))
    for query in queries:
        after = {h.id: h for h in vault.search(SearchQuery(query, weak=True)).hits}
        hit = next(h for h in before[query] if h.id == made[0])
        assert after[made[0]].weak == hit.weak, query
        assert after[made[0]].evidence == pytest.approx(hit.evidence, abs=1e-6), query


def test_a_memory_that_names_what_the_query_names_clears_the_lower_floors(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    """A paraphrase may say the rest in other words; a name it does not carry is not paraphrased."""
    vault, made = vault_of(["My manager is Priya Raman; our one-on-one is on Thursdays"])
    boss = vault.search(SearchQuery("who is my boss"))
    assert [h.id for h in boss.hits] == made and not boss.hits[0].weak
    assert any("names, numbers and identifiers" in w or "relevance floor" in w for w in boss.hits[0].why)
    stranger = vault.search(SearchQuery("who is Gertrude's boss"))
    assert stranger.hits == []


def test_a_fact_about_another_customer_does_not_answer_a_question_about_this_one(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    """Facts that differ by an id: "customer 2077" is answered by customer 2077's memory, and customer
    1042's, close as the rest of its words are, is marked weak; a customer no memory names gets no hit."""
    vault, made = vault_of(["Customer 1042 is on the Enterprise plan and pays yearly.",
                            "Customer 2077 is on the Starter plan and pays monthly.",
                            "We deploy the api with blue-green through GitHub Actions; never on Fridays."])
    asked = vault.search(SearchQuery("which plan is customer 2077 on"))
    assert asked.hits[0].id == made[1] and not asked.hits[0].weak
    other = next(h for h in asked.hits if h.id == made[0])
    assert other.weak and any("it names 1042 where the query names 2077" in w for w in other.why)
    assert [h.id for h in asked.hits if not h.weak] == [made[1]]
    unknown = vault.search(SearchQuery("which plan is customer 3333 on"))
    assert unknown.hits == [] and "no memory has the word '3333'" in (unknown.notice or "")


def test_the_service_behind_http_and_mcp_answers_the_same(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    vault, made = vault_of([PNPM])
    service = MemoryService(vault)
    try:
        answer = service.search(ServiceSearch.parse({"query": "which package manager should I use?"}))
        assert [h["id"] for h in answer["hits"]] == made
        assert answer["relevance"]["named"]["meaning_floor"] == vault.config.retrieval.named_meaning_floor
        quiet = service.search(ServiceSearch.parse({"query": "what is the capital of Australia"}))
        assert quiet["hits"] == []
    finally:
        service.close()


def test_no_weak_memory_ranks_above_one_that_clears_the_floor(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    """A memory that stands alone and is weak ranks below every hit that clears the floor (before:
    "Docker images ..." ranked first, weak, above the secrets rule that answers the question)."""
    vault, made = vault_of(["Secrets live in Vault under secret/api; never put them in .env files committed to git",
                            "Docker images are built from python:3.11-slim to keep them small",
                            "Continuous integration runs on GitHub Actions; the workflow is .github/workflows/ci.yml",
                            "The staging environment lives at staging.acme.internal and resets every night"])
    for query in ("where do we keep credentials", "Sicherung der Datenbank", "how do we build the images"):
        hits = vault.search(SearchQuery(query, weak=True)).hits
        flags = [h.weak for h in hits]
        assert flags == sorted(flags), (query, [(h.title, h.weak) for h in hits])
    hits = vault.search(SearchQuery("where do we keep credentials")).hits
    assert hits[0].id == made[0] and not hits[0].weak
