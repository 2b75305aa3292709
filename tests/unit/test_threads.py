"""Threads: turns of one conversation, ordered, with their neighbours."""

from __future__ import annotations

from vault_engine.format import threads
from vault_engine.format.threads import Turn


def test_thread_of_reads_conversation_and_session_sources() -> None:
    assert threads.thread_of("conversation:chat-7#D1:3") == ("chat-7", "D1:3")
    assert threads.thread_of("session:abc#12") == ("abc", "12")
    assert threads.thread_of("conversation:chat-7") is None
    assert threads.thread_of("user") is None
    assert threads.thread_of("document:file.md#part") is None


def test_positions_sort_naturally() -> None:
    turns = [Turn("c", "D1:10", "ten"), Turn("a", "D1:9", "nine"), Turn("b", "D2:1", "next session")]
    assert [t.id for t in threads.order(turns)] == ["a", "c", "b"]


def test_neighbours_are_the_turns_before_and_after() -> None:
    turns = [Turn("a", "1", "A"), Turn("b", "2", "B"), Turn("c", "3", "C")]
    around = threads.neighbours(turns)
    assert threads.context_of("a", around) == ("", "B")
    assert threads.context_of("b", around) == ("A", "C")
    assert threads.context_of("c", around) == ("B", "")
    assert threads.context_of("elsewhere", around) == ("", "")
    assert threads.neighbours_by_id({"t": turns}) == {"a": (None, "b"), "b": ("a", "c"), "c": ("b", None)}


def test_context_parts_put_the_turn_between_its_neighbours() -> None:
    assert threads.context_parts("B", "A", "C") == ["A", "B", "C"]
    assert threads.context_parts("B", "", "C") == ["B", "C"]
    assert threads.context_parts("B", "", "") == []
    assert threads.turn_text("Title", "") == "Title"
    assert threads.turn_text("Title", " Summary ") == "Summary"
