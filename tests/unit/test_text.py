"""Text helpers: sentences for the sentence lane, titles, summaries, clipping."""

from __future__ import annotations

from vault_engine.format.text import clip, make_summary, make_title, sentences


def test_sentences_split_at_sentence_ends_blank_lines_and_list_items() -> None:
    text = "I love it. This necklace is special to me. It came from Sweden.\n\n- a list item here\n- another one"
    assert sentences(text) == ["I love it.", "This necklace is special to me.", "It came from Sweden.",
                               "- a list item here", "- another one"]


def test_short_sentences_join_the_next_and_repeats_are_dropped() -> None:
    assert sentences("Wow! Yes! That was a great show.") == ["Wow! Yes! That was a great show."]
    assert sentences("That was a great show. That was a great show.") == ["That was a great show."]
    assert sentences("It went well. Thanks!") == ["It went well. Thanks!"]  # a short tail joins the last
    assert sentences("Hi!") == ["Hi!"]
    assert sentences("   ") == []


def test_sentences_stop_at_the_limit() -> None:
    text = " ".join(f"Sentence number {n} is here." for n in range(20))
    assert len(sentences(text, limit=8)) == 8
    assert sentences(text, limit=8)[0] == "Sentence number 0 is here."


def test_titles_summaries_and_clipping() -> None:
    assert make_title("# Deploys\nMore text.") == "Deploys"
    # The leading sentences that fit: a short text is its own summary.
    assert make_summary("First sentence here. Second one.") == "First sentence here. Second one."
    heading = make_summary("# Deploys\nThey run at noon.\nNever on Fridays.")
    assert heading == "Deploys They run at noon. Never on Fridays."
    long = "First sentence here. " + "A second sentence that goes on and on. " * 8
    assert make_summary(long, limit=60) == "First sentence here. A second sentence that goes on and on."
    assert make_summary("One sentence far longer than the limit allows it to be.", limit=20) == "One sentence far…"
    assert clip("one two three four", 9) == "one two…"
