"""The offline language model (deterministic, no network) and select()."""

from __future__ import annotations

import re

import pytest

from vault_engine.config import LlmSettings
from vault_engine.errors import ConfigError
from vault_engine.llm.base import RECALLS, Turn
from vault_engine.llm.offline import OfflineLlm, content_words, keywords
from vault_engine.llm.select import select

DEPLOY = [
    Turn("user", "How do I rotate the deploy keys for the staging cluster?"),
    Turn("assistant", "Rotate the deploy keys with the vault command, then restart the deploy job on staging."),
    Turn("user", "The deploy job failed after the key rotation on the staging cluster."),
]
TRANSCRIPT = (
    "User: How do I rotate the deploy keys for the staging cluster?\n\n"
    "Assistant: Rotate the deploy keys with the vault command. Then restart the deploy job on staging.\n\n"
    "User: Thanks, the deploy worked."
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


@pytest.fixture
def llm() -> OfflineLlm:
    return OfflineLlm(load_chars=1000)


# ---------------------------------------------------------------- sense


def test_name_is_offline(llm: OfflineLlm) -> None:
    assert llm.name == "offline"


@pytest.mark.parametrize("content", ["ok", "thanks!", "Sounds good, go.", "Quantum chromodynamics lattice"])
def test_short_turns_never_shift(llm: OfflineLlm, content: str) -> None:
    assert not llm.sense(DEPLOY, Turn("user", content)).topic_shift


def test_on_topic_turn_does_not_shift(llm: OfflineLlm) -> None:
    turn = Turn("user", "Should the deploy job restart automatically after rotating staging keys?")
    assert not llm.sense(DEPLOY, turn).topic_shift


def test_unrelated_turn_shifts(llm: OfflineLlm) -> None:
    turn = Turn("user", "Recommend a sourdough bread recipe with rye flour and honey")
    assert len(set(content_words(turn.content))) >= 4
    assert llm.sense(DEPLOY, turn).topic_shift


def test_first_turn_never_shifts(llm: OfflineLlm) -> None:
    assert not llm.sense([], Turn("user", "Recommend a sourdough bread recipe with rye flour and honey")).topic_shift


def test_load_grows_with_characters_and_caps(llm: OfflineLlm) -> None:
    loads = [llm.sense([Turn("user", "x" * n)], Turn("user", "y" * 100)).load for n in (0, 100, 400, 800)]
    assert loads == sorted(loads) and len(set(loads)) == 4
    assert loads[1] == pytest.approx(0.2)
    assert llm.sense([Turn("user", "x" * 5000)], Turn("user", "y")).load == 1.0
    assert OfflineLlm(load_chars=0).sense([], Turn("user", "y")).load == 1.0


# ---------------------------------------------------------------- digest


def test_digest_shape(llm: OfflineLlm) -> None:
    digest = llm.digest(TRANSCRIPT, [])
    assert digest.title == "How do I rotate the deploy keys for the staging cluster?"
    assert digest.summary == (
        "How do I rotate the deploy keys for the staging cluster? Rotate the deploy keys with the vault command."
    )
    assert digest.trigger.startswith("When I need the conversation about deploy")
    assert digest.recall in RECALLS
    assert digest.tags == ("deploy",)  # no existing tags: the top keyword


def test_speaker_labels_are_not_keywords(llm: OfflineLlm) -> None:
    digest = llm.digest(TRANSCRIPT, [])
    assert "user" not in digest.trigger.lower() and "assistant" not in digest.trigger.lower()
    human = llm.digest("Human: rotate the keys today\nAI: rotating the keys now", [])
    assert human.title == "rotate the keys today"
    assert "human" not in human.trigger.lower() and human.tags == ("keys",)


def test_title_from_first_line_without_heading_marks(llm: OfflineLlm) -> None:
    digest = llm.digest("# Release checklist\nTag the build. Push it.\n\nThen announce it.", [], kind="document")
    assert digest.title == "Release checklist"
    assert digest.trigger.startswith("When I need what the document says about")


def test_tags_reuse_existing_ones_mentioned(llm: OfflineLlm) -> None:
    existing = ["python", "staging", "deploy", "cooking"]
    digest = llm.digest(TRANSCRIPT, existing)
    assert digest.tags == ("deploy", "staging")  # most mentioned first; unmentioned ones left out


def test_tags_match_short_multiword_and_differently_cased(llm: OfflineLlm) -> None:
    text = "We set up CI for the UI repo.\n\nThe CI job checks the rate limit and the Deploy-Keys."
    digest = llm.digest(text, ["ci", "ui", "rate-limit", "deploy keys", "ml"])
    assert digest.tags == ("ci", "ui", "rate-limit")  # at most 3, "ci" twice first, then the vault's order
    assert llm.digest(text, ["CI", "ci"]).tags == ("CI",)  # one spelling per tag
    assert llm.digest("A unit test for the cipher.", ["ci"]).tags != ("ci",)  # whole words only


def test_tags_fall_back(llm: OfflineLlm) -> None:
    assert llm.digest(TRANSCRIPT, ["cooking"]).tags == ("deploy",)
    assert llm.digest("", []).tags == ("conversation",)  # never empty
    assert llm.digest("the and of", [], kind="document").tags == ("document",)


def test_digest_is_deterministic(llm: OfflineLlm) -> None:
    tags = ["staging", "deploy", "keys", "vault"]
    assert llm.digest(TRANSCRIPT, tags) == OfflineLlm(load_chars=1000).digest(TRANSCRIPT, list(tags))
    assert len(llm.digest(TRANSCRIPT, tags).tags) in (1, 2, 3)


def test_keywords_ties_first_seen_first() -> None:
    assert keywords("beta alpha beta gamma alpha delta", 3) == ["beta", "alpha", "gamma"]


# ---------------------------------------------------------------- detail


def test_detail_first_sentence_of_each_paragraph(llm: OfflineLlm) -> None:
    detail = llm.detail(TRANSCRIPT)
    assert detail == (
        "How do I rotate the deploy keys for the staging cluster? "
        "Rotate the deploy keys with the vault command. Thanks, the deploy worked."
    )


def test_detail_at_most_eight_sentences(llm: OfflineLlm) -> None:
    text = "\n\n".join(f"Paragraph {n} opens here. It goes on." for n in range(12))
    assert len(sentences(llm.detail(text))) == 8


def test_detail_fills_to_three_in_order_without_repeats(llm: OfflineLlm) -> None:
    detail = llm.detail("The cache\nis warm. It works. A third sentence. A fourth one.")
    assert detail == "The cache is warm. It works. A third sentence."
    assert len(sentences(llm.detail("One paragraph. Two.\n\nAnother one. More."))) == 3


# ---------------------------------------------------------------- select


def test_select_auto_without_key_is_offline() -> None:
    assert select(LlmSettings(), {}).name == "offline"
    assert select(LlmSettings(), {"ANTHROPIC_API_KEY": "  "}).name == "offline"


def test_select_passes_load_chars() -> None:
    chosen = select(LlmSettings(), {}, load_chars=10)
    assert isinstance(chosen, OfflineLlm) and chosen.load_chars == 10


def test_select_auto_with_key_is_claude() -> None:
    from vault_engine.llm.claude import ClaudeLlm

    chosen = select(LlmSettings(fast_model="fast-model"), {"ANTHROPIC_API_KEY": "sk-test"})
    assert isinstance(chosen, ClaudeLlm) and chosen.name == "anthropic:fast-model"
    assert isinstance(select(LlmSettings(provider="anthropic"), {"ANTHROPIC_API_KEY": "sk-test"}), ClaudeLlm)


def test_select_anthropic_without_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        select(LlmSettings(provider="anthropic"), {})


def test_select_offline_with_key_is_offline() -> None:
    assert select(LlmSettings(provider="offline"), {"ANTHROPIC_API_KEY": "sk-test"}).name == "offline"


def test_select_unknown_provider() -> None:
    with pytest.raises(ConfigError, match=r"llm\.provider"):
        select(LlmSettings(provider="openai"), {})


def test_select_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert select(LlmSettings()).name == "offline"  # the conftest clears ANTHROPIC_*
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert select(LlmSettings(fast_model="fast-model")).name == "anthropic:fast-model"


def test_names_are_not_topics() -> None:
    from vault_engine.llm.offline import keywords, names

    talk = ("Maria: I adopted a dog from the shelter last week. Maria: The dog loves the park.\n"
            "John: Which shelter did Maria use? Maria: The downtown shelter, near the park.")
    assert names(talk) == {"maria", "john"}  # mid-sentence, or a "Name:" speaker label
    assert keywords(talk, 3, names_last=True) == ["shelter", "dog", "park"]
    assert keywords(talk, 1) == ["maria"]  # a trigger keeps the name: questions name people
    assert OfflineLlm().digest(talk, []).tags == ("shelter",)
    assert names("Deploys run from main. Deploys need approval.") == set()  # capitalised only where a sentence starts
    assert OfflineLlm().digest(talk, ["maria", "park"]).tags == ("park",)  # a name is not reused as a tag
