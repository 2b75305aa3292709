"""The pure sync planner."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vault_engine.index.plan import ChangeSet, Located, plan_changes


def test_each_kind_of_change_is_classified() -> None:
    indexed = {
        "m-same": Located("a.md", "h1"),
        "m-edit": Located("b.md", "h2"),
        "m-move": Located("c.md", "h3"),
        "m-gone": Located("d.md", "h4"),
    }
    disk = {
        "m-same": Located("a.md", "h1"),
        "m-edit": Located("b.md", "h2-new"),
        "m-move": Located("sub/c-renamed.md", "h3"),
        "m-new": Located("e.md", "h5"),
    }
    plan = plan_changes(disk, indexed)
    assert plan == ChangeSet(("m-new",), ("m-edit",), ("m-move",), ("m-gone",), 1)
    assert plan.summary() == "1 added, 1 modified, 1 moved, 1 deleted, 1 unchanged"
    assert not plan.empty


def test_an_edit_and_a_move_together_is_a_modification() -> None:
    plan = plan_changes({"m-a": Located("new.md", "h2")}, {"m-a": Located("old.md", "h1")})
    assert plan.modified == ("m-a",) and not plan.moved


def test_unchanged_vault_plans_nothing() -> None:
    state = {f"m-{i}": Located(f"{i}.md", f"h{i}") for i in range(50)}
    plan = plan_changes(state, dict(state))
    assert plan.empty and plan.unchanged == 50


located = st.builds(Located, st.sampled_from(["a.md", "b.md", "c.md"]), st.sampled_from(["h1", "h2"]))
states = st.dictionaries(st.sampled_from([f"m-{i}" for i in range(8)]), located, max_size=8)


@given(states, states)
def test_plan_partitions_every_id_exactly_once(disk: dict[str, Located], indexed: dict[str, Located]) -> None:
    plan = plan_changes(disk, indexed)
    touched = list(plan.added) + list(plan.modified) + list(plan.moved) + list(plan.deleted)
    assert len(touched) == len(set(touched))
    assert set(touched) | {i for i in disk if i in indexed and disk[i] == indexed[i]} == set(disk) | set(indexed)
    assert plan.unchanged == sum(1 for i in disk if indexed.get(i) == disk[i])
    # Applying the plan to the indexed state yields the disk state.
    result = {k: v for k, v in indexed.items() if k not in plan.deleted}
    for memory_id in plan.added + plan.modified + plan.moved:
        result[memory_id] = disk[memory_id]
    assert result == disk
