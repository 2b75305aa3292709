"""Hot rules with a way out: retyped records of things done (S2) and rules the cold tier already states (S5)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from vault_engine.config import TierSettings, VaultConfig
from vault_engine.format.memory import Memory
from vault_engine.governance.actions import View
from vault_engine.governance.classify import COMPRESSED_FROM, ORIGINAL_OF, nature, resident_chars
from vault_engine.governance.maintain import plan
from vault_engine.governance.rules import plan_redundant, plan_retype
from vault_engine.index.fakes import TableSimilarity as FakeSimilarity

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DONE = "2026-01-05: migrated the billing database to Postgres 16 and removed the old replicas."
DEPLOY = "Deploys run from the main branch with make release."
DEPLOY_ALWAYS = "Deploys run from the main branch with make release, always."




def mem(memory_id: str, body: str, *, days_old: float = 40, **fields: Any) -> Memory:
    values: dict[str, Any] = {"type": "fact", "tier": "hot", "title": body[:30],
                              "created": NOW - timedelta(days=days_old), **fields}
    return Memory(id=memory_id, body=body + "\n", **values)


def view_of(*memories: Memory, budget: int = 5000,
            vetoes: frozenset[tuple[str, frozenset[str]]] = frozenset()) -> View:
    config = VaultConfig(tiers=dataclasses.replace(TierSettings(), hot_budget_chars=budget))
    return View({m.id: m for m in memories}, {m.id: f"memories/global/{m.id}.md" for m in memories}, {}, NOW,
                config, vetoes=vetoes)


# ---------------------------------------------------------------- retype (S2)


@pytest.mark.parametrize("memory", [
    mem("m-a", DONE, type="procedure"),  # a procedure is a rule by type, yet this one records things done
    mem("m-a", DONE + " Next we will archive the logs."),  # a pending word made it a rule
])
def test_a_hot_rule_recording_things_done_long_ago_is_retyped_and_moved_cold(memory: Memory) -> None:
    view = view_of(memory)
    assert nature(memory) == "rule"
    [action] = plan_retype(view)
    assert action.kind == "retype" and action.memory == "m-a"
    assert "2026-01-05" in action.reason and "migrated, removed" in action.reason
    moved = view.after([action]).active["m-a"]
    assert (moved.tier, moved.extra["nature"], nature(moved)) == ("cold", "state", "state")
    assert plan_retype(view.after([action])) == []


@pytest.mark.parametrize("memory", [
    mem("m-a", "2026-01-05: migrated the billing database to Postgres 16.", type="procedure"),  # one marker
    mem("m-a", "2026-04-20: migrated the billing database and removed the replicas.", type="procedure"),  # 42 days
    mem("m-a", DONE + " Always check the replica lag first.", type="procedure"),  # an instruction
    mem("m-a", "Migrated the billing database and removed the old replicas.", type="procedure"),  # no date
    mem("m-a", DONE, type="procedure", extra={"nature": "rule"}),  # a person said it is a rule
    mem("m-a", DONE, type="procedure", importance=0.9),
    mem("m-a", DONE, type="procedure", tags=("red-line",)),
    mem("m-a", DONE, type="procedure", tier="cold"),
], ids=["one-marker", "recent", "instruction", "undated", "declared-rule", "protected", "red-line", "cold"])
def test_what_is_not_retyped(memory: Memory) -> None:
    assert plan_retype(view_of(memory)) == []


def test_a_rolled_back_retype_is_not_planned_again() -> None:
    assert plan_retype(view_of(mem("m-a", DONE, type="procedure"),
                               vetoes=frozenset({("retype", frozenset({"m-a"}))}))) == []


# ---------------------------------------------------------------- redundant (S5)


def pressed(*memories: Memory, **kwargs: Any) -> View:
    """A view whose hot tier is at about 75% of its budget (over the 60% soft limit)."""
    hot = sum(len(m.title) + len(m.summary) + len(m.body.strip()) for m in memories if m.tier == "hot")
    return view_of(*memories, budget=int(hot / 0.75), **kwargs)


def test_an_idle_hot_rule_the_cold_tier_already_states_moves_cold() -> None:
    view = pressed(mem("m-hot", DEPLOY), mem("m-cold", DEPLOY_ALWAYS, tier="cold", days_old=100))
    [action] = plan_redundant(view, FakeSimilarity({("m-hot", "m-cold"): 0.95}))
    assert (action.kind, action.memory, action.related) == ("redundant", "m-hot", ("m-cold",))
    assert "idle 40 days" in action.reason and "cosine 0.95" in action.reason and "hot tier at 75%" in action.reason
    after = view.after([action])
    assert after.active["m-hot"].tier == "cold" and after.active["m-hot"].body == DEPLOY + "\n"  # nothing lost
    assert after.active["m-cold"] == view.active["m-cold"]


@pytest.mark.parametrize(("hot", "cold", "budget"), [
    (mem("m-hot", DEPLOY), mem("m-cold", DEPLOY_ALWAYS, tier="cold"), 5000),  # under the soft limit
    (mem("m-hot", DEPLOY, days_old=10), mem("m-cold", DEPLOY_ALWAYS, tier="cold"), 0),  # used lately
    (mem("m-hot", DEPLOY, last_applied=NOW - timedelta(days=5)), mem("m-cold", DEPLOY_ALWAYS, tier="cold"), 0),
    (mem("m-hot", DEPLOY), mem("m-cold", DEPLOY_ALWAYS, tier="cold", trust="external"), 0),  # less trusted
    (mem("m-hot", DEPLOY), mem("m-cold", "Deploys no longer run from the main branch with make release.",
                               tier="cold"), 0),  # says the opposite
    (mem("m-hot", DEPLOY), mem("m-cold", DEPLOY_ALWAYS, tier="cold", extra={ORIGINAL_OF: "m-hot"}), 0),
    (mem("m-hot", DEPLOY, extra={COMPRESSED_FROM: "m-cold"}), mem("m-cold", DEPLOY_ALWAYS, tier="cold"), 0),
    (mem("m-hot", DEPLOY, importance=0.95), mem("m-cold", DEPLOY_ALWAYS, tier="cold"), 0),
    (mem("m-hot", DEPLOY + " Non-negotiable."), mem("m-cold", DEPLOY_ALWAYS, tier="cold"), 0),
    (mem("m-hot", DEPLOY), mem("m-cold", DEPLOY_ALWAYS, type="episode", tier="cold"), 0),
], ids=["no-pressure", "young", "used", "external", "contradicts", "own-original", "compressed-from",
        "protected", "red-line", "episode"])
def test_what_stays_hot(hot: Memory, cold: Memory, budget: int) -> None:
    view = pressed(hot, cold) if budget == 0 else view_of(hot, cold, budget=budget)
    assert plan_redundant(view, FakeSimilarity({("m-hot", "m-cold"): 0.95})) == []


def test_a_rolled_back_move_is_not_planned_again() -> None:
    view = pressed(mem("m-hot", DEPLOY), mem("m-cold", DEPLOY_ALWAYS, tier="cold"),
                   vetoes=frozenset({("redundant", frozenset({"m-hot", "m-cold"}))}))
    assert plan_redundant(view, FakeSimilarity({("m-hot", "m-cold"): 0.95})) == []


def test_the_pipeline_retypes_and_moves_what_merge_left_and_plans_nothing_the_second_time() -> None:
    # Of one trust level the two would merge first; of different trust levels they never merge.
    hot = mem("m-hot", DEPLOY)
    cold = mem("m-cold", DEPLOY_ALWAYS, tier="cold", trust="system")
    view = view_of(mem("m-done", DONE, type="procedure"), hot, cold,
                   budget=int(resident_chars(hot) / 0.7))  # over the soft limit once m-done has left
    similarity = FakeSimilarity({("m-hot", "m-cold"): 0.95})
    actions = plan(view, similarity)
    hot_tier = [(a.kind, a.memory) for a in actions if a.kind not in ("link", "synthesize")]
    assert hot_tier == [("retype", "m-done"), ("redundant", "m-hot")]
    assert plan(view.after(actions), similarity) == []
