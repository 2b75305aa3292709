"""Synthesis: overview memories over clusters of related memories, kept current, undoable."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from vault_engine.config import VaultConfig
from vault_engine.context.director import TaskRequest, build
from vault_engine.format.memory import Memory
from vault_engine.format.value import SYNTHESIS_OF, SYNTHESIS_SOURCE
from vault_engine.governance.actions import View
from vault_engine.governance.advice import Advisor
from vault_engine.governance.maintain import maintain
from vault_engine.governance.synthesis import MEMBERS_HEADING, clusters, plan_synthesis, themes
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.fakes import TableSimilarity as FakeSimilarity
from vault_engine.llm.base import Synthesis
from vault_engine.llm.fakes import UnusedLlm
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import Vault

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)




class Writer(UnusedLlm):
    """A model that writes syntheses and counts the calls."""

    def __init__(self) -> None:
        self.calls = 0

    @property
    def name(self) -> str:
        return "model-w"

    def synthesize(self, members: Sequence[Mapping[str, str]]) -> Synthesis:
        self.calls += 1
        return Synthesis("Billing on Postgres", f"The billing service runs on Postgres ({len(members)} notes).")


def mem(memory_id: str, body: str, links: tuple[str, ...] = (), **fields: Any) -> Memory:
    values: dict[str, Any] = {"type": "fact", "created": NOW - timedelta(days=3), **fields}
    return Memory(id=memory_id, title=body.rstrip(".")[:60], body=body + "\n", links=links, **values)


def view_of(*memories: Memory, advisor: Advisor | None = None) -> View:
    return View({m.id: m for m in memories}, {m.id: f"memories/global/{m.id}.md" for m in memories}, {}, NOW,
                VaultConfig(), advisor=advisor or Advisor())


BILLING = [
    mem("m-a", "The billing service stores invoices in Postgres 16.", ("m-b",)),
    mem("m-b", "Billing backups of Postgres run nightly at 02:00 UTC.", ("m-a", "m-c")),
    mem("m-c", "The billing Postgres replica lives in eu-west-1.", ("m-b",)),
]


def test_a_linked_cluster_sharing_a_theme_gets_one_synthesis_linked_both_ways() -> None:
    view = view_of(*BILLING, mem("m-x", "Lunch is at noon on Fridays."))
    [action] = plan_synthesis(view, FakeSimilarity({("m-a", "m-b"): 0.8, ("m-b", "m-c"): 0.7}))
    assert action.kind == "synthesize" and set(action.related) == {"m-a", "m-b", "m-c"}
    [(_, synthesis)] = action.create
    assert synthesis.extra[SYNTHESIS_OF] == ["m-a", "m-b", "m-c"] and synthesis.source == SYNTHESIS_SOURCE
    assert synthesis.links == ("m-a", "m-b", "m-c") and synthesis.authority == "inferred"
    assert "billing" in synthesis.title.lower() and "about billing" in action.reason
    # Offline: each member's first sentence, then the members, linked by file.
    assert synthesis.body.startswith("- The billing service stores invoices in Postgres 16.\n- Billing backups")
    assert synthesis.summary.startswith("Overview of 3 memories: The billing service stores invoices")
    assert MEMBERS_HEADING in synthesis.body and "[[memories/global/m-b|" in synthesis.body
    assert {c.id: c.after["links"][-1] for c in action.changes} == dict.fromkeys(("m-a", "m-b", "m-c"), synthesis.id)
    # Planned on the view it leaves, nothing more to do.
    assert plan_synthesis(view.after([action]), FakeSimilarity({("m-a", "m-b"): 0.8})) == []


def test_no_theme_no_synthesis_and_unlinked_memories_stay_apart() -> None:
    a = mem("m-a", "The billing service stores invoices.", ("m-b",))
    b = mem("m-b", "Lunch is at noon on Fridays.", ("m-a",))
    assert themes([a, b]) == [] and plan_synthesis(view_of(a, b), FakeSimilarity({})) == []
    alone = [mem("m-a", "Postgres billing notes."), mem("m-b", "Postgres billing backups.")]
    assert clusters(view_of(*alone), FakeSimilarity({("m-a", "m-b"): 0.9}), 8) == []  # no link, no cluster


def test_clusters_hold_at_most_eight_closest_first() -> None:
    chain = [mem(f"m-{n:02}", f"Postgres tuning note {n}.", tuple(f"m-{k:02}" for k in (n - 1, n + 1) if 0 <= k < 12))
             for n in range(12)]
    cosines = {(f"m-{n:02}", f"m-{n + 1:02}"): 0.9 - n / 100 for n in range(11)}
    groups = clusters(view_of(*chain), FakeSimilarity(cosines), 8)
    assert [len(g) for g in groups] == [8, 4]
    assert groups[0] == [f"m-{n:02}" for n in range(8)]  # the closest links joined first


def test_raw_records_external_and_profile_memories_are_never_members() -> None:
    kinds = [{"type": "episode"}, {"type": "document"}, {"type": "core-profile"}, {"trust": "external"}]
    for fields in kinds:
        a = mem("m-a", "Postgres billing notes.", ("m-b",), **fields)
        b = mem("m-b", "Postgres billing backups.", ("m-a",), **fields)
        assert plan_synthesis(view_of(a, b), FakeSimilarity({("m-a", "m-b"): 0.9})) == [], fields


def test_the_model_writes_the_synthesis_once() -> None:
    writer = Writer()
    advisor = Advisor(writer)
    [action] = plan_synthesis(view_of(*BILLING, advisor=advisor), FakeSimilarity({}))
    [(_, synthesis)] = action.create
    assert synthesis.title == "Billing on Postgres" and synthesis.extra["synthesis_by"] == "model-w"
    assert synthesis.body.startswith("The billing service runs on Postgres (3 notes).\n\n" + MEMBERS_HEADING)
    plan_synthesis(view_of(*BILLING, advisor=advisor), FakeSimilarity({}))
    assert writer.calls == 1


def files(*memories: tuple[str, str, str, str]) -> dict[str, str]:
    out = {}
    for memory_id, name, body, links in memories:
        out[f"memories/global/{name}.md"] = (f"---\nid: {memory_id}\ntitle: {body.rstrip('.')}\ntype: fact\n"
                                             f"links: [{links}]\ncreated: 2026-05-01T10:00:00Z\n---\n{body}\n")
    return out


BILLING_FILES = files(
    ("m-a", "invoices", "The billing service stores invoices in Postgres 16.", "m-b"),
    ("m-b", "backups", "Billing backups of Postgres run nightly at 02:00 UTC.", "m-a, m-c"),
    ("m-c", "replica", "The billing Postgres replica lives in eu-west-1.", "m-b"),
)


def synthesized(vault: Vault) -> list[Memory]:
    return [e.memory for e in vault.scan().active() if SYNTHESIS_OF in e.memory.extra]


def test_maintain_writes_keeps_current_and_retires_a_synthesis(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault(BILLING_FILES).root, embedder=HashEmbedder())
    report = maintain(vault, now=NOW)
    assert [a.kind for a in report.actions].count("synthesize") == 1
    [synthesis] = synthesized(vault)
    assert all(synthesis.id in vault.scan().get(i).memory.links for i in ("m-a", "m-b", "m-c"))
    assert maintain(vault, now=NOW, replan=True).actions == []  # idempotent
    # Found by search, and shown in context with its members one read away.
    vault.sync()
    hits = [h.id for h in vault.search(SearchQuery("billing postgres overview", limit=10)).hits]
    assert synthesis.id in hits
    manifest = build(vault, TaskRequest("billing postgres", overview=False), record=False)
    why = {item.id: item.why for item in manifest.manifest}
    assert any(w.startswith("overview of 3 memories: m-a, m-b, m-c") for w in why.get(synthesis.id, []))
    # A member's text changes: the synthesis is written again.
    path = vault.root / "memories/global/replica.md"
    path.write_text(path.read_text().replace("eu-west-1", "eu-central-1"), encoding="utf-8")
    changed = maintain(vault, now=NOW + timedelta(minutes=1))
    assert [(a.kind, a.memory) for a in changed.actions] == [("resynthesize", synthesis.id)]
    assert "eu-central-1" in vault.scan().get(synthesis.id).memory.body
    # Its members leave (merged away by another run, here rolled back by hand): with one left it goes.
    for member in ("m-b", "m-c"):
        entry = vault.scan().get(member)
        vault.move_to_trash(entry, NOW, "merge")
    gone = maintain(vault, now=NOW + timedelta(minutes=2))
    assert ("resynthesize", synthesis.id) in [(a.kind, a.memory) for a in gone.actions]
    assert synthesized(vault) == []


def test_forgetting_a_member_takes_the_overview_that_quoted_it_to_the_trash_at_once(
        make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault(BILLING_FILES).root, embedder=HashEmbedder())
    maintain(vault, now=NOW)
    [synthesis] = synthesized(vault)
    assert "02:00 UTC" in synthesis.body  # it quotes m-b
    result = vault.forget("m-b")
    assert result.overviews == (synthesis.id,) and synthesized(vault) == []
    trashed = vault.scan().get(synthesis.id)
    assert trashed.in_trash and trashed.memory.extra["trash_reason"] == "it quoted m-b, forgotten"
    vault.sync()
    hits = vault.search(SearchQuery("billing backups nightly 02:00", limit=10, weak=True)).hits
    assert all(h.id != synthesis.id and "02:00" not in h.summary for h in hits)  # nothing active quotes it
    vault.rollback("m-b")  # the memory comes back; the next maintain writes an overview again
    assert [a.kind for a in maintain(vault, now=NOW + timedelta(minutes=1)).actions].count("synthesize") == 1


def test_forgetting_a_member_leaves_an_overview_a_person_rewrote(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault(BILLING_FILES).root, embedder=HashEmbedder())
    maintain(vault, now=NOW)
    [synthesis] = synthesized(vault)
    path = vault.root / vault.scan().get(synthesis.id).path
    path.write_text(path.read_text(encoding="utf-8") + "My own notes on billing.\n", encoding="utf-8")
    assert vault.forget("m-b").overviews == ()
    assert [m.id for m in synthesized(vault)] == [synthesis.id]


def test_correcting_a_member_takes_the_overview_quoting_its_old_text_to_the_trash(
        make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault(BILLING_FILES).root, embedder=HashEmbedder())
    maintain(vault, now=NOW)
    [synthesis] = synthesized(vault)
    result = vault.correct("m-c", "The billing Postgres replica lives in eu-central-1.")
    assert result.overviews == (synthesis.id,) and synthesized(vault) == []
    vault.sync()
    hits = vault.search(SearchQuery("where does the billing replica live", limit=10, weak=True)).hits
    assert not any("eu-west-1" in h.summary for h in hits if h.id != "m-c")  # only the superseded one says it


def test_a_rolled_back_synthesis_is_not_written_again(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault(BILLING_FILES).root, embedder=HashEmbedder())
    maintain(vault, now=NOW)
    [synthesis] = synthesized(vault)
    before = {i: vault.scan().get(i).memory.links for i in ("m-a", "m-b", "m-c")}
    vault.rollback(synthesis.id)
    assert synthesized(vault) == []
    assert all(synthesis.id in links for links in before.values())  # they linked it ...
    assert all(synthesis.id not in vault.scan().get(i).memory.links for i in before)  # ... and no more
    assert [a.kind for a in maintain(vault, now=NOW, replan=True).actions].count("synthesize") == 0


def test_maintain_with_a_model_asks_it_once_across_runs(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault(BILLING_FILES).root, embedder=HashEmbedder())
    writer = Writer()
    maintain(vault, now=NOW, llm=writer)
    [synthesis] = synthesized(vault)
    assert synthesis.title == "Billing on Postgres" and synthesis.extra["synthesis_by"] == "model-w"
    assert maintain(vault, now=NOW, replan=True, llm=writer).actions == [] and writer.calls == 1


def test_an_overview_a_person_edited_is_never_written_again(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault(BILLING_FILES).root, embedder=HashEmbedder())
    maintain(vault, now=NOW)
    [synthesis] = synthesized(vault)
    path = vault.root / vault.scan().get(synthesis.id).path
    path.write_text(path.read_text(encoding="utf-8") + "Edited by hand: the replica moves in May.\n", encoding="utf-8")
    member = vault.root / "memories/global/replica.md"
    member.write_text(member.read_text().replace("eu-west-1", "eu-central-1"), encoding="utf-8")
    changed = maintain(vault, now=NOW + timedelta(minutes=1))
    assert ("resynthesize", synthesis.id) not in [(a.kind, a.memory) for a in changed.actions]
    body = vault.scan().get(synthesis.id).memory.body
    assert "Edited by hand: the replica moves in May." in body and "eu-central-1" not in body


def test_an_unedited_overview_keeps_the_digest_of_its_words_across_rewrites(
        make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault(BILLING_FILES).root, embedder=HashEmbedder())
    maintain(vault, now=NOW)
    [synthesis] = synthesized(vault)
    member = vault.root / "memories/global/replica.md"
    member.write_text(member.read_text().replace("eu-west-1", "eu-central-1"), encoding="utf-8")
    maintain(vault, now=NOW + timedelta(minutes=1))
    [rewritten] = synthesized(vault)
    assert "eu-central-1" in rewritten.body
    assert rewritten.extra["synthesis_text"] != synthesis.extra["synthesis_text"]
