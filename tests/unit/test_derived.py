"""What the indexes derive from one memory: the body's passages, the texts each lane embeds."""

from __future__ import annotations

from vault_engine.index.derived import passages, windows
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


def test_a_long_paragraph_is_cut_between_sentences_so_each_window_holds_whole_sentences() -> None:
    fake = HashEmbedder(window=10)
    paragraph = "The cat sat on the mat. It was warm there. The dog barked at the mailman all day long."
    assert windows(paragraph, fake) == ["The cat sat on the mat. It was warm there.",
                                        "The dog barked at the mailman all day long."]


def test_a_sentence_longer_than_the_window_is_cut_at_a_word_and_nothing_is_lost() -> None:
    fake = HashEmbedder(window=4)
    sentence = "alpha  beta\tgamma delta epsilon zeta eta"
    pieces = windows(sentence, fake)
    assert pieces == ["alpha  beta\tgamma delta", "epsilon zeta eta"]
    assert " ".join(pieces).split() == sentence.split()
    assert all(len(p.split()) <= 4 for p in pieces)


def test_a_list_is_cut_between_its_items_with_each_number_kept_on_its_item() -> None:
    fake = HashEmbedder(window=6)
    items = "Try these:\n1. Visit the old museum downtown\n2. Walk along the river\n3. Eat at the market"
    assert windows(items, fake) == ["Try these:", "1. Visit the old museum downtown", "2. Walk along the river",
                                    "3. Eat at the market"]


def test_a_passage_that_fits_is_kept_as_it_is() -> None:
    fake = HashEmbedder(window=64)
    assert windows("Short. Two sentences.", fake) == ["Short. Two sentences."]
    assert passages("Short. Two sentences.\n\nAnother paragraph.", fake) == ["Short. Two sentences.",
                                                                              "Another paragraph."]


class _ReadCounter(HashEmbedder):
    """The fake model, counting the characters it is asked to cut."""

    def __init__(self, window: int) -> None:
        super().__init__(window=window)
        self.read = 0

    def chunks(self, text: str) -> list[str]:
        self.read += len(text)
        return super().chunks(text)


def _windows_reading_everything(piece: str, embedder: HashEmbedder) -> list[str]:
    """The windows as cut when the model was asked about the whole rest of the piece each time."""

    class Whole(HashEmbedder):
        def chunks(self, text: str) -> list[str]:
            return HashEmbedder.chunks(embedder, text)

    from vault_engine.index import derived
    saved = derived._PROBE_CHARS
    derived._PROBE_CHARS = 10 * len(piece) + 1
    try:
        return windows(piece, Whole(window=embedder.window))
    finally:
        derived._PROBE_CHARS = saved


def test_a_long_body_is_cut_as_if_the_model_read_it_whole() -> None:
    words = [f"w{i}{'x' * (i % 13)}" for i in range(4000)]
    sentences = [" ".join(words[i : i + 7 + i % 5]) + "." for i in range(0, len(words), 9)]
    piece = " ".join(sentences)
    fake = HashEmbedder(window=40)
    assert windows(piece, fake) == _windows_reading_everything(piece, fake)


def test_cutting_a_body_reads_it_in_proportion_to_its_length() -> None:
    """A 2 MB paragraph (a pasted log) once kept sync busy for tens of minutes: each window asked the model
    to cut the whole rest of the body."""
    piece = " ".join(f"word{i % 97}" for i in range(400_000))
    counter = _ReadCounter(window=64)
    pieces = windows(piece, counter)
    assert " ".join(pieces).split() == piece.split()
    assert counter.read < 20 * len(piece)
