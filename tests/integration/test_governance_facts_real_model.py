"""maintain with the real offline model on facts that differ in an identifier or in one clause.

Identifiers that name *which* thing (customer 1042, rack 3, rule number 5) make distinct facts: never
superseded or merged.  A merge keeps what only the absorbed memory said, for as long as the survivor lives.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

CUSTOMERS_AND_RACKS = (
    "Customer 1042 is on the Enterprise plan",
    "Customer 2077 is on the Enterprise plan",
    "Server rack 3 is in room B12",
    "Server rack 4 is in room B12",
)
STAGING = "Staging uses the small instance size"
STAGING_EXCEPT = "Staging uses the small instance size, except during load tests when it must use xlarge"
OBSOLETE = "The old deploy script is obsolete"
OBSOLETE_USE = "The old deploy script is obsolete; always use make deploy"


@pytest.fixture
def real(make_vault: Callable[..., Vault]) -> Vault:
    return Vault(make_vault().root)  # the default embedder: the bundled model


def hits(vault: Vault, query: str) -> list[str]:
    return [h.id for h in vault.search(SearchQuery(query)).hits]


def test_customers_and_racks_that_differ_by_number_stay_distinct(real: Vault) -> None:
    ids = [real.add(NewMemory(text)).id for text in CUSTOMERS_AND_RACKS]
    report = real.maintain()
    assert not {"merge", "supersede"} & set(report.counts())
    scan = real.scan()
    for memory_id in ids:
        entry = scan.get(memory_id)
        assert not entry.in_trash and entry.memory.lifecycle != "superseded"
    assert ids[0] in hits(real, "which plan is customer 1042 on")
    reasons = " ".join(a.reason for a in report.actions)
    assert "distinct: they name different customers (1042, 2077)" in reasons
    assert "distinct: they name different racks (3, 4)" in reasons


def test_a_customer_who_moved_supersedes_only_that_customers_plan(real: Vault) -> None:
    """"Customer 2077 moved to the Enterprise plan" reverses 2077's Starter plan, told in other words, and
    says nothing of customer 3150 (as close to it in meaning) or 1042."""
    enterprise, starter, pro = (real.add(NewMemory(text)).id for text in (
        "Customer 1042 is on the Enterprise plan", "Customer 2077 is on the Starter plan",
        "Customer 3150 is on the Pro plan"))
    moved = real.add(NewMemory("Customer 2077 moved to the Enterprise plan")).id
    report = real.maintain()
    assert [(a.kind, a.memory, a.related) for a in report.actions if a.kind == "supersede"] == [
        ("supersede", moved, (starter,))]
    scan = real.scan()
    assert scan.get(starter).memory.lifecycle == "superseded"
    for memory_id in (enterprise, pro, moved):
        assert scan.get(memory_id).memory.lifecycle != "superseded"
    assert pro in hits(real, "which plan is customer 3150 on")


def test_six_numbered_rules_all_stay(real: Vault) -> None:
    ids = [real.add(NewMemory(f"Important rule number {n}: the service {n} must always log errors to Sentry")).id
           for n in range(1, 7)]
    report = real.maintain()
    assert not {"merge", "supersede"} & set(report.counts())
    scan = real.scan()
    assert all(not scan.get(i).in_trash and scan.get(i).memory.lifecycle != "superseded" for i in ids)


def test_a_value_of_one_subject_still_supersedes(real: Vault) -> None:
    older = real.add(NewMemory("The staging DB is on port 5432")).id
    newer = real.add(NewMemory("The staging DB is on port 5433")).id
    report = real.maintain()
    assert [(a.kind, a.memory, a.related) for a in report.actions if a.kind == "supersede"] == [
        ("supersede", newer, (older,))]
    assert "same subject, other value (5432 -> 5433)" in report.actions[0].reason


def test_a_merge_keeps_the_absorbed_clause_after_the_trash_is_purged(real: Vault) -> None:
    staging = real.add(NewMemory(STAGING)).id
    real.add(NewMemory(STAGING_EXCEPT))
    obsolete = real.add(NewMemory(OBSOLETE)).id
    real.add(NewMemory(OBSOLETE_USE))
    report = real.maintain()
    assert sorted(a.memory for a in report.actions if a.kind == "merge") == sorted([staging, obsolete])
    scan = real.scan()
    assert "except during load tests when it must use xlarge" in scan.get(staging).memory.body
    assert "always use make deploy" in scan.get(obsolete).memory.body
    assert "always use make deploy" in (scan.get(obsolete).memory.summary or "")  # what search results show
    later = datetime.now(UTC) + timedelta(days=real.config.vault.trash_days + 1)
    real.maintain(now=later)
    assert list(real.scan().trashed()) == []  # the absorbed files are gone for good
    assert hits(real, "make deploy")[:1] == [obsolete]
    assert hits(real, "xlarge during load tests")[:1] == [staging]


def test_notes_labelled_by_an_identifier_stay_distinct_and_are_not_shown_as_conflicting(real: Vault) -> None:
    """A note with no verb is about its label: "Customer 1042: ..." and "Customer 2077: ..." are two customers."""
    ids = [real.add(NewMemory(f"Customer {n}: gold plan, renews in March")).id for n in (1042, 2077)]
    report = real.maintain()
    assert not {"merge", "supersede"} & set(report.counts())
    scan = real.scan()
    assert all(not scan.get(i).in_trash and scan.get(i).memory.lifecycle != "superseded" for i in ids)
    found = real.search(SearchQuery("which customers are on the gold plan")).hits
    assert {h.id for h in found} >= set(ids) and not any(h.conflicts for h in found)


def test_a_labelled_value_still_supersedes(real: Vault) -> None:
    older = real.add(NewMemory("Staging DB port: 5432")).id
    newer = real.add(NewMemory("Staging DB port: 5433")).id
    report = real.maintain()
    assert [(a.kind, a.memory, a.related) for a in report.actions if a.kind == "supersede"] == [
        ("supersede", newer, (older,))]


def test_a_reworded_update_supersedes_and_another_thing_stays(real: Vault) -> None:
    """The first hour: a person writes the new port in other words than the old one.  The update
    supersedes the old fact; a note about another thing with the same kind of update does not."""
    old = real.add(NewMemory("Our staging database runs on port 6543")).id
    cache = real.add(NewMemory("The staging cache now runs on port 6380")).id
    new = real.add(NewMemory("The staging database port is now 5499")).id
    report = real.maintain()
    supersedes = [a for a in report.actions if a.kind == "supersede"]
    assert [(a.memory, a.related) for a in supersedes] == [(new, (old,))], report.actions
    scan = real.scan()
    assert scan.get(old).memory.lifecycle == "superseded" and scan.get(old).memory.superseded_by == new
    assert scan.get(cache).memory.lifecycle != "superseded"
    found = hits(real, "which port does the staging database use")
    assert found[0] == new and old not in found
