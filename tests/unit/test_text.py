"""Text helpers: sentences for the sentence lane, titles, summaries, clipping."""

from __future__ import annotations

import json

import pytest

from vault_engine.format.text import (
    clip,
    is_one_off,
    link_text,
    make_summary,
    make_title,
    printable,
    printable_json,
    sentences,
    whole_fragment,
)


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


@pytest.mark.parametrize(("text", "title"), [
    (". What are the salient features of IPR in India?", "What are the salient features of IPR in India?"),
    (". WHAT", "WHAT"),  # a chat turn that opens with the full stop of the turn before it
    (".", "."),
    ("...", "..."),
])
def test_a_text_that_opens_with_a_full_stop_still_has_a_title(text: str, title: str) -> None:
    assert make_title(text) == title


@pytest.mark.parametrize(("text", "phrase"), [
    ("Not this time, skip the linter", "Not this time"),
    ("Just for today, use the staging database", "Just for today"),
    ("Use tabs, for today only", "for today only"),
    ("Today, use the staging database.", "Today"),
    ("We ship on Fridays. today, skip the release", "today"),
    ("Use the staging database today.", "today"),
    ("Please deploy from the release branch today!", "today"),
    ("Do not push to main today", "today"),
    ("Skip the e2e tests for now", "for now"),
    ("For now, don't run the migrations.", "For now"),
])
def test_one_off_instructions_for_this_time_today_or_now(text: str, phrase: str) -> None:
    assert is_one_off(text) == phrase


@pytest.mark.parametrize("text", [
    "Today's date format is ISO 8601",
    "The user reviews PRs today and every day",
    "Today is the release day",
    "Always run the linter, starting today",
    "Use ISO dates from today",
    "Use the new API as of today.",
    "Run the linter on every commit from today on",
    "For now, the API is read-only.",
    "We use Postgres for now",
    "Now, use pnpm instead of npm",
    "Deploys happen today and every Friday",
])
def test_lasting_statements_that_mention_today_are_not_one_off(text: str) -> None:
    assert is_one_off(text) is None


@pytest.mark.parametrize(("text", "shown"), [
    ("title \x1b]0;owned\x07 here", "title \\x1b]0;owned\\x07 here"),  # would set the terminal's title
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("C1 \x9b2J and \x9d0;x\x9c, DEL \x7f", "C1 \\x9b2J and \\x9d0;x\\x9c, DEL \\x7f"),
    ("over\rwritten", "over\\x0dwritten"),
    ("lines\nand\ttabs\r\nstay", "lines\nand\ttabs\r\nstay"),
    ("plain é ü 中 ✓", "plain é ü 中 ✓"),
])
def test_printable_shows_control_characters(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert printable(printable(text)) == shown  # once is enough


def test_printable_json_is_the_same_json_without_a_raw_control_character() -> None:
    value = {"title": "a\x7fb\x9b31mc\x1b\n", "ok": "é"}
    text = printable_json(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value
    assert not any(0x7f <= ord(c) <= 0x9f or ord(c) < 0x20 for c in text)
    assert "é" in text


def test_a_link_names_the_note_of_a_wikilink_or_itself() -> None:
    assert link_text("[[release-day|the release]]") == "release-day"
    assert link_text(" [[ Release day #steps ]] ") == "Release day"
    assert link_text("m-01abc") == "m-01abc"
    assert link_text("  Deploy checklist ") == "Deploy checklist"
    assert link_text("[[]]") == ""


@pytest.mark.parametrize(("text", "fragment", "whole"), [
    ("Errors use problem+json (RFC 7807).", "Errors use problem+json (RFC 7807", "Errors use problem+json (RFC 7807)."),
    ("We cite (RFC 7807), always.", "RFC 7807", "(RFC 7807),"),
    ('He said "ship it!" twice', "ship it", '"ship it!"'),
    ("A json-based format", "A json", "A json"),  # a mark inside a word is not the fragment's end
    ("x(RFC 7807", "RFC 7807", "RFC 7807"),  # nor a bracket glued to the word before
    ("Errors use problem+json.", "", ""),
    ("Errors use problem+json.", "not in the text", "not in the text"),
])
def test_a_fragment_keeps_the_marks_that_close_and_open_it(text: str, fragment: str, whole: str) -> None:
    assert whole_fragment(text, fragment) == whole
