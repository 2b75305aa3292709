"""The shortlist: only the candidates that can be shown are boosted, and the re-ranker still
reads the scores of those left out when it looks at a turn's neighbours."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import pytest

from vault_engine.config import RetrievalSettings
from vault_engine.index.catalog import CatalogRow
from vault_engine.retrieval import rerank
from vault_engine.retrieval.fusion import Fused, LaneRank, boost, prune

NOW = datetime(2024, 6, 1, tzinfo=UTC)
SETTINGS = RetrievalSettings()


def row(memory_id: str, *, updated: datetime | None = None, occurred: date | None = None, proof: int = 1,
        trust: str = "learned", applied: dict[str, int] | None = None, tags: tuple[str, ...] = (),
        chars: int = 0) -> CatalogRow:
    return CatalogRow(id=memory_id, path=f"{memory_id}.md", hash="", status="active", type="fact",
                      scope="global", project="", trust=trust, lifecycle="active", tier="hot",
                      title=memory_id, summary="", trigger="", tags=tags, updated=updated,
                      occurred_at=occurred, proof_count=proof, applied=applied or {}, chars=chars)


def test_prune_keeps_every_candidate_a_boost_can_bring_among_the_best() -> None:
    rng = random.Random(3)
    for _trial in range(50):
        fused = [Fused(f"m-{n:03d}", score, ()) for n, score in
                 enumerate(sorted((rng.uniform(0.01, 1.0) for _ in range(300)), reverse=True))]
        rows = {f.id: row(f.id, updated=NOW - timedelta(days=rng.uniform(0, 2000)),
                          occurred=(NOW - timedelta(days=rng.uniform(0, 2000))).date() if rng.random() < 0.5 else None,
                          proof=rng.choice((1, 1, 2, 5)), trust=rng.choice(("system", "learned", "external")),
                          applied=rng.choice(({}, {"used-successfully": 3}, {"corrected": 2})))
                for f in fused}
        boosted = sorted(fused, key=lambda f: -boost(f, rows[f.id], SETTINGS, NOW).score)
        for size in (10, 30, 50, 110):
            kept = {f.id for f in prune(fused, size, SETTINGS)}
            assert {f.id for f in boosted[:size]} <= kept
            assert len(kept) < len(fused)  # it does cut


def test_prune_keeps_everything_when_there_are_few_candidates() -> None:
    fused = [Fused("m-a", 1.0, ()), Fused("m-b", 0.01, ())]
    assert prune(fused, 30, SETTINGS) == fused


def rerank_turns(elsewhere: dict[str, float] | None) -> tuple[list[str], dict[str, dict[str, float]]]:
    """A question whose best candidate is a turn; the turn after it was found by the lanes but
    not shortlisted (``elsewhere`` knows its score) or not found at all (``None``)."""
    rows = {"m-ask": row("m-ask"), "m-other": row("m-other")}
    scored = [(1.0, Fused("m-ask", 1.0, ())), (0.5, Fused("m-other", 0.5, ()))]
    around = {"m-ask": (None, "m-reply"), "m-reply": ("m-ask", None)}
    lookup = elsewhere or {}
    out, effects = rerank.rerank_shortlist(
        "when was the workshop", scored, rows, SETTINGS, NOW, around=around,
        joinable=lambda ids: {i: row(i) for i in ids}, carried=lambda terms, ids: {},
        elsewhere=lambda ids: {i: s for i, s in lookup.items() if i in ids})
    return [f.id for _score, f in out], effects


def test_a_neighbour_left_out_lends_its_score_and_does_not_join() -> None:
    order, effects = rerank_turns({"m-reply": 0.9})
    assert order == ["m-ask", "m-other"]  # left out: its own score could never show it
    assert effects["m-ask"]["thread"] > 0  # ... but the turn before it gains from it


def test_a_neighbour_the_lanes_never_found_joins_with_no_score_of_its_own() -> None:
    order, effects = rerank_turns(None)
    assert "m-reply" in order
    assert "thread" not in effects.get("m-ask", {})


def test_a_long_turn_leans_less_on_its_neighbours() -> None:
    """The user's own words between two answers that repeat the topic: lifted by the user's turn,
    an answer ties with it; a message longer than one passage of the model stands alone."""
    def scores(answer_chars: int) -> dict[str, float]:
        rows = {"m-said": row("m-said", chars=300), "m-before": row("m-before", chars=answer_chars),
                "m-after": row("m-after", chars=answer_chars)}
        scored = [(1.0, Fused("m-said", 1.0, ())), (0.9, Fused("m-before", 0.9, ())),
                  (0.8, Fused("m-after", 0.8, ()))]
        around = {"m-before": (None, "m-said"), "m-said": ("m-before", "m-after"), "m-after": ("m-said", None)}
        out, _effects = rerank.rerank_shortlist(
            "when was the workshop", scored, rows, SETTINGS, NOW, around=around,
            joinable=lambda ids: {}, carried=lambda terms, ids: {}, elsewhere=lambda ids: {})
        return {f.id: score for score, f in out}

    short = scores(600)
    assert short["m-before"] == pytest.approx(short["m-said"])  # a short answer leans on the turn it answers
    long = scores(3000)
    assert long["m-said"] > long["m-before"] > long["m-after"]
    assert long["m-before"] == pytest.approx(0.9 + 1.0 / 3)
    assert rerank.leaning(1000) == 1.0 and rerank.leaning(2000) == 0.5


def rerank_demo(settings: RetrievalSettings) -> tuple[list[str], dict[str, dict[str, float]]]:
    """The quick-start vault's "how do we check changes before committing": every lane ranks the
    test rule first; the review checklist carries two of the query's three words, the rule one."""
    first = Fused("m-tests", 1.0, (LaneRank("fts", 1, 1.0), LaneRank("vector", 1, 1.0)))
    second = Fused("m-review", 11 / 12, (LaneRank("fts", 2, 1.0), LaneRank("vector", 2, 1.0)))
    third = Fused("m-profile", 0.5, (LaneRank("vector", 3, 1.0),))
    scored = [(f.score * 1.1, f) for f in (first, second, third)]
    carried = {"m-tests": frozenset({"commit"}), "m-review": frozenset({"check", "chang"}), "m-profile": frozenset()}
    out, effects = rerank.rerank_shortlist(
        "how do we check changes before committing", scored, {i: row(i) for i in carried}, settings, NOW,
        around={}, joinable=lambda ids: {}, carried=lambda terms, ids: {i: carried[i] for i in ids},
        elsewhere=lambda ids: {})
    return [f.id for _score, f in out], effects


def test_word_coverage_alone_does_not_lift_a_memory_over_the_one_every_lane_ranks_first() -> None:
    order, effects = rerank_demo(SETTINGS)
    assert order == ["m-tests", "m-review", "m-profile"]
    assert effects["m-review"]["terms"] > effects["m-tests"]["terms"] and effects["m-review"]["unanimous"] < 1
    assert "unanimous" not in effects["m-tests"]
    off = RetrievalSettings(rerank_unanimous=False)
    assert rerank_demo(off)[0] == ["m-review", "m-tests", "m-profile"]  # the order before the rule
