"""Hybrid search on the real Tantivy index and vector store (deterministic fake embedder for speed)."""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine.errors import InvalidInput
from vault_engine.index.disk import FINE_RACY_NS
from vault_engine.index.fakes import HashEmbedder
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.retrieval.selectors import path_matches
from vault_engine.store import STATE_DIR
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

API = "github.com/acme/api"
WEB = "github.com/acme/web"


def note(memory_id: str, title: str, body: str, extra: str = "type: fact\n") -> str:
    return f"---\nid: {memory_id}\ntitle: {title}\n{extra}---\n{body}\n"


def live(vault: Vault) -> Vault:
    """The same vault, syncing after every write with the fake embedder."""
    return Vault(vault.root, auto_sync=True, embedder=HashEmbedder())


def ids(vault: Vault, query: str, **options: object) -> list[str]:
    return [h.id for h in vault.search(SearchQuery(query, **options)).hits]  # type: ignore[arg-type]


@pytest.fixture
def filled(make_vault: Callable[..., Vault]) -> tuple[Vault, dict[str, str]]:
    vault = live(make_vault())
    made = {
        "global": vault.add(NewMemory("Always run the linter before committing code.")).id,
        "api": vault.add(NewMemory("The api service deploys with helm charts to the cluster.", project=API)).id,
        "web": vault.add(NewMemory("The web frontend deploys with vercel previews.", project=WEB)).id,
        "external": vault.add(NewMemory("A blog says deploys should happen on Fridays.", trust="external")).id,
        "system": vault.add(NewMemory("Deploys need a green pipeline first.", trust="system")).id,
        "procedure": vault.add(NewMemory("To deploy the api: run make release then helm upgrade.",
                                         type="procedure", project=API)).id,
    }
    return vault, made


def test_write_commands_leave_the_indexes_in_sync(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    assert vault.last_sync is not None and vault.index_warning is None
    assert made["global"] in ids(vault, "linter")
    new = vault.correct(made["global"], "Always run ruff and mypy before committing code.").id
    assert new is not None
    hits = ids(vault, "ruff mypy committing")
    assert new in hits and made["global"] not in hits  # superseded never appears
    assert made["global"] not in ids(vault, "linter")
    vault.forget(made["api"])
    assert made["api"] not in ids(vault, "helm charts cluster")


def test_project_filter_keeps_global_and_never_leaks_another_project(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    everything = ids(vault, "deploys", limit=20)
    assert made["web"] in everything and made["api"] in everything
    scoped = ids(vault, "deploys", project=API, limit=20)
    assert made["api"] in scoped and made["system"] in scoped  # global memories apply everywhere
    assert made["web"] not in scoped


def test_type_filter(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    assert ids(vault, "deploy helm", types=("procedure",)) == [made["procedure"]]
    with pytest.raises(InvalidInput, match="unknown type"):
        vault.search(SearchQuery("deploy", types=("nonsense",)))


def test_external_only_when_asked_and_labelled(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    assert made["external"] not in ids(vault, "blog Fridays deploys", limit=20)
    asked = vault.search(SearchQuery("blog Fridays deploys", trust=("external",)))
    assert [h.id for h in asked.hits] == [made["external"]]
    assert asked.hits[0].trust == "external"
    assert any("external source" in reason for reason in asked.hits[0].why)
    every = ids(vault, "deploys", trust=("any",), limit=20)
    assert made["external"] in every and made["system"] in every
    only_system = ids(vault, "deploys", trust=("system",), limit=20)
    assert only_system == [made["system"]]


def test_trashed_never_a_hit_but_offered_for_revival(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    vault.forget(made["procedure"])
    result = vault.search(SearchQuery("make release helm upgrade"))
    assert made["procedure"] not in [h.id for h in result.hits]
    assert [h.id for h in result.revivable] == [made["procedure"]]
    assert result.to_json()["revivable"][0]["restore"] == f"memvault trash restore {made['procedure']}"
    vault.restore(made["procedure"])
    assert made["procedure"] in ids(vault, "make release helm upgrade")


def test_explain_names_every_lane_and_boost(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    hit = vault.search(SearchQuery("linter committing")).hits[0]
    assert hit.id == made["global"]
    assert hit.lanes["fts"] == 1 and "summary" in hit.lanes
    assert hit.why[0] == "full text: rank 1"
    assert any(r.startswith("vector summary: rank") for r in hit.why)
    boosts = next(r for r in hit.why if r.startswith("boosts:"))
    for name in ("recency", "event time", "proof", "trust", "usefulness"):
        assert name in boosts
    assert 0 < hit.base <= 1.0
    # Both query words are in its text: the re-ranker's word coverage multiplies the boosted score.
    assert set(hit.rerank) == {"terms"}
    assert any(r.startswith("re-ranked: query words covered x") for r in hit.why)
    assert hit.score == pytest.approx(hit.base * _product(hit.boosts.values()) * hit.rerank["terms"])


def test_feedback_is_seeded_only_by_turns_of_a_conversation(filled: tuple[Vault, dict[str, str]]) -> None:
    """Facts, episodes and documents are whole in themselves: no feedback lane for them; a turn
    (a source with a place in a conversation) seeds it."""
    vault, _made = filled
    assert all("feedback" not in h.lanes for h in vault.search(SearchQuery("deploys helm cluster")).hits)
    for n, text in enumerate(("We deploy the api with helm.", "Helm charts live in the infra repo.",
                              "The cluster runs in Frankfurt.")):
        vault.add(NewMemory(text, type="episode", source=f"conversation:chat#{n + 1}"), allow_one_off=True)
    assert any("feedback" in h.lanes for h in vault.search(SearchQuery("deploys helm cluster")).hits)


def test_only_tags_many_memories_carry_leave_the_vector_query(make_vault: Callable[..., Vault]) -> None:
    """A name (capitalised, past the first word) of a common tag (at least drop_tag_share of the
    memories carry it) is left out of the vector query; a rare tag, a lower-case topic word, a
    query of nothing but the name, and the switch keep it."""
    vault = live(make_vault())
    for n in range(10):
        vault.add(NewMemory(f"Alice note number {n} about gardening tools.", tags=("alice",)))
    for n in range(20):
        vault.add(NewMemory(f"Filler memory {n} about the weather and the sea."))
    vault.add(NewMemory("The rare orchid blooms in March.", tags=("orchid",)))

    def dropped(searcher: Vault, query: str) -> list[str]:
        return [line for h in searcher.search(SearchQuery(query)).hits for line in h.why
                if line.startswith("vector query without")]

    assert dropped(vault, "What does Alice's orchid need?")
    assert all(line.startswith("vector query without Alice (")
               for line in dropped(vault, "What does Alice's orchid need?"))
    assert not dropped(vault, "Alice")  # nothing would be left to embed
    assert not dropped(vault, "When does the Orchid bloom?")  # 1 of 31 memories: not common
    assert not dropped(vault, "what does alice grow?")  # a topic word, not a name
    config = vault.config
    off = Vault(vault.root, embedder=HashEmbedder(), config=dataclasses.replace(
        config, retrieval=dataclasses.replace(config.retrieval, vector_drop_tags=False)))
    assert not dropped(off, "What does Alice's orchid need?")


def _product(values: object) -> float:
    out = 1.0
    for value in values:  # type: ignore[attr-defined]
        out *= value
    return out


def test_limit_and_character_budget(make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = live(make_vault())
    for n in range(12):
        vault.add(NewMemory(f"Kubernetes note number {n}: pods restart when the probe fails {n} times."))
    assert len(ids(vault, "kubernetes pods probe", limit=5)) == 5
    assert len(ids(vault, "kubernetes pods probe")) == 10  # retrieval.limit
    monkeypatch.setenv("MEMVAULT_RETRIEVAL_MAX_CONTEXT_CHARS", "200")
    tight = live(vault)
    hits = tight.search(SearchQuery("kubernetes pods probe")).hits
    assert 0 < len(hits) < 5
    assert sum(h.chars for h in hits) <= 200 or len(hits) == 1
    with pytest.raises(InvalidInput, match="needs a query"):
        vault.search(SearchQuery("   "))


def test_near_duplicates_collapse_into_the_best(make_vault: Callable[..., Vault]) -> None:
    text = "The payment webhook retries three times with exponential backoff."
    vault = make_vault({
        "memories/global/a.md": note("m-01aaaaaaaaaaaaaaaaaaaaaaaa", "Webhook retries", text),
        "memories/global/b.md": note("m-01bbbbbbbbbbbbbbbbbbbbbbbb", "Webhook retries", text),
        "memories/global/c.md": note("m-01cccccccccccccccccccccccc", "Webhook secrets",
                                     "The payment webhook secret rotates monthly."),
    })
    vault = live(vault)
    vault.sync()
    hits = vault.search(SearchQuery("payment webhook retries backoff")).hits
    found = [h.id for h in hits]
    assert len([i for i in found if i in ("m-01aaaaaaaaaaaaaaaaaaaaaaaa", "m-01bbbbbbbbbbbbbbbbbbbbbbbb")]) == 1
    assert "m-01cccccccccccccccccccccccc" in found
    assert hits[0].duplicates and any("near-duplicates" in r for r in hits[0].why)


def test_linked_neighbours_join_at_half_score_when_asked(make_vault: Callable[..., Vault]) -> None:
    runbook, rota = "m-01aaaaaaaaaaaaaaaaaaaaaaaa", "m-01bbbbbbbbbbbbbbbbbbbbbbbb"
    links = "type: procedure\nlinks:\n- '[[pager-rota]]'\n"
    files = {
        "memories/global/runbook.md": note(runbook, "Incident runbook", "Page on-call, then open a channel.", links),
        "memories/global/pager-rota.md": note(rota, "Pager rota", "Alice covers weekdays and Bob covers weekends."),
    }
    for n in range(30):  # they outrank the rota on their own
        files[f"memories/global/filler-{n}.md"] = note(f"m-01f{n:023d}", f"Filler {n}", f"Topic {n} has a channel.")
    vault = make_vault(files)
    vault = live(vault)
    vault.sync()
    by_default = {h.id: h for h in vault.search(SearchQuery("incident runbook channel", limit=40)).hits}
    assert by_default[rota].score < by_default[runbook].score * 0.5  # links move nothing unless asked
    assert not any(r.startswith("linked from") for r in by_default[rota].why)
    (vault.root / "memvault.toml").write_text("[retrieval]\nneighbour_factor = 0.5\n", encoding="utf-8")
    vault = live(Vault(vault.root))
    by_id = {h.id: h for h in vault.search(SearchQuery("incident runbook channel", limit=40)).hits}
    assert by_id[runbook].why[0] == "full text: rank 1"
    assert by_id[rota].score == pytest.approx(by_id[runbook].score * 0.5)
    assert by_id[rota].why[-1] == f"linked from {runbook} (0.5 x its score)"


def test_path_selectors_filter(make_vault: Callable[..., Vault]) -> None:
    vault = live(make_vault())
    auth = vault.add(NewMemory("Session tokens expire after one hour.", paths=("src/auth/**",))).id
    broad = vault.add(NewMemory("Tokens are logged only as hashes.")).id
    assert set(ids(vault, "tokens", path="src/auth/login.py")) == {auth, broad}
    assert ids(vault, "tokens", path="docs/readme.md") == [broad]


def test_path_matches() -> None:
    assert path_matches(("src/auth/**",), "src/auth/login.py")
    assert path_matches(("src/auth/**",), "src/auth/deep/x.py")
    assert path_matches(("**/*.py",), "a.py") and path_matches(("**/*.py",), "x/y/a.py")
    assert path_matches(("./docs/*.md",), "docs/a.md")
    assert not path_matches(("src/auth/**",), "src/billing/pay.py")
    assert path_matches(("*.md",), "docs/a.md") and path_matches(("*.tf",), "modules/vpc/main.tf")
    assert not path_matches(("/*.md",), "docs/a.md") and path_matches(("/*.md",), "a.md")
    assert path_matches(("src/auth/**",), "src/auth")
    assert path_matches((".github/*.yml",), ".github/ci.yml")
    assert not path_matches(("src/auth/**",), "src/authz/x.py")
    assert path_matches(("src/?.py",), "src/a.py") and not path_matches(("src/?.py",), "src/ab.py")


def test_missing_or_garbled_state_is_rebuilt_by_search(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    shutil.rmtree(vault.root / STATE_DIR)
    result = vault.search(SearchQuery("linter"))
    assert result.notice and "built the search indexes" in result.notice
    assert made["global"] in [h.id for h in result.hits]
    (vault.root / STATE_DIR / "catalog.sqlite").write_bytes(b"this is not a database" * 100)
    result = vault.search(SearchQuery("linter"))
    assert result.notice and "rebuilt" in result.notice
    assert made["global"] in [h.id for h in result.hits]


def test_a_rename_keeps_the_id_and_the_hits(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    before = vault.search(SearchQuery("linter")).hits[0]
    source = vault.root / before.path
    target = vault.root / "memories/global/renamed-by-hand.md"
    source.rename(target)
    report = vault.sync()
    assert report.plan.moved == (made["global"],) and report.embedded == 0
    after = vault.search(SearchQuery("linter")).hits[0]
    assert after.id == made["global"] and after.path == "memories/global/renamed-by-hand.md"


def test_a_file_invalid_for_a_while_keeps_its_hits(filled: tuple[Vault, dict[str, str]]) -> None:
    vault, made = filled
    path = vault.root / vault.search(SearchQuery("linter")).hits[0].path
    good = path.read_text()
    path.write_text(good.replace("type: ", "type: [unclosed", 1))
    report = vault.sync()
    assert any(path.name in p.one_line() for p in report.problems)
    assert made["global"] in ids(vault, "linter")  # still found while the file is being fixed
    path.write_text(good.replace("Always run the linter", "Always run the formatter"))
    vault.sync()
    assert made["global"] in ids(vault, "formatter")


def test_search_reads_no_memory_file(filled: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, made = filled
    # A file written in the last clock tick is checked by its bytes once (see index/disk.py): let the
    # tick pass, then the warm-up records the files as settled.
    time.sleep(2 * FINE_RACY_NS / 1e9)
    vault.search(SearchQuery("warm up"))
    opened: list[str] = []
    real_read_bytes = Path.read_bytes

    def spy(self: Path) -> bytes:
        if self.suffix == ".md":
            opened.append(str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    assert made["system"] in ids(vault, "green pipeline")
    assert opened == []


def test_damage_found_past_the_open_is_rebuilt(make_vault: Callable[..., Vault]) -> None:
    vault = live(make_vault())
    for n in range(60):  # enough rows for the catalog to span several pages
        vault.import_jsonl([f'{{"title": "Note {n}", "body": "Widget {n} ships with firmware {n}. {"x" * 300}"}}'])
    target = vault.add(NewMemory("The gateway rejects requests without a trace header.")).id
    catalog = vault.root / STATE_DIR / "catalog.sqlite"
    data = bytearray(catalog.read_bytes())
    assert len(data) > 3 * 4096
    data[4096:] = b"\xff" * (len(data) - 4096)  # the header still reads; the rows do not
    catalog.write_bytes(bytes(data))
    result = vault.search(SearchQuery("gateway trace header"))
    assert result.notice and "rebuilt" in result.notice
    assert result.hits[0].id == target
    catalog.write_bytes(bytes(data))
    report = vault.sync()
    assert report.notice and "catalog" in report.notice
    assert report.plan.added and target in report.plan.added
