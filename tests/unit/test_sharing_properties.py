"""Properties of the merges: random changes on two sides, merged both ways, give the same file, and
every side's additions and increments survive."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_engine.format.memory import parse, render
from vault_engine.format.value import Memory, empty_applied
from vault_engine.sharing.merge import merge_journal, merge_memory

TAGS = ("deploy", "ci", "api", "release", "db")
OUTCOMES = ("used-successfully", "ignored", "corrected")
LINES = ("Deploys run from main.", "Staging uses Postgres 16.", "Release on Tuesdays.")

op = st.one_of(
    st.tuples(st.just("tag"), st.sampled_from(TAGS)),
    st.tuples(st.just("untag"), st.sampled_from(TAGS)),
    st.tuples(st.just("feedback"), st.sampled_from(OUTCOMES)),
    st.tuples(st.just("tier"), st.sampled_from(("hot", "cold"))),
    st.tuples(st.just("lifecycle"), st.sampled_from(("trial", "proven", "superseded"))),
    st.tuples(st.just("line"), st.integers(0, 2)),
    st.tuples(st.just("title"), st.sampled_from(("Deploy notes", "Deploy rules", "How we deploy"))),
)


def base_memory() -> Memory:
    return Memory(id="m-01base", title="Deploy notes", type="fact", body="".join(f"{line}\n\n" for line in LINES),
                  tags=("deploy", "ci"), applied=empty_applied(), proof_count=1,
                  updated=datetime(2026, 11, 1, tzinfo=UTC))


def apply(memory: Memory, ops: list[tuple[str, object]], side: str, minute: int) -> Memory:
    for n, (kind, value) in enumerate(ops):
        stamp = datetime(2026, 11, 2, tzinfo=UTC) + timedelta(minutes=minute + n)
        if kind == "tag" and value not in memory.tags:
            memory = memory.replace(tags=(*memory.tags, value))
        elif kind == "untag":
            memory = memory.replace(tags=tuple(t for t in memory.tags if t != value))
        elif kind == "feedback":
            memory = memory.replace(applied={**memory.applied, str(value): memory.applied[str(value)] + 1})
        elif kind == "tier":
            memory = memory.replace(tier=value)
        elif kind == "lifecycle":
            memory = memory.replace(lifecycle=value)
        elif kind == "line":
            lines = memory.body.split("\n\n")
            lines[int(str(value))] = f"{LINES[int(str(value))]} ({side} edit {n})"
            memory = memory.replace(body="\n\n".join(lines))
        elif kind == "title":
            memory = memory.replace(title=value)
        memory = memory.replace(updated=stamp)
    return memory


@settings(max_examples=150, deadline=None)
@given(st.lists(op, max_size=6), st.lists(op, max_size=6), st.integers(0, 10), st.integers(0, 10))
def test_two_sides_merged_both_ways_converge_and_keep_what_each_did(
        ours_ops: list[tuple[str, object]], theirs_ops: list[tuple[str, object]], ours_at: int, theirs_at: int) -> None:
    base = base_memory()
    ours, theirs = apply(base, ours_ops, "ours", ours_at), apply(base, theirs_ops, "theirs", theirs_at)
    one = merge_memory(render(base), render(ours), render(theirs))
    other = merge_memory(render(base), render(theirs), render(ours))
    assert one.text == other.text and one.conflict == other.conflict and one.clean
    merged = parse(one.text).memory
    for outcome in OUTCOMES:  # every observation counted once
        assert merged.applied[outcome] == ours.applied[outcome] + theirs.applied[outcome]
    added = (set(ours.tags) | set(theirs.tags)) - set(base.tags)
    removed = (set(base.tags) - set(ours.tags)) | (set(base.tags) - set(theirs.tags))
    assert set(merged.tags) == (set(base.tags) | added) - removed
    if "superseded" in (ours.lifecycle, theirs.lifecycle) and base.lifecycle != "superseded":
        assert merged.lifecycle == "superseded"
    bodies = {merged.body} | ({one.conflict.body} if one.conflict is not None else set())
    # Nothing written on either side is lost: each side's body is current, merged in, or kept beside it.
    for side in (ours, theirs):
        for line in side.body.split("\n\n"):
            assert any(line in body for body in bodies)


event_ids = st.integers(0, 30)


def event(n: int, text: str = "") -> str:
    return json.dumps({"id": f"e-{n:026d}", "kind": "add", "memory": f"m-{n}", "payload": {"text": text},
                       "ts": f"2026-12-01T10:{n:02d}:00Z"}, sort_keys=True, separators=(",", ":"))


@settings(max_examples=150, deadline=None)
@given(st.sets(event_ids, max_size=10), st.sets(event_ids, max_size=10), st.sets(event_ids, max_size=10),
       st.sets(event_ids, max_size=5))
def test_journals_merged_both_ways_converge(base: set[int], ours_new: set[int], theirs_new: set[int],
                                            purged: set[int]) -> None:
    base_text = "".join(event(n) + "\n" for n in sorted(base))
    ours = "".join(event(n, "[purged]" if n in purged else "") + "\n" for n in sorted(base | ours_new))
    theirs = "".join(event(n) + "\n" for n in sorted(base | theirs_new))
    merged = merge_journal(base_text, ours, theirs)
    assert merged == merge_journal(base_text, theirs, ours)
    ids = [json.loads(line)["id"] for line in merged.splitlines()]
    assert len(ids) == len(set(ids)) == len(base | ours_new | theirs_new)
    for n in purged & base:
        assert event(n, "[purged]") in merged
