"""Feedback: outcome counters, trial -> proven, superseding inferred memories, idempotency, rollback, replay."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vault_engine.errors import InvalidInput, MemoryNotFound, NothingToUndo
from vault_engine.format.ids import derived_event_id, is_valid_id
from vault_engine.format.memory import OUTCOMES, Memory
from vault_engine.history import replay
from vault_engine.journal import Event
from vault_engine.vault import NewMemory, Vault, apply_outcome

STAMP = datetime(2026, 11, 28, 10, 0, tzinfo=UTC)


def get(vault: Vault, memory_id: str) -> Memory:
    return vault.scan().get(memory_id).memory


def file_bytes(vault: Vault, memory_id: str) -> bytes:
    return (vault.root / vault.scan().get(memory_id).path).read_bytes()


def journal_bytes(vault: Vault) -> bytes:
    return b"".join(p.read_bytes() for p in vault.journal.files())


def counts(**non_zero: int) -> dict[str, int]:
    return {k: non_zero.get(k.replace("-", "_"), 0) for k in OUTCOMES}


def add(vault: Vault, text: str, authority: str = "inferred") -> str:
    return vault.add(NewMemory(text, authority=authority)).id


def deliver(vault: Vault, *memory_ids: str) -> str:
    """Append an application event (as the context director writes them); returns its id."""
    event = Event("application", memory_ids[0] if memory_ids else "",
                  {"ids": list(memory_ids), "task": "fix the tests", "project": None})
    vault.journal.append([event])
    return event.id


# ---------------------------------------------------------------- the pure plan


@pytest.mark.parametrize(("authority", "lifecycle", "outcome", "expected"), [
    ("inferred", "trial", "used-successfully", "proven"),
    ("inferred", "trial", "ignored", "trial"),
    ("inferred", "trial", "overridden", "trial"),
    ("inferred", "trial", "corrected", "superseded"),
    ("inferred", "proven", "contributed-to-failure", "superseded"),
    ("explicit", "proven", "corrected", "proven"),
    ("explicit", "proven", "contributed-to-failure", "proven"),
    ("explicit", "proven", "used-successfully", "proven"),
])
def test_apply_outcome(authority: str, lifecycle: str, outcome: str, expected: str) -> None:
    memory = Memory(id="m-a", title="A", type="fact", authority=authority, lifecycle=lifecycle)
    after = apply_outcome(memory, outcome, STAMP)
    assert after.lifecycle == expected
    assert after.applied == {**memory.applied, outcome: 1}
    assert after.last_applied == STAMP
    assert memory.applied[outcome] == 0  # the input is not changed


def test_derived_event_ids_are_stable_valid_and_distinct() -> None:
    first = derived_event_id("feedback", "e-app", "m-a", "ignored")
    assert first == derived_event_id("feedback", "e-app", "m-a", "ignored")
    assert first.startswith("e-") and len(first) == 28 and is_valid_id(first)
    others = {
        derived_event_id("feedback", "e-app", "m-a", "corrected"),
        derived_event_id("feedback", "e-app2", "m-a", "ignored"),
        derived_event_id("feedback", "e-app", "m-b", "ignored"),
        derived_event_id("feedback", "e-ap", "pm-a", "ignored"),
    }
    assert first not in others and len(others) == 4


# ---------------------------------------------------------------- lifecycle and counters


def test_used_successfully_promotes_trial_to_proven(vault: Vault) -> None:
    memory_id = add(vault, "The user seems to prefer small commits")
    assert get(vault, memory_id).lifecycle == "trial"
    result = vault.feedback(memory_id, "used-successfully")
    assert (result.action, result.old_lifecycle, result.lifecycle) == ("promoted", "trial", "proven")
    assert result.applied == counts(used_successfully=1)
    memory = get(vault, memory_id)
    assert memory.lifecycle == "proven" and memory.applied == counts(used_successfully=1)
    assert memory.last_applied is not None and memory.last_applied == result.last_applied
    again = vault.feedback(memory_id, "used-successfully")
    assert (again.action, again.lifecycle) == ("recorded", "proven")
    assert get(vault, memory_id).applied == counts(used_successfully=2)
    events = [e for e in vault.journal.events() if e.kind == "feedback"]
    assert [e.id for e in events] == [result.event, again.event]
    assert events[0].payload == {"outcome": "used-successfully", "authority": "inferred",
                                 "old_lifecycle": "trial", "lifecycle": "proven"}


@pytest.mark.parametrize("outcome", ["ignored", "overridden"])
@pytest.mark.parametrize("authority", ["inferred", "explicit"])
def test_ignored_and_overridden_only_count(vault: Vault, outcome: str, authority: str) -> None:
    memory_id = add(vault, "Deploys happen on Tuesdays", authority)
    before = get(vault, memory_id)
    result = vault.feedback(memory_id, outcome)
    assert result.action == "recorded" and result.lifecycle == before.lifecycle
    after = get(vault, memory_id)
    assert after.applied == {**before.applied, outcome: 1}
    assert after.replace(applied=before.applied, last_applied=None) == before
    assert after.updated == before.updated  # not a content change: recency is untouched


@pytest.mark.parametrize("outcome", ["corrected", "contributed-to-failure"])
def test_failure_outcomes_supersede_an_inferred_memory(vault: Vault, outcome: str) -> None:
    memory_id = add(vault, "The build probably uses make")
    vault.feedback(memory_id, "used-successfully")  # proven inferred memories are superseded too
    result = vault.feedback(memory_id, outcome)
    assert (result.action, result.old_lifecycle, result.lifecycle) == ("superseded", "proven", "superseded")
    memory = get(vault, memory_id)
    assert memory.lifecycle == "superseded" and memory.superseded_by is None
    assert memory.applied[outcome] == 1
    with pytest.raises(InvalidInput, match=f"{memory_id} is superseded; undo with `memvault rollback"):
        vault.feedback(memory_id, "ignored")


@pytest.mark.parametrize("outcome", ["corrected", "contributed-to-failure"])
def test_failure_outcomes_never_touch_an_explicit_memory(vault: Vault, outcome: str) -> None:
    memory_id = add(vault, "Always run the linter before pushing", "explicit")
    before = file_bytes(vault, memory_id)
    result = vault.feedback(memory_id, outcome)
    assert (result.action, result.lifecycle) == ("recorded", "proven")
    memory = get(vault, memory_id)
    assert memory.lifecycle == "proven" and memory.applied[outcome] == 1
    assert memory.body == "Always run the linter before pushing\n"
    # Only the counter lines differ.
    changed = set(file_bytes(vault, memory_id).splitlines()) ^ set(before.splitlines())
    assert all(line.lstrip().startswith((b"applied", b"last_applied", b"used-", b"ignored", b"overridden",
                                         b"corrected", b"contributed-")) for line in changed), changed


def test_counters_are_written_for_every_outcome(vault: Vault) -> None:
    memory_id = add(vault, "Ask before deleting branches", "explicit")
    for outcome in OUTCOMES:
        vault.feedback(memory_id, outcome)
    memory = get(vault, memory_id)
    assert memory.applied == {k: 1 for k in OUTCOMES}
    text = file_bytes(vault, memory_id).decode()
    assert "applied:" in text and "last_applied:" in text


# ---------------------------------------------------------------- application ids: idempotency


def test_the_same_outcome_for_one_application_counts_once(vault: Vault) -> None:
    memory_id = add(vault, "Prefer rebase over merge")
    application = deliver(vault, memory_id)
    first = vault.feedback(memory_id, "used-successfully", application=application)
    assert first.action == "promoted" and first.application == application
    assert first.event == derived_event_id("feedback", application, memory_id, "used-successfully")
    file_before, journal_before = file_bytes(vault, memory_id), journal_bytes(vault)
    second = vault.feedback(memory_id, "used-successfully", application=application)
    assert (second.action, second.lifecycle, second.event) == ("already-recorded", "proven", first.event)
    assert second.applied == counts(used_successfully=1)
    assert file_bytes(vault, memory_id) == file_before
    assert journal_bytes(vault) == journal_before
    # Another outcome for the same application, or the same outcome for another one, counts.
    assert vault.feedback(memory_id, "ignored", application=application).action == "recorded"
    other = deliver(vault, memory_id)
    assert vault.feedback(memory_id, "used-successfully", application=other).applied["used-successfully"] == 2


def test_a_repeated_superseding_feedback_is_already_recorded_not_an_error(vault: Vault) -> None:
    memory_id = add(vault, "Tabs, probably")
    application = deliver(vault, memory_id)
    assert vault.feedback(memory_id, "corrected", application=application).action == "superseded"
    journal_before = journal_bytes(vault)
    again = vault.feedback(memory_id, "corrected", application=application)
    assert again.action == "already-recorded" and again.applied["corrected"] == 1
    assert journal_bytes(vault) == journal_before


def test_without_an_application_every_call_counts(vault: Vault) -> None:
    memory_id = add(vault, "Use uv for environments", "explicit")
    first = vault.feedback(memory_id, "ignored")
    second = vault.feedback(memory_id, "ignored")
    assert first.event != second.event
    assert get(vault, memory_id).applied == counts(ignored=2)


def test_application_must_have_delivered_the_memory(vault: Vault) -> None:
    delivered = add(vault, "Delivered memory")
    other = add(vault, "Never delivered")
    application = deliver(vault, delivered)
    before = file_bytes(vault, other), journal_bytes(vault)
    with pytest.raises(InvalidInput, match=f"memory {other} was not delivered in application {application}$"):
        vault.feedback(other, "ignored", application=application)
    with pytest.raises(InvalidInput, match=f"memory {other} was not delivered in application e-nope"):
        vault.feedback(other, "ignored", application="e-nope")
    add_event = next(e.id for e in vault.journal.events() if e.kind == "add")
    with pytest.raises(InvalidInput, match="is a add event, not an application"):
        vault.feedback(other, "ignored", application=add_event)
    assert (file_bytes(vault, other), journal_bytes(vault)) == before


def test_application_with_a_malformed_ids_payload(vault: Vault) -> None:
    memory_id = add(vault, "Some memory")
    event = Event("application", memory_id, {"ids": memory_id})  # a string, not a list
    vault.journal.append([event])
    with pytest.raises(InvalidInput, match="was not delivered"):
        vault.feedback(memory_id, "ignored", application=event.id)


# ---------------------------------------------------------------- refusals


def test_invalid_outcome(vault: Vault) -> None:
    memory_id = add(vault, "Anything")
    with pytest.raises(InvalidInput, match="unknown outcome 'worked'; expected one of used-successfully, ignored"):
        vault.feedback(memory_id, "worked")


def test_unknown_and_malformed_ids(vault: Vault) -> None:
    with pytest.raises(MemoryNotFound):
        vault.feedback("m-does-not-exist", "ignored")
    with pytest.raises(InvalidInput, match="not a memory id"):
        vault.feedback("../escape", "ignored")


def test_trashed_memory_is_refused(vault: Vault) -> None:
    memory_id = add(vault, "Soon forgotten")
    vault.forget(memory_id)
    with pytest.raises(InvalidInput, match="is in the trash; restore it"):
        vault.feedback(memory_id, "ignored")


def test_memory_superseded_by_a_correction_points_at_the_newer_one(vault: Vault) -> None:
    memory_id = add(vault, "Old wording")
    new = vault.correct(memory_id, "New wording")
    with pytest.raises(InvalidInput, match=f"is superseded; give feedback on {new.id}"):
        vault.feedback(memory_id, "ignored")


def test_plain_note_is_refused_and_left_alone(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={"memories/global/note.md": "# A plain note\n\nJust prose.\n"})
    note = next(iter(vault.scan().entries.values())).memory
    assert note.plain
    with pytest.raises(InvalidInput, match="plain note"):
        vault.feedback(note.id, "ignored")
    assert (vault.root / "memories/global/note.md").read_text() == "# A plain note\n\nJust prose.\n"


# ---------------------------------------------------------------- rollback


def test_rollback_of_a_superseding_feedback_restores_the_lifecycle(vault: Vault) -> None:
    memory_id = add(vault, "Probably prefers dark mode")
    vault.feedback(memory_id, "contributed-to-failure")
    result = vault.rollback(memory_id)
    assert (result.action, result.id, result.related) == ("reinstated", memory_id, None)
    memory = get(vault, memory_id)
    assert memory.lifecycle == "trial" and memory.superseded_by is None
    assert memory.applied["contributed-to-failure"] == 1  # the report stays counted
    assert vault.replay_diff() == []
    nothing = f"no correction, forget, superseding feedback or governance action of {memory_id}"
    with pytest.raises(NothingToUndo, match=nothing):
        vault.rollback(memory_id)
    assert vault.feedback(memory_id, "used-successfully").action == "promoted"


def test_rollback_ignores_feedback_that_did_not_supersede(vault: Vault) -> None:
    inferred = add(vault, "Inferred and used")
    explicit = add(vault, "Explicit and corrected", "explicit")
    vault.feedback(inferred, "used-successfully")
    vault.feedback(explicit, "corrected")
    for memory_id in (inferred, explicit):
        with pytest.raises(NothingToUndo):
            vault.rollback(memory_id)


def test_rollback_undoes_the_latest_change_first(vault: Vault) -> None:
    memory_id = add(vault, "Layered history")
    vault.feedback(memory_id, "corrected")
    vault.rollback(memory_id)
    vault.forget(memory_id)
    assert vault.rollback(memory_id).action == "restored"
    with pytest.raises(NothingToUndo):
        vault.rollback(memory_id)  # the feedback was undone already
    assert get(vault, memory_id).lifecycle == "trial"


def test_rollback_of_feedback_when_edited_by_hand_since(vault: Vault) -> None:
    memory_id = add(vault, "Edited by hand later")
    vault.feedback(memory_id, "corrected")
    path: Path = vault.root / vault.scan().get(memory_id).path
    path.write_text(path.read_text().replace("lifecycle: superseded", "lifecycle: proven"))
    with pytest.raises(NothingToUndo, match="no longer superseded"):
        vault.rollback(memory_id)


# ---------------------------------------------------------------- journal replay


def test_replay_agrees_after_a_mix_of_feedback_rollback_and_correct(vault: Vault) -> None:
    a = add(vault, "Inferred A")
    b = add(vault, "Explicit B", "explicit")
    c = add(vault, "Inferred C")
    application = deliver(vault, a, b, c)
    vault.feedback(a, "used-successfully", application=application)
    vault.feedback(a, "used-successfully", application=application)  # counted once
    vault.feedback(b, "corrected", application=application)
    vault.feedback(b, "ignored")
    vault.feedback(c, "contributed-to-failure", application=application)
    vault.rollback(c)
    vault.feedback(c, "overridden")
    vault.feedback(c, "corrected")  # superseded again, and kept so
    corrected = vault.correct(a, "Inferred A, as the user put it")
    vault.feedback(corrected.id, "ignored")
    vault.rollback(corrected.id)
    vault.feedback(a, "ignored")
    assert vault.replay_diff() == []
    states = replay(vault.journal.events())
    assert states[a].applied == counts(used_successfully=1, ignored=1) and states[a].lifecycle == "proven"
    assert states[b].applied == counts(corrected=1, ignored=1) and states[b].lifecycle == "proven"
    assert states[c].applied == counts(contributed_to_failure=1, overridden=1, corrected=1)
    assert states[c].lifecycle == "superseded"
    for memory_id in (a, b, c):
        memory = get(vault, memory_id)
        assert (memory.lifecycle, memory.applied) == (states[memory_id].lifecycle, states[memory_id].applied)


def test_replay_apply_restores_counters_edited_away(vault: Vault) -> None:
    memory_id = add(vault, "Counted memory")
    vault.feedback(memory_id, "used-successfully")
    vault.feedback(memory_id, "ignored")
    path = vault.root / vault.scan().get(memory_id).path
    text = path.read_text()
    path.write_text(text.replace("lifecycle: proven", "lifecycle: trial").replace("ignored: 1", "ignored: 5"))
    keys = {d.key for d in vault.replay_diff()}
    assert keys == {"lifecycle", "applied"}
    vault.replay_apply()
    memory = get(vault, memory_id)
    assert memory.lifecycle == "proven" and memory.applied == counts(used_successfully=1, ignored=1)


def test_replay_follows_a_hand_written_memory(make_vault: Callable[..., Vault]) -> None:
    """A file written by hand has no add event; the feedback event records what the engine decided from."""
    text = ("---\nid: m-hand\ntitle: Hand written\ntype: fact\nauthority: explicit\nlifecycle: proven\n---\n"
            "Written in an editor.\n")
    vault = make_vault(files={"memories/global/hand.md": text})
    assert vault.feedback("m-hand", "corrected").lifecycle == "proven"
    assert vault.replay_diff() == []
    assert replay(vault.journal.events())["m-hand"].lifecycle == "proven"
