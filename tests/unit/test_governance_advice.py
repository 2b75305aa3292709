"""The advisor: governance's questions to a language model, each asked once and remembered."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vault_engine.errors import LlmUnavailable
from vault_engine.governance.advice import ADVICE_FILE, Advisor
from vault_engine.llm.fakes import UnreachableLlm, UnusedLlm
from vault_engine.llm.offline import OfflineLlm


class Counting(UnusedLlm):
    def __init__(self, name: str = "model-a") -> None:
        self.calls: list[str] = []
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def compress(self, text: str) -> str:
        self.calls.append("compress")
        return text[: len(text) // 2]

    def stale(self, text: str) -> bool:
        self.calls.append("stale")
        return "done" in text

    def dormant(self, text: str, recent_tasks: Sequence[str]) -> bool:
        self.calls.append("dormant")
        raise LlmUnavailable("the model timed out")


def test_no_model_answers_nothing() -> None:
    advisor = Advisor()
    assert (advisor.compress("x"), advisor.stale("x"), advisor.dormant("x", []), advisor.synthesize([])) == (
        None, None, None, None)


def test_each_question_is_asked_once_and_remembered_across_runs(tmp_path: Path) -> None:
    llm = Counting()
    first = Advisor(llm, tmp_path)
    assert first.compress("a long rule text") == "a long r"
    assert first.compress("a long rule text") == "a long r"
    assert first.stale("migration done") is True and first.stale("still going") is False
    assert llm.calls == ["compress", "stale", "stale"]
    first.save()
    assert (tmp_path / ADVICE_FILE).is_file()
    again = Advisor(llm, tmp_path)
    assert again.compress("a long rule text") == "a long r" and again.stale("migration done") is True
    assert llm.calls == ["compress", "stale", "stale"] and again.asked == 0
    other = Advisor(Counting("model-b"), tmp_path)  # another model is asked again
    assert other.compress("a long rule text") == "a long r" and other.asked == 1


def test_an_unavailable_model_is_not_asked_again_in_the_run_nor_remembered(tmp_path: Path) -> None:
    llm = Counting()
    advisor = Advisor(llm, tmp_path)
    assert advisor.dormant("rule one", ["task"]) is None and advisor.dormant("rule two", ["task"]) is None
    assert llm.calls == ["dormant"]
    advisor.save()
    assert Advisor(llm, tmp_path).dormant("rule one", ["task"]) is None and llm.calls == ["dormant", "dormant"]
    unreachable = Advisor(UnreachableLlm(), tmp_path)
    assert unreachable.compress("x") is None and unreachable.synthesize([{"id": "m", "title": "t"}]) is None


def test_offline_judges_nothing_and_synthesizes_extractively(tmp_path: Path) -> None:
    advisor = Advisor(OfflineLlm(), tmp_path)
    assert advisor.compress("Always run ruff before committing.") is None
    assert advisor.stale("In progress: the billing migration.") is None
    found = advisor.synthesize([
        {"id": "m-1", "title": "Billing migration", "text": "The billing database moved to Postgres 16. More."},
        {"id": "m-2", "title": "Billing backups", "text": "Billing backups run nightly to S3."},
    ])
    assert found is not None and "billing" in found.title.lower()
    assert found.text.splitlines() == ["- Billing migration: The billing database moved to Postgres 16.",
                                       "- Billing backups run nightly to S3."]  # the title is the sentence's start
    advisor.save()
    assert not (tmp_path / ADVICE_FILE).exists()  # offline rules of thumb are not kept


def test_a_damaged_cache_is_asked_again(tmp_path: Path) -> None:
    (tmp_path / ".memvault").mkdir()
    (tmp_path / ADVICE_FILE).write_text("{not json", encoding="utf-8")
    llm = Counting()
    assert Advisor(llm, tmp_path).compress("some rule") == "some" and llm.calls == ["compress"]


def test_an_offline_overview_is_not_titled_by_an_update_marker() -> None:
    said = ["The staging database port is now 5499", "The staging cache now runs on port 6380",
            "The production database is now on port 5499"]
    found = OfflineLlm().synthesize([{"id": f"m-{n}", "title": text, "text": text} for n, text in enumerate(said)])
    assert found.title.startswith("Overview: ") and "now" not in found.title.split(": ", 1)[1].split(", ")
    assert "port" in found.title
