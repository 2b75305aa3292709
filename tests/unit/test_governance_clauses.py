"""A merge keeps every clause of the absorbed memory: the longer text, or the new sentences appended."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from vault_engine.config import VaultConfig
from vault_engine.format.memory import Memory
from vault_engine.governance.actions import View
from vault_engine.governance.clauses import missing_sentences, united_text
from vault_engine.governance.consolidate import plan_links, plan_merges, plan_supersede
from vault_engine.index.fakes import TableSimilarity as FakeSimilarity

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def mem(memory_id: str, body: str, *, days_old: float = 10, title: str | None = None) -> Memory:
    return Memory(id=memory_id, title=title if title is not None else body.rstrip("."), body=body + "\n",
                  type="fact", created=NOW - timedelta(days=days_old))


def view_of(*memories: Memory) -> View:
    return View({m.id: m for m in memories}, {m.id: f"memories/global/{m.id[2:]}.md" for m in memories}, {}, NOW,
                VaultConfig())


STAGING = "Staging uses the small instance size."
STAGING_EXCEPT = "Staging uses the small instance size, except during load tests when it must use xlarge."
OBSOLETE = "The old deploy script is obsolete."
OBSOLETE_USE = "The old deploy script is obsolete; always use make deploy."


def test_nothing_to_add_when_the_survivor_says_it_all() -> None:
    assert united_text(mem("m-a", STAGING_EXCEPT), mem("m-b", STAGING)) is None
    assert missing_sentences(mem("m-a", STAGING_EXCEPT), mem("m-b", STAGING)) == []


def test_the_longer_text_that_holds_the_survivors_content_becomes_its_body() -> None:
    assert united_text(mem("m-a", STAGING), mem("m-b", STAGING_EXCEPT)) == (
        {"body": STAGING_EXCEPT + "\n"}, "the longer text")
    survivor = mem("m-a", OBSOLETE).replace(summary=OBSOLETE)
    absorbed = mem("m-b", OBSOLETE_USE).replace(summary=OBSOLETE_USE)
    assert united_text(survivor, absorbed) == ({"body": OBSOLETE_USE + "\n", "summary": OBSOLETE_USE},
                                               "the longer text")


def test_sentences_with_new_content_words_are_appended() -> None:
    survivor = mem("m-a", "Deploys run from main. Tag every release.", title="Deploys")
    absorbed = mem("m-b", "Deploys run from main. Ask Ana before a Friday deploy.", title="Deploys")
    assert united_text(survivor, absorbed) == (
        {"body": "Deploys run from main. Tag every release.\n\nAsk Ana before a Friday deploy.\n"},
        "1 sentence appended")


def test_a_merge_keeps_the_exception_and_says_so() -> None:
    older, newer = mem("m-old", STAGING, days_old=20), mem("m-new", STAGING_EXCEPT, days_old=1)
    view = view_of(older, newer)
    actions = plan_merges(view, FakeSimilarity({("m-old", "m-new"): 0.82}))
    assert [(a.kind, a.memory, a.related) for a in actions] == [("merge", "m-old", ("m-new",))]
    assert actions[0].reason.endswith("keeps what only it said: the longer text)")
    survivor = view.after(actions).active["m-old"]
    assert survivor.body == STAGING_EXCEPT + "\n" and survivor.title == STAGING.rstrip(".")
    assert plan_merges(view.after(actions), FakeSimilarity({})) == []


def test_distinct_customers_neither_supersede_nor_merge() -> None:
    older = mem("m-1042", "Customer 1042 is on the Enterprise plan.", days_old=20)
    newer = mem("m-2077", "Customer 2077 is on the Enterprise plan.", days_old=1)
    similarity = FakeSimilarity({("m-1042", "m-2077"): 0.95})
    assert plan_supersede(view_of(older, newer), similarity) == []
    assert plan_merges(view_of(older, newer), similarity) == []


def test_rules_numbered_apart_all_stay() -> None:
    rules = [mem(f"m-{n}", f"Important rule number {n}: the service {n} must always log errors to sentry.",
                 days_old=10 - n) for n in range(1, 7)]
    similarity = FakeSimilarity({(a.id, b.id): 0.95 for a in rules for b in rules if a.id < b.id})
    assert plan_supersede(view_of(*rules), similarity) == []
    assert plan_merges(view_of(*rules), similarity) == []


def test_a_port_changed_for_one_subject_supersedes_and_says_which_value() -> None:
    older = mem("m-old", "The staging DB is on port 5432.", days_old=20)
    newer = mem("m-new", "The staging DB is on port 5433.", days_old=1)
    actions = plan_supersede(view_of(older, newer), FakeSimilarity({("m-old", "m-new"): 0.97}))
    assert [(a.kind, a.memory, a.related) for a in actions] == [("supersede", "m-new", ("m-old",))]
    assert "same subject, other value (5432 -> 5433)" in actions[0].reason


def test_distinct_facts_link_and_the_link_says_why() -> None:
    older = mem("m-1042", "Customer 1042 is on the Enterprise plan.", days_old=20)
    newer = mem("m-2077", "Customer 2077 is on the Enterprise plan.", days_old=1)
    actions = plan_links(view_of(older, newer), FakeSimilarity({("m-1042", "m-2077"): 0.95}))
    assert [a.reason for a in actions] == [
        f"related: {other} (0.95; distinct: they name different customers (1042, 2077))"
        for other in ("m-2077", "m-1042")]


def test_one_plain_word_more_is_rewording_not_a_clause() -> None:
    survivor = mem("m-a", "Deploys to production run from the main branch with make release.")
    absorbed = mem("m-b", "Production deploys are run from the main branch using make release.")
    assert united_text(survivor, absorbed) is None


def test_a_cluster_joined_through_a_third_memory_never_merges_distinct_facts() -> None:
    staging = mem("m-a", "Staging uses the small instance size for the billing cache.", days_old=30)
    extended = mem("m-b", "Staging uses the small instance size for the billing cache, except during load tests.",
                   days_old=20)
    qa = mem("m-c", "QA uses the small instance size for the search gateway, except during load tests.", days_old=10)
    actions = plan_merges(view_of(staging, extended, qa),
                          FakeSimilarity({("m-a", "m-b"): 0.95, ("m-b", "m-c"): 0.95}))
    assert [(a.kind, a.memory, a.related) for a in actions] == [("merge", "m-a", ("m-b",))]
