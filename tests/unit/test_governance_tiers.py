"""Governance of the hot tier: state or rule, protection, overflow, state retirement, admission on add."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from vault_engine.config import TierSettings, VaultConfig
from vault_engine.format.memory import Memory
from vault_engine.governance.actions import View
from vault_engine.governance.classify import age_days, is_protected, nature, resident_chars, retire_in_days
from vault_engine.governance.tiers import admit, overflow_order, plan_overflow, plan_retire, route, usage
from vault_engine.index.fakes import HashEmbedder
from vault_engine.journal import Event
from vault_engine.vault import NewMemory, Vault

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def config(**tiers: Any) -> VaultConfig:
    return VaultConfig(tiers=dataclasses.replace(TierSettings(), **tiers))


def hot(memory_id: str, chars: int, *, importance: float = 0.5, days_old: float = 1, **fields: Any) -> Memory:
    """A hot rule memory costing exactly ``chars`` resident characters (title + body), its own text."""
    title = memory_id
    body = f"Rule {memory_id} " + "y" * (chars - len(title) - len(f"Rule {memory_id} "))
    values: dict[str, Any] = {"type": "fact", "tier": "hot", **fields}
    memory = Memory(id=memory_id, title=title, body=body + "\n", importance=importance,
                    created=NOW - timedelta(days=days_old), **values)
    assert resident_chars(memory) == chars
    return memory


def view_of(*memories: Memory, cfg: VaultConfig | None = None, now: datetime = NOW,
            vetoes: frozenset[tuple[str, frozenset[str]]] = frozenset()) -> View:
    return View({m.id: m for m in memories}, {m.id: f"memories/global/{m.id}.md" for m in memories}, {}, now,
                cfg or config(hot_budget_chars=1000), vetoes=vetoes)


def moved(actions: list[Any]) -> list[str]:
    return [a.memory for a in actions]


def md(memory_id: str, title: str, body: str, **keys: Any) -> str:
    lines = [f"id: {memory_id}", f"title: {title}", *(f"{k}: {v}" for k, v in {"type": "fact", **keys}.items())]
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def govern_kinds(vault: Vault) -> list[tuple[str, str]]:
    return [(str(e.payload["kind"]), e.memory) for e in vault.journal.events() if e.kind == "govern"]


# ---------------------------------------------------------------- state or rule


@pytest.mark.parametrize(("title", "body", "expected"), [
    ("Billing migration", "2026-03-02: migrated the billing database to Postgres 16.", "state"),
    ("Release", "Deployed v2.3 to production yesterday.", "state"),
    ("Flaky test", "Fixed the flaky login test on March 3rd.", "state"),
    ("Ruff", "Always run ruff before committing.", "rule"),
    ("Tabs", "The user prefers tabs over spaces.", "rule"),
    ("Squash", "2026-03-02: decided to always squash merges.", "rule"),  # dated and done, but a standing rule
    ("Migration", "2026-03-02: the database migration is pending.", "rule"),  # dated, not done
    ("Postgres", "The staging database runs Postgres 16.", "rule"),  # neither dated nor done
])
def test_nature_heuristic(title: str, body: str, expected: str) -> None:
    assert nature(Memory(id="m-a", title=title, type="fact", body=body)) == expected


def test_nature_of_undated_done_text_uses_occurred_at() -> None:
    memory = Memory(id="m-a", title="Upgrade", type="fact", body="Upgraded the runner image.")
    assert nature(memory) == "rule"
    assert nature(memory.replace(occurred_at=date(2026, 3, 2))) == "state"
    assert nature(memory.replace(type="episode")) == "state"


def test_explicit_nature_key_wins_over_the_heuristic() -> None:
    state_text = Memory(id="m-a", title="Billing", type="fact", body="2026-03-02: migrated the billing database.")
    rule_text = Memory(id="m-b", title="Ruff", type="fact", body="Always run ruff before committing.")
    assert nature(state_text.replace(extra={"nature": "rule"})) == "rule"
    assert nature(rule_text.replace(extra={"nature": "state"})) == "state"
    assert nature(state_text.replace(extra={"nature": "something else"})) == "state"  # unknown value: ignored


def test_profiles_policies_and_procedures_are_rules() -> None:
    text = "2026-03-02: migrated the billing database."
    for kind in ("core-profile", "collaboration-policy", "procedure"):
        assert nature(Memory(id="m-a", title="X", type=kind, body=text)) == "rule"


def test_protection() -> None:
    cfg = config()
    base = Memory(id="m-a", title="Name", type="core-profile", body="My name is Ada.", tier="hot")
    assert is_protected(base.replace(authority="explicit"), cfg)
    assert not is_protected(base.replace(authority="inferred"), cfg)
    assert is_protected(base.replace(type="fact", importance=0.9), cfg)
    assert not is_protected(base.replace(type="fact", importance=0.89), cfg)


# ---------------------------------------------------------------- overflow


def test_hard_overflow_ends_at_or_under_the_target_and_never_moves_protected() -> None:
    profile = hot("m-profile", 100, type="core-profile", authority="explicit")
    important = hot("m-important", 100, importance=0.95)
    movable = [hot(f"m-{n}", 100, importance=n / 10) for n in range(1, 8)]  # m-1 is worth least
    view = view_of(profile, important, *movable)
    assert usage(view).ratio == 0.9
    actions = plan_overflow(view)
    assert moved(actions) == ["m-1", "m-2", "m-3", "m-4", "m-5"]
    assert all(a.kind == "overflow" and "over the hard limit" in a.reason for a in actions)
    assert all(a.changes[0].before == {"tier": "hot"} and a.changes[0].after == {"tier": "cold"} for a in actions)
    after = view.after(actions)
    assert usage(after).chars == 400 and usage(after).ratio <= 0.4
    assert after.active["m-profile"].tier == "hot" and after.active["m-important"].tier == "hot"
    assert plan_overflow(after) == []


def test_overflow_stops_when_only_protected_memories_remain() -> None:
    protected = [hot(f"m-p{n}", 300, importance=0.9) for n in range(3)]
    view = view_of(*protected, hot("m-low", 50, importance=0.1))
    actions = plan_overflow(view)
    assert moved(actions) == ["m-low"]
    after = view.after(actions)
    assert usage(after).ratio == 0.9  # still over the hard limit: nothing else may move
    assert plan_overflow(after) == []


def test_soft_level_goes_just_under_the_soft_limit() -> None:
    view = view_of(hot("m-high1", 300, importance=0.8), hot("m-high2", 240, importance=0.7),
                   hot("m-low1", 30, importance=0.1), hot("m-low2", 40, importance=0.2))
    assert usage(view).ratio == pytest.approx(0.61)
    actions = plan_overflow(view)
    assert moved(actions) == ["m-low1"]
    assert "over the soft limit" in actions[0].reason
    assert usage(view.after(actions)).ratio == pytest.approx(0.58)


@pytest.mark.parametrize(("count", "moves", "level"), [
    (8, 4, "hard"),  # exactly 80%: the hard level, down to 40%
    (6, 1, "soft"),  # exactly 60%: the soft level, just under 60%
])
def test_levels_start_at_their_thresholds(count: int, moves: int, level: str) -> None:
    view = view_of(*(hot(f"m-{n}", 100, importance=n / 10) for n in range(1, count + 1)))
    actions = plan_overflow(view)
    assert moved(actions) == [f"m-{n}" for n in range(1, moves + 1)]
    assert all(f"over the {level} limit" in a.reason for a in actions)


def test_under_the_soft_limit_nothing_moves() -> None:
    assert plan_overflow(view_of(hot("m-a", 300), hot("m-b", 290))) == []


def test_overflow_order_duplicates_then_old_states_then_lowest_value() -> None:
    original = Memory(id="m-orig", title="Ruff", type="fact", body="Always run ruff before committing.",
                      tier="hot", importance=0.8, created=NOW - timedelta(days=30))
    duplicate = original.replace(id="m-dup", created=NOW - timedelta(days=2))
    old_state = Memory(id="m-state", title="Billing", type="fact", tier="hot", importance=0.8,
                       body="2026-05-01: migrated the billing database.", created=NOW - timedelta(days=8))
    young_state = old_state.replace(id="m-young", body="2026-05-28: upgraded the runner image.",
                                    created=NOW - timedelta(days=3))
    low = hot("m-low", 100, importance=0.1)
    mid = hot("m-mid", 100, importance=0.4)
    view = view_of(original, duplicate, old_state, young_state, low, mid)
    order = [(m.id, why.split(" ")[0]) for m, why in overflow_order(view)]
    assert order == [("m-dup", "duplicate"), ("m-state", "state"), ("m-low", "lowest"), ("m-mid", "lowest"),
                     ("m-orig", "lowest"), ("m-young", "lowest")]


def test_overflow_skips_a_memory_a_person_moved_back() -> None:
    memories = [hot(f"m-{n}", 100, importance=n / 10) for n in range(1, 10)]
    view = view_of(*memories, vetoes=frozenset({("overflow", frozenset({"m-1"}))}))
    actions = plan_overflow(view)
    assert "m-1" not in moved(actions)
    assert moved(actions) == ["m-2", "m-3", "m-4", "m-5", "m-6"]  # the goal is still reached without it
    assert usage(view.after(actions)).ratio <= 0.4


def test_a_zero_budget_moves_every_movable_memory_without_failing() -> None:
    view = view_of(hot("m-a", 100), hot("m-b", 100, importance=0.95), cfg=config(hot_budget_chars=0))
    assert moved(plan_overflow(view)) == ["m-a"]


# ---------------------------------------------------------------- state retirement


def test_states_retire_after_seven_days_rules_never() -> None:
    state = Memory(id="m-state", title="Billing", type="fact", tier="hot",
                   body="2026-06-01: migrated the billing database.", created=NOW)
    rule = hot("m-rule", 100, days_old=400)
    protected_state = state.replace(id="m-kept", importance=0.95)
    view = view_of(state, rule, protected_state)
    assert retire_in_days(state, NOW + timedelta(days=2), view.config) == 5
    assert retire_in_days(rule, NOW, view.config) is None
    assert plan_retire(dataclasses.replace(view, now=NOW + timedelta(days=6, hours=23))) == []
    actions = plan_retire(dataclasses.replace(view, now=NOW + timedelta(days=7)))
    assert moved(actions) == ["m-state"]
    assert actions[0].kind == "retire" and "7 days old" in actions[0].reason
    assert actions[0].changes[0].after == {"tier": "cold"}


def test_maintain_retires_an_old_state_with_an_injected_clock(make_vault: Callable[..., Vault]) -> None:
    created = NOW - timedelta(days=10)
    root = make_vault({
        "memories/global/billing.md": md("m-state", "Billing", "2026-05-22: migrated the billing database.",
                                         tier="hot", created=stamp(created)),
        "memories/global/ruff.md": md("m-rule", "Ruff", "Always run ruff before committing.",
                                      tier="hot", created=stamp(created - timedelta(days=300))),
    }).root
    vault = Vault(root, embedder=HashEmbedder())
    assert vault.maintain(now=created + timedelta(days=6), replan=True).actions == []
    report = vault.maintain(now=created + timedelta(days=8))
    assert [(a.kind, a.memory) for a in report.actions] == [("retire", "m-state")]
    scan = vault.scan()
    assert scan.get("m-state").memory.tier == "cold" and scan.get("m-rule").memory.tier == "hot"
    assert govern_kinds(vault) == [("retire", "m-state")]
    assert vault.maintain(now=created + timedelta(days=40), replan=True).actions == []


# ---------------------------------------------------------------- admission on add


def test_admit_a_memory_that_fits_changes_nothing() -> None:
    view = view_of(hot("m-a", 100))
    actions, memory, notice = admit(view, hot("m-new", 100))
    assert (actions, memory.tier, notice) == ([], "hot", None)


def test_admit_a_cold_memory_is_not_looked_at() -> None:
    full = view_of(hot("m-a", 900))
    cold = hot("m-new", 500).replace(tier="cold")
    assert admit(full, cold) == ([], cold, None)


def test_admit_moves_nothing_for_a_memory_too_large_to_fit() -> None:
    view = view_of(hot("m-a", 300), hot("m-b", 300))
    actions, memory, notice = admit(view, hot("m-huge", 1200))
    assert actions == [] and memory.tier == "cold"
    assert notice is not None and "no room for 1200 more characters (600 of 1000 in use)" in notice


def test_admit_a_protected_memory_stays_hot_even_over_the_budget() -> None:
    view = view_of(hot("m-a", 300, importance=0.95))
    actions, memory, notice = admit(view, hot("m-new", 900, importance=0.95))
    assert (actions, memory.tier, notice) == ([], "hot", None)


def test_add_hot_that_does_not_fit_goes_cold_with_a_notice(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault({
        "memvault.toml": "[tiers]\nhot_budget_chars = 200\n",
        "profile/name.md": md("m-profile", "Name", "My name is Ada Lovelace and I write the analytical engine "
                              "programs; call me Ada in every answer please.",
                              type="core-profile", authority="explicit", tier="hot"),
        "memories/global/movable.md": md("m-movable", "Tabs", "Use tabs.", tier="hot"),
    })
    before = {p: (vault.root / p).read_bytes() for p in ("profile/name.md", "memories/global/movable.md")}
    result = vault.add(NewMemory("Always answer in British English. " * 6, tier="hot"))
    assert result.created
    assert result.notice is not None and "stored in the cold tier instead" in result.notice
    assert vault.scan().get(result.id).memory.tier == "cold"
    assert {p: (vault.root / p).read_bytes() for p in before} == before  # nothing moved for it
    assert govern_kinds(vault) == []
    assert [e.kind for e in vault.journal.events()] == ["add"]


def test_add_hot_runs_the_overflow_first_and_journals_it(make_vault: Callable[..., Vault]) -> None:
    files = {"memvault.toml": "[tiers]\nhot_budget_chars = 1000\n"}
    for n in range(1, 8):  # 7 x 100 characters: 70%
        body = f"Rule {n} " + "z" * (100 - len(f"m-{n}") - len(f"Rule {n} "))
        files[f"memories/global/r{n}.md"] = md(f"m-{n}", f"m-{n}", body, tier="hot", importance=n / 10)
    vault = make_vault(files)
    result = vault.add(NewMemory("Answer in British English. " * 5, title="English", tier="hot", importance=0.6))
    size = resident_chars(vault.scan().get(result.id).memory)
    assert result.notice is not None and result.notice.startswith("hot tier overflow moved m-1, m-2")
    scan = vault.scan()
    assert scan.get(result.id).memory.tier == "hot"
    hot_ids = sorted(i for i, e in scan.entries.items() if e.memory.tier == "hot")
    moved_ids = [memory for kind, memory in govern_kinds(vault)]
    assert all(kind == "overflow" for kind, _ in govern_kinds(vault))
    assert moved_ids == [f"m-{n}" for n in range(1, len(moved_ids) + 1)]  # lowest value first
    assert sum(resident_chars(scan.get(i).memory) for i in hot_ids) <= 400
    assert 700 + size - 100 * len(moved_ids) <= 400 < 700 + size - 100 * (len(moved_ids) - 1)  # no more than needed
    kinds = [e.kind for e in vault.journal.events()]
    assert kinds == ["govern"] * len(moved_ids) + ["add"]  # the overflow is journalled before the write


def test_add_hot_does_not_move_a_memory_a_person_moved_back(make_vault: Callable[..., Vault]) -> None:
    files = {"memvault.toml": "[tiers]\nhot_budget_chars = 1000\n"}
    for n in range(1, 8):
        body = f"Rule {n} " + "z" * (100 - len(f"m-{n}") - len(f"Rule {n} "))
        files[f"memories/global/r{n}.md"] = md(f"m-{n}", f"m-{n}", body, tier="hot", importance=n / 10)
    vault = make_vault(files)
    # A person rolled back an earlier overflow of m-1 (the least valuable memory).
    undone = Event("govern", "m-1", {"kind": "overflow", "related": [], "changes": {}})
    vault.journal.append([undone, Event("rollback", "m-1", {"undoes": undone.id, "kind": "govern"})])
    vault.add(NewMemory("Answer in British English. " * 5, title="English", tier="hot", importance=0.6))
    scan = vault.scan()
    assert scan.get("m-1").memory.tier == "hot"
    assert scan.get("m-2").memory.tier == "cold"


# ---------------------------------------------------------------- routing a new memory


def test_a_states_age_counts_from_the_date_it_states() -> None:
    """Written a month after it happened, a state is a month old: it retires at once, not a week later."""
    written = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
    state = Memory(id="m-s", title="Checkout", type="fact", tier="hot", created=written,
                   body="The checkout redesign shipped on 2026-10-02, done.")
    assert nature(state) == "state"
    assert age_days(state, written) == pytest.approx(30.375)
    view = view_of(state, now=written + timedelta(hours=1))
    assert moved(plan_retire(view)) == ["m-s"]
    # A date after the writing (a plan) or no date at all: the age counts from the writing.
    later = state.replace(body="The checkout redesign ships on 2026-12-02.")
    assert age_days(later, written) == 0
    assert age_days(state.replace(body="Shipped the redesign, done.", occurred_at=date(2026, 10, 30)),
                    written) == pytest.approx(2.375)
    assert age_days(state.replace(body="Shipped on 2026-02-30, done."), written) == 0  # not a date


@pytest.mark.parametrize(("fields", "chosen", "tier", "notice"), [
    ({"importance": 0.9}, False, "hot", None),
    ({"importance": 0.8}, False, "hot", None),
    ({"importance": 0.79}, False, "cold", None),
    ({"body": "Important: the staging database is shared with QA."}, False, "hot", None),
    ({"body": "Deploys must never run on Fridays."}, False, "hot", None),
    ({"importance": 0.9}, True, "cold", None),  # a tier the person chose wins
    ({"importance": 0.9, "type": "episode"}, False, "cold", None),
    ({"importance": 0.9, "body": "Shipped the checkout redesign on 2026-10-02, done."}, False, "cold", None),
    ({"tier": "hot", "body": "Shipped the checkout redesign on 2026-10-02, done."}, True, "cold", "state"),
    ({"tier": "hot", "body": "Shipped the checkout redesign on 2026-10-02, done.", "extra": {"nature": "rule"}},
     True, "hot", None),
    ({"tier": "hot", "body": "Always squash-merge feature branches."}, True, "hot", None),
])
def test_route_by_importance_words_and_nature(fields: dict[str, Any], chosen: bool, tier: str,
                                              notice: str | None) -> None:
    values: dict[str, Any] = {"id": "m-n", "title": "New", "type": "fact", "tier": "cold",
                              "body": "The staging database is shared with QA.", "created": NOW, **fields}
    memory, said = route(Memory(**values), config(), chosen=chosen)
    assert memory.tier == tier
    assert (said is not None and notice in said) if notice else said is None


def test_add_routes_an_important_memory_hot_and_keeps_a_dated_state_cold(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    important = vault.add(NewMemory("Payments deploys need a second reviewer.", importance=0.9))
    assert vault.scan().get(important.id).memory.tier == "hot" and important.notice is None
    done = vault.add(NewMemory("The checkout redesign shipped on 2026-10-02, done.", tier="hot"))
    assert vault.scan().get(done.id).memory.tier == "cold"
    assert done.notice is not None and "states never enter the hot tier" in done.notice
    plain = vault.add(NewMemory("The staging host is staging.example.com."))
    assert vault.scan().get(plain.id).memory.tier == "cold"
