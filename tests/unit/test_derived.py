"""What the indexes derive from one memory: the body's passages, the texts each lane embeds."""

from __future__ import annotations

from vault_engine.index.derived import passages
from vault_engine.index.fakes import HashEmbedder

EPISODE = """### user · 2023-05-08T13:56:00

Caroline: I went to a LGBTQ support group yesterday and it was so powerful.

### assistant · 2023-05-08T13:56:00

Melanie: Wow, that's cool, Caroline! What happened?
"""


def test_each_turn_of_an_episode_is_a_passage_with_its_heading() -> None:
    assert passages(EPISODE, HashEmbedder()) == [
        "### user · 2023-05-08T13:56:00\n\nCaroline: I went to a LGBTQ support group yesterday and it was so powerful.",
        "### assistant · 2023-05-08T13:56:00\n\nMelanie: Wow, that's cool, Caroline! What happened?",
    ]


def test_a_one_paragraph_body_is_one_passage_and_a_long_paragraph_is_cut_at_the_window() -> None:
    fake = HashEmbedder(window=5)
    assert passages("one two three", fake) == ["one two three"]
    assert passages("a b c d e f g\n\nshort one", fake) == ["a b c d e", "f g", "short one"]


def test_a_heading_with_nothing_after_it_is_still_embedded() -> None:
    assert passages("Intro text.\n\n# Later", HashEmbedder()) == ["Intro text.", "# Later"]


def test_a_line_starting_with_a_hash_that_is_no_heading_is_a_paragraph_of_its_own() -> None:
    assert passages("#42 is the ticket\n\nThe fix is in.", HashEmbedder()) == ["#42 is the ticket", "The fix is in."]
