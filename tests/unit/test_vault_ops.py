"""Core vault operations: add, import, correct, forget, rollback, trash, status, replay."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from vault_engine.errors import (
    ForgottenContent,
    FrontmatterError,
    InvalidInput,
    MemoryNotFound,
    NothingToUndo,
    ValidationError,
)
from vault_engine.format.memory import Memory
from vault_engine.vault import NewMemory, Vault


def memory_md(memory_id: str, title: str = "A memory", body: str = "The body.\n", **keys: str) -> str:
    lines = [f"id: {memory_id}", f"title: {title}", "type: fact", *(f"{k}: {v}" for k, v in keys.items())]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


def get(vault: Vault, memory_id: str) -> Memory:
    return vault.scan().get(memory_id).memory


def path_of(vault: Vault, memory_id: str) -> str:
    return vault.scan().get(memory_id).path


def journal_text(vault: Vault) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in vault.journal.files())


def journal_kinds(vault: Vault, memory_id: str | None = None) -> list[str]:
    return [e.kind for e in vault.journal.events() if memory_id is None or e.memory == memory_id]


# ---------------------------------------------------------------- add


def test_add_explicit_starts_proven_with_defaults(vault: Vault) -> None:
    result = vault.add(NewMemory("Tests use pytest fixtures. Never unittest setUp.\nMore detail here."))
    assert result.created and result.path == f"memories/global/tests-use-pytest-fixtures-{result.id[-6:]}.md"
    m = get(vault, result.id)
    assert (m.authority, m.lifecycle, m.scope, m.tier, m.recall, m.type) == (
        "explicit", "proven", "global", "cold", "active", "fact")
    assert m.title == "Tests use pytest fixtures"
    assert m.summary == "Tests use pytest fixtures. Never unittest setUp. More detail here."  # short: all of it
    assert m.body == "Tests use pytest fixtures. Never unittest setUp.\nMore detail here.\n"
    assert m.created is not None and m.created == m.updated
    assert journal_kinds(vault, result.id) == ["add"]


def test_add_inferred_starts_trial(vault: Vault) -> None:
    result = vault.add(NewMemory("The user seems to prefer tabs", authority="inferred"))
    assert get(vault, result.id).lifecycle == "trial"


def test_add_explicit_title_and_summary(vault: Vault) -> None:
    result = vault.add(NewMemory("Body text.", title="My title", summary="My summary", trigger="When x"))
    m = get(vault, result.id)
    assert (m.title, m.summary, m.trigger) == ("My title", "My summary", "When x")
    assert result.path == f"memories/global/my-title-{result.id[-6:]}.md"


def test_add_core_profile_goes_to_profile_hot_passive(vault: Vault) -> None:
    result = vault.add(NewMemory("My name is Ada", type="core-profile"))
    assert result.path.startswith("profile/")
    m = get(vault, result.id)
    assert (m.tier, m.recall) == ("hot", "passive")


def test_add_project_memory_goes_to_project_folder(vault: Vault) -> None:
    result = vault.add(NewMemory("Use ruff", project="github.com/acme/api"))
    assert result.path == f"memories/projects/github.com-acme-api/use-ruff-{result.id[-6:]}.md"
    m = get(vault, result.id)
    assert (m.scope, m.project) == ("project", "github.com/acme/api")


def test_add_hostile_project_key_and_title_stay_inside(vault: Vault) -> None:
    result = vault.add(NewMemory("Hostile", title="../../../etc/passwd", project="../../outside/.."))
    assert result.path.startswith("memories/projects/") and ".." not in result.path
    assert (vault.root / result.path).resolve().is_relative_to(vault.root.resolve())
    assert get(vault, result.id).project == "../../outside/.."


def test_add_same_title_twice_gets_distinct_files(vault: Vault) -> None:
    a = vault.add(NewMemory("First text", title="Same"))
    b = vault.add(NewMemory("Second text", title="Same"))
    assert a.path != b.path and a.id != b.id


def test_add_redacts_secrets_everywhere(vault: Vault) -> None:
    key = "sk-ant-api03-" + "A" * 30
    result = vault.add(NewMemory(f"Deploy key {key} and password=hunter2hunter2", title=f"key {key}",
                                 summary=f"uses {key}"))
    text = (vault.root / result.path).read_text()
    assert key not in text and "hunter2hunter2" not in text and "[REDACTED]" in text
    assert key not in journal_text(vault)


def test_add_refuses_one_off_unless_forced(vault: Vault) -> None:
    with pytest.raises(InvalidInput, match="one-off"):
        vault.add(NewMemory("Skip the linter, not this time though"))
    assert list(vault.scan().entries) == []
    assert journal_kinds(vault) == []
    forced = vault.add(NewMemory("Skip the linter, not this time though"), allow_one_off=True)
    assert forced.id in vault.scan().entries


@pytest.mark.parametrize("text", [
    "Just for today, use the staging database",
    "Today, use the staging database for the demo.",
    "Use the staging database today.",
    "Skip the e2e tests for now",
    "For now, don't run the migrations.",
])
def test_add_refuses_instructions_for_today_or_for_now(vault: Vault, text: str) -> None:
    with pytest.raises(InvalidInput, match="one-off"):
        vault.add(NewMemory(text))
    assert list(vault.scan().entries) == [] and journal_kinds(vault) == []
    assert vault.add(NewMemory(text), allow_one_off=True).created


@pytest.mark.parametrize("text", [
    "Today's date format is ISO 8601",
    "The user reviews PRs today and every day",
    "Always run the linter, starting today",
    "For now, the API is read-only.",
])
def test_add_keeps_lasting_statements_that_mention_today(vault: Vault, text: str) -> None:
    assert vault.add(NewMemory(text)).created


def test_add_empty_text_is_refused(vault: Vault) -> None:
    with pytest.raises(InvalidInput):
        vault.add(NewMemory("  \n "))


def test_same_text_twice_adds_evidence_not_a_duplicate(vault: Vault) -> None:
    first = vault.add(NewMemory("Always run the tests before pushing"))
    again = vault.add(NewMemory("  always run the TESTS   before pushing\n", source="conversation:s1"))
    assert again.id == first.id and not again.created and again.notice
    m = get(vault, first.id)
    assert m.proof_count == 2
    assert [e["source"] for e in m.evidence] == ["conversation:s1"]
    assert len(list(vault.scan().active())) == 1
    assert journal_kinds(vault, first.id) == ["add", "evidence"]
    assert vault.replay_diff() == []


def test_the_same_words_with_other_punctuation_add_evidence_not_a_duplicate(vault: Vault) -> None:
    first = vault.add(NewMemory("Use pnpm, not npm, in this repo"))
    again = vault.add(NewMemory("use pnpm not npm in this repo."))
    assert again.id == first.id and not again.created
    assert again.notice == "the same words (case and punctuation aside) were already remembered; evidence added"
    assert get(vault, first.id).proof_count == 2 and len(list(vault.scan().active())) == 1
    other = vault.add(NewMemory("Use pnpm, not npm, in this repo and the docs"))  # more words: another memory
    assert other.created and other.id != first.id
    rocket, party = vault.add(NewMemory("🚀")), vault.add(NewMemory("🎉"))  # no words: not one memory
    assert rocket.created and party.created and rocket.id != party.id


def test_a_redacted_secret_is_said(vault: Vault) -> None:
    token = "ghp_" + "a" * 36
    result = vault.add(NewMemory(f"The deploy token is {token}"))
    assert result.created and result.notice == "a secret in what was given is stored as [REDACTED]"
    assert token not in (vault.root / result.path).read_text()
    assert vault.add(NewMemory("Deploys need a token")).notice is None


def test_permanently_forgotten_text_is_refused(vault: Vault) -> None:
    result = vault.add(NewMemory("My old address is 1 Main St"))
    vault.forget(result.id, permanent=True)
    with pytest.raises(ForgottenContent):
        vault.add(NewMemory("my old address is 1 main st"))
    assert list(vault.scan().entries) == []
    allowed = vault.add(NewMemory("My old address is 1 Main St"), allow_forgotten=True)
    assert allowed.created


# ---------------------------------------------------------------- import


def test_import_reports_bad_lines_and_imports_the_rest(vault: Vault) -> None:
    existing = vault.add(NewMemory("Existing memory text"))
    lines = [
        json.dumps({"title": "Good one", "type": "fact", "body": "Good body one"}),             # 1
        "{not json",                                                                           # 2
        json.dumps({"title": "Bad enum", "type": "fact", "tier": "lukewarm", "body": "x"}),    # 3
        json.dumps({"type": "fact"}),                                                          # 4
        "",                                                                                    # 5 (blank)
        json.dumps({"id": existing.id, "title": "Reuse", "type": "fact", "body": "reuse"}),    # 6
        json.dumps({"id": "m-custom-1", "title": "Custom", "type": "fact", "body": "custom"}), # 7
        json.dumps({"id": "m-custom-1", "title": "Again", "type": "fact", "body": "again"}),   # 8
        json.dumps(["a", "list"]),                                                             # 9
        json.dumps({"title": "Dup", "type": "fact", "body": "good BODY one"}),                 # 10
        json.dumps({"title": "Vault dup", "type": "fact", "body": "existing memory text"}),    # 11
        json.dumps({"type": "core-profile", "body": "I am Ada"}),                              # 12
        json.dumps({"body": "No type given defaults to a fact"}),                              # 13
    ]
    result = vault.import_jsonl(lines, "in.jsonl")
    bad = {e.line: e for e in result.errors}
    assert sorted(bad) == [2, 3, 4, 6, 8, 9]
    assert all(e.path == "in.jsonl" for e in result.errors)
    assert isinstance(bad[3], ValidationError) and "lukewarm" in bad[3].message
    assert "title" in bad[4].message
    assert "already used" in bad[6].message and "already used" in bad[8].message
    assert bad[2].one_line().startswith("in.jsonl:2: ")
    assert len(result.added) == 4 and "m-custom-1" in result.added
    assert result.merged == [result.added[0], existing.id]
    good = get(vault, result.added[0])
    assert good.proof_count == 2 and good.authority == "explicit" and good.lifecycle == "proven"
    assert get(vault, existing.id).proof_count == 2
    profile = next(e for e in vault.scan().active() if e.memory.type == "core-profile")
    assert profile.path.startswith("profile/") and profile.memory.tier == "hot"
    untyped = next(e.memory for e in vault.scan().active() if e.memory.title.startswith("No type"))
    assert untyped.type == "fact"
    assert len(list(vault.scan().active())) == 5
    assert journal_kinds(vault).count("import") == 4
    assert vault.replay_diff() == []


def test_import_of_only_bad_lines_writes_nothing(vault: Vault) -> None:
    result = vault.import_jsonl(["nope", "{}"], "x.jsonl")
    assert result.added == [] and [e.line for e in result.errors] == [1, 2]
    assert list(vault.scan().entries) == [] and journal_kinds(vault) == []


def test_import_refuses_forgotten_text(vault: Vault) -> None:
    gone = vault.add(NewMemory("Secret plan"))
    vault.forget(gone.id, permanent=True)
    result = vault.import_jsonl([json.dumps({"title": "t", "type": "fact", "body": "secret plan"})], "f")
    assert result.added == [] and isinstance(result.errors[0], ForgottenContent)


def test_importing_the_same_file_again_changes_nothing(vault: Vault) -> None:
    existing = vault.add(NewMemory("Deploys run at noon"))
    lines = [
        json.dumps({"title": "Ports", "body": "The API listens on port 8080."}),
        json.dumps({"id": "m-custom-2", "title": "Custom", "body": "A record with its own id."}),
        json.dumps({"body": "Deploys run at noon", "source": "document:runbook"}),  # evidence for `existing`
    ]
    first = vault.import_jsonl(lines, "facts.jsonl")
    assert len(first.added) == 2 and first.merged == [existing.id] and first.errors == []
    files = {p: (vault.root / p).read_bytes() for p in (e.path for e in vault.scan().entries.values())}
    events = len(list(vault.journal.events()))
    again = vault.import_jsonl(lines, "facts.jsonl")  # a retry: before, proof_count 3 and an "already used" error
    assert (again.added, again.merged, again.errors) == ([], [], [])
    assert again.unchanged == [*first.added, existing.id]
    assert get(vault, existing.id).proof_count == 2
    assert {p: (vault.root / p).read_bytes() for p in files} == files
    assert len(list(vault.journal.events())) == events
    # Another record with the same text is more evidence; the same line twice in one file counts once.
    other = json.dumps({"body": "Deploys run at noon", "source": "conversation:s2"})
    assert vault.import_jsonl([other, other], "more.jsonl").merged == [existing.id]
    assert get(vault, existing.id).proof_count == 3
    assert vault.replay_diff() == []


# ---------------------------------------------------------------- correct


def test_correct_supersedes_both_ways(vault: Vault) -> None:
    old = vault.add(NewMemory("My name is Ada", type="core-profile"))
    result = vault.correct(old.id, "My name is Ada Lovelace")
    assert result.related == old.id and result.id != old.id
    new, prior = get(vault, result.id), get(vault, old.id)
    assert new.supersedes == old.id and prior.superseded_by == result.id
    assert (prior.lifecycle, prior.tier) == ("superseded", "cold")
    assert (new.lifecycle, new.authority, new.body) == ("proven", "explicit", "My name is Ada Lovelace\n")
    assert result.path is not None and (vault.root / result.path).is_file()
    assert path_of(vault, old.id) == old.path  # the old version stays where it was
    assert prior.body == "My name is Ada\n"
    assert vault.replay_diff() == []


def test_correct_titles_and_names_the_new_version_after_the_new_text(vault: Vault) -> None:
    old = vault.add(NewMemory("Deploys run on Mondays"))
    linker = vault.add(NewMemory("See the deploy day note", extra={"links": ["[[deploys-run-on-mondays]]"]}))
    result = vault.correct(old.id, "Deploys run on Tuesdays")
    new = get(vault, result.id)
    assert new.title == "Deploys run on Tuesdays"  # before: the old title, "Deploys run on Mondays"
    assert result.path == f"memories/global/deploys-run-on-tuesdays-{result.id[-6:]}.md"
    assert path_of(vault, old.id) == old.path and get(vault, old.id).title == "Deploys run on Mondays"
    assert [e.payload["title"] for e in vault.journal.events(("correct",))] == ["Deploys run on Tuesdays"]
    # A link by the old name still resolves: to the old version, which names its successor.
    scan = vault.scan()
    assert vault.resolve_links(scan.get(linker.id).memory, scan)[0]["id"] == old.id
    assert get(vault, old.id).superseded_by == result.id
    assert vault.replay_diff() == []


def test_correct_keeps_a_title_someone_wrote_and_takes_a_given_one(vault: Vault) -> None:
    old = vault.add(NewMemory("Deploys run on Mondays", title="Deploy day"))
    kept = vault.correct(old.id, "Deploys run on Tuesdays")
    assert get(vault, kept.id).title == "Deploy day"
    assert kept.path == f"memories/global/deploy-day-{kept.id[-6:]}.md"
    given = vault.correct(kept.id, "Deploys run on Wednesdays", title="Midweek deploys")
    assert get(vault, given.id).title == "Midweek deploys"
    assert given.path == f"memories/global/midweek-deploys-{given.id[-6:]}.md"


def test_cannot_correct_superseded_or_trashed_or_unknown(vault: Vault) -> None:
    old = vault.add(NewMemory("Version one"))
    vault.correct(old.id, "Version two")
    with pytest.raises(InvalidInput, match="superseded"):
        vault.correct(old.id, "Version three")
    other = vault.add(NewMemory("Another"))
    vault.forget(other.id)
    with pytest.raises(InvalidInput, match="trash"):
        vault.correct(other.id, "changed")
    with pytest.raises(MemoryNotFound):
        vault.correct("m-doesnotexist", "x")
    with pytest.raises(InvalidInput):
        vault.correct(old.id, "   ")


# ---------------------------------------------------------------- forget / rollback


def test_forget_moves_to_trash_with_tombstone(vault: Vault) -> None:
    added = vault.add(NewMemory("Forget me later"))
    result = vault.forget(added.id)
    assert result.path is not None and result.path.startswith("trash/")
    assert not (vault.root / added.path).exists()
    entry = vault.scan().get(added.id)
    assert entry.in_trash
    m = entry.memory
    assert m.trashed_at is not None and m.expires_at == m.trashed_at + timedelta(days=30)
    assert m.trashed_from == added.path
    assert journal_kinds(vault, added.id) == ["add", "forget"]
    assert [e.memory.id for e in vault.trash_list()] == [added.id]
    assert vault.list()[0] == [] and len(vault.list(include_trash=True)[0]) == 1
    with pytest.raises(InvalidInput, match="already in the trash"):
        vault.forget(added.id)


def test_rollback_of_forget_restores_original_path(vault: Vault) -> None:
    added = vault.add(NewMemory("Bring me back", project="p"))
    original = (vault.root / added.path).read_text()
    vault.forget(added.id)
    result = vault.rollback(added.id)
    assert result.action == "restored" and result.path == added.path
    m = get(vault, added.id)
    assert m.trashed_at is None and m.expires_at is None and m.trashed_from is None
    assert "trash_reason" not in m.extra
    restored = (vault.root / added.path).read_text()

    def without_updated(text: str) -> str:  # the stamp differs when a second passed meanwhile
        return "\n".join(line for line in text.splitlines() if not line.startswith("updated: "))

    assert without_updated(restored) == without_updated(original)
    with pytest.raises(NothingToUndo):
        vault.rollback(added.id)


def test_trash_name_collisions_restore_to_each_origin(vault: Vault) -> None:
    a = vault.add(NewMemory("Same name", project="one"))
    b = vault.add(NewMemory("Same name but other", title="Same name", project="two"))
    vault.forget(a.id)
    vault.forget(b.id)
    assert len({e.path for e in vault.trash_list()}) == 2
    assert vault.restore(b.id).path == b.path
    assert vault.restore(a.id).path == a.path


@pytest.mark.parametrize("use_new_id", [False, True])
def test_rollback_of_correct(vault: Vault, use_new_id: bool) -> None:
    old = vault.add(NewMemory("Standing rule", type="core-profile"))
    new = vault.correct(old.id, "Standing rule, revised")
    result = vault.rollback(new.id if use_new_id else old.id)
    assert result.action == "rolled-back" and result.id == old.id and result.related == new.id
    prior = get(vault, old.id)
    assert (prior.lifecycle, prior.tier, prior.superseded_by) == ("proven", "hot", None)
    newer = vault.scan().get(new.id)
    assert newer.in_trash
    assert [e.memory.id for e in vault.scan().active()] == [old.id]
    with pytest.raises(NothingToUndo):
        vault.rollback(old.id)
    with pytest.raises(NothingToUndo):
        vault.rollback(new.id)
    assert vault.replay_diff() == []


def test_rollback_without_history(vault: Vault) -> None:
    added = vault.add(NewMemory("Nothing happened to me"))
    with pytest.raises(NothingToUndo):
        vault.rollback(added.id)


def test_forget_permanent_purges_every_trace(vault: Vault) -> None:
    title = "Zanzibar holiday plans"
    added = vault.add(NewMemory("Zanzibar holiday plans for May", title=title))
    vault.add(NewMemory("Zanzibar holiday plans for May"))  # evidence event
    corrected = vault.correct(added.id, "Quokka holiday plans for June")
    assert title in journal_text(vault)
    vault.forget(corrected.related or "", permanent=True)
    assert not (vault.root / added.path).exists()
    assert added.id not in vault.scan().entries
    text = journal_text(vault)
    assert title not in text and "Zanzibar" not in text
    for path in vault.journal.files():
        for line in path.read_text().splitlines():
            json.loads(line)  # still valid JSONL
    assert any(e.kind == "purge" and e.memory == added.id for e in vault.journal.events())
    with pytest.raises(NothingToUndo):
        vault.rollback(added.id)


def test_rollback_after_soft_then_permanent_forget(vault: Vault) -> None:
    added = vault.add(NewMemory("Forgotten twice"))
    vault.forget(added.id)
    vault.forget(added.id, permanent=True)
    assert vault.trash_list() == []
    with pytest.raises(NothingToUndo):
        vault.rollback(added.id)


def test_rollback_after_trash_empty(vault: Vault) -> None:
    added = vault.add(NewMemory("Emptied away"))
    vault.forget(added.id)
    vault.trash_empty()
    with pytest.raises(NothingToUndo):
        vault.rollback(added.id)


# ---------------------------------------------------------------- trash


def test_trash_restore_and_empty(vault: Vault) -> None:
    a = vault.add(NewMemory("Alpha"))
    b = vault.add(NewMemory("Beta"))
    c = vault.add(NewMemory("Gamma"))
    for memory_id in (a.id, b.id, c.id):
        vault.forget(memory_id)
    with pytest.raises(InvalidInput, match="not in the trash"):
        vault.restore(vault.add(NewMemory("Delta")).id)
    assert vault.restore(a.id).path == a.path
    # make b's expiry lie in the past
    entry = vault.scan().get(b.id)
    path = vault.root / entry.path
    expires = entry.memory.to_json()["expires_at"]
    path.write_text(path.read_text().replace(f"expires_at: {expires}", "expires_at: 2001-01-01T00:00:00Z"))
    assert vault.trash_empty(expired_only=True) == [b.id]
    assert [e.memory.id for e in vault.trash_list()] == [c.id]
    assert vault.trash_empty() == [c.id]
    assert vault.trash_list() == []
    assert vault.trash_empty() == []
    assert {e.memory.id for e in vault.scan().active()} >= {a.id}


# ---------------------------------------------------------------- identity


def test_renaming_or_moving_a_file_keeps_the_memory(vault: Vault) -> None:
    added = vault.add(NewMemory("Move me around"))
    moved = vault.root / "memories" / "elsewhere" / "renamed-by-hand.md"
    moved.parent.mkdir()
    os.rename(vault.root / added.path, moved)
    entry = vault.entry(added.id)
    assert entry.path == "memories/elsewhere/renamed-by-hand.md"
    vault.forget(added.id)
    assert vault.rollback(added.id).path == "memories/elsewhere/renamed-by-hand.md"
    new = vault.correct(added.id, "Moved and corrected")
    assert new.path is not None and new.path.startswith("memories/elsewhere/")


def test_entry_of_a_malformed_file_reports_the_file(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={"memories/global/bad.md": "---\nid: m-broken\ntitle: [oops\ntype: fact\n---\nx\n"})
    with pytest.raises(FrontmatterError) as info:
        vault.entry("m-broken")
    assert info.value.path == "memories/global/bad.md" and info.value.line is not None
    with pytest.raises(MemoryNotFound):
        vault.entry("m-other")


# ---------------------------------------------------------------- status


def test_status_counts(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={"memories/global/bad.md": "---\nid: m-bad\ntitle: x\ntype: nonsense\n---\n"})
    vault.add(NewMemory("Profile fact", type="core-profile"))
    old = vault.add(NewMemory("Fact one"))
    vault.correct(old.id, "Fact one, corrected")
    gone = vault.add(NewMemory("Fact two"))
    vault.forget(gone.id)
    status = vault.status()
    assert status.vault == str(vault.root)
    assert status.memories == 3
    assert status.by_type == {"core-profile": 1, "fact": 2}
    assert status.by_lifecycle == {"proven": 2, "superseded": 1}
    assert status.by_tier == {"cold": 2, "hot": 1}
    assert status.trash == 1
    assert len(status.invalid) == 1 and status.invalid[0].startswith("memories/global/bad.md:4:")
    assert status.hot_chars == len("Profile fact") * 2 + len("Profile fact")
    assert status.hot_budget == 5000
    assert status.journal_events == 5


# ---------------------------------------------------------------- replay


def test_replay_diff_detects_and_apply_fixes_hand_edits(vault: Vault) -> None:
    a = vault.add(NewMemory("Replay me"))
    b = vault.add(NewMemory("Replay me too", authority="inferred"))
    vault.add(NewMemory("Replay me"))
    c = vault.correct(b.id, "Replay me too, better")
    vault.forget(c.id)
    vault.rollback(c.id)
    assert vault.replay_diff() == []
    path = vault.root / a.path
    path.write_text(path.read_text().replace("lifecycle: proven", "lifecycle: trial"))
    diffs = vault.replay_diff()
    assert [(d.id, d.key, d.file_value, d.journal_value) for d in diffs] == [(a.id, "lifecycle", "trial", "proven")]
    assert [(d.id, d.key) for d in vault.replay_apply()] == [(a.id, "lifecycle")]
    assert get(vault, a.id).lifecycle == "proven"
    assert vault.replay_diff() == []
    assert vault.replay_apply() == []


def test_unchanged_file_is_never_rewritten_by_other_operations(vault: Vault) -> None:
    bystander = vault.add(NewMemory("I am a bystander", type="core-profile"))
    path = vault.root / bystander.path
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    before = (path.read_bytes(), path.stat().st_mtime_ns)

    other = vault.add(NewMemory("Other memory"))
    vault.add(NewMemory("Other memory"))
    vault.import_jsonl([json.dumps({"title": "Imported", "type": "fact", "body": "imported"})])
    corrected = vault.correct(other.id, "Other memory, corrected")
    vault.forget(corrected.id)
    vault.rollback(corrected.id)
    vault.rollback(other.id)
    vault.forget(other.id)
    vault.restore(other.id)
    gone = vault.add(NewMemory("Gone for good"))
    vault.forget(gone.id, permanent=True)
    vault.trash_empty()
    vault.replay_apply()
    vault.status()

    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_no_temp_files_after_operations(vault: Vault) -> None:
    added = vault.add(NewMemory("Leave nothing behind"))
    vault.correct(added.id, "Leave nothing behind at all")
    vault.import_jsonl([json.dumps({"title": "x", "type": "fact", "body": "y"})])
    vault.forget(added.id, permanent=True)
    leftovers = [p for p in Path(vault.root).rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_import_survives_pathological_json_lines(vault: Vault) -> None:
    lines = [
        '{"title": "big", "type": "fact", "importance": ' + "9" * 5000 + "}",
        "[" * 100_000 + "]" * 100_000,
        json.dumps({"title": "Fine", "type": "fact", "body": "fine"}),
    ]
    result = vault.import_jsonl(lines, "weird.jsonl")
    assert [e.line for e in result.errors] == [1, 2] and len(result.added) == 1
    assert all(e.message.startswith("not valid JSON") for e in result.errors)


def test_a_malformed_file_does_not_stop_other_operations(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={"memories/global/bad.md": "---\nid: m-bad\ntitle: [x\n---\n"})
    added = vault.add(NewMemory("Works despite a bad neighbour"))
    new = vault.correct(added.id, "Still works")
    vault.forget(new.id)
    vault.rollback(new.id)
    vault.import_jsonl([json.dumps({"title": "i", "type": "fact", "body": "imported too"})])
    entries, problems = vault.list()
    assert len(entries) == 3 and [p.path for p in problems] == ["memories/global/bad.md"]
    assert (vault.root / "memories/global/bad.md").read_text() == "---\nid: m-bad\ntitle: [x\n---\n"


def test_imported_counters_survive_journal_replay(vault: Vault) -> None:
    line = json.dumps({"title": "Counted", "body": "A memory imported with history.", "proof_count": 3,
                       "applied": {"used-successfully": 2}})
    result = vault.import_jsonl([line], "history.jsonl")
    assert len(result.added) == 1 and not result.errors
    assert vault.replay_diff() == []
    assert vault.replay_apply() == []
    memory = vault.entry(result.added[0]).memory
    assert memory.proof_count == 3
    assert memory.applied["used-successfully"] == 2


def test_a_permanently_forgotten_sentence_is_not_learned_again_with_other_punctuation(vault: Vault) -> None:
    from vault_engine.errors import ForgottenContent

    first = vault.add(NewMemory("The staging password rotates every Monday."))
    vault.forget(first.id, permanent=True)
    for text in ("The staging password rotates every Monday", "the staging password rotates, every Monday!"):
        with pytest.raises(ForgottenContent):
            vault.add(NewMemory(text))
    imported = vault.import_jsonl([json.dumps({"title": "Rotation", "body": "The staging password rotates "
                                                                             "every Monday"})], "test")
    assert not imported.added and imported.errors
    assert vault.add(NewMemory("The staging password rotates every Tuesday.")).created


def test_forget_permanent_takes_the_syntheses_that_quoted_it(vault: Vault) -> None:
    a = vault.add(NewMemory("The billing service stores invoices in Postgres 16."))
    b = vault.add(NewMemory("The billing service runs a replica in eu-west-1."))
    overview = (f"---\nid: m-overview\ntitle: \"Overview: billing\"\ntype: fact\nsource: maintain:synthesis\n"
                f"synthesis_of: [{a.id}, {b.id}]\nlinks: [{a.id}, {b.id}]\n---\n"
                "- The billing service stores invoices in Postgres 16.\n"
                "- The billing service runs a replica in eu-west-1.\n")
    (vault.root / "memories/global/overview-billing.md").write_text(overview, encoding="utf-8")
    result = vault.forget(a.id, permanent=True)
    assert result.related == "m-overview"
    assert not (vault.root / "memories/global/overview-billing.md").exists()
    assert "Postgres 16" not in "".join(p.read_text() for p in vault.root.rglob("*.md"))
    assert b.id in vault.scan().entries  # the other member stays
    assert any(e.kind == "purge" and e.memory == "m-overview" and not e.payload["permanent"]
               for e in vault.journal.events())


def test_a_purged_id_back_on_disk_is_no_memory(vault: Vault) -> None:
    added = vault.add(NewMemory("The staging password is in the team vault"))
    text = (vault.root / added.path).read_text(encoding="utf-8")
    vault.forget(added.id, permanent=True)
    (vault.root / added.path).write_text(text, encoding="utf-8")  # a backup restored by hand
    scan = vault.scan()
    assert added.id not in scan.entries and scan.forgotten == {added.id: [added.path]}
    assert any("permanently forgotten" in p.one_line() for p in scan.problems)
    assert vault.replay_diff() == [] and vault.replay_apply() == []
    assert (vault.root / added.path).read_text(encoding="utf-8") == text  # reported, never rewritten
