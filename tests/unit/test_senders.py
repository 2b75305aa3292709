"""Senders: the key in the file format, who a vault writes as, every writer stamping it, and the
context marking a memory of another sender."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine import config as config_mod
from vault_engine import senders
from vault_engine.context.director import TaskRequest, build
from vault_engine.format.memory import Memory, parse, render
from vault_engine.index.fakes import HashEmbedder
from vault_engine.ingest.conversation import ingest
from vault_engine.ingest.documents import ingest_document, remember_output
from vault_engine.llm.base import Turn
from vault_engine.llm.offline import OfflineLlm
from vault_engine.sharing import merge
from vault_engine.vault import NewMemory, Vault

OLD_FILE = """---
id: m-01jdx8k3q7r2v5w9t0a1b2c3d4
title: Deploys run from main
type: fact
scope: global
authority: explicit
trust: learned
lifecycle: proven
recall: active
tier: cold
importance: 0.5
summary: Deploys of the api run from main.
trigger: ""
tags: [deploy]
created: 2026-11-20T09:14:00Z
updated: 2026-11-20T09:14:00Z
---
Deploys of the api run from main after the CI passes.
"""


def as_sender(vault: Vault, name: str, *, embedder: bool = False) -> Vault:
    """The vault at ``vault.root`` opened as ``name`` writes (``[vault] sender``)."""
    config = vault.config
    config = dataclasses.replace(config, vault=dataclasses.replace(config.vault, sender=name))
    return Vault(vault.root, config, auto_sync=embedder, embedder=HashEmbedder() if embedder else None)


def memory_of(vault: Vault, memory_id: str) -> Memory:
    return vault.entry(memory_id).memory


# ---------------------------------------------------------------- names


def test_names_are_compared_without_case_or_spacing() -> None:
    assert senders.clean("  Ada \n Lovelace ") == "Ada Lovelace"
    assert senders.clean("   ") is None and senders.clean(None) is None
    assert len(senders.clean("x" * 500) or "") == senders.MAX_SENDER
    assert senders.same("Ada  Lovelace", "ada lovelace")
    assert not senders.same("ada", None) and not senders.same(None, None)


@pytest.mark.parametrize(("sender", "current", "marked"), [
    ("bob", "ada", "bob"),
    ("Bob", "bob", None),  # the same sender, spelled otherwise
    ("ada", "ada", None),
    (None, "ada", None),  # a memory written before senders existed
    ("", "ada", None),
    ("bob", None, None),  # who asks is unknown: nobody is "another"
])
def test_another_sender_is_only_a_known_different_one(sender: str | None, current: str | None,
                                                        marked: str | None) -> None:
    assert senders.other_sender(sender, current) == marked


def test_the_reason_line_names_the_other_sender() -> None:
    assert senders.why("bob") == "from another sender: bob"


# ---------------------------------------------------------------- who this vault writes as


def git(where: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(where), *args], check=True, capture_output=True)


def test_this_machines_choice_comes_first_then_git_user_name_then_the_shared_file(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert senders.current_sender(plain, "") is None  # no git repository, no setting
    assert senders.current_sender(plain, " ada ") == "ada"
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    assert senders.current_sender(repo, "") is None  # a repository without a user.name (HOME is empty)
    assert senders.current_sender(repo, "ada") == "ada"  # the file's, when git names no one
    git(repo, "config", "user.name", "Bob  Stone")
    assert senders.current_sender(repo, "") == "Bob Stone"
    # A sender committed in the shared memvault.toml does not make Bob write as ada; his own variable does.
    assert senders.current_sender(repo, "ada") == "Bob Stone"
    assert senders.current_sender(repo, "ada", from_environment=True) == "ada"


def test_a_vault_reads_whether_this_machine_chose_its_sender(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "config", "user.name", "bob")
    (repo / "memvault.toml").write_text('[vault]\nsender = "ada"\n')  # committed by ada
    monkeypatch.delenv("MEMVAULT_VAULT_SENDER", raising=False)
    assert Vault(repo, config_mod.load(repo)).sender == "bob"
    monkeypatch.setenv("MEMVAULT_VAULT_SENDER", "bob-laptop")
    assert Vault(repo, config_mod.load(repo)).sender == "bob-laptop"


def test_the_setting_is_read_from_the_file_and_the_environment(tmp_path: Path) -> None:
    (tmp_path / "memvault.toml").write_text('[vault]\nsender = "ada"\n')
    assert config_mod.load(tmp_path).vault.sender == "ada"
    assert config_mod.load(tmp_path, {"MEMVAULT_VAULT_SENDER": "bob"}).vault.sender == "bob"
    assert config_mod.load(None).vault.sender == ""


def test_a_vault_looks_its_sender_up_once(vault: Vault) -> None:
    assert vault.sender is None
    assert as_sender(vault, "ada").sender == "ada"


# ---------------------------------------------------------------- the file format


def test_a_file_without_sender_reads_and_renders_as_it_was() -> None:
    parsed = parse(OLD_FILE, "old.md")
    assert parsed.memory.sender is None
    assert render(parsed.memory, parsed) == OLD_FILE
    assert render(parsed.memory.replace(importance=0.5)) == OLD_FILE  # rendered afresh: no sender line either


def test_sender_is_written_after_source_and_read_back() -> None:
    memory = parse(OLD_FILE, "old.md").memory.replace(sender="agent:claude-code", source="tool:mcp")
    text = render(memory)
    assert "source: tool:mcp\nsender: agent:claude-code\n" in text
    assert parse(text, "new.md").memory == memory
    assert render(parse(text, "new.md").memory) == text  # deterministic
    assert memory.to_json()["sender"] == "agent:claude-code"


def test_a_merge_takes_one_sides_change_of_sender() -> None:
    base = OLD_FILE
    ours = render(parse(base, "m.md").memory.replace(sender="ada"))
    merged = merge.merge_memory(base, ours, base)
    assert parse(merged.text, "m.md").memory.sender == "ada"


# ---------------------------------------------------------------- every writer stamps it


def test_add_and_correct_write_the_current_sender(vault: Vault) -> None:
    ada = as_sender(vault, "ada")
    added = ada.add(NewMemory("Deploys of the api run from main."))
    assert memory_of(ada, added.id).sender == "ada"
    assert "sender: ada\n" in (ada.root / added.path).read_text()
    own = ada.add(NewMemory("Staging runs Postgres 16.", sender="bob"))
    assert memory_of(ada, own.id).sender == "bob"  # a caller may name the sender
    corrected = as_sender(vault, "bob").correct(added.id, "Deploys of the api run from the release branch.")
    assert memory_of(vault, corrected.id).sender == "bob"  # the new text is the corrector's
    assert memory_of(vault, added.id).sender == "ada"


def test_no_sender_no_key(vault: Vault) -> None:
    added = vault.add(NewMemory("Deploys of the api run from main."))
    assert memory_of(vault, added.id).sender is None
    assert "sender:" not in (vault.root / added.path).read_text()


def test_import_stamps_records_that_name_no_sender(vault: Vault) -> None:
    ada = as_sender(vault, "ada")
    lines = [json.dumps({"body": "The api uses Postgres."}),
             json.dumps({"body": "The web app deploys to Vercel.", "sender": "bob"})]
    result = ada.import_jsonl(lines)
    assert [memory_of(ada, i).sender for i in result.added] == ["ada", "bob"]


def test_documents_outputs_and_episodes_write_the_current_sender(vault: Vault) -> None:
    ada = as_sender(vault, "ada")
    llm = OfflineLlm()
    document = ingest_document(ada, "The release checklist lives in docs/release.md.\n", source="document:a", llm=llm)
    output = remember_output(ada, "collected 120 items, all passed\n" * 60, source="tool:pytest", llm=llm)
    turns = [Turn("user", "Let us move the deploys to the release branch."),
             Turn("assistant", "Done: deploys now run from the release branch."),
             Turn("user", "Thanks, and keep main for hotfixes.")]
    episode = ingest(ada, turns, session="s1", llm=llm, flush=True)
    ids = [*document.ids, *output.ids, *(e.id for e in episode.episodes)]
    assert len(ids) >= 3 and {memory_of(ada, i).sender for i in ids} == {"ada"}


# ---------------------------------------------------------------- the context


@pytest.fixture
def shared(make_vault: Callable[..., Vault]) -> tuple[Vault, dict[str, str]]:
    """One vault with a memory of ada, one of bob and one written before senders (hot: always delivered)."""
    base = make_vault()
    (base.root / "memories" / "old.md").write_text(OLD_FILE.replace("tier: cold", "tier: hot"))
    ada = as_sender(base, "ada", embedder=True)
    bob = as_sender(base, "bob", embedder=True)
    ids = {
        "ada": ada.add(NewMemory("Run the linters before every commit.", tier="hot")).id,
        "bob": bob.add(NewMemory("The staging database is reset every night.", tier="hot")).id,
        "old": "m-01jdx8k3q7r2v5w9t0a1b2c3d4",
    }
    ada.sync()
    return ada, ids


def reasons(vault: Vault, **options: object) -> dict[str, list[str]]:
    manifest = build(vault, TaskRequest("deploy the api", **options), record=False)  # type: ignore[arg-type]
    return {item.id: item.why for item in [*manifest.resident, *manifest.manifest]}


def test_a_memory_of_another_sender_is_marked(shared: tuple[Vault, dict[str, str]]) -> None:
    ada, ids = shared
    why = reasons(ada)
    assert set(ids.values()) <= set(why)
    assert "from another sender: bob" in why[ids["bob"]]
    assert not any(r.startswith(senders.ANOTHER) for r in why[ids["ada"]] + why[ids["old"]])
    manifest = build(ada, TaskRequest("deploy the api"), record=False)
    assert "from another sender: bob" in manifest.markdown
    assert manifest.markdown.count(senders.ANOTHER) == 1
    assert json.dumps(manifest.to_json()).count("from another sender: bob") == 2  # why, and the markdown


def test_the_request_names_who_asks(shared: tuple[Vault, dict[str, str]]) -> None:
    ada, ids = shared
    why = reasons(ada, sender="BOB")
    assert "from another sender: ada" in why[ids["ada"]]
    assert not any(r.startswith(senders.ANOTHER) for r in why[ids["bob"]] + why[ids["old"]])


def test_nothing_is_marked_while_the_sender_is_unknown(shared: tuple[Vault, dict[str, str]]) -> None:
    ada, _ids = shared
    unknown = Vault(ada.root, auto_sync=True, embedder=HashEmbedder())
    assert unknown.sender is None
    assert not any(r.startswith(senders.ANOTHER) for why in reasons(unknown).values() for r in why)


def test_reading_and_syncing_rewrite_no_file_without_sender(shared: tuple[Vault, dict[str, str]]) -> None:
    ada, _ids = shared
    old = ada.root / "memories" / "old.md"
    before = old.read_bytes()
    ada.sync(full=True)
    reasons(ada)
    build(ada, TaskRequest("deploy the api"))  # recorded: the journal only
    assert old.read_bytes() == before


def test_the_servers_take_who_asks(shared: tuple[Vault, dict[str, str]]) -> None:
    from vault_engine.server.requests import ContextRequest, input_schema
    from vault_engine.server.service import MemoryService

    assert input_schema(ContextRequest)["properties"]["sender"]["type"] == "string"
    ada, ids = shared
    service = MemoryService(ada)
    try:
        answer = service.context(ContextRequest.parse({"task": "deploy the api", "record": False, "sender": "bob"}))
        why = {item["id"]: item["why"] for item in answer["resident"]}
        assert "from another sender: ada" in why[ids["ada"]] and "from another sender: bob" not in answer["markdown"]
        default = service.context(ContextRequest.parse({"task": "deploy the api", "record": False}))
        assert "from another sender: bob" in default["markdown"]
    finally:
        service.close()
