"""Reflection: learning deltas for inferred memories from journal events, applied with guards and retried."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from vault_engine.errors import InvalidInput, LlmUnavailable, ReflectionFailed
from vault_engine.ingest.reflection import MAX_ATTEMPTS, STATE_FILE, reflect
from vault_engine.journal import Event
from vault_engine.llm.base import Delta
from vault_engine.llm.fakes import UnusedLlm
from vault_engine.llm.offline import OfflineLlm
from vault_engine.store import STATE_DIR
from vault_engine.vault import NewMemory, Vault

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


class FakeLlm(UnusedLlm):
    """Answers ``reflect`` with the deltas given (or a function of the memories), or fails; records calls."""

    def __init__(self, deltas: Sequence[Delta] | Callable[[Sequence[Mapping[str, Any]]], list[Delta]] = (),
                 fail: bool = False):
        self.deltas = deltas
        self.fail = fail
        self.calls: list[tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]] = []

    def reflect(self, evidence: Sequence[Mapping[str, Any]], memories: Sequence[Mapping[str, Any]]) -> list[Delta]:
        self.calls.append((list(evidence), list(memories)))
        if self.fail:
            raise LlmUnavailable("Anthropic API overloaded (529) after 4 attempts")
        return self.deltas(memories) if callable(self.deltas) else list(self.deltas)


def remember(vault: Vault, text: str, authority: str = "inferred") -> str:
    return vault.add(NewMemory(text=text, authority=authority)).id


def events(vault: Vault, kind: str) -> list[Event]:
    return list(vault.journal.events((kind,)))


def memory_files(vault: Vault) -> dict[str, bytes]:
    return {str(p.relative_to(vault.root)): p.read_bytes() for p in sorted(vault.root.rglob("*.md"))
            if STATE_DIR not in p.parts}


def journal_bytes(vault: Vault) -> bytes:
    return b"".join(p.read_bytes() for p in vault.journal.files())


# ---------------------------------------------------------------- the offline rules


def test_offline_forgets_an_inferred_memory_ignored_twice_and_never_used() -> None:
    memories = [
        {"id": "m-a", "authority": "inferred", "lifecycle": "trial", "applied": {"ignored": 1, "overridden": 1}},
        {"id": "m-b", "authority": "inferred", "lifecycle": "trial",
         "applied": {"ignored": 3, "used-successfully": 1}},
        {"id": "m-c", "authority": "explicit", "lifecycle": "proven", "applied": {"ignored": 5}},
        {"id": "m-d", "authority": "inferred", "lifecycle": "superseded", "applied": {"corrected": 1}},
        {"id": "m-e", "authority": "inferred", "lifecycle": "trial", "applied": {"ignored": 1}},
    ]
    deltas = OfflineLlm().reflect([], memories)
    assert [(d.op, d.target) for d in deltas] == [("forget", "m-a"), ("noop", "m-d")]
    assert "2 times" in deltas[0].reason


def test_offline_reflection_end_to_end(vault: Vault) -> None:
    shaky = remember(vault, "Builds are faster with the cache disabled.")
    steady = remember(vault, "Run the linter before pushing.", authority="explicit")
    for memory_id in (shaky, shaky, steady, steady):
        vault.feedback(memory_id, "ignored")
    report = reflect(vault, llm=OfflineLlm(), now=T0)
    assert [(o.action, o.id) for o in report.outcomes] == [("forgotten", shaky)]
    assert vault.entry(shaky).in_trash and not vault.entry(steady).in_trash
    assert vault.replay_diff() == []
    assert reflect(vault, llm=OfflineLlm(), now=T0).outcomes == []  # its own forget is not evidence


# ---------------------------------------------------------------- each delta on inferred memories


def test_create_adds_an_inferred_trial_memory(vault: Vault) -> None:
    seen = remember(vault, "Deploys go out on Tuesdays.")
    vault.feedback(seen, "overridden")
    llm = FakeLlm([Delta("create", None, "Deploy day", "Deploys go out on Thursdays since March.", "overridden")])
    report = reflect(vault, llm=llm, now=T0)
    created = report.outcomes[0]
    assert created.action == "created"
    memory = vault.entry(str(created.id)).memory
    assert (memory.authority, memory.lifecycle, memory.source, memory.title) == (
        "inferred", "trial", "reflection", "Deploy day")
    [event] = events(vault, "reflection")
    assert event.payload["model"] == "fake" and event.payload["deltas"][0]["action"] == "created"
    assert report.event == event.id
    assert vault.replay_diff() == []


def test_update_writes_a_new_trial_version_and_supersedes_the_old(vault: Vault) -> None:
    old = remember(vault, "The staging database is on port 5433.")
    vault.feedback(old, "used-successfully")  # proven now
    vault.feedback(old, "overridden")
    llm = FakeLlm([Delta("update", old, "", "The staging database is on port 6543.", "overridden: port moved")])
    [outcome] = reflect(vault, llm=llm, now=T0).outcomes
    assert outcome.action == "updated"
    new = vault.entry(str(outcome.id)).memory
    assert (new.authority, new.lifecycle, new.supersedes, new.source) == ("inferred", "trial", old, "reflection")
    assert new.body == "The staging database is on port 6543.\n"
    assert new.applied == {k: 0 for k in new.applied}
    before = vault.entry(old).memory
    assert (before.lifecycle, before.superseded_by) == ("superseded", new.id)
    assert vault.replay_diff() == []
    # The update is a journaled action: rollback undoes it.
    vault.rollback(old)
    assert vault.entry(old).memory.lifecycle == "proven" and vault.entry(new.id).in_trash
    assert vault.replay_diff() == []


def test_supersede_and_forget_an_inferred_memory(vault: Vault) -> None:
    stale = remember(vault, "Use Python 3.9 for the API service.")
    useless = remember(vault, "The office plant needs water.")
    vault.feedback(stale, "ignored")
    vault.feedback(useless, "ignored")
    llm = FakeLlm([Delta("supersede", stale, reason="the service moved to 3.12"),
                   Delta("forget", useless, reason="never relevant"), Delta("noop", None, reason="nothing else")])
    report = reflect(vault, llm=llm, now=T0)
    assert [o.action for o in report.outcomes] == ["superseded", "forgotten", "noop"]
    assert vault.entry(stale).memory.lifecycle == "superseded"
    assert vault.entry(useless).in_trash
    assert vault.replay_diff() == []


@pytest.mark.parametrize("op", ["update", "supersede", "forget"])
def test_inference_never_changes_an_explicit_memory(vault: Vault, op: str) -> None:
    rule = remember(vault, "Never push directly to main.", authority="explicit")
    vault.feedback(rule, "overridden")
    files = memory_files(vault)
    llm = FakeLlm([Delta(op, rule, "Pushing", "Push to main when tests pass.", "overridden once")])
    [outcome] = reflect(vault, llm=llm, now=T0).outcomes
    assert outcome.action == "conflict"
    assert memory_files(vault) == files  # byte for byte
    [conflict] = events(vault, "conflict")
    assert conflict.memory == rule
    payload = conflict.payload
    assert (payload["op"], payload["reason"], payload["by"]) == (op, "overridden once", "fake")
    assert conflict.payload["text"] == "Push to main when tests pass."
    assert vault.replay_diff() == []


def test_a_target_not_shown_or_gone_is_skipped(vault: Vault) -> None:
    shown = remember(vault, "Reviews need two approvals.")
    other = remember(vault, "Lunch is at noon.")
    vault.feedback(shown, "ignored")
    llm = FakeLlm([Delta("forget", other, reason="?"), Delta("update", "m-nope", text="x", reason="?")])
    report = reflect(vault, llm=llm, now=T0)
    assert [(o.action, o.note) for o in report.outcomes] == [
        ("skipped", "not among the memories reflected on")] * 2
    assert not vault.entry(other).in_trash


def test_an_unusable_delta_is_skipped_and_the_rest_applied(vault: Vault) -> None:
    seen = remember(vault, "Cache keys include the branch.")
    vault.feedback(seen, "ignored")
    llm = FakeLlm([Delta("create", None, "", "Just this once, skip the cache.", "one-off"),
                   Delta("supersede", seen, reason="no longer true")])
    report = reflect(vault, llm=llm, now=T0)
    assert [o.action for o in report.outcomes] == ["skipped", "superseded"]
    assert "one-off" in report.outcomes[0].note


# ---------------------------------------------------------------- the evidence and the watermark


def test_evidence_and_memories_shown_to_the_model(vault: Vault) -> None:
    memory_id = remember(vault, "Integration tests need the docker daemon.")
    application = Event("application", memory_id, {"ids": [memory_id], "task": "fix the flaky CI job"})
    vault.journal.append([application])
    vault.feedback(memory_id, "contributed-to-failure", application=application.id)
    corrected = remember(vault, "Tabs for indentation.", authority="explicit")
    fixed = vault.correct(corrected, "Four spaces for indentation.")
    llm = FakeLlm()
    reflect(vault, llm=llm, now=T0)
    [(evidence, memories)] = llm.calls
    assert [e["kind"] for e in evidence] == ["feedback", "correct"]
    assert evidence[0]["payload"]["task"] == {"task": "fix the flaky CI job"}
    assert set(evidence[0]) == {"kind", "memory", "payload", "ts"}
    assert [m["id"] for m in memories] == [memory_id, corrected, fixed.id]
    first = memories[0]
    assert (first["authority"], first["lifecycle"], first["applied"]) == (
        "inferred", "superseded", {"contributed-to-failure": 1})
    assert first["text"] == "Integration tests need the docker daemon."


def test_the_watermark_reflects_on_each_event_once(vault: Vault) -> None:
    memory_id = remember(vault, "Release notes live in CHANGES.md.")
    vault.feedback(memory_id, "ignored")
    llm = FakeLlm()
    assert reflect(vault, llm=llm, now=T0).evidence == 1
    report = reflect(vault, llm=llm, now=T0)
    assert (len(llm.calls), report.evidence, report.event) == (1, 0, None)
    assert len(events(vault, "reflection")) == 1
    vault.feedback(memory_id, "used-successfully")
    reflect(vault, llm=llm, now=T0)
    assert [e["payload"]["outcome"] for e in llm.calls[1][0]] == ["used-successfully"]
    state = json.loads((vault.root / STATE_DIR / STATE_FILE).read_text())
    assert state == {"last_event": events(vault, "feedback")[-1].id, "failures": 0, "next_try": None}


def test_dry_run_writes_nothing(vault: Vault) -> None:
    memory_id = remember(vault, "Docs are built with mkdocs.")
    rule = remember(vault, "Sign every commit.", authority="explicit")
    vault.feedback(memory_id, "ignored")
    vault.feedback(rule, "ignored")
    files, journal = memory_files(vault), journal_bytes(vault)
    llm = FakeLlm([Delta("forget", memory_id, reason="r"), Delta("forget", rule, reason="r"),
                   Delta("create", None, "", "Docs are built with sphinx.", "r")])
    report = reflect(vault, llm=llm, now=T0, dry_run=True)
    assert [o.action for o in report.outcomes] == ["forget", "conflict", "create"]
    assert (memory_files(vault), journal_bytes(vault)) == (files, journal)
    assert not (vault.root / STATE_DIR / STATE_FILE).exists()


def test_learning_off_reflects_nothing(vault: Vault) -> None:
    config = dataclasses.replace(vault.config, vault=dataclasses.replace(vault.config.vault, learning=False))
    with pytest.raises(InvalidInput, match="learning is off"):
        reflect(Vault(vault.root, config), llm=FakeLlm(), now=T0)


# ---------------------------------------------------------------- failures: journaled, retried with backoff


def test_a_failed_reflection_is_journaled_and_retried_with_backoff(vault: Vault) -> None:
    memory_id = remember(vault, "The nightly job runs at 02:00.")
    vault.feedback(memory_id, "ignored")
    down = FakeLlm(fail=True)
    with pytest.raises(ReflectionFailed) as info:
        reflect(vault, llm=down, now=T0)
    assert (info.value.attempt, info.value.next_try, info.value.exit_code) == (1, T0 + timedelta(minutes=1), 75)
    [failed] = events(vault, "reflection-failed")
    assert (failed.payload["attempt"], failed.payload["next_try"]) == (1, "2030-01-01T12:01:00Z")
    assert "overloaded" in failed.payload["error"]
    state = json.loads((vault.root / STATE_DIR / STATE_FILE).read_text())
    assert (state["failures"], state["next_try"]) == (1, "2030-01-01T12:01:00Z")

    early = reflect(vault, llm=down, now=T0 + timedelta(seconds=30))  # before next_try: the model is not asked
    assert (early.deferred_until, early.failures, len(down.calls)) == (T0 + timedelta(minutes=1), 1, 1)
    with pytest.raises(ReflectionFailed) as info:
        reflect(vault, llm=down, now=T0 + timedelta(minutes=1))
    assert (info.value.attempt, info.value.next_try) == (2, T0 + timedelta(minutes=3))  # waited 2 more

    up = FakeLlm([Delta("forget", memory_id, reason="ignored")])
    report = reflect(vault, llm=up, now=T0 + timedelta(minutes=3))  # the events were kept: nothing lost
    assert [o.action for o in report.outcomes] == ["forgotten"]
    assert [e["kind"] for e in up.calls[0][0]] == ["feedback"]
    assert json.loads((vault.root / STATE_DIR / STATE_FILE).read_text())["failures"] == 0
    assert vault.replay_diff() == []


def test_after_eight_failures_the_window_is_skipped(vault: Vault) -> None:
    memory_id = remember(vault, "Secrets live in the vault service.")
    vault.feedback(memory_id, "ignored")
    down = FakeLlm(fail=True)
    waits = []
    stamp = T0
    for attempt in range(1, MAX_ATTEMPTS + 1):
        with pytest.raises(ReflectionFailed) as info:
            reflect(vault, llm=down, now=stamp)
        assert info.value.attempt == attempt
        if info.value.next_try is not None:
            waits.append(int((info.value.next_try - stamp).total_seconds() // 60))
            stamp = info.value.next_try
    assert waits == [1, 2, 4, 8, 16, 32, 64]
    assert info.value.next_try is None and "skipped 1 events" in str(info.value)
    last = events(vault, "reflection-failed")[-1]
    assert (last.payload["attempt"], last.payload["skipped"]) == (MAX_ATTEMPTS, True)
    assert len(events(vault, "reflection-failed")) == MAX_ATTEMPTS
    assert reflect(vault, llm=down, now=stamp).evidence == 0  # skipped: not asked again
    assert len(down.calls) == MAX_ATTEMPTS
    vault.feedback(memory_id, "ignored")  # new evidence starts a new window
    reflect(vault, llm=FakeLlm(), now=stamp)


def test_a_dry_run_failure_is_not_journaled(vault: Vault) -> None:
    memory_id = remember(vault, "The wiki moved to Notion.")
    vault.feedback(memory_id, "ignored")
    with pytest.raises(LlmUnavailable):
        reflect(vault, llm=FakeLlm(fail=True), now=T0, dry_run=True)
    assert events(vault, "reflection-failed") == []


# ---------------------------------------------------------------- the command line


def test_cli_reflect_offline(vault: Vault, run_cli: Callable[..., Result]) -> None:
    memory_id = remember(vault, "Benchmarks run on the big runner.")
    vault.feedback(memory_id, "ignored")
    result = run_cli("reflect")
    assert result.exit_code == 0 and "nothing to learn from 1 events" in result.output
    vault.feedback(memory_id, "overridden")
    result = run_cli("reflect", "--dry-run")
    assert result.exit_code == 0
    assert f"forget     {memory_id}  ignored or overridden 2 times" in result.output
    assert "dry run" in result.output and not vault.entry(memory_id).in_trash
    result = run_cli("reflect", "--json")
    data = json.loads(result.output)
    assert [(d["op"], d["action"], d["id"]) for d in data["deltas"]] == [("forget", "forgotten", memory_id)]
    assert data["model"] == "offline" and data["evidence"] == 1
    assert run_cli("reflect").output.strip() == "nothing to learn"


def test_cli_reflect_model_down_exits_75(vault: Vault, run_cli: Callable[..., Result],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    memory_id = remember(vault, "Use the staging bucket for uploads.")
    vault.feedback(memory_id, "ignored")
    monkeypatch.setattr(Vault, "llm", lambda self: FakeLlm(fail=True))
    result = run_cli("reflect")
    assert result.exit_code == 75
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "attempt 1 of 8" in lines[0] and "will retry after" in lines[0]
    result = run_cli("reflect")
    assert result.exit_code == 0 and result.output.startswith("deferred until ")


def test_reflect_json_state_file_is_in_the_state_folder(vault: Vault) -> None:
    memory_id = remember(vault, "Feature flags live in flags.yaml.")
    vault.feedback(memory_id, "ignored")
    reflect(vault, llm=FakeLlm(), now=T0)
    assert Path(vault.root / STATE_DIR / STATE_FILE).is_file()
