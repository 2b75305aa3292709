"""Three-way merges of the journal and of memory files: each rule, and that every rule is symmetric."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from vault_engine.format.memory import parse, render
from vault_engine.format.value import Memory
from vault_engine.gitclone import with_attributes
from vault_engine.sharing.merge import (
    CONFLICT_KEY,
    counted_on_both_sides,
    feedback_events,
    merge_journal,
    merge_memory,
    merge_text,
)


def event(n: int, ts: str = "2026-12-01T10:00:00Z", **payload: object) -> str:
    return json.dumps({"id": f"e-{n:026d}", "kind": "add", "memory": f"m-{n}", "payload": payload, "ts": ts},
                      sort_keys=True, separators=(",", ":"))


def lines(*items: str) -> str:
    return "".join(item + "\n" for item in items)


def both_ways_journal(base: str, ours: str, theirs: str) -> str:
    merged = merge_journal(base, ours, theirs)
    assert merged == merge_journal(base, theirs, ours)
    return merged


def test_the_journal_is_the_union_of_both_sides_each_event_once_in_time_order() -> None:
    base = lines(event(1, "2026-12-01T09:00:00Z"))
    ours = lines(event(1, "2026-12-01T09:00:00Z"), event(3, "2026-12-01T11:00:00Z"))
    theirs = lines(event(1, "2026-12-01T09:00:00Z"), event(2, "2026-12-01T10:00:00Z"),
                   event(3, "2026-12-01T11:00:00Z"))
    merged = both_ways_journal(base, ours, theirs)
    assert merged == lines(event(1, "2026-12-01T09:00:00Z"), event(2, "2026-12-01T10:00:00Z"),
                           event(3, "2026-12-01T11:00:00Z"))


def test_an_event_removed_or_purged_on_one_side_stays_so() -> None:
    base = lines(event(1), event(2, text="a secret sentence"))
    purged = lines(event(1), event(2, text="[purged]"))
    removed = lines(event(2, text="a secret sentence"))
    assert both_ways_journal(base, purged, base + event(5) + "\n") == lines(event(1), event(2, text="[purged]"),
                                                                          event(5))
    assert both_ways_journal(base, removed, base) == removed


def test_lines_that_are_no_event_are_kept_once() -> None:
    torn = '{"id": "e-torn'
    merged = both_ways_journal("", lines(event(1), torn), lines(torn, event(2)))
    assert merged == lines(event(1), event(2), torn)


def memory(**changes: object) -> Memory:
    base = Memory(id="m-01abc", title="Deploy notes", type="fact", body="Deploys run from main.\n",
                  authority="explicit", tags=("deploy",), proof_count=2,
                  applied={"used-successfully": 1, "ignored": 0, "overridden": 0, "corrected": 0,
                           "contributed-to-failure": 0},
                  created=datetime(2026, 11, 1, tzinfo=UTC), updated=datetime(2026, 11, 1, tzinfo=UTC))
    return base.replace(**changes)


def both_ways(base: Memory, ours: Memory, theirs: Memory) -> tuple[Memory, Memory | None]:
    one = merge_memory(render(base), render(ours), render(theirs))
    other = merge_memory(render(base), render(theirs), render(ours))
    assert one.text == other.text and one.conflict == other.conflict and one.clean
    return parse(one.text).memory, one.conflict


def test_lists_take_both_sides_additions_and_removals() -> None:
    base = memory(tags=("deploy", "ci"), links=("m-1",))
    merged, _ = both_ways(base, base.replace(tags=("deploy", "ci", "release")),
                          base.replace(tags=("deploy",), links=("m-1", "m-2")))
    assert merged.tags == ("deploy", "release") and merged.links == ("m-1", "m-2")


def test_counters_add_both_sides_increments() -> None:
    base = memory()
    ours = base.replace(proof_count=3, applied={**base.applied, "used-successfully": 2})
    theirs = base.replace(proof_count=4, applied={**base.applied, "ignored": 1})
    merged, _ = both_ways(base, ours, theirs)
    assert merged.proof_count == 5
    assert merged.applied["used-successfully"] == 2 and merged.applied["ignored"] == 1


def test_a_supersession_holds_and_the_later_update_wins_other_fields() -> None:
    base = memory()
    ours = base.replace(lifecycle="superseded", superseded_by="m-new", updated=datetime(2026, 11, 2, tzinfo=UTC))
    theirs = base.replace(lifecycle="proven", tier="hot", updated=datetime(2026, 11, 3, tzinfo=UTC))
    merged, _ = both_ways(base, ours, theirs)
    assert merged.lifecycle == "superseded" and merged.superseded_by == "m-new" and merged.tier == "hot"
    assert merged.updated == datetime(2026, 11, 3, tzinfo=UTC)
    title_a = base.replace(title="Deploy notes (api)", updated=datetime(2026, 11, 2, tzinfo=UTC))
    title_b = base.replace(title="Deploy notes for the api", updated=datetime(2026, 11, 5, tzinfo=UTC))
    assert both_ways(base, title_a, title_b)[0].title == "Deploy notes for the api"


def test_bodies_changed_in_different_places_merge_as_text() -> None:
    base = memory(body="Line one.\n\nLine two.\n\nLine three.\n")
    merged, conflict = both_ways(base, base.replace(body="Line ONE.\n\nLine two.\n\nLine three.\n"),
                                 base.replace(body="Line one.\n\nLine two.\n\nLine THREE.\n"))
    assert merged.body == "Line ONE.\n\nLine two.\n\nLine THREE.\n" and conflict is None


def test_a_body_changed_differently_on_both_sides_keeps_the_other_as_a_linked_conflict_version() -> None:
    base = memory()
    ours = base.replace(body="Deploys run from the release branch.\n", updated=datetime(2026, 11, 2, tzinfo=UTC))
    theirs = base.replace(body="Deploys run from tags only.\n", updated=datetime(2026, 11, 3, tzinfo=UTC))
    merged, conflict = both_ways(base, ours, theirs)
    assert merged.body == "Deploys run from tags only.\n"
    assert conflict is not None and conflict.body == "Deploys run from the release branch.\n"
    assert conflict.id != merged.id and conflict.id in merged.links and conflict.links == (merged.id,)
    assert conflict.extra[CONFLICT_KEY] == merged.id and conflict.title.endswith("(conflicting version)")


def test_files_that_are_not_memories_merge_as_git_does() -> None:
    text, clean = merge_text("a\nb\nc\n", "A\nb\nc\n", "a\nb\nC\n")
    assert (text, clean) == ("A\nb\nC\n", True)
    plain = merge_memory("# Notes\n\nold\n", "# Notes\n\nmine\n", "# Notes\n\nyours\n")
    assert not plain.clean and "<<<<<<< ours" in plain.text


def test_a_merge_that_changes_nothing_keeps_the_bytes() -> None:
    base = render(memory())
    edited = base.replace("Deploys run from main.", "Deploys run from main, always.")
    assert merge_memory(base, edited, base).text == edited


def test_the_attributes_block_is_added_once_and_kept_with_a_persons_own_lines() -> None:
    own = "*.png binary\n"
    once = with_attributes(own)
    assert once.startswith(own) and "journal/*.jsonl merge=memvault-journal" in once
    assert with_attributes(once) == once


def test_two_memories_both_sides_added_at_one_path_are_both_kept() -> None:
    first = memory(id="m-01aaa")
    second = memory(id="m-01bbb", body="Another memory with the same title.\n")
    one = merge_memory("", render(second), render(first))
    other = merge_memory("", render(first), render(second))
    assert one.text == other.text == render(first) and one.clean
    assert one.conflict == other.conflict == second


def _journal(*events: tuple[str, str, str]) -> str:
    return "".join(json.dumps({"id": i, "kind": k, "memory": m, "payload": {}, "ts": "2026-12-06T14:01:55Z"}) + "\n"
                   for i, k, m in events)


def test_feedback_events_are_the_side_s_own_since_the_ancestor() -> None:
    base = _journal(("e-1", "feedback", "m-1"))
    side = base + _journal(("e-2", "feedback", "m-1"), ("e-3", "add", "m-1"), ("e-4", "feedback", "m-2")) + "torn{\n"
    assert feedback_events(base, side) == {"m-1": {"e-2"}, "m-2": {"e-4"}}


def test_counted_on_both_sides_only_for_distinct_events_on_each_side() -> None:
    ours = [{"m-1": {"e-2"}}, {"m-9": {"e-7"}}]
    assert counted_on_both_sides("m-1", ours, [{"m-1": {"e-5"}}])
    assert not counted_on_both_sides("m-1", ours, [{"m-1": {"e-2"}}])  # the same event came both ways
    assert not counted_on_both_sides("m-1", ours, [{"m-2": {"e-5"}}])  # the other side gave none
    assert not counted_on_both_sides("m-1", [], [{"m-1": {"e-5"}}])


def test_merging_one_version_twice_sums_its_feedback() -> None:
    base = Memory(id="m-1", title="Deploys", type="fact", body="Deploys run from main.\n",
                  applied={"used-successfully": 1})
    once = base.replace(applied={"used-successfully": 2}, last_applied=datetime(2026, 12, 6, tzinfo=UTC))
    merged = parse(merge_memory(render(base), render(once), render(once)).text, "m.md").memory
    assert merged.applied["used-successfully"] == 3 and merged.body == base.body
