"""LongMemEval's scoring as the benchmark applies it: turn recall, sessions by their best turn, the
stratified sample, and haystacks that never show a session id."""

from __future__ import annotations

import json
import math

from benchmarks import haystacks
from benchmarks.bm25 import Bm25
from benchmarks.longmemeval import scores, sessions_ranked, stratified


def turn(session: int, number: int) -> str:
    return haystacks.handle(session, number)


def test_sessions_are_ranked_by_their_best_turn() -> None:
    ranked = [turn(3, 0), turn(1, 2), turn(3, 1), turn(7, 0), turn(1, 0)]
    assert sessions_ranked(ranked) == [3, 1, 7]


def test_turn_recall_counts_the_answer_turns_in_the_top_k() -> None:
    ranked = [turn(s, 0) for s in range(12)]
    gold = {turn(0, 0), turn(6, 0), turn(20, 0)}
    got = scores(ranked, gold, {0, 6, 20})
    assert math.isclose(got["turn_r5"], 1 / 3) and math.isclose(got["turn_r10"], 2 / 3)


def test_session_recall_any_and_all_read_the_top_k_distinct_sessions() -> None:
    # Five turns of session 9 first: the top 5 sessions still reach session 4.
    ranked = [turn(9, n) for n in range(5)] + [turn(s, 0) for s in (1, 2, 3, 4, 5)]
    got = scores(ranked, {turn(4, 0)}, {4, 5})
    assert got["any5"] == 1.0 and got["all5"] == 0.0 and got["all10"] == 1.0


def test_ndcg_is_one_when_the_evidence_sessions_come_first_and_less_when_they_do_not() -> None:
    assert scores([turn(2, 0), turn(5, 0), turn(1, 0)], {turn(2, 0)}, {2, 5})["ndcg10"] == 1.0
    late = scores([turn(1, 0), turn(2, 0), turn(5, 0)], {turn(2, 0)}, {2, 5})["ndcg10"]
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert math.isclose(late, expected)


def test_the_sample_is_stratified_by_type_and_the_same_every_time() -> None:
    items = [{"question_id": f"q{n:03d}", "question_type": "a" if n < 60 else ("b" if n < 90 else "c")}
             for n in range(100)]
    picked = stratified(items, 10)
    counts = {t: sum(1 for i in picked if i["question_type"] == t) for t in "abc"}
    assert counts == {"a": 6, "b": 3, "c": 1}
    assert picked == stratified(list(reversed(items)), 10)
    assert stratified(items, 0) == items


def test_a_haystack_is_exported_in_date_order_with_positional_handles_and_no_session_id() -> None:
    item = {
        "haystack_dates": ["2023/05/02 (Tue) 10:00", "2023/05/01 (Mon) 09:00"],
        "haystack_session_ids": ["answer_abc_1", "sharegpt_xyz"],
        "haystack_sessions": [[{"role": "user", "content": "I adopted a cat named Miso.", "has_answer": True}],
                              [{"role": "user", "content": "hello"}, {"role": "assistant", "content": " "},
                               {"role": "assistant", "content": "Hi there."}]],
        "answer_session_ids": ["answer_abc_1"],
    }
    sessions, evidence = haystacks.sessions_of(item)
    assert evidence == {1}
    assert [[t.handle for t in s] for s in sessions] == [[turn(0, 0), turn(0, 2)], [turn(1, 0)]]
    lines = [line for s in sessions for line in haystacks.export_lines(s)]
    assert json.loads(lines[0]) == {"role": "user", "content": "hello", "ts": "2023-05-01T09:00:00Z"}
    assert [haystacks.export_name(s) for s in sessions] == ["session-0.jsonl", "session-1.jsonl"]
    assert not any("answer_" in line or "sharegpt" in line for line in lines)
    # The importer's source for each line (conversation:session-N#LINE) maps to its turn, past the
    # empty turn the export leaves out.
    handles = haystacks.line_handles(sessions)
    assert sorted(handles.values()) == sorted([turn(0, 0), turn(0, 2), turn(1, 0)])
    assert [source.rsplit("#", 1)[1] for source, handle in sorted(handles.items(), key=lambda p: p[1])] == \
        ["1", "2", "1"]
    assert all(source.startswith(("conversation:session-0-", "conversation:session-1-")) for source in handles)


def test_bm25_ranks_the_document_with_the_rare_word_first() -> None:
    index = Bm25(["the cat sat", "a dog ran far", "the dog and the cat"])
    assert index.ranking("dog ran")[0] == 1
    assert index.scores("zebra") == [0.0, 0.0, 0.0]
