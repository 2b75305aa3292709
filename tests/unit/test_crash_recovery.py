"""What a crash part-way through a write leaves, and how the next command completes or cleans it.

Each test cuts an operation short where the crash harness (stress/crash.py) found a
defect: temp files never removed, index pages left behind the catalog, a correction
half written or not journalled, and replay starting a memory it meets first in an
evidence event from the defaults.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_engine import fsio, store
from vault_engine.format.memory import memory_text, text_digest
from vault_engine.governance.maintain import remove_temps
from vault_engine.index.catalog import Catalog
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.pages import render_pages
from vault_engine.journal import Journal
from vault_engine.vault import NewMemory, Vault


def fake(make_vault: Callable[..., Vault], files: dict[str, str] | None = None) -> Vault:
    return Vault(make_vault(files).root, embedder=HashEmbedder())


def memory_md(memory_id: str, title: str, body: str, **keys: Any) -> str:
    lines = [f"id: {memory_id}", f"title: {title}", "type: fact", *(f"{k}: {v}" for k, v in keys.items())]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


def temp_beside(target: Path) -> Path:
    """A temp file as a write cut short leaves it."""
    temp = fsio.temp_path_for(target)
    temp.parent.mkdir(parents=True, exist_ok=True)
    temp.write_text("half a file", encoding="utf-8")
    return temp


def temp_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and fsio.temp_target(p.name) is not None)


def pages_match_catalog(vault: Vault) -> bool:
    catalog = Catalog(vault.root / store.STATE_DIR / "catalog.sqlite")
    try:
        pages = render_pages(catalog.listing())
    finally:
        catalog.close()
    return all((vault.root / rel).read_text(encoding="utf-8") == text for rel, text in pages.items())


def crash_once(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, when: Callable[..., bool]) -> list[bool]:
    """Make ``owner.name`` raise (a simulated crash) the first time ``when(*args)`` holds."""
    real = getattr(owner, name)
    crashed: list[bool] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        if not crashed and when(*args, **kwargs):
            crashed.append(True)
            raise OSError("simulated crash")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, call)
    return crashed


# ---------------------------------------------------------------- temp files


def test_temp_names_tell_their_target() -> None:
    temp = fsio.temp_path_for(Path("/v/memories/global/deploys.md"))
    assert temp.name.startswith(".deploys.md.") and fsio.temp_target(temp.name) == "deploys.md"
    assert fsio.temp_target("deploys.md") is None
    assert fsio.temp_target(".deploys.md.tmp") is None  # no random part: not one of ours
    assert fsio.temp_target(".deploys.md.ABCDEF123456.tmp") is None


def test_remove_temps_takes_only_temp_files_of_the_targets_named(tmp_path: Path) -> None:
    ours = temp_beside(tmp_path / "a.md")
    page = temp_beside(tmp_path / "INDEX.md")
    (tmp_path / ".a.md.swp").write_text("an editor's", encoding="utf-8")
    removed = fsio.remove_temps(tmp_path, lambda name: name.endswith(".md") and name != "INDEX.md")
    assert removed == [ours] and not ours.exists()
    assert page.exists() and (tmp_path / ".a.md.swp").exists()
    assert fsio.remove_temps(tmp_path / "missing", lambda name: True) == []


def test_maintain_removes_the_temp_files_a_crash_left(make_vault: Callable[..., Vault]) -> None:
    vault = fake(make_vault, {"memories/global/a.md": memory_md("m-a", "A", "The body.\n")})
    root = vault.root
    temps = [temp_beside(root / "memories/global/a.md"), temp_beside(root / "episodes/projects/api/meeting.md"),
             temp_beside(root / "journal/2026-01.jsonl"), temp_beside(root / store.STATE_DIR / "maintain.json")]
    assert [e.memory.id for e in vault.scan().entries.values()] == ["m-a"]  # never read as memories
    vault.maintain(dry_run=True)
    assert all(t.exists() for t in temps)  # a dry run changes nothing
    page_temp = temp_beside(root / "INDEX.md")  # sync's to remove, under the index lock
    with vault.lock.hold():
        assert remove_temps(root) == 4
    assert page_temp.exists() and not any(t.exists() for t in temps)
    temp_beside(root / "memories/global/a.md")
    vault.maintain()
    assert temp_files(root) == []  # the page's went with the sync maintain runs first
    assert vault.scan().problems == []


def test_a_settled_vault_still_loses_its_temp_files(make_vault: Callable[..., Vault]) -> None:
    vault = fake(make_vault, {"memories/global/a.md": memory_md("m-a", "A", "The body.\n")})
    vault.maintain()
    temp = temp_beside(vault.root / "memories/global/b.md")  # an import killed before its renames
    assert vault.maintain().settled
    assert not temp.exists()


def test_a_whole_sync_removes_temp_files_of_pages_and_of_its_state(make_vault: Callable[..., Vault]) -> None:
    vault = fake(make_vault, {"memories/projects/api/a.md": memory_md("m-a", "A", "The body.\n", scope="project",
                                                                      project="api")})
    vault.sync()
    root = vault.root
    temps = [temp_beside(root / "INDEX.md"), temp_beside(root / "memories/projects/api/INDEX.md"),
             temp_beside(root / store.STATE_DIR / "sync-files.json")]
    memory_temp = temp_beside(root / "memories/projects/api/a.md")  # a writer's, under the other lock
    vault.sync(paths=["memories/projects/api/a.md"])  # a sync of some files only does not walk the vault
    assert all(t.exists() for t in temps)
    vault.sync()
    assert not any(t.exists() for t in temps)
    assert memory_temp.exists()


# ---------------------------------------------------------------- index pages


def retitle(vault: Vault, rel: str, old: str, new: str) -> bytes:
    path = vault.root / rel
    before = path.read_bytes()
    path.write_bytes(before.replace(f"title: {old}".encode(), f"title: {new}".encode()))
    return before


def test_pages_follow_the_catalog_when_a_sync_dies_writing_them(
        make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = fake(make_vault, {"memories/global/a.md": memory_md("m-a", "Old title", "The body.\n"),
                              "memories/global/b.md": memory_md("m-b", "Other", "Another body.\n")})
    vault.sync()
    retitle(vault, "memories/global/a.md", "Old title", "New title")
    from vault_engine.index import sync as sync_module

    crashed = crash_once(monkeypatch, sync_module, "write_pages", lambda *args: True)
    with pytest.raises(OSError, match="simulated crash"):
        vault.sync()
    assert crashed
    other = vault.root / "memories/global/b.md"
    other.write_text(other.read_text(encoding="utf-8") + "A line more.\n", encoding="utf-8")
    vault.sync()  # before the fix the catalog had the new title already: this sync saw a body edit only
    assert "New title" in (vault.root / "INDEX.md").read_text(encoding="utf-8")
    assert pages_match_catalog(vault)


def test_pages_follow_a_file_changed_back_after_a_sync_died_before_its_catalog(
        make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = fake(make_vault, {"memories/global/a.md": memory_md("m-a", "Old title", "The body.\n")})
    vault.sync()
    before = retitle(vault, "memories/global/a.md", "Old title", "New title")
    crashed = crash_once(monkeypatch, Catalog, "apply", lambda *args: True)
    with pytest.raises(OSError, match="simulated crash"):
        vault.sync()
    assert crashed and "New title" in (vault.root / "INDEX.md").read_text(encoding="utf-8")
    (vault.root / "memories/global/a.md").write_bytes(before)  # the person undoes the edit
    report = vault.sync()
    assert report.plan.empty  # the catalog never had the new title
    assert "Old title" in (vault.root / "INDEX.md").read_text(encoding="utf-8")
    assert pages_match_catalog(vault)


# ---------------------------------------------------------------- corrections


def current_with_text(vault: Vault, text: str) -> list[str]:
    digest = text_digest(text)
    return [e.memory.id for e in vault.scan().active()
            if e.memory.lifecycle != "superseded" and text_digest(memory_text(e.memory)) == digest]


def correct_cut_short(vault: Vault, monkeypatch: pytest.MonkeyPatch, where: str) -> tuple[str, str]:
    """Correct a memory with a crash ``where`` ("old": before the old version is marked superseded,
    "journal": before the correction is journalled); returns (old id, new id)."""
    old = vault.add(NewMemory("Deploys go out on Fridays"))
    if where == "old":
        crash_once(monkeypatch, store, "write", lambda root, rel, *rest: rel == old.path)
    else:
        crash_once(monkeypatch, Journal, "append", lambda journal, events: any(e.kind == "correct" for e in events))
    with pytest.raises(OSError, match="simulated crash"):
        vault.correct(old.id, "Deploys go out on Tuesdays")
    monkeypatch.undo()
    [new] = current_with_text(vault, "Deploys go out on Tuesdays")
    return old.id, new


@pytest.mark.parametrize("where", ["old", "journal"])
def test_a_correction_cut_short_is_completed_by_its_retry(
        make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    vault = fake(make_vault)
    old_id, new_id = correct_cut_short(vault, monkeypatch, where)
    assert [e.kind for e in vault.journal.events() if e.memory == old_id] == ["add"]
    result = vault.correct(old_id, "Deploys go out on Tuesdays")  # the caller tries again
    assert result.id == new_id and result.related == old_id
    assert current_with_text(vault, "Deploys go out on Tuesdays") == [new_id]  # not a second new version
    old = vault.scan().get(old_id).memory
    assert (old.lifecycle, old.superseded_by) == ("superseded", new_id)
    [event] = [e for e in vault.journal.events() if e.kind == "correct"]
    new = vault.scan().get(new_id).memory
    assert event.id == result.event == new.evidence[-1]["event"] and event.payload["new"] == new_id
    assert event.payload["old_lifecycle"] == "proven"
    assert vault.replay_diff() == []
    assert vault.correct(old_id, "Deploys go out on Tuesdays").id == new_id  # and again: still the same
    with pytest.raises(Exception, match="superseded"):
        vault.correct(old_id, "Deploys go out on Mondays")  # another text: correct the newer one


@pytest.mark.parametrize("where", ["old", "journal"])
def test_maintain_completes_a_correction_cut_short_and_it_can_be_undone(
        make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    vault = fake(make_vault)
    old_id, new_id = correct_cut_short(vault, monkeypatch, where)
    vault.maintain()
    old = vault.scan().get(old_id).memory
    assert (old.lifecycle, old.superseded_by) == ("superseded", new_id)
    assert [e.kind for e in vault.journal.events() if e.memory == old_id][:2] == ["add", "correct"]
    assert vault.replay_diff() == []
    assert vault.finish_corrections(vault.scan()) == []  # done once
    vault.rollback(old_id)
    scan = vault.scan()
    assert scan.get(old_id).memory.lifecycle == "proven" and scan.get(new_id).in_trash


def test_replay_apply_completes_a_correction_instead_of_undoing_it(
        make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = fake(make_vault)
    old_id, new_id = correct_cut_short(vault, monkeypatch, "journal")
    assert [d.key for d in vault.replay_diff()] == ["lifecycle"]  # the journal does not know it yet
    vault.replay_apply()
    assert vault.scan().get(old_id).memory.superseded_by == new_id
    assert vault.scan().get(old_id).memory.lifecycle == "superseded"
    assert vault.replay_diff() == []


def test_finished_corrections_are_left_alone(make_vault: Callable[..., Vault]) -> None:
    vault = fake(make_vault)
    old = vault.add(NewMemory("Deploys go out on Fridays"))
    vault.correct(old.id, "Deploys go out on Tuesdays")
    before = [e.id for e in vault.journal.events()]
    assert vault.finish_corrections(vault.scan()) == []
    vault.maintain()
    assert [e.kind for e in vault.journal.events() if e.id not in before] == []


def test_a_file_written_by_hand_that_supersedes_another_is_not_taken_for_a_crash(
        make_vault: Callable[..., Vault]) -> None:
    vault = fake(make_vault, {
        "memories/global/old.md": memory_md("m-old", "Old", "Deploys on Fridays.\n"),
        "memories/global/new.md": memory_md("m-new", "New", "Deploys on Tuesdays.\n", supersedes="m-old"),
    })
    assert vault.finish_corrections(vault.scan()) == []  # no evidence naming a correction
    assert vault.scan().get("m-old").memory.lifecycle != "superseded"


# ---------------------------------------------------------------- replay


def test_replay_starts_a_memory_met_first_in_an_evidence_event_from_its_baseline(
        make_vault: Callable[..., Vault]) -> None:
    vault = fake(make_vault, {"memories/global/deploys.md": memory_md(
        "m-hand", "Deploys", "We deploy on Fridays only.\n", lifecycle="proven", authority="explicit",
        proof_count=3)})
    vault.add(NewMemory("We deploy on Fridays only."))  # the same text: evidence for the hand-written file
    assert vault.scan().get("m-hand").memory.proof_count == 4
    assert vault.replay_diff() == []  # before the fix: lifecycle trial and proof_count 2, from the defaults
    assert vault.replay_apply() == []


def test_an_import_whose_journal_line_a_crash_lost_replays_after_the_retry(
        make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = fake(make_vault)
    lines = [json.dumps({"title": f"Fact {n}", "body": f"Fact number {n} holds."}) for n in range(3)]
    crash_once(monkeypatch, Journal, "append", lambda journal, events: True)
    with pytest.raises(OSError, match="simulated crash"):
        vault.import_jsonl(lines, "facts.jsonl")
    monkeypatch.undo()
    assert len(vault.scan().entries) == 3 and list(vault.journal.events()) == []
    result = vault.import_jsonl(lines, "facts.jsonl")  # the retry: the same texts become evidence
    assert result.added == [] and len(result.merged) == 3
    assert len(vault.scan().entries) == 3
    assert vault.replay_diff() == []
