"""The context director against real files, the real catalog and index (fake embedder for speed)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_engine.context.director import (
    EXPLICIT_BONUS,
    ManifestItem,
    ResidentItem,
    TaskRequest,
    build,
    fit,
    score,
)
from vault_engine.index.catalog import CatalogRow
from vault_engine.index.fakes import HashEmbedder
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

API, WEB, CLI = "github.com/acme/api", "github.com/acme/web", "github.com/acme/cli"


def live(vault: Vault) -> Vault:
    return Vault(vault.root, auto_sync=True, embedder=HashEmbedder())


@pytest.fixture
def world(make_vault: Callable[..., Vault]) -> tuple[Vault, dict[str, str]]:
    vault = live(make_vault())
    add = vault.add
    ids = {
        "profile": add(NewMemory("The user is a backend engineer who likes short answers.", type="core-profile")).id,
        "commit": add(NewMemory("Run the tests before proposing a commit.", type="collaboration-policy",
                                operations=("commit",))).id,
        "api-tests": add(NewMemory("API tests use pytest fixtures from conftest.", type="collaboration-policy",
                                   project=API, paths=("tests/**",), tasks=("testing",))).id,
        "api-db": add(NewMemory("The API database is Postgres 16.", project=API)).id,
        "web-tests": add(NewMemory("Web tests use vitest and testing-library.", type="collaboration-policy",
                                   project=WEB, paths=("tests/**",))).id,
        "web-deploy": add(NewMemory("The web app deploys to Vercel on merge.", project=WEB)).id,
        "cli-tests": add(NewMemory("CLI tests snapshot the help output.", project=CLI, tasks=("testing",))).id,
        "review": add(NewMemory("In review, check error messages are one line.", type="collaboration-policy",
                                phases=("review",))).id,
        "passive": add(NewMemory("Answer in English even when the code comments are German.",
                                 recall="passive")).id,
        "inferred": add(NewMemory("The user may prefer tabs in Makefiles.", authority="inferred")).id,
    }
    return vault, ids


def ctx(vault: Vault, task: str, **options: object) -> list[str]:
    return build(vault, TaskRequest(task, **options), record=False).ids  # type: ignore[arg-type]


def test_another_projects_memories_never_appear(world: tuple[Vault, dict[str, str]]) -> None:
    vault, ids = world
    project_of = {ids["api-tests"]: API, ids["api-db"]: API, ids["web-tests"]: WEB, ids["web-deploy"]: WEB,
                  ids["cli-tests"]: CLI}
    tasks = ["write tests", "deploy the app", "fix the database", "testing the api and web and cli", "anything"]
    for project in (API, WEB, CLI, None):
        for task in tasks:
            for path in (None, "tests/test_x.py"):
                delivered = ctx(vault, task, project=project, path=path)
                leaked = [i for i in delivered if i in project_of and project_of[i] != project]
                assert leaked == [], (project, task, path)


def test_selectors_match_at_each_level(world: tuple[Vault, dict[str, str]]) -> None:
    vault, ids = world
    manifest = build(vault, TaskRequest("add tests for pagination", project=API, path="tests/test_pages.py",
                                        operation="commit", phase="review", kind="testing"), record=False)
    why = {item.id: item.why for item in manifest.resident}
    why.update({item.id: item.why for item in manifest.manifest})
    assert "path tests/** matches tests/test_pages.py" in why[ids["api-tests"]]
    assert "task testing matches" in why[ids["api-tests"]]
    assert f"current project ({API})" in why[ids["api-tests"]]
    assert "operation commit matches" in why[ids["commit"]]
    assert "phase review matches" in why[ids["review"]]
    # A selector the request contradicts excludes the memory.
    assert ids["api-tests"] not in ctx(vault, "add tests", project=API, path="src/app.py")
    assert ids["commit"] not in ctx(vault, "ship it", operation="deploy")
    assert ids["review"] not in ctx(vault, "plan it", phase="plan")
    assert ids["cli-tests"] not in ctx(vault, "anything", project=CLI, kind="docs")
    # The task kind is also found in the task text.
    assert ids["cli-tests"] in ctx(vault, "improve testing of flags", project=CLI)


def test_resident_part_holds_profile_passive_and_matching_proven_policies(world: tuple[Vault, dict[str, str]]) -> None:
    vault, ids = world
    manifest = build(vault, TaskRequest("add tests", project=API, path="tests/test_a.py"), record=False)
    resident = [item.id for item in manifest.resident]
    assert ids["profile"] in resident and ids["passive"] in resident and ids["api-tests"] in resident
    assert manifest.resident[0].why[0] in ("core profile: always resident", "passive recall: always in context")
    text = manifest.markdown
    assert text.index("## Always apply") < text.index(ids["profile"])
    assert "memvault show ID --depth 2" in text or not manifest.manifest
    profile_item = next(item for item in manifest.resident if item.id == ids["profile"])
    assert "backend engineer" in profile_item.text


def test_superseded_trashed_and_external_are_never_delivered(world: tuple[Vault, dict[str, str]]) -> None:
    vault, ids = world
    new = vault.correct(ids["api-db"], "The API database is Postgres 17.").id
    vault.forget(ids["web-deploy"])
    vault.add(NewMemory("A blog says Postgres 18 is faster.", trust="external", project=API))
    delivered = ctx(vault, "database Postgres upgrade", project=API)
    assert ids["api-db"] not in delivered and new in delivered
    assert ids["web-deploy"] not in ctx(vault, "deploy Vercel", project=WEB)
    texts = json.dumps(build(vault, TaskRequest("Postgres blog", project=API), record=False).to_json())
    assert "blog says" not in texts


def test_ranking_follows_the_spec_scores() -> None:
    def row(**changes: object) -> CatalogRow:
        base = CatalogRow(id="m-x", path="x.md", hash="", status="active", type="fact", scope="global",
                          project="", trust="learned", lifecycle="proven", tier="cold", title="T", summary="",
                          trigger="", applied={}, authority="explicit")
        return replace(base, **changes)  # type: ignore[arg-type]

    table = [
        (row(), 0, 300 + EXPLICIT_BONUS),
        (row(lifecycle="trial", authority="inferred"), 0, 100),
        (row(lifecycle="trial", authority="inferred"), 2, 150),
        (row(scope="project", project=API), 1, 300 + 160 + 50),
        (row(applied={"used-successfully": 3}), 0, 460 + 60),
        (row(applied={"ignored": 5}), 0, 460 - 10),
        (row(applied={"corrected": 1, "contributed-to-failure": 1}), 0, 460 - 160),
        (row(applied={"overridden": 4}), 0, 460),
    ]
    for candidate, matched, expected in table:
        assert score(candidate, matched) == expected


def test_why_applied_reflects_history(world: tuple[Vault, dict[str, str]]) -> None:
    vault, ids = world
    path = vault.root / vault.entry(ids["commit"]).path
    text = path.read_text().replace("tags: []\n", "tags: []\napplied:\n  used-successfully: 3\n")
    path.write_text(text)
    vault.sync()
    manifest = build(vault, TaskRequest("commit the change", operation="commit"), record=False)
    why = next(i.why for i in [*manifest.resident, *manifest.manifest] if i.id == ids["commit"])
    assert "user explicit setting" in why and "used successfully 3 times" in why
    inferred = build(vault, TaskRequest("tabs in Makefiles"), record=False)
    why = next(i.why for i in [*inferred.resident, *inferred.manifest] if i.id == ids["inferred"])
    assert "trial: not yet proven" in why and any(r.startswith("relevant to the task text (rank") for r in why)


def test_each_delivery_is_journalled_and_a_preview_is_not(world: tuple[Vault, dict[str, str]]) -> None:
    vault, _ids = world
    before = len(list(vault.journal.events()))
    preview = build(vault, TaskRequest("add tests", project=API), record=False)
    assert preview.application is None and len(list(vault.journal.events())) == before
    manifest = build(vault, TaskRequest("add tests", project=API, path="tests/a.py"))
    events = [e for e in vault.journal.events() if e.kind == "application"]
    assert len(events) == 1 and events[0].id == manifest.application
    assert events[0].payload["ids"] == manifest.ids and events[0].payload["project"] == API
    assert manifest.application in manifest.markdown


def test_retrieval_switch_turns_delivery_off(world: tuple[Vault, dict[str, str]],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    vault, _ids = world
    monkeypatch.setenv("MEMVAULT_VAULT_RETRIEVAL", "false")
    off = live(vault)
    manifest = build(off, TaskRequest("add tests", project=API))
    assert manifest.ids == [] and manifest.markdown == "" and manifest.note and "retrieval is off" in manifest.note
    assert off.add(NewMemory("Still works while retrieval is off.")).id  # management still works
    assert [e for e in off.journal.events() if e.kind == "application"] == []


@pytest.mark.parametrize("budget", [0, 150, 400, 1000, 2000, 6000])
def test_the_output_never_exceeds_the_budget(world: tuple[Vault, dict[str, str]], budget: int) -> None:
    vault, _ids = world
    manifest = build(vault, TaskRequest("tests deploy database review commit", project=API, budget=budget),
                     record=False)
    assert len(manifest.markdown) <= budget
    assert manifest.used == len(manifest.markdown)


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=600)


@settings(max_examples=150, deadline=None)
@given(
    resident=st.lists(st.tuples(texts, texts), max_size=4),
    listed=st.lists(st.tuples(texts, texts), max_size=30),
    budget=st.integers(min_value=0, max_value=8000),
    task=texts,
)
def test_fit_property(resident: list[tuple[str, str]], listed: list[tuple[str, str]], budget: int,
                      task: str) -> None:
    from vault_engine.context.director import Manifest

    manifest = Manifest(task, API, budget,
                        [ResidentItem(f"m-r{n}", title, text, ["core profile"]) for n, (title, text) in
                         enumerate(resident)],
                        [ManifestItem(f"m-m{n}", title, "", ["global"], source) for n, (title, source) in
                         enumerate(listed)],
                        application="e-01aaaaaaaaaaaaaaaaaaaaaaaa")
    fit(manifest, (320, 160, 80, 32, 0))
    text = manifest.markdown
    assert len(text) <= budget
    ids = manifest.ids
    assert len(ids) == len(set(ids))  # no duplicates
    if manifest.resident and manifest.manifest:
        assert text.index("## Always apply") < text.index("## May apply")
    for item in manifest.manifest:
        assert len(item.abstract) <= 320


def test_learning_switch_stops_new_inferred_memories_only(world: tuple[Vault, dict[str, str]],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine.errors import InvalidInput

    vault, ids = world
    monkeypatch.setenv("MEMVAULT_VAULT_LEARNING", "false")
    off = live(vault)
    with pytest.raises(InvalidInput, match="learning is off"):
        off.add(NewMemory("The user might like dark mode.", authority="inferred"))
    result = off.import_jsonl(['{"body": "Inferred by a tool.", "authority": "inferred"}',
                               '{"body": "Said by the user."}'])
    assert len(result.added) == 1 and "learning is off" in result.errors[0].message
    assert off.add(NewMemory("Explicit memories are still added.")).id
    assert ids["inferred"] in ctx(off, "tabs in Makefiles")  # existing inferred memories keep working


def test_a_tight_budget_lists_policies_before_dropping_entries() -> None:
    from vault_engine.context.director import POLICY_LEAD, Manifest

    def make() -> Manifest:
        return Manifest("task", API, 10_000,
                        [ResidentItem("m-profile", "Profile", "Short profile.", ["core profile: always resident"]),
                         ResidentItem("m-policy", "Policy", "A long policy. " * 40, [POLICY_LEAD, "global"])],
                        [ManifestItem("m-fact", "Fact", "", ["global"], "A fact worth knowing.")])

    roomy = make()
    fit(roomy, (320, 160, 80, 32, 0))
    assert [i.id for i in roomy.resident] == ["m-profile", "m-policy"]
    tight = make()
    tight.budget = len(roomy.markdown) - 300
    fit(tight, (320, 160, 80, 32, 0))
    assert [i.id for i in tight.resident] == ["m-profile"]
    assert [i.id for i in tight.manifest] == ["m-policy", "m-fact"]
    assert len(tight.markdown) <= tight.budget


def test_hot_memories_are_resident_in_every_context(world: tuple[Vault, dict[str, str]]) -> None:
    """The hot tier goes into every context in full, whatever the task says; a hot memory of another
    project, or one whose selectors exclude the request, does not."""
    vault, _ = world
    squash = vault.add(NewMemory("Always squash-merge feature branches.", tier="hot")).id
    tabs = vault.add(NewMemory("Indent YAML with two spaces.", tier="hot", project=API)).id
    other = vault.add(NewMemory("The web team reviews on Tuesdays.", tier="hot", project=WEB)).id
    scripts = vault.add(NewMemory("Scripts start with set -eu.", tier="hot", paths=("scripts/**",))).id
    for task in ("write a haiku about tea", "merge the feature branch"):
        manifest = build(vault, TaskRequest(task, project=API, path="src/app.py"), record=False)
        resident = {item.id: item for item in manifest.resident}
        assert squash in resident and tabs in resident, task
        assert resident[squash].why[0] == "hot tier: always resident"
        assert "squash-merge" in resident[squash].text
        assert other not in manifest.ids and scripts not in manifest.ids
    # The core profile comes first; the hot tier after what recall keeps resident.
    leads = [item.why[0] for item in build(vault, TaskRequest("tea", project=API), record=False).resident]
    assert leads.index("core profile: always resident") < leads.index("hot tier: always resident")
    assert leads.index("passive recall: always in context") < leads.index("hot tier: always resident")


def test_more_budget_lists_more_memories_past_the_searchs_own_limit(make_vault: Callable[..., Vault],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The search behind a manifest is not cut at what a person's search shows ([retrieval]
    max_context_chars, limit): a larger budget lists more of the relevant memories, each with its reason."""
    monkeypatch.setenv("MEMVAULT_RETRIEVAL_MAX_CONTEXT_CHARS", "600")
    vault = live(make_vault())
    for n in range(45):
        vault.add(NewMemory(f"Kafka consumer note {n}: the orders topic consumer {n} commits offsets after "
                            f"processing each batch of {n + 2} records, then sleeps for {n} seconds."))
    shown = vault.search(SearchQuery("kafka consumer offsets orders topic")).hits
    assert len(shown) < 10
    listed = []
    for budget in (2000, 4000, 6000, 20000):
        manifest = build(vault, TaskRequest("kafka consumer offsets orders topic", budget=budget), record=False)
        assert len(manifest.markdown) <= budget
        entries = [line for line in manifest.markdown.splitlines() if line.startswith("- `m-")]
        assert len(entries) == len(manifest.manifest)
        assert all(re.search(r"_\(why: .*relevant.*\)_$", line) for line in entries)
        listed.append(len(manifest.ids))
    assert listed == sorted(listed) and listed[0] < listed[2] and listed[-1] == 45
    assert listed[0] > len(shown)
