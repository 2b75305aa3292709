"""Fusion and boosts, as pure functions."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from vault_engine.config import RetrievalSettings
from vault_engine.format.memory import Memory
from vault_engine.retrieval.fusion import Fused, boost, boosted_score, fuse, signals

NOW = datetime(2026, 11, 30, tzinfo=UTC)
WEIGHTS = {"fts": 1.0, "vector": 1.5}


def test_rrf_weights_and_normalisation() -> None:
    fused = fuse({"fts": ["a", "b"], "vector": ["b", "c"]}, WEIGHTS, k=60)
    scores = {f.id: f.score for f in fused}
    best = 2.5 / 61
    assert scores["b"] == pytest.approx((1.0 / 62 + 1.5 / 61) / best)
    assert scores["a"] == pytest.approx((1.0 / 61) / best)
    assert scores["c"] == pytest.approx((1.5 / 62) / best)
    assert [f.id for f in fused] == ["b", "c", "a"]
    assert all(0 < f.score <= 1 for f in fused)


def test_first_in_every_lane_scores_exactly_one_and_ties_are_stable() -> None:
    fused = fuse({"fts": ["x", "y"], "vector": ["x", "z"]}, WEIGHTS, k=60)
    assert fused[0].id == "x" and fused[0].score == pytest.approx(1.0)
    tie = fuse({"fts": ["q"], "vector": []}, {"fts": 1.0, "vector": 0.0}, 60)
    assert tie[0].score == pytest.approx(1.0)
    both = fuse({"fts": ["b", "a"], "other": ["a", "b"]}, {"fts": 1.0, "other": 1.0}, 60)
    assert [f.id for f in both] == ["a", "b"]  # equal scores: id order


def test_lanes_are_recorded_for_explain() -> None:
    fused = fuse({"fts": ["a"], "vector": ["z", "a"]}, WEIGHTS, k=60)
    a = next(f for f in fused if f.id == "a")
    assert {(lane.lane, lane.rank) for lane in a.lanes} == {("fts", 1), ("vector", 2)}


def test_empty_rankings_give_nothing() -> None:
    assert fuse({"fts": [], "vector": []}, WEIGHTS, 60) == []
    assert fuse({}, WEIGHTS, 60) == []


def _memory(**changes: object) -> Memory:
    return Memory(id="m-a", title="t", type="fact").replace(**changes)


def test_missing_signals_give_exactly_one() -> None:
    bare = _memory(trust="learned")
    result = boost(Fused("m-a", 0.5, ()), bare, RetrievalSettings(), NOW)
    assert result.score == 0.5
    assert set(result.factors.values()) == {1.0}


def test_the_ranking_score_is_the_boosted_score_bit_for_bit() -> None:
    rng = random.Random(3)
    settings = RetrievalSettings(alpha_event_time=0.3, alpha_proof=0.2)
    for _ in range(300):
        memory = _memory(
            updated=NOW - timedelta(days=rng.uniform(0, 900)) if rng.random() < 0.8 else None,
            created=NOW - timedelta(days=rng.uniform(0, 900)),
            occurred_at=NOW - timedelta(days=rng.uniform(0, 900)) if rng.random() < 0.5 else None,
            proof_count=rng.choice([1, 1, 2, 5]), trust=rng.choice(["system", "learned", "external"]),
            applied={"used-successfully": rng.choice([0, 0, 3]), "corrected": rng.choice([0, 0, 1])})
        item = Fused("m-a", rng.uniform(0.01, 1.0), ())
        assert boosted_score(item, memory, settings, NOW) == boost(item, memory, settings, NOW).score


def test_each_boost_moves_the_score_in_the_right_direction() -> None:
    settings = RetrievalSettings()
    base = Fused("m-a", 0.5, ())
    fresh = boost(base, _memory(updated=NOW), settings, NOW).score
    stale = boost(base, _memory(updated=NOW - timedelta(days=720)), settings, NOW).score
    assert fresh > 0.5 > stale
    assert boost(base, _memory(trust="system"), settings, NOW).score > 0.5
    assert boost(base, _memory(trust="external"), settings, NOW).score < 0.5
    useful = _memory(applied={"used-successfully": 5, "ignored": 0, "overridden": 0, "corrected": 0,
                              "contributed-to-failure": 0})
    harmful = _memory(applied={"used-successfully": 0, "ignored": 0, "overridden": 0, "corrected": 3,
                               "contributed-to-failure": 0})
    assert boost(base, useful, settings, NOW).score > 0.5 > boost(base, harmful, settings, NOW).score
    assert boost(base, _memory(proof_count=4), settings, NOW).score > 0.5


def test_factor_is_one_plus_alpha_times_centered_signal() -> None:
    settings = RetrievalSettings(alpha_trust=0.1)
    result = boost(Fused("m-a", 1.0, ()), _memory(trust="system"), settings, NOW)
    assert result.factors["trust"] == pytest.approx(1.05)
    assert signals(_memory(trust="external"), NOW)["trust"] == 0.0
