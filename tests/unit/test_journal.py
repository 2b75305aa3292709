"""The journal: append-only JSONL, dedup by event id, torn lines, scrub and replay."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vault_engine import fsio, locks
from vault_engine.errors import JournalError
from vault_engine.format.memory import OUTCOMES
from vault_engine.history import MemoryState, forgotten_digests, replay
from vault_engine.journal import Event, Journal, hash_text

NOV = "2026-11-28T10:02:11Z"
DEC = "2026-12-01T08:00:00Z"


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "journal")


def ev(kind: str, memory: str, event_id: str, ts: str = NOV, /, **payload: object) -> Event:
    return Event(kind, memory, dict(payload), id=event_id, ts=ts)


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# ---------------------------------------------------------------- append


def test_append_writes_one_line_per_event_into_the_month_file(journal: Journal) -> None:
    events = [
        ev("add", "m-a", "e-1", title="Use pytest", lifecycle="trial"),
        ev("feedback", "m-a", "e-2", outcome="ignored"),
        ev("add", "m-b", "e-3", DEC, title="Later"),
    ]
    written = journal.append(events)
    assert written == events
    assert [p.name for p in journal.files()] == ["2026-11.jsonl", "2026-12.jsonl"]
    november = journal.folder / "2026-11.jsonl"
    assert november.read_text(encoding="utf-8") == events[0].to_line() + events[1].to_line()
    record = json.loads(lines_of(november)[0])
    assert record == {
        "id": "e-1", "kind": "add", "memory": "m-a", "ts": NOV,
        "payload": {"title": "Use pytest", "lifecycle": "trial"},
    }
    assert lines_of(journal.folder / "2026-12.jsonl") == [events[2].to_line().rstrip("\n")]
    assert list(journal.events()) == events
    assert journal.warnings == []


def test_event_lines_are_canonical_json() -> None:
    line = ev("add", "m-a", "e-1", title="日本語 😀", b=1, a=2).to_line()
    assert line.endswith("\n") and line.count("\n") == 1
    assert line.startswith('{"id":"e-1",')
    assert "日本語 😀" in line  # not \u-escaped
    assert '"payload":{"a":2,"b":1,"title"' in line


def test_default_event_has_fresh_id_and_current_timestamp() -> None:
    first, second = Event("add", "m-a"), Event("add", "m-a")
    assert first.id.startswith("e-") and first.id != second.id
    assert first.ts.endswith("Z")
    stamp = datetime.fromisoformat(first.ts.replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - stamp).total_seconds()) < 60
    assert first.month == first.ts[:7]


def test_appending_the_same_event_id_twice_is_a_no_op(journal: Journal) -> None:
    event = ev("feedback", "m-a", "e-1", outcome="used-successfully")
    assert journal.append([event]) == [event]
    assert journal.append([event]) == []
    same_id_other_content = ev("feedback", "m-a", "e-1", outcome="ignored")
    assert journal.append([same_id_other_content]) == []
    assert len(lines_of(journal.folder / "2026-11.jsonl")) == 1


def test_duplicate_ids_within_one_batch_are_written_once(journal: Journal) -> None:
    event = ev("evidence", "m-a", "e-1")
    assert journal.append([event, event, ev("evidence", "m-a", "e-2")]) == [event, ev("evidence", "m-a", "e-2")]
    assert [e.id for e in journal.events()] == ["e-1", "e-2"]


def test_dedup_holds_across_instances_and_months(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    Journal(folder).append([ev("add", "m-a", "e-1", NOV)])
    reopened = Journal(folder)
    # The same id with another month would go to another file: still a no-op.
    assert reopened.append([ev("add", "m-a", "e-1", DEC)]) == []
    assert reopened.append([ev("add", "m-b", "e-2", DEC)]) != []
    assert Journal(folder).append([ev("add", "m-b", "e-2", DEC), ev("add", "m-a", "e-1")]) == []
    assert [e.id for e in Journal(folder).events()] == ["e-1", "e-2"]


def test_dedup_sees_events_another_writer_appended(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    mine, theirs = Journal(folder), Journal(folder)
    mine.append([ev("add", "m-a", "e-1")])
    assert mine.known_ids() == {"e-1"}  # cached now
    theirs.append([ev("add", "m-b", "e-2")])
    assert mine.append([ev("add", "m-b", "e-2")]) == []


def test_a_failed_write_does_not_mark_the_id_as_written(journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    journal.append([ev("add", "m-a", "e-0")])
    real = fsio.append_line

    def broken(target: Path, line: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsio, "append_line", broken)
    with pytest.raises(OSError):
        journal.append([ev("add", "m-a", "e-1")])
    monkeypatch.setattr(fsio, "append_line", real)
    assert [e.id for e in journal.append([ev("add", "m-a", "e-1")])] == ["e-1"]
    assert [e.id for e in journal.events()] == ["e-0", "e-1"]


@pytest.mark.parametrize("ts", ["", "garbage", "../../x", "2026/11/28T00:00:00Z"])
def test_an_event_timestamp_never_names_a_file_outside_the_journal(journal: Journal, ts: str) -> None:
    with pytest.raises(JournalError):
        journal.append([ev("add", "m-a", "e-1", ts)])
    assert journal.files() == []
    assert not any(journal.folder.parent.rglob("*.jsonl"))


def test_empty_journal(journal: Journal) -> None:
    assert journal.files() == []
    assert list(journal.events()) == []
    assert journal.known_ids() == set()
    assert journal.append([]) == []
    assert journal.scrub({"m-a"}) == 0


# ---------------------------------------------------------------- torn and invalid lines


def tear_last_line(path: Path, keep: int = 25) -> bytes:
    """Cut the file inside its last line, as a crash mid-append would."""
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: start + keep])
    return data[start : start + keep]


def test_torn_last_line_is_skipped_with_a_warning(journal: Journal, caplog: pytest.LogCaptureFixture) -> None:
    journal.append([ev("add", "m-a", "e-1"), ev("feedback", "m-a", "e-2", outcome="ignored")])
    path = journal.folder / "2026-11.jsonl"
    tear_last_line(path)
    with caplog.at_level(logging.WARNING, logger="vault_engine.journal"):
        assert [e.id for e in journal.events()] == ["e-1"]
    assert journal.warnings == ["journal/2026-11.jsonl:2: torn last line skipped"]
    assert "torn last line" in caplog.text


def test_next_append_after_a_torn_line_starts_on_a_fresh_line(journal: Journal) -> None:
    journal.append([ev("add", "m-a", "e-1"), ev("feedback", "m-a", "e-2", outcome="ignored")])
    path = journal.folder / "2026-11.jsonl"
    torn = tear_last_line(path)
    assert Journal(journal.folder).append([ev("evidence", "m-a", "e-3")]) != []
    raw = path.read_bytes().split(b"\n")
    assert raw == [raw[0], torn, ev("evidence", "m-a", "e-3").to_line().rstrip("\n").encode(), b""]
    reader = Journal(journal.folder)
    assert [e.id for e in reader.events()] == ["e-1", "e-3"]
    assert reader.warnings == ["journal/2026-11.jsonl:2: invalid line skipped"]


def test_the_event_of_a_torn_line_can_be_written_again(journal: Journal) -> None:
    """A retried operation reuses its event id; the torn copy must not swallow it."""
    torn_event = ev("feedback", "m-a", "e-2", outcome="used-successfully")
    journal.append([ev("add", "m-a", "e-1"), torn_event])
    tear_last_line(journal.folder / "2026-11.jsonl", keep=30)  # keeps '{"id":"e-2",...'
    reopened = Journal(journal.folder)
    assert "e-2" not in reopened.known_ids()
    assert reopened.append([torn_event]) == [torn_event]
    assert [e.id for e in reopened.events()] == ["e-1", "e-2"]
    assert replay(reopened.events())["m-a"].applied["used-successfully"] == 1


def test_invalid_middle_lines_are_skipped(journal: Journal) -> None:
    journal.folder.mkdir(parents=True)
    good = [ev("add", "m-a", "e-1"), ev("evidence", "m-a", "e-2"), ev("evidence", "m-a", "e-3")]
    (journal.folder / "2026-11.jsonl").write_bytes(
        good[0].to_line().encode()
        + b"not json at all\n"
        + b'{"id": "e-x", "kind": "add"}\n'  # JSON, but not an event
        + b'["a list"]\n'
        + b'{"id":"e-y","kind":"add","memory":"m-a","payload":"text","ts":"2026-11-28T00:00:00Z"}\n'
        + b"\xff\xfe broken bytes\n"
        + good[1].to_line().encode()
        + b"\n   \n"  # blank lines are not events and not warnings
        + good[2].to_line().encode()
    )
    assert list(journal.events()) == good
    assert journal.warnings == [f"journal/2026-11.jsonl:{n}: invalid line skipped" for n in (2, 3, 4, 5, 6)]
    assert journal.known_ids() == {"e-1", "e-2", "e-3"}


def repairing(folder: Path) -> Journal:
    """A journal as an open vault has it: with the writer lock and a folder for the lines a repair moves."""
    return Journal(folder, lock=locks.WriterLock(folder.parent / ".memvault" / "lock", 1.0),
                   aside=folder.parent / ".memvault" / "journal-damaged")


def test_a_torn_line_is_moved_aside_once_and_later_reads_are_silent(
        journal: Journal, caplog: pytest.LogCaptureFixture) -> None:
    journal.append([ev("add", "m-a", "e-1"), ev("feedback", "m-a", "e-2", outcome="ignored")])
    path = journal.folder / "2026-11.jsonl"
    torn = tear_last_line(path)
    with caplog.at_level(logging.WARNING, logger="vault_engine.journal"):
        reader = repairing(journal.folder)
        assert [e.id for e in reader.events()] == ["e-1"]
        [message] = reader.warnings
        assert message.startswith("journal/2026-11.jsonl:2: torn last line moved to "
                                  ".memvault/journal-damaged/2026-11.e-")
        assert caplog.messages == [message]
        caplog.clear()
        # Later readers, with or without the repair, meet nothing to warn about.
        for later in (repairing(journal.folder), Journal(journal.folder)):
            assert [e.id for e in later.events() if e.kind != "journal-repair"] == ["e-1"]
            assert later.warnings == []
        assert caplog.messages == []
    [kept] = (journal.folder.parent / ".memvault" / "journal-damaged").iterdir()
    assert kept.read_bytes() == torn + b"\n"  # nothing is lost
    [repair] = [e for e in Journal(journal.folder).events() if e.kind == "journal-repair"]
    assert repair.payload == {"file": "journal/2026-11.jsonl", "lines": [2], "bytes": len(torn) + 1,
                              "sha256": hashlib.sha256(torn + b"\n").hexdigest(),
                              "kept": f".memvault/journal-damaged/{kept.name}"}
    assert all(json.loads(line) for line in lines_of(path))


def test_an_invalid_line_is_repaired_before_the_next_append(journal: Journal) -> None:
    journal.append([ev("add", "m-a", "e-1")])
    path = journal.folder / "2026-11.jsonl"
    path.write_bytes(path.read_bytes() + b"not json at all\n")
    writer = repairing(journal.folder)
    assert writer.append([ev("evidence", "m-a", "e-2")]) == [ev("evidence", "m-a", "e-2")]
    assert writer.warnings and "journal/2026-11.jsonl:2: invalid line moved to" in writer.warnings[0]
    assert sorted(e.kind for e in Journal(journal.folder).events()) == ["add", "evidence", "journal-repair"]
    assert lines_of(path) == [ev("add", "m-a", "e-1").to_line().strip(), ev("evidence", "m-a", "e-2").to_line().strip()]


def test_a_torn_line_met_while_another_writer_holds_the_lock_is_only_skipped(journal: Journal) -> None:
    journal.append([ev("add", "m-a", "e-1"), ev("feedback", "m-a", "e-2", outcome="ignored")])
    path = journal.folder / "2026-11.jsonl"
    tear_last_line(path)
    before = path.read_bytes()
    reader = repairing(journal.folder)
    assert reader.lock is not None
    with locks.WriterLock(reader.lock.path, 1.0).hold():  # another process appending right now
        assert [e.id for e in reader.events()] == ["e-1"]
    assert reader.warnings == ["journal/2026-11.jsonl:2: torn last line skipped"]
    assert path.read_bytes() == before


def test_events_are_read_in_file_order_and_hidden_files_are_ignored(journal: Journal) -> None:
    journal.append([ev("add", "m-b", "e-2", DEC), ev("add", "m-a", "e-1", NOV)])
    (journal.folder / ".2026-10.jsonl.abc.tmp").write_text(ev("add", "m-z", "e-9").to_line())
    (journal.folder / ".hidden.jsonl").write_text(ev("add", "m-z", "e-8").to_line())
    assert [e.id for e in journal.events()] == ["e-1", "e-2"]


def test_lines_holding_unicode_line_separators_are_one_event(journal: Journal) -> None:
    event = ev("add", "m-a", "e-1", title="one\u2028two\x85three\u2029four\x0cfive")
    journal.append([event, ev("add", "m-b", "e-2")])
    assert list(journal.events()) == [event, ev("add", "m-b", "e-2")]
    assert journal.warnings == []


# ---------------------------------------------------------------- scrub


def test_scrub_replaces_text_payloads_with_their_hash(journal: Journal) -> None:
    secret = "my bank pin is 1234"
    events = [
        ev("add", "m-a", "e-1", title=secret, text_sha256="abc", lifecycle="trial", type="fact"),
        ev("evidence", "m-a", "e-2", quote=secret, source="user", count=3),
        ev("correct", "m-z", "e-3", new="m-a", title="new " + secret, old_lifecycle="proven"),
        ev("add", "m-b", "e-4", title="someone else"),
        ev("forget", "m-a", "e-5", DEC, title=secret),
        ev("feedback", "m-a", "e-6", outcome="ignored"),
    ]
    journal.append(events)
    other_before = events[3].to_line()
    assert journal.scrub({"m-a"}) == 4
    after = {e.id: e for e in Journal(journal.folder).events()}
    assert after["e-1"].payload == {
        "title": hash_text(secret), "text_sha256": "abc", "lifecycle": "trial", "type": "fact", "scrubbed": True,
    }
    assert after["e-2"].payload == {"quote": hash_text(secret), "source": "user", "count": 3, "scrubbed": True}
    # An event that only refers to the forgotten memory is scrubbed too.
    assert after["e-3"].payload == {
        "new": "m-a", "title": hash_text("new " + secret), "old_lifecycle": "proven", "scrubbed": True,
    }
    assert after["e-5"].payload == {"title": hash_text(secret), "scrubbed": True}
    assert after["e-6"].payload == {"outcome": "ignored"}  # no text: untouched
    assert after["e-4"].to_line() == other_before
    for e in events:  # ids, kinds, memories and times are kept
        assert (after[e.id].kind, after[e.id].memory, after[e.id].ts) == (e.kind, e.memory, e.ts)
    for path in journal.files():
        assert secret not in path.read_text(encoding="utf-8")
    assert hash_text(secret) == "sha256:" + hashlib.sha256(secret.encode()).hexdigest()


def test_scrub_is_idempotent_and_keeps_dedup(journal: Journal) -> None:
    journal.append([ev("add", "m-a", "e-1", title="secret")])
    assert journal.scrub({"m-a"}) == 1
    scrubbed = (journal.folder / "2026-11.jsonl").read_bytes()
    assert journal.scrub({"m-a"}) == 0
    assert (journal.folder / "2026-11.jsonl").read_bytes() == scrubbed
    assert journal.append([ev("add", "m-a", "e-1", title="secret")]) == []


def test_scrub_reaches_text_with_unicode_line_separators(journal: Journal) -> None:
    secret = "line one\u2028line two\x85three"
    journal.append([ev("add", "m-a", "e-1", title=secret), ev("add", "m-b", "e-2", title="keep")])
    assert journal.scrub({"m-a"}) == 1
    text = (journal.folder / "2026-11.jsonl").read_text(encoding="utf-8")
    assert "line one" not in text and "three" not in text
    assert [e.payload["title"] for e in journal.events()] == [hash_text(secret), "keep"]


def test_scrub_keeps_unreadable_lines_byte_for_byte(journal: Journal) -> None:
    journal.append([ev("add", "m-a", "e-1", title="secret"), ev("add", "m-b", "e-2", title="other")])
    path = journal.folder / "2026-11.jsonl"
    with path.open("ab") as handle:
        handle.write(b"\xff\xfe not utf-8\n")
        handle.write(b'{"id":"e-3","kind":"add","memory":"m-a","payload":{"title":"sec')  # torn
    tail = path.read_bytes().split(b"\n")[2:]
    assert journal.scrub({"m-a"}) == 1
    assert path.read_bytes().split(b"\n")[2:] == tail


# ---------------------------------------------------------------- replay


def events_stream(*events: Event) -> Iterator[Event]:
    yield from events


def test_replay_add_and_import() -> None:
    states = replay([
        ev("add", "m-a", "e-1", authority="explicit", lifecycle="proven"),
        ev("import", "m-b", "e-2", authority="inferred", lifecycle="trial"),
        ev("add", "m-c", "e-3"),
    ])
    assert states["m-a"] == MemoryState(lifecycle="proven", authority="explicit")
    assert states["m-b"] == MemoryState(lifecycle="trial", authority="inferred")
    assert states["m-c"] == MemoryState()
    assert states["m-c"].applied == {k: 0 for k in OUTCOMES} and states["m-c"].status == "active"


def test_replay_evidence_counts_proof() -> None:
    states = replay([ev("add", "m-a", "e-1"), ev("evidence", "m-a", "e-2"), ev("evidence", "m-a", "e-3")])
    assert states["m-a"].proof_count == 3


def test_replay_correct_and_its_rollback() -> None:
    add = ev("add", "m-old", "e-1", authority="inferred", lifecycle="trial")
    correct = ev("correct", "m-old", "e-2", new="m-new", old_lifecycle="trial", title="better")
    states = replay([add, correct])
    assert states["m-old"].lifecycle == "superseded" and states["m-old"].superseded_by == "m-new"
    new = states["m-new"]
    assert (new.lifecycle, new.authority, new.supersedes, new.status) == ("proven", "explicit", "m-old", "active")
    rolled = replay([add, correct, ev("rollback", "m-old", "e-3", undoes="e-2", kind="correct")])
    assert rolled["m-old"].lifecycle == "trial" and rolled["m-old"].superseded_by is None
    assert rolled["m-new"].status == "trashed"


def test_replay_rollback_of_correct_defaults_to_proven() -> None:
    states = replay([
        ev("add", "m-old", "e-1", lifecycle="proven", authority="explicit"),
        ev("correct", "m-old", "e-2", new="m-new"),
        ev("rollback", "m-new", "e-3", undoes="e-2"),
    ])
    assert states["m-old"].lifecycle == "proven"


def test_replay_forget_restore_and_rollback_of_forget() -> None:
    add, forget = ev("add", "m-a", "e-1"), ev("forget", "m-a", "e-2", title="x")
    assert replay([add, forget])["m-a"].status == "trashed"
    assert replay([add, forget, ev("restore", "m-a", "e-3")])["m-a"].status == "active"
    assert replay([add, forget, ev("rollback", "m-a", "e-3", undoes="e-2", kind="forget")])["m-a"].status == "active"


def test_replay_rollback_of_an_unknown_event_is_ignored() -> None:
    states = replay([ev("add", "m-a", "e-1"), ev("forget", "m-a", "e-2"), ev("rollback", "m-a", "e-3", undoes="e-9")])
    assert states["m-a"].status == "trashed"


@pytest.mark.parametrize("kind", ["purge", "trash-expire"])
def test_replay_purge(kind: str) -> None:
    states = replay([ev("add", "m-a", "e-1"), ev("forget", "m-a", "e-2"), ev(kind, "m-a", "e-3", permanent=False)])
    assert states["m-a"].status == "purged"


def test_replay_never_resurrects_purged_memories() -> None:
    add, forget = ev("add", "m-a", "e-1"), ev("forget", "m-a", "e-2")
    purge = ev("purge", "m-a", "e-3", permanent=True, text_sha256="d")
    later = [
        ev("rollback", "m-a", "e-4", undoes="e-2", kind="forget"),
        ev("restore", "m-a", "e-5"),
        ev("add", "m-a", "e-6"),
        ev("forget", "m-a", "e-7"),
    ]
    assert replay([add, forget, purge, *later])["m-a"].status == "purged"
    correct = ev("correct", "m-x", "e-8", new="m-a")
    assert replay([add, purge, correct, ev("rollback", "m-x", "e-9", undoes="e-8")])["m-a"].status == "purged"


def test_replay_feedback_counts_outcomes() -> None:
    events = [ev("add", "m-a", "e-0", authority="explicit", lifecycle="proven")]
    for n, outcome in enumerate([*OUTCOMES, "used-successfully", "not-an-outcome"], start=1):
        events.append(ev("feedback", "m-a", f"e-{n}", f"2026-11-28T10:00:{n:02d}Z", outcome=outcome))
    state = replay(events)["m-a"]
    assert state.applied == {
        "used-successfully": 2, "ignored": 1, "overridden": 1, "corrected": 1, "contributed-to-failure": 1,
    }
    assert state.last_applied == "2026-11-28T10:00:06Z"  # the unknown outcome does not count
    assert state.lifecycle == "proven"  # explicit memories are not superseded by feedback


def test_replay_trial_becomes_proven_after_success() -> None:
    events = [ev("add", "m-a", "e-1", authority="inferred", lifecycle="trial")]
    assert replay([*events, ev("feedback", "m-a", "e-2", outcome="ignored")])["m-a"].lifecycle == "trial"
    state = replay([*events, ev("feedback", "m-a", "e-2", outcome="used-successfully")])["m-a"]
    assert state.lifecycle == "proven"


@pytest.mark.parametrize("outcome", ["corrected", "contributed-to-failure"])
def test_replay_correction_or_failure_supersedes_inferred_memories(outcome: str) -> None:
    inferred = [ev("add", "m-a", "e-1", authority="inferred", lifecycle="proven")]
    assert replay([*inferred, ev("feedback", "m-a", "e-2", outcome=outcome)])["m-a"].lifecycle == "superseded"
    explicit = [ev("add", "m-a", "e-1", authority="explicit", lifecycle="proven")]
    assert replay([*explicit, ev("feedback", "m-a", "e-2", outcome=outcome)])["m-a"].lifecycle == "proven"


def test_replay_applies_duplicate_event_ids_once() -> None:
    feedback = ev("feedback", "m-a", "e-2", outcome="used-successfully")
    evidence = ev("evidence", "m-a", "e-3")
    state = replay([ev("add", "m-a", "e-1"), feedback, feedback, evidence, evidence, feedback])["m-a"]
    assert state.applied["used-successfully"] == 1 and state.proof_count == 2


def test_replay_is_pure_and_repeatable(journal: Journal) -> None:
    events = [
        ev("add", "m-a", "e-1", authority="inferred", lifecycle="trial"),
        ev("feedback", "m-a", "e-2", outcome="used-successfully"),
        ev("evidence", "m-a", "e-3"),
        ev("correct", "m-a", "e-4", new="m-b", old_lifecycle="proven"),
        ev("feedback", "m-b", "e-5", outcome="ignored"),
        ev("forget", "m-b", "e-6"),
        ev("rollback", "m-b", "e-7", undoes="e-6", kind="forget"),
    ]
    journal.append(events)
    first = replay(journal.events())
    second = replay(journal.events())
    assert first == second
    assert first is not second and first["m-a"].applied is not second["m-a"].applied
    assert replay(events_stream(*events)) == first
    assert replay(events + events) == first  # the same events twice change nothing
    assert first["m-a"].lifecycle == "superseded" and first["m-a"].proof_count == 2
    assert first["m-b"].status == "active" and first["m-b"].applied["ignored"] == 1


def test_replay_survives_malformed_events() -> None:
    states = replay([
        ev("add", "m-a", "e-1"),
        ev("correct", "m-a", "e-2"),  # no "new"
        ev("rollback", "m-a", "e-3", undoes="e-2"),
        ev("something-new", "m-a", "e-4"),
        ev("feedback", "m-a", "e-5"),  # no outcome
    ])
    assert states["m-a"] == MemoryState()


def test_forgotten_digests() -> None:
    events = [
        ev("purge", "m-a", "e-1", permanent=True, text_sha256="d1"),
        ev("purge", "m-b", "e-2", permanent=False, text_sha256="d2"),  # trash emptied: may be re-learned
        ev("purge", "m-c", "e-3", permanent=True),  # no digest
        ev("forget", "m-d", "e-4", permanent=True, text_sha256="d4"),
        ev("purge", "m-e", "e-5", permanent=True, text_sha256="d5"),
    ]
    assert forgotten_digests(events) == {"d1": "m-a", "d5": "m-e"}
    assert forgotten_digests(events_stream(*events)) == {"d1": "m-a", "d5": "m-e"}
