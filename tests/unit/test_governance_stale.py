"""Stale notes: short inferred notes marked stale, long in-progress ones judged by the model; and the advisor's
failures, told apart from "cannot tell" and from no model at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from vault_engine.config import VaultConfig
from vault_engine.errors import LlmUnavailable, LlmUnsure
from vault_engine.format.memory import Memory
from vault_engine.governance.actions import View
from vault_engine.governance.advice import Advisor
from vault_engine.governance.classify import ORIGINAL_OF, STUB_OF
from vault_engine.governance.stale import plan_stale
from vault_engine.llm.fakes import UnreachableLlm, UnusedLlm
from vault_engine.llm.offline import OfflineLlm

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
WIP = ("The billing migration to Postgres 16 is in progress: invoices and payments tables are copied, "
       "the reports schema remains.")


class Judge(UnusedLlm):
    def __init__(self, answer: bool | Exception):
        self.answer = answer
        self.asked: list[str] = []

    @property
    def name(self) -> str:
        return "model-s"

    def stale(self, text: str) -> bool:
        self.asked.append(text)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def note(memory_id: str, body: str, *, idle: float = 45, **fields: Any) -> Memory:
    values: dict[str, Any] = {"type": "fact", "authority": "inferred", "title": body[:40],
                              "created": NOW - timedelta(days=idle), **fields}
    return Memory(id=memory_id, body=body + "\n", **values)


def view_of(*memories: Memory, advisor: Advisor | None = None,
            vetoes: frozenset[tuple[str, frozenset[str]]] = frozenset()) -> View:
    return View({m.id: m for m in memories}, {m.id: f"memories/global/{m.id}.md" for m in memories}, {}, NOW,
                VaultConfig(), vetoes=vetoes, advisor=advisor or Advisor())


# ---------------------------------------------------------------- short notes


@pytest.mark.parametrize(("body", "marker"), [
    ("The login timeout bug was fixed in 2.3.", "was fixed"),
    ("Flaky checkout test: already resolved.", "already resolved"),
    ("The Jenkins server is obsolete.", "obsolete"),
    ("Staging credentials note, no longer relevant", "no longer relevant"),
    ("[stale] staging runs on port 8081", "[stale]"),
    ("The old dashboard has been retired.", "has been retired"),
])
def test_a_short_inferred_note_marked_stale_goes_to_the_trash(body: str, marker: str) -> None:
    [action] = plan_stale(view_of(note("m-a", body, idle=0), advisor=Advisor(UnusedLlm())))
    assert (action.kind, action.memory, action.trash) == ("stale", "m-a", ("m-a",))
    assert action.reason == f"a short note marked stale ('{marker}')"


@pytest.mark.parametrize("memory", [
    note("m-a", "The login timeout bug was fixed in 2.3.", authority="explicit"),  # a person wrote it
    note("m-a", "The old deploy script is obsolete; always use make release."),  # an instruction
    note("m-a", "The port is fixed at 8080 on staging."),  # "fixed" is no marker on its own
    note("m-a", "The login timeout bug was fixed in 2.3.", importance=0.9),
    note("m-a", "The login timeout bug was fixed in 2.3.", tags=("red-line",)),
    note("m-a", "The login timeout bug was fixed in 2.3.", type="episode"),
    note("m-a", "The login timeout bug was fixed in 2.3.", type="core-profile"),
    note("m-a", "The login timeout bug was fixed in 2.3.", trust="system"),
    note("m-a", "The login timeout bug was fixed in 2.3.", extra={STUB_OF: "m-b"}),
    note("m-a", "The login timeout bug was fixed in 2.3.", extra={ORIGINAL_OF: "m-b"}),
    note("m-a", "The login timeout bug was fixed in 2.3.", source="maintain:synthesis"),
    note("m-a", "The login timeout bug was fixed in 2.3 and the regression test covers it, "
         "together with the retry path and the slow network case."),  # long: only in-progress notes are judged
], ids=["explicit", "instruction", "adjective", "protected", "red-line", "episode", "profile", "system",
        "stub", "original", "governance-written", "long"])
def test_what_is_never_trashed_as_stale(memory: Memory) -> None:
    assert plan_stale(view_of(memory, advisor=Advisor(UnusedLlm()))) == []


# ---------------------------------------------------------------- long in-progress notes


def test_a_long_in_progress_note_the_model_judges_stale_goes_to_the_trash() -> None:
    llm = Judge(True)
    [action] = plan_stale(view_of(note("m-wip", WIP), advisor=Advisor(llm)))
    assert llm.asked == [WIP] and action.trash == ("m-wip",)
    assert action.reason == "in progress ('in progress') and unused for 45 days; the language model judged it stale"


def test_a_long_in_progress_note_the_model_judges_current_is_kept() -> None:
    llm = Judge(False)
    assert plan_stale(view_of(note("m-wip", WIP), advisor=Advisor(llm))) == [] and llm.asked == [WIP]


@pytest.mark.parametrize("advisor", [Advisor(UnreachableLlm()), Advisor(Judge(LlmUnavailable("timed out")))],
                         ids=["unreachable", "timeout"])
def test_a_model_that_fails_sends_long_in_progress_notes_to_the_trash(advisor: Advisor) -> None:
    view = view_of(note("m-wip", WIP), note("m-todo", "TODO: " + WIP.replace(" is in progress", "")),
                   advisor=advisor)
    actions = plan_stale(view)
    assert [a.memory for a in actions] == ["m-todo", "m-wip"] and advisor.failed("stale")
    assert "could not be asked, so it waits in the trash (30 days; memvault trash restore m-wip)" in actions[1].reason


@pytest.mark.parametrize("advisor", [Advisor(), Advisor(OfflineLlm()), Advisor(Judge(LlmUnsure("cannot tell")))],
                         ids=["no-model", "offline", "unsure"])
def test_without_a_judgement_a_long_note_is_kept(advisor: Advisor) -> None:
    assert plan_stale(view_of(note("m-wip", WIP), advisor=advisor)) == [] and not advisor.failed()


@pytest.mark.parametrize("memory", [
    note("m-wip", WIP, idle=29),  # not idle long enough
    note("m-wip", WIP, last_applied=NOW - timedelta(days=3)),  # used lately
    note("m-wip", WIP + " Always run the row counts afterwards."),  # gives an instruction
    note("m-wip", WIP, authority="explicit"),
    note("m-wip", WIP.replace("is in progress", "is complete")),  # no in-progress marker
], ids=["young", "used", "instruction", "explicit", "no-marker"])
def test_what_the_model_is_never_asked_about(memory: Memory) -> None:
    assert plan_stale(view_of(memory, advisor=Advisor(UnusedLlm()))) == []


def test_a_rolled_back_trash_is_not_planned_again() -> None:
    vetoes = frozenset({("stale", frozenset({"m-a"}))})
    assert plan_stale(view_of(note("m-a", "The Jenkins server is obsolete."), vetoes=vetoes)) == []


def test_a_second_plan_asks_nothing(tmp_path: Path) -> None:
    llm = Judge(False)
    first = Advisor(llm, tmp_path)
    assert plan_stale(view_of(note("m-wip", WIP), advisor=first)) == [] and first.asked == 1
    first.save()
    again = Advisor(llm, tmp_path)
    assert plan_stale(view_of(note("m-wip", WIP), advisor=again)) == [] and again.asked == 0


# ---------------------------------------------------------------- the advisor: failed, unsure, offline


def test_unsure_is_an_answer_remembered_and_not_a_failure(tmp_path: Path) -> None:
    llm = Judge(LlmUnsure("the model could not tell"))
    advisor = Advisor(llm, tmp_path)
    assert advisor.stale("one") is None and advisor.stale("two") is None
    assert llm.asked == ["one", "two"] and not advisor.failed()  # unsure about one: the next is still asked
    advisor.save()
    again = Advisor(llm, tmp_path)
    assert again.stale("one") is None and again.asked == 0


def test_a_failure_is_told_by_kind_and_not_remembered(tmp_path: Path) -> None:
    advisor = Advisor(Judge(LlmUnavailable("timed out")), tmp_path)
    assert advisor.stale("one") is None
    assert advisor.failed("stale") and advisor.failed() and not advisor.failed("compress")
    assert not Advisor(OfflineLlm()).failed() and not Advisor().failed()
    offline = Advisor(OfflineLlm())
    assert offline.stale("x") is None and not offline.failed("stale")
