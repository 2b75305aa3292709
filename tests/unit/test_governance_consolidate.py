"""Consolidation: near-duplicate merges, contradictions, tag variants and cross-links."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest

from vault_engine.config import VaultConfig
from vault_engine.format.memory import Memory
from vault_engine.governance.actions import Action, View
from vault_engine.governance.consolidate import (
    contradicts,
    plan_links,
    plan_merges,
    plan_supersede,
    restated,
)
from vault_engine.governance.similarity import Neighbours, text_similarity
from vault_engine.governance.tags import plan_tags, tag_canon
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.fakes import TableSimilarity as FakeSimilarity
from vault_engine.vault import Vault

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DEPLOY = "Deploys run from the main branch with make release."
DEPLOY_AGAIN = "Deploys run from the main branch with make release, always."




def mem(memory_id: str, body: str, *, days_old: float = 10, title: str = "Deploys", **fields: Any) -> Memory:
    values: dict[str, Any] = {"type": "fact", **fields}
    return Memory(id=memory_id, title=title, body=body + "\n", created=NOW - timedelta(days=days_old), **values)


def view_of(*memories: Memory, vetoes: Iterable[tuple[str, frozenset[str]]] = ()) -> View:
    return View({m.id: m for m in memories}, {m.id: f"memories/global/{m.id[2:]}.md" for m in memories}, {}, NOW,
                VaultConfig(), vetoes=frozenset(vetoes))


def md(memory_id: str, title: str, body: str, **keys: Any) -> str:
    lines = [f"id: {memory_id}", f"title: {title}", *(f"{k}: {v}" for k, v in {"type": "fact", **keys}.items())]
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


def created(days_old: float) -> str:
    return (NOW - timedelta(days=days_old)).strftime("%Y-%m-%dT%H:%M:%SZ")


def fake_vault(make_vault: Callable[..., Vault], files: dict[str, str]) -> Vault:
    return Vault(make_vault(files).root, embedder=HashEmbedder())


def summary(actions: list[Action]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(a.kind, a.memory, a.related) for a in actions]


# ---------------------------------------------------------------- merges


def test_merge_folds_everything_into_the_older_memory(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/deploys.md": md(
            "m-old", "Deploys", DEPLOY, created=created(30), source="chat", proof_count=2,
            tags="[deploy]", evidence="[{event: e-1, source: chat}]", applied="{used-successfully: 2}"),
        "memories/global/deploys-again.md": md(
            "m-new", "Deploys", DEPLOY_AGAIN, created=created(5), source="import", proof_count=3,
            tags="[release]", evidence="[{event: e-2, source: import}]",
            applied="{used-successfully: 1, ignored: 1}"),
        "memories/global/notes.md": md("m-by-id", "Tax", "Quarterly tax filings are due in April.",
                                       links="[m-new]"),
        "memories/global/other.md": md("m-by-stem", "Mobile", "The mobile app uses React Native with Expo.",
                                       links="['[[deploys-again]]', m-by-id]"),
    })
    report = vault.maintain(now=NOW)
    assert summary(report.actions) == [("merge", "m-old", ("m-new",))]
    scan = vault.scan()
    survivor = scan.get("m-old")
    assert survivor.path == "memories/global/deploys.md"
    m = survivor.memory
    assert m.body == DEPLOY_AGAIN + "\n"  # the newer text says all the older one does, and "always"
    assert m.evidence == ({"event": "e-1", "source": "chat"}, {"event": "e-2", "source": "import"},
                          {"merged": "m-new", "source": "import"})
    assert m.proof_count == 5
    assert m.tags == ("deploy", "release")
    assert (m.applied["used-successfully"], m.applied["ignored"]) == (3, 1)
    absorbed = scan.get("m-new")
    assert absorbed.path == "trash/deploys-again.md"
    assert absorbed.memory.extra["merged_into"] == "m-old" and absorbed.memory.extra["trash_reason"] == "merge"
    assert absorbed.memory.trashed_at == NOW and absorbed.memory.body == DEPLOY_AGAIN + "\n"
    assert absorbed.memory.proof_count == 3  # the trashed copy keeps its own counters
    assert scan.get("m-by-id").memory.links == ("m-old",)
    assert scan.get("m-by-stem").memory.links == ("m-old", "m-by-id")  # the wikilink by file stem too
    assert vault.maintain(now=NOW, replan=True).actions == []
    assert vault.replay_diff() == []


@pytest.mark.parametrize(("older", "newer"), [("external", "learned"), ("learned", "external"),
                                             ("system", "external"), ("system", "learned")])
def test_memories_of_different_trust_never_merge_they_link(older: str, newer: str) -> None:
    """A merge would leave the survivor with the lower trust: an external copy of a system memory would
    make it external, and search and context leave external memories out."""
    a = mem("m-a", DEPLOY, days_old=20, trust=older)
    b = mem("m-b", DEPLOY_AGAIN, days_old=2, trust=newer)
    similarity = FakeSimilarity({("m-a", "m-b"): 0.97})
    assert plan_merges(view_of(a, b), similarity) == []
    assert sorted(a.memory for a in plan_links(view_of(a, b), similarity)) == ["m-a", "m-b"]


@pytest.mark.parametrize("trust", ["system", "learned", "external"])
def test_memories_of_one_trust_merge(trust: str) -> None:
    a, b = mem("m-a", DEPLOY, trust=trust), mem("m-b", DEPLOY_AGAIN, days_old=1, trust=trust)
    after = view_of(a, b).after(plan_merges(view_of(a, b), FakeSimilarity({("m-a", "m-b"): 0.97})))
    assert after.active["m-a"].trust == trust and list(after.trashed) == ["m-b"]


def test_a_merge_never_hides_a_system_memory_from_search(make_vault: Callable[..., Vault]) -> None:
    """maintain over a system memory and an external near-copy: the system memory is still found."""
    vault = fake_vault(make_vault, {
        "memories/global/window.md": md("m-sys", "Payments deploy window",
                                        "The payments deploy window is Tuesday 10:00-12:00 UTC.",
                                        trust="system", created=created(30)),
        "memories/global/window-copy.md": md("m-ext", "Payments deploy window",
                                             "The payments deploy window is Tuesday 10:00-12:00 UTC, per the wiki.",
                                             trust="external", created=created(2)),
    })
    report = vault.maintain(now=NOW)
    assert [a.kind for a in report.actions if a.kind == "merge"] == []
    scan = vault.scan()
    assert scan.get("m-sys").memory.trust == "system" and scan.get("m-ext").memory.trust == "external"
    from vault_engine.retrieval.searcher import SearchQuery

    assert [hit.id for hit in vault.search(SearchQuery("payments deploy window")).hits][:1] == ["m-sys"]


SHORT_DISTINCT = [  # (older, newer, cosine of the real model): short notes that differ in a name or service
    ("Alpha service notes about rollout.", "Beta service notes about rollout cadence.", 0.78),
    ("The payments service deploys on Fridays.", "The billing service deploys on Fridays.", 0.87),
    ("Alice owns the checkout flow.", "Bob owns the checkout flow.", 0.80),
    ("Carol is the on-call contact for search.", "Dave is the on-call contact for search.", 0.65),
    ("The web team reviews pull requests on Tuesdays.", "The mobile team reviews pull requests on Tuesdays.", 0.82),
]
SHORT_SAME = [  # the same note written twice, differently
    ("The user prefers dark mode.", "The user likes dark mode.", 0.95),
    ("The staging database is shared with QA.", "QA shares the staging database.", 0.96),
    ("Payments deploy window is Tuesday 10-12 UTC.", "The payments deploy window: Tuesdays 10-12 UTC.", 0.96),
    ("Squash-merge feature branches.", "Always squash-merge feature branches.", 0.85),  # only adds a word
]


@pytest.mark.parametrize(("old", "new", "cosine"), SHORT_DISTINCT)
def test_short_notes_about_different_things_do_not_merge(old: str, new: str, cosine: float) -> None:
    a, b = mem("m-a", old, title=old[:-1], days_old=5), mem("m-b", new, title=new[:-1], days_old=1)
    assert text_similarity(a, b) >= 0.5 and 0.6 * cosine + 0.4 * text_similarity(a, b) >= 0.70  # merged before
    assert plan_merges(view_of(a, b), FakeSimilarity({("m-a", "m-b"): cosine})) == []


@pytest.mark.parametrize(("old", "new", "cosine"), SHORT_SAME)
def test_short_notes_saying_the_same_thing_merge(old: str, new: str, cosine: float) -> None:
    a, b = mem("m-a", old, title=old[:-1], days_old=5), mem("m-b", new, title=new[:-1], days_old=1)
    assert summary(plan_merges(view_of(a, b), FakeSimilarity({("m-a", "m-b"): cosine}))) == [
        ("merge", "m-a", ("m-b",))]


def test_an_inferred_newer_memory_never_overwrites_an_explicit_older_one() -> None:
    older = mem("m-old", DEPLOY, days_old=20, authority="explicit")
    newer = mem("m-new", DEPLOY_AGAIN, days_old=1, authority="inferred")
    actions = plan_merges(view_of(older, newer), FakeSimilarity({("m-old", "m-new"): 0.97}))
    assert summary(actions) == [("merge", "m-old", ("m-new",))]
    assert actions[0].trash == ("m-new",)


def test_an_explicit_newer_memory_survives_over_an_inferred_older_one() -> None:
    older = mem("m-old", DEPLOY, days_old=20, authority="inferred", proof_count=4)
    newer = mem("m-new", DEPLOY_AGAIN, days_old=1, authority="explicit")
    view = view_of(older, newer)
    actions = plan_merges(view, FakeSimilarity({("m-old", "m-new"): 0.97}))
    assert summary(actions) == [("merge", "m-new", ("m-old",))]
    after = view.after(actions)
    assert after.active["m-new"].authority == "explicit" and after.active["m-new"].body == DEPLOY_AGAIN + "\n"
    assert after.active["m-new"].proof_count == 5
    assert after.trashed["m-old"].extra["merged_into"] == "m-new"


@pytest.mark.parametrize("other", [
    {"scope": "project", "project": "github.com/acme/api"},
    {"type": "procedure"},
])
def test_different_projects_or_types_never_merge(other: dict[str, Any]) -> None:
    a = mem("m-a", DEPLOY, scope="project", project="github.com/acme/web")
    b = mem("m-b", DEPLOY, days_old=1, **{"scope": "project", "project": "github.com/acme/web", **other})
    similarity = FakeSimilarity({("m-a", "m-b"): 1.0})
    assert plan_merges(view_of(a, b), similarity) == []
    assert plan_supersede(view_of(a, b), similarity) == []


def test_neighbours_stay_within_scope_and_project() -> None:
    vector = np.ones(4, dtype=np.float32)
    memories = [
        mem("m-a", "a", scope="project", project="p1"),
        mem("m-b", "b", scope="project", project="p1"),
        mem("m-c", "c", scope="project", project="p2"),
        mem("m-d", "d"),
        mem("m-e", "e"),
    ]
    found = Neighbours({m.id: vector for m in memories}, memories, k=10)
    assert [i for i, _ in found.neighbours("m-a")] == ["m-b"]
    assert found.neighbours("m-c") == []
    assert [i for i, _ in found.neighbours("m-d")] == ["m-e"]
    assert found.neighbours("m-d")[0][1] == pytest.approx(1.0)


def test_episodes_never_merge() -> None:
    a = mem("m-a", "Standup: we talked about the release.", type="episode")
    b = mem("m-b", "Standup: we talked about the release!", type="episode", days_old=1)
    assert plan_merges(view_of(a, b), FakeSimilarity({("m-a", "m-b"): 0.99})) == []


def test_turns_of_an_imported_conversation_never_merge_or_supersede() -> None:
    """Two turns with the same words were said twice (a chat log imported one turn per memory)."""
    a = mem("m-a", "That's awesome, Caroline!", source="conversation:c1#D1:4", days_old=9)
    b = mem("m-b", "That's so awesome, Caroline!", source="conversation:c1#D7:2", days_old=1)
    similarity = FakeSimilarity({("m-a", "m-b"): 0.98})
    assert plan_merges(view_of(a, b), similarity) == []
    c = mem("m-c", "Caroline does not paint anymore.", source="conversation:c1#D9:1", days_old=1)
    d = mem("m-d", "Caroline paints.", source="conversation:c1#D2:1", days_old=9)
    assert plan_supersede(view_of(c, d), FakeSimilarity({("m-c", "m-d"): 0.95})) == []
    # The same texts as plain facts do merge.
    plain = [m.replace(source="user") for m in (a, b)]
    assert summary(plan_merges(view_of(*plain), similarity)) == [("merge", "m-a", ("m-b",))]


def test_unrelated_text_does_not_merge_even_with_a_close_vector() -> None:
    a = mem("m-a", DEPLOY)
    b = mem("m-b", "Quarterly tax filings are due in April.", days_old=1)
    assert plan_merges(view_of(a, b), FakeSimilarity({("m-a", "m-b"): 0.95})) == []


def test_three_near_duplicates_merge_into_the_oldest_one_action_each() -> None:
    a = mem("m-a", DEPLOY, days_old=30, proof_count=1)
    b = mem("m-b", DEPLOY_AGAIN, days_old=20, proof_count=2)
    c = mem("m-c", DEPLOY + " Really.", days_old=10, proof_count=4)
    view = view_of(a, b, c)
    actions = plan_merges(view, FakeSimilarity({("m-a", "m-b"): 0.97, ("m-b", "m-c"): 0.97}))
    assert summary(actions) == [("merge", "m-a", ("m-b",)), ("merge", "m-a", ("m-c",))]
    after = view.after(actions)
    assert after.active["m-a"].proof_count == 7
    assert [e["merged"] for e in after.active["m-a"].evidence] == ["m-b", "m-c"]


def test_a_vetoed_merge_folds_nothing_into_the_survivor() -> None:
    a = mem("m-a", DEPLOY, days_old=30, proof_count=1)
    b = mem("m-b", DEPLOY_AGAIN, days_old=20, proof_count=2)
    c = mem("m-c", DEPLOY + " Really.", days_old=10, proof_count=4)
    view = view_of(a, b, c, vetoes=[("merge", frozenset({"m-a", "m-b"}))])
    actions = plan_merges(view, FakeSimilarity({("m-a", "m-b"): 0.97, ("m-a", "m-c"): 0.96}))
    assert summary(actions) == [("merge", "m-a", ("m-c",))]
    change = actions[0].changes[0]
    assert change.id == "m-a" and change.before["proof_count"] == 1 and change.after["proof_count"] == 5
    assert [e["merged"] for e in change.after["evidence"]] == ["m-c"]


def test_merge_drops_the_survivors_links_to_itself_and_to_the_absorbed() -> None:
    a = mem("m-a", DEPLOY, days_old=30, links=("[[b]]", "m-z"))
    b = mem("m-b", DEPLOY_AGAIN, days_old=2, links=("[[a]]", "m-a", "m-y"))
    z, y = mem("m-z", "Unrelated z.", title="Z"), mem("m-y", "Unrelated y.", title="Y")
    actions = plan_merges(view_of(a, b, z, y), FakeSimilarity({("m-a", "m-b"): 0.97}))
    assert view_of(a, b, z, y).after(actions).active["m-a"].links == ("m-z", "m-y")


# ---------------------------------------------------------------- contradictions


@pytest.mark.parametrize(("old", "new", "why"), [
    ("The API returns JSON errors.", "The API does not return JSON errors.", "negates"),
    ("We deploy on Fridays after the standup.", "We no longer deploy on Fridays after the standup.", "negates"),
    ("The build uses webpack for bundling.", "The build switched to vite for bundling.", "marks a change"),
    ("The API listens on port 8080 in production.", "The API listens on port 9090 in production.",
     "same subject, other value (8080 -> 9090)"),
    ("The billing service uses MySQL for invoices.", "The billing service moved its invoices from MySQL to Postgres.",
     "marks a change"),
    ("Setup: clone the repo. The API returns JSON errors. Ask Ana for access.",
     "Setup: clone the repo. The API doesn't return JSON errors. Ask Ana for access.", "negates"),
])
def test_contradictions(old: str, new: str, why: str) -> None:
    reason = contradicts(mem("m-a", old), mem("m-b", new))
    assert reason is not None and why in reason


@pytest.mark.parametrize(("old", "new"), [
    ("The API returns JSON errors.", "The API returns errors as JSON."),
    ("The API listens on port 8080 in production.", "The API listens on port 8080 in production, behind nginx."),
    ("We deploy on Fridays.", "We deploy on Fridays."),
    # a negated sentence dropped is an omission, not a reversal
    ("Deploys run from main. Never deploy on Fridays. Tag every release.",
     "Deploys run from main. Tag every release."),
    # the negation reworded keeps it on both sides: a paraphrase
    ("The worker could not reach the queue during the outage.",
     "The worker couldn't reach the queue during the outage."),
    ("Never push to main without a review.", "Avoid pushing to main without a review."),
    # an update marker in an unrelated sentence of a long note
    ("The cache sits in front of the API. Tokens expire after an hour.",
     "The cache sits in front of the API. Tokens expire after an hour. The old proxy was replaced by nginx."),
])
def test_no_contradiction(old: str, new: str) -> None:
    assert contradicts(mem("m-a", old), mem("m-b", new)) is None


def test_newer_reversal_supersedes_the_older_memory() -> None:
    older = mem("m-old", "We deploy on Fridays after the standup.", days_old=30, tier="hot", lifecycle="proven")
    newer = mem("m-new", "We no longer deploy on Fridays after the standup.", days_old=1)
    view = view_of(older, newer)
    actions = plan_supersede(view, FakeSimilarity({("m-old", "m-new"): 0.9}))
    assert summary(actions) == [("supersede", "m-new", ("m-old",))]
    assert "contradicts m-old" in actions[0].reason
    after = view.after(actions)
    old = after.active["m-old"]
    assert (old.lifecycle, old.superseded_by, old.tier) == ("superseded", "m-new", "cold")
    assert after.active["m-new"].supersedes == "m-old"
    assert plan_supersede(after, FakeSimilarity({("m-old", "m-new"): 0.9})) == []
    assert plan_merges(view, FakeSimilarity({("m-old", "m-new"): 0.99})) == []  # a reversal is never a merge


@pytest.mark.parametrize(("old", "new", "superseded"), [
    # One sentence each, reworded: their words overlap 0.43, what they are about 0.86.
    ("Our staging database runs on port 6543", "The staging database port is now 5499", True),
    ("We use Postgres 15 for the main database", "The main database now runs Postgres 16", True),
    # Other things with the same kind of update: never superseded.
    ("Our staging database runs on port 6543", "The production database is now on port 5499", False),
    ("Our staging database runs on port 6543", "The staging cache now runs on port 6380", False),
    ("Logs are kept for 30 days", "Metrics are now kept for 90 days", False),
    ("Deploys go out on Tuesdays after the standup", "Deploys now go out on Thursdays", False),  # less is said
])
def test_a_reworded_update_of_one_statement_supersedes_it(old: str, new: str, superseded: bool) -> None:
    """Memories written as a person adds them (title = the sentence), compared as single statements."""
    older = mem("m-old", old, title=old, days_old=30)
    newer = mem("m-new", new, title=new, days_old=1)
    actions = plan_supersede(view_of(older, newer), FakeSimilarity({("m-old", "m-new"): 0.85}))
    assert summary(actions) == ([("supersede", "m-new", ("m-old",))] if superseded else [])


def test_restated_measures_single_statements_only() -> None:
    one = mem("m-a", "Our staging database runs on port 6543", title="Our staging database runs on port 6543")
    other = mem("m-b", "The staging database port is now 5499", title="The staging database port is now 5499")
    assert restated(one, other) == pytest.approx(6 / 7)  # staging, database, runs, port / staging, database, port
    longer = mem("m-c", "The staging database port is now 5499. It moved with the upgrade.", title="Staging")
    assert restated(one, longer) == 0.0


@pytest.mark.parametrize(("old", "new"), [
    ({"trust": "learned"}, {"trust": "learned"}),
    ({"trust": "external"}, {"trust": "learned"}),
    ({"authority": "inferred"}, {"authority": "explicit"}),
    ({"authority": "explicit"}, {"authority": "explicit"}),
])
def test_supersede_when_trust_is_at_least_the_older_and_not_inferred_over_explicit(
        old: dict[str, Any], new: dict[str, Any]) -> None:
    older = mem("m-old", "The API listens on port 8080 in production.", days_old=30, **old)
    newer = mem("m-new", "The API listens on port 9090 in production.", days_old=1, **new)
    actions = plan_supersede(view_of(older, newer), FakeSimilarity({("m-old", "m-new"): 0.9}))
    assert summary(actions) == [("supersede", "m-new", ("m-old",))]


@pytest.mark.parametrize(("old", "new", "refusal"), [
    ({"trust": "learned"}, {"trust": "external"}, "trust external is below learned"),
    ({"trust": "system"}, {"trust": "learned"}, "trust learned is below system"),
    ({"authority": "explicit"}, {"authority": "inferred"}, "inferred memory does not override an explicit"),
])
def test_a_reversal_that_may_not_supersede_is_linked_as_a_conflict(
        old: dict[str, Any], new: dict[str, Any], refusal: str) -> None:
    older = mem("m-old", "The API listens on port 8080 in production.", days_old=30, **old)
    newer = mem("m-new", "The API listens on port 9090 in production.", days_old=1, **new)
    view = view_of(older, newer)
    similarity = FakeSimilarity({("m-old", "m-new"): 0.9})
    actions = plan_supersede(view, similarity)
    assert summary(actions) == [("link", "m-new", ("m-old",))]
    assert actions[0].reason.startswith("conflicts with m-old") and refusal in actions[0].reason
    after = view.after(actions)
    assert after.active["m-old"].lifecycle == "trial" and after.active["m-old"].superseded_by is None
    assert after.active["m-new"].links == ("m-old",) and after.active["m-old"].links == ("m-new",)
    assert plan_supersede(after, similarity) == []


def test_a_newer_memory_supersedes_every_older_version_in_one_run() -> None:
    a = mem("m-a", "The API listens on port 8080 in production.", days_old=30)
    b = mem("m-b", "The API listens on port 8081 in production.", days_old=20)
    c = mem("m-c", "The API listens on port 9090 in production.", days_old=1)
    view = view_of(a, b, c)
    similarity = FakeSimilarity({("m-a", "m-b"): 0.9, ("m-a", "m-c"): 0.92, ("m-b", "m-c"): 0.95})
    actions = plan_supersede(view, similarity)
    after = view.after(actions)
    assert [m.id for m in after.governed()] == ["m-c"]
    assert after.active["m-b"].superseded_by == "m-c"
    assert plan_supersede(after, similarity) == []


def test_supersede_through_maintain(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/fridays.md": md("m-old", "Fridays", "We deploy on Fridays after the standup meeting.",
                                         created=created(30), tier="hot", authority="explicit",
                                         lifecycle="proven"),
        "memories/global/no-fridays.md": md("m-new", "Fridays", "We no longer deploy on Fridays after the standup "
                                            "meeting.", created=created(1), authority="explicit",
                                            lifecycle="proven"),
    })
    report = vault.maintain(now=NOW)
    assert summary(report.actions) == [("supersede", "m-new", ("m-old",))]
    old = vault.scan().get("m-old").memory
    assert (old.lifecycle, old.superseded_by, old.tier) == ("superseded", "m-new", "cold")
    assert vault.scan().get("m-new").memory.supersedes == "m-old"
    assert vault.maintain(now=NOW, replan=True).actions == []
    assert vault.replay_diff() == []


# ---------------------------------------------------------------- tags


def test_tag_variants_map_to_one_form() -> None:
    canon = tag_canon(["Deploy", "deploy", "deployments", "deploys", "Testing", "tests", "policies", "policy",
                       "java", "javascript", "post", "postgres", "data", "database", "API", "api"])
    assert {t: canon[t] for t in ("Deploy", "deploy", "deployments", "deploys")} == dict.fromkeys(
        ("Deploy", "deploy", "deployments", "deploys"), "deploy")
    assert canon["Testing"] == canon["tests"] == "tests"
    assert canon["policies"] == canon["policy"] == "policy"
    assert canon["API"] == canon["api"] == "api"
    for tag in ("java", "javascript", "post", "postgres", "data", "database"):
        assert canon[tag] == tag


def test_plurals_of_words_ending_in_e_join_their_singular() -> None:
    canon = tag_canon(["release", "Releases", "database", "databases", "case", "cases", "class", "classes",
                       "box", "boxes", "branch", "branches"])
    assert canon["Releases"] == canon["release"] == "release"
    assert canon["databases"] == canon["database"] == "database"
    assert canon["cases"] == "case" and canon["classes"] == "class"
    assert canon["boxes"] == "box" and canon["branches"] == "branch"


def test_a_plural_joins_the_tag_its_other_reading_names() -> None:
    canon = tag_canon(["caches", "cache", "statuses", "status", "Processes", "process"])
    assert canon == {"caches": "cache", "cache": "cache", "statuses": "status", "status": "status",
                     "Processes": "process", "process": "process"}
    assert tag_canon(["caches"]) == {"caches": "caches"}  # alone, nothing to join


def test_short_tags_only_group_by_case_and_plural() -> None:
    canon = tag_canon(["ci", "CI", "cis", "cli", "git", "github", "gits"])
    assert canon == {"ci": "ci", "CI": "ci", "cis": "cis", "cli": "cli", "git": "git", "github": "github",
                     "gits": "git"}


def test_plan_tags_rewrites_variants_and_drops_repeats() -> None:
    a = mem("m-a", "a", tags=("Deploy", "java"))
    b = mem("m-b", "b", tags=("deployment", "javascript"))
    c = mem("m-c", "c", tags=("deploy", "deploy"))
    view = view_of(a, b, c)
    actions = plan_tags(view)
    assert [(x.memory, x.reason) for x in actions] == [
        ("m-a", "tag variants: Deploy -> deploy"),
        ("m-b", "tag variants: deployment -> deploy"),
        ("m-c", "repeated tag removed"),
    ]
    after = view.after(actions)
    assert [after.active[i].tags for i in ("m-a", "m-b", "m-c")] == [
        ("deploy", "java"), ("deploy", "javascript"), ("deploy",)]
    assert plan_tags(after) == []


def test_tags_through_maintain(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/a.md": md("m-a", "Tax", "Quarterly tax filings are due in April.", tags="[Deploy, java]"),
        "memories/global/b.md": md("m-b", "Mobile", "The mobile app uses React Native with Expo.",
                                   tags="[deploys, javascript]"),
    })
    report = vault.maintain(now=NOW)
    assert [(a.kind, a.memory) for a in report.actions] == [("tags", "m-b")]
    assert vault.scan().get("m-a").memory.tags == ("Deploy", "java")  # the shortest form in use is kept
    assert vault.scan().get("m-b").memory.tags == ("Deploy", "javascript")
    assert vault.maintain(now=NOW, replan=True).actions == []


# ---------------------------------------------------------------- cross-links


def test_related_memories_link_both_ways() -> None:
    a, b, c = mem("m-a", "a", title="A"), mem("m-b", "b", title="B"), mem("m-c", "c", title="C")
    similarity = FakeSimilarity({("m-a", "m-b"): 0.7, ("m-a", "m-c"): 0.5})  # m-c is below the threshold
    view = view_of(a, b, c)
    actions = plan_links(view, similarity)
    assert summary(actions) == [("link", "m-a", ("m-b",)), ("link", "m-b", ("m-a",))]
    assert actions[0].reason == "related: m-b (0.70)"
    after = view.after(actions)
    assert (after.active["m-a"].links, after.active["m-b"].links, after.active["m-c"].links) == (
        ("m-b",), ("m-a",), ())
    assert plan_links(after, similarity) == []


def test_an_existing_wikilink_counts_as_a_link() -> None:
    a = mem("m-a", "a", title="A", links=("[[b|the other one]]",))
    b = mem("m-b", "b", title="B")
    actions = plan_links(view_of(a, b), FakeSimilarity({("m-a", "m-b"): 0.8}))
    assert summary(actions) == [("link", "m-b", ("m-a",))]


def test_links_are_limited_per_memory() -> None:
    hub = mem("m-a", "hub", title="Hub")
    spokes = [mem(f"m-{c}", c, title=c.upper()) for c in "bcdef"]
    similarity = FakeSimilarity({("m-a", s.id): 0.9 - n / 100 for n, s in enumerate(spokes)})
    view = view_of(hub, *spokes)
    actions = plan_links(view, similarity)
    after = view.after(actions)
    assert after.active["m-a"].links == ("m-b", "m-c", "m-d")  # link_limit = 3, the closest first
    assert all(len(m.links) <= 3 for m in after.active.values())
    for spoke in spokes:
        assert ("m-a" in after.active[spoke.id].links) == (spoke.id in after.active["m-a"].links)
    assert plan_links(after, similarity) == []


def test_links_never_cross_projects() -> None:
    a = mem("m-a", "a", scope="project", project="p1")
    b = mem("m-b", "b", scope="project", project="p2")
    assert plan_links(view_of(a, b), FakeSimilarity({("m-a", "m-b"): 0.99})) == []


def test_text_similarity_is_word_dice() -> None:
    a = Memory(id="m-a", title="", type="fact", body="one two three four")
    b = Memory(id="m-b", title="", type="fact", body="one two five six")
    assert text_similarity(a, b) == pytest.approx(0.5)
    assert text_similarity(a, a) == pytest.approx(1.0)


def test_older_and_newer_go_by_the_instant_not_the_written_offset() -> None:
    plus_two = timezone(timedelta(hours=2))
    older = mem("m-z-older", "The API listens on port 8080 in production.").replace(
        created=datetime(2026, 1, 1, 10, 0, tzinfo=plus_two))  # 08:00 UTC
    newer = mem("m-a-newer", "The API listens on port 9090 in production.").replace(
        created=datetime(2026, 1, 1, 9, 0, tzinfo=UTC))
    actions = plan_supersede(view_of(older, newer), FakeSimilarity({("m-z-older", "m-a-newer"): 0.9}))
    assert summary(actions) == [("supersede", "m-a-newer", ("m-z-older",))]


def test_neighbours_best_first_at_most_k_and_above_the_floor() -> None:
    angles = {"m-a": 0.0, "m-b": 0.3, "m-c": 0.6, "m-d": 1.2, "m-e": 0.3}
    vectors = {i: np.array([np.cos(t), np.sin(t)], dtype=np.float32) * 3 for i, t in angles.items()}
    memories = [mem(i, i) for i in angles]
    found = Neighbours(vectors, memories, k=3, floor=0.5)
    assert [i for i, _ in found.neighbours("m-a")] == ["m-b", "m-e", "m-c"]  # a tie: the earlier id first
    assert [round(c, 3) for _, c in found.neighbours("m-a")] == [round(float(np.cos(0.3)), 3)] * 2 + [
        round(float(np.cos(0.6)), 3)]
    assert [i for i, _ in Neighbours(vectors, memories, k=10, floor=0.8).neighbours("m-d")] == ["m-c"]
    assert Neighbours(vectors, memories, k=10, floor=0.99).neighbours("m-d") == []
