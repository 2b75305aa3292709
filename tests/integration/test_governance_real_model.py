"""maintain with the real offline model: paraphrases merge, unrelated memories do not, reversals supersede."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

DEPLOY = "Deploys to production run from the main branch with make release."
DEPLOY_PARAPHRASE = "Production deploys are run from the main branch using make release."
TAX = "Quarterly tax filings are due in April."
MOBILE = "The mobile app uses React Native with Expo."


@pytest.fixture
def real(make_vault: Callable[..., Vault]) -> Vault:
    return Vault(make_vault().root)  # the default embedder: the bundled model


def test_a_paraphrase_merges_and_unrelated_memories_stay(real: Vault) -> None:
    older = real.add(NewMemory(DEPLOY, tags=("deploy",))).id
    newer = real.add(NewMemory(DEPLOY_PARAPHRASE, tags=("release",))).id
    tax = real.add(NewMemory(TAX)).id
    mobile = real.add(NewMemory(MOBILE)).id
    report = real.maintain()
    assert [(a.kind, a.memory, a.related) for a in report.actions] == [("merge", older, (newer,))]
    scan = real.scan()
    survivor = scan.get(older).memory
    assert survivor.body == DEPLOY + "\n" and survivor.proof_count == 2
    assert survivor.tags == ("deploy", "release") and survivor.trust == "learned"
    assert scan.get(newer).in_trash and scan.get(newer).memory.extra["merged_into"] == older
    for kept in (tax, mobile):
        assert not scan.get(kept).in_trash and scan.get(kept).memory.links == ()
    assert real.maintain(replan=True).actions == []
    assert real.replay_diff() == []


def test_an_external_paraphrase_links_to_the_trusted_memory_and_never_merges(real: Vault) -> None:
    trusted = real.add(NewMemory(DEPLOY, trust="system")).id
    copy = real.add(NewMemory(DEPLOY_PARAPHRASE, trust="external")).id
    report = real.maintain()
    assert "merge" not in report.counts() and report.counts().get("link") == 2
    scan = real.scan()
    assert scan.get(trusted).memory.trust == "system" and not scan.get(copy).in_trash
    from vault_engine.retrieval.searcher import SearchQuery

    assert [h.id for h in real.search(SearchQuery("production deploys make release")).hits] == [trusted]


def test_a_no_longer_reversal_supersedes(real: Vault) -> None:
    older = real.add(NewMemory("We deploy to production on Fridays after the standup.", tier="hot")).id
    newer = real.add(NewMemory("We no longer deploy to production on Fridays after the standup.")).id
    real.add(NewMemory(TAX))
    report = real.maintain()
    assert [(a.kind, a.memory, a.related) for a in report.actions] == [("supersede", newer, (older,))]
    assert "one states what the other negates" in report.actions[0].reason
    old = real.scan().get(older).memory
    assert (old.lifecycle, old.superseded_by, old.tier) == ("superseded", newer, "cold")
    assert real.scan().get(newer).memory.supersedes == older
    assert real.maintain(replan=True).actions == []


def test_audit_index_counts_match_after_maintain(real: Vault) -> None:
    real.add(NewMemory(DEPLOY))
    real.add(NewMemory(DEPLOY_PARAPHRASE))
    real.add(NewMemory(TAX))
    assert real.maintain().counts() == {"merge": 1}
    report = real.audit()
    assert report.counts == {"catalog": 3, "vectors": 3, "files": 3} and report.counts_ok
    assert report.planned == {} and report.trash == 1
