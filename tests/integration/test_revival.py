"""The trash's revival offer, with the real model and the real indexes: a trashed memory is offered
only when it would clear the relevance floor itself, and never while the memory holding its
content (the survivor of a merge) is a hit."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

LUNCH = "Lunch is usually at noon in the office."
DEPLOY = "Deploys to production run from the main branch with make release."
DEPLOY_PARAPHRASE = "Production deploys are run from the main branch using make release."


def test_a_trashed_memory_is_offered_only_when_it_clears_the_relevance_floor(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    vault, (lunch, _deploy) = vault_of([LUNCH, DEPLOY])
    vault.forget(lunch)
    unrelated = vault.search(SearchQuery("what is the weather in Paris"))
    assert unrelated.hits == [] and unrelated.revivable == []
    asked = vault.search(SearchQuery("when is lunch in the office"))
    assert [h.id for h in asked.revivable] == [lunch]
    offer = asked.revivable[0]
    assert not offer.weak and offer.evidence >= vault.config.retrieval.relevance_floor
    assert offer.score >= vault.config.retrieval.revive_score


def test_the_trashed_half_of_a_merge_is_not_offered_while_its_survivor_is_a_hit(
        make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault().root, auto_sync=True)  # the default embedder: the bundled model
    older = vault.add(NewMemory(DEPLOY)).id
    newer = vault.add(NewMemory(DEPLOY_PARAPHRASE)).id
    assert [(a.kind, a.memory, a.related) for a in vault.maintain().actions] == [("merge", older, (newer,))]
    result = vault.search(SearchQuery("production deploys from the main branch with make release"))
    assert result.hits[0].id == older and newer not in [h.id for h in result.hits]
    assert result.revivable == []
