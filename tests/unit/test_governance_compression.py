"""Compression of long hot rules: the acceptance checks, the plan with a scripted model, protection, idempotency."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from vault_engine.config import VaultConfig
from vault_engine.errors import LlmUnavailable, LlmUnsure
from vault_engine.format.memory import Memory
from vault_engine.governance.actions import View
from vault_engine.governance.advice import Advisor
from vault_engine.governance.classify import COMPRESSED_FROM, ORIGINAL_OF, STUB_OF, resident_chars
from vault_engine.governance.compression import bigram_coverage, plan_compress, rejection
from vault_engine.llm.fakes import UnreachableLlm, UnusedLlm
from vault_engine.llm.offline import OfflineLlm

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
RULE = ("When you write commit messages for this repository, always make sure that the subject line is "
        "written in the imperative mood and kept under 72 characters, and remember that the body should "
        "explain why the change was made rather than what it changed, because the diff already shows that.")
GOOD = "Commit messages: imperative subject line under 72 characters; the body should explain why the change was made."
PARAPHRASE = "Phrase commit subjects as orders of at most seventy-two letters; motivation goes below them."
TIERS = VaultConfig().tiers
AT_80 = RULE[: math.ceil(len(RULE) * 0.8)]  # 80% of the length, rounded up: not under 80%


class Compressor(UnusedLlm):
    """Answers every compression with ``answer`` (or raises it) and records what it was asked."""

    def __init__(self, answer: str | Exception = GOOD):
        self.answer = answer
        self.asked: list[str] = []

    @property
    def name(self) -> str:
        return "model-c"

    def compress(self, text: str) -> str:
        self.asked.append(text)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def rule(memory_id: str = "m-rule", body: str = RULE, days_old: float = 40, **fields: Any) -> Memory:
    values: dict[str, Any] = {"type": "collaboration-policy", "tier": "hot", "title": "Commit messages",
                              "created": NOW - timedelta(days=days_old), **fields}
    return Memory(id=memory_id, body=body + "\n", **values)


def view_of(*memories: Memory, advisor: Advisor | None = None,
            vetoes: frozenset[tuple[str, frozenset[str]]] = frozenset()) -> View:
    return View({m.id: m for m in memories}, {m.id: f"memories/global/{m.id}.md" for m in memories}, {}, NOW,
                VaultConfig(), vetoes=vetoes, advisor=advisor or Advisor())


# ---------------------------------------------------------------- the checks (pure)


@pytest.mark.parametrize(("compressed", "original", "expected"), [
    ("Always run ruff", "always run ruff", 1.0),
    ("ALWAYS,   run-ruff!", "always run ruff", 1.0),  # case, spaces and punctuation do not count
    ("run ruff", "always run ruff", 5 / 11),  # ru un nr uf ff of the 11 pairs of "alwaysrunruff"
    ("", "always run ruff", 0.0),
    ("anything", "", 0.0),  # an original without a bigram
])
def test_bigram_coverage_is_the_share_of_the_originals_letter_pairs_the_compression_keeps(
        compressed: str, original: str, expected: float) -> None:
    assert bigram_coverage(compressed, original) == pytest.approx(expected)


def test_rejection_accepts_a_faithful_shorter_text() -> None:
    assert rejection(RULE, GOOD, TIERS) is None
    assert bigram_coverage(GOOD, RULE) >= 0.45


@pytest.mark.parametrize(("compressed", "fragment"), [
    (AT_80, "is not under 80%"),
    (RULE + " And more.", "is not under 80%"),
    ("Subject: imperative, <= 72.", "is under 30"),
    (PARAPHRASE, "of the original's letter pairs (under 45%)"),
])
def test_rejection_names_the_check_that_fails(compressed: str, fragment: str) -> None:
    found = rejection(RULE, compressed, TIERS)
    assert found is not None and fragment in found


# ---------------------------------------------------------------- the plan


def test_an_old_long_hot_rule_is_compressed_and_its_original_kept_cold_in_the_same_action() -> None:
    llm = Compressor()
    view = view_of(rule(links=("m-other",), summary="Commit messages, in full."), advisor=Advisor(llm))
    [action] = plan_compress(view)
    assert llm.asked == [RULE]
    assert action.kind == "compress" and action.memory == "m-rule" and "40 days" in action.reason
    [(folder, copy)] = action.create
    assert folder == "memories/global" and copy.id != "m-rule" and copy.id in action.reason
    assert (copy.body, copy.title, copy.tier, copy.recall) == (RULE + "\n", "Commit messages (original)", "cold",
                                                              "active")
    assert copy.extra[ORIGINAL_OF] == "m-rule" and copy.links == ("m-rule",) and copy.source == "maintain"
    [change] = action.changes
    assert change.id == "m-rule" and change.before["body"] == RULE + "\n"
    after = view.after([action])
    compressed = after.active["m-rule"]
    assert compressed.body == GOOD + "\n" and compressed.summary == GOOD and compressed.tier == "hot"
    assert compressed.links == ("m-other", copy.id) and compressed.extra[COMPRESSED_FROM] == copy.id
    assert resident_chars(compressed) < resident_chars(view.active["m-rule"])
    assert copy.id not in {m.id for m in after.governed()}  # kept as it is: no step changes the original


@pytest.mark.parametrize("answer", [
    AT_80,  # not short enough
    "Subject: imperative, <= 72.",  # too short to keep the rule
    PARAPHRASE,  # other words: not a compression of this text
])
def test_a_rejected_answer_keeps_the_rule(answer: str) -> None:
    llm = Compressor(answer)
    assert plan_compress(view_of(rule(), advisor=Advisor(llm))) == []
    assert llm.asked == [RULE]


@pytest.mark.parametrize("advisor", [
    Advisor(),  # no model
    Advisor(OfflineLlm()),
    Advisor(UnreachableLlm()),
    Advisor(Compressor(LlmUnsure("the model could not tell"))),
    Advisor(Compressor(LlmUnavailable("timed out"))),
], ids=["no-model", "offline", "unreachable", "unsure", "timeout"])
def test_no_answer_keeps_the_rule(advisor: Advisor) -> None:
    assert plan_compress(view_of(rule(), advisor=advisor)) == []


@pytest.mark.parametrize("memory", [
    rule(days_old=29),  # edited within 30 days
    rule(days_old=90, updated=NOW - timedelta(days=3)),  # written long ago, edited lately
    rule(body=RULE[:200]),  # 200 chars is not longer than 200
    rule(tier="cold"),
    rule(body="2026-01-05: migrated the billing database to Postgres 16 and removed the old replicas. " * 3,
         type="fact"),  # a state, not a rule
    rule(created=None),  # undated: no evidence it is old
    rule(extra={COMPRESSED_FROM: "m-copy"}),  # compressed before
    rule(extra={STUB_OF: "m-x"}),
    rule(source="maintain:synthesis"),
], ids=["young", "edited", "short", "cold", "state", "undated", "compressed", "stub", "governance-written"])
def test_only_long_hot_rules_unedited_for_30_days_are_asked(memory: Memory) -> None:
    assert plan_compress(view_of(memory, advisor=Advisor(UnusedLlm()))) == []  # the model would fail the test


@pytest.mark.parametrize("memory", [
    rule(importance=0.9),
    rule(type="core-profile", authority="explicit"),
    rule(tags=("Red-Line",)),
    rule(body=RULE + " This is non-negotiable."),
    rule(body="Red line: " + RULE),
], ids=["importance", "explicit-profile", "tag", "non-negotiable", "red-line-words"])
def test_protected_rules_and_red_lines_are_never_compressed(memory: Memory) -> None:
    assert plan_compress(view_of(memory, advisor=Advisor(UnusedLlm()))) == []


def test_an_inferred_core_profile_may_be_compressed() -> None:
    [action] = plan_compress(view_of(rule(type="core-profile"), advisor=Advisor(Compressor())))
    assert action.memory == "m-rule"


def test_a_rolled_back_compression_is_not_asked_again() -> None:
    view = view_of(rule(), advisor=Advisor(UnusedLlm()), vetoes=frozenset({("compress", frozenset({"m-rule"}))}))
    assert plan_compress(view) == []


def test_a_copy_an_interrupted_run_wrote_is_used_again() -> None:
    copy = rule("m-copy", tier="cold", extra={ORIGINAL_OF: "m-rule"}, source="maintain", links=("m-rule",))
    [action] = plan_compress(view_of(rule(), copy, advisor=Advisor(Compressor())))
    assert action.create == () and action.changes[0].after[COMPRESSED_FROM] == "m-copy"
    assert action.key() == ("compress", frozenset({"m-rule"}))


def test_a_second_plan_plans_nothing_and_asks_the_model_nothing(tmp_path: Path) -> None:
    llm = Compressor()
    first = Advisor(llm, tmp_path)
    view = view_of(rule(), rule("m-long", body=RULE + " Squash fixups before merging."), advisor=first)
    actions = plan_compress(view)
    assert [a.memory for a in actions] == ["m-long", "m-rule"] and first.asked == 2
    assert plan_compress(view.after(actions)) == [] and first.asked == 2
    first.save()
    again = Advisor(llm, tmp_path)  # the next run: the same questions are answered from .memvault/advice.json
    assert [a.memory for a in plan_compress(view_of(*view.active.values(), advisor=again))] == ["m-long", "m-rule"]
    assert again.asked == 0 and len(llm.asked) == 2


def test_a_rejected_answer_is_remembered_too(tmp_path: Path) -> None:
    llm = Compressor(PARAPHRASE)
    advisor = Advisor(llm, tmp_path)
    assert plan_compress(view_of(rule(), advisor=advisor)) == [] and advisor.asked == 1
    advisor.save()
    again = Advisor(llm, tmp_path)
    assert plan_compress(view_of(rule(), advisor=again)) == [] and again.asked == 0
