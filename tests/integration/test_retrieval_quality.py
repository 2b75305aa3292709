"""Each retrieval technique memvault keeps changes a ranking the way it is meant to.

Small fixtures with the real model and the real indexes: every test runs the
same query with the technique on (the shipped defaults) and off, and checks
that the intended memory moves.  The gains they stand for are measured on the
LoCoMo development half by ``benchmarks/locomo_eval.py`` (docs/performance.md,
"Retrieval quality"; each technique's own figures in docs/decisions/retrieval-ranking.md);
these tests keep them from silently going away.  They look at rankings,
so every search lists its weak hits too (``weak=True``): whether a query clears the relevance
floor is tested in test_relevance_floor.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from vault_engine import config as config_mod
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow


def with_settings(vault: Vault, **changes: Any) -> Vault:
    """The same vault, searched with some [retrieval] settings changed."""
    base = config_mod.load(vault.root)
    config = dataclasses.replace(base, retrieval=dataclasses.replace(base.retrieval, **changes))
    return Vault(vault.root, config=config)


def ranked(vault: Vault, query: str, limit: int = 10) -> list[str]:
    return [h.id for h in vault.search(SearchQuery(query, limit=limit, weak=True)).hits]


def turn(vault: Vault, chat: str, position: str, speaker: str, text: str,
         occurred: date | None = None) -> str:
    extra: dict[str, Any] = {"occurred_at": occurred.isoformat()} if occurred else {}
    return vault.add(NewMemory(f"{speaker}: {text}", title=f"{speaker}: {text[:60]}", summary=f"{speaker}: {text}",
                               type="episode", tags=(speaker.lower(),), source=f"conversation:{chat}#{position}",
                               extra=extra), allow_one_off=True).id


@pytest.fixture
def chat(make_vault: Callable[..., Vault]) -> tuple[Vault, dict[str, str]]:
    vault = Vault(make_vault().root, auto_sync=True)
    made = {
        "ask": turn(vault, "c1", "D1:1", "Caroline", "Did you end up going to the pottery workshop?",
                    date(2023, 5, 8)),
        "answer": turn(vault, "c1", "D1:2", "Melanie", "Yes, last Friday! I made a lopsided bowl and loved every "
                       "minute.", date(2023, 5, 8)),
        "after": turn(vault, "c1", "D1:3", "Caroline", "Ha, lopsided bowls have character.", date(2023, 5, 8)),
        "clarinet": turn(vault, "c1", "D2:1", "Melanie", "I play clarinet in a community band on Sundays.",
                         date(2023, 6, 2)),
        "violin": turn(vault, "c1", "D3:4", "Melanie", "Evenings are for me-time: running, reading, or playing my "
                       "violin.", date(2023, 7, 20)),
        "guitar": turn(vault, "c1", "D3:5", "Caroline", "My cousin plays guitar and piano in a band.",
                       date(2023, 7, 20)),
        "drums": turn(vault, "c1", "D4:1", "Caroline", "I want to learn the drums and other band instruments.",
                      date(2023, 8, 1)),
        "asks": turn(vault, "c1", "D4:2", "Caroline", "Melanie, which instruments do you think I should play?",
                     date(2023, 8, 1)),
        "sweden": turn(vault, "c1", "D5:1", "Caroline", "Thanks, Melanie! This necklace is super special to me. "
                       "It was a gift from my grandma back in my home country, Sweden. She gave it to me when "
                       "I was young, and it stands for love and strength.", date(2023, 8, 10)),
        "sunset-may": turn(vault, "c1", "D6:1", "Melanie", "We painted a sunset over the lake together.",
                           date(2023, 5, 20)),
        "sunset-july": turn(vault, "c1", "D7:1", "Melanie", "We painted a sunset over the sea with the kids.",
                            date(2023, 7, 14)),
    }
    assert vault.index_warning is None
    return vault, made


def test_a_reply_is_found_through_the_turn_before_it(chat: tuple[Vault, dict[str, str]]) -> None:
    """Thread context: "Yes, last Friday!" says nothing of pottery; its neighbour does."""
    vault, made = chat
    query = "When did Melanie go to the pottery workshop?"
    assert made["answer"] in ranked(vault, query, limit=3)
    # Feedback, the name left out of the vector query and the tag feature held to the topic find
    # this reply too in so small a chat: the thread's own effect is measured without them.
    alone = with_settings(vault, weight_feedback=0.0, vector_drop_tags=False, rerank_tag_gate=0.0)
    on = ranked(alone, query, limit=3)
    assert made["answer"] in on
    hit = next(h for h in alone.search(SearchQuery(query, limit=3, weak=True)).hits if h.id == made["answer"])
    assert "context" in hit.lanes or "thread" in hit.rerank
    off = ranked(with_settings(vault, weight_feedback=0.0, vector_drop_tags=False, rerank_tag_gate=0.0,
                               rerank_thread=0.0, fts_context=0.0), query, limit=10)
    assert on.index(made["answer"]) < off.index(made["answer"])


def test_both_halves_of_a_multi_hop_question_rank_first(chat: tuple[Vault, dict[str, str]]) -> None:
    """Tags named in the query: Melanie's two instruments above Caroline's band talk."""
    vault, made = chat
    query = "What instruments does Melanie play?"
    on = ranked(vault, query)
    assert set(on[:2]) == {made["clarinet"], made["violin"]}
    off = ranked(with_settings(vault, rerank_tags=0.0, rerank_terms=0.0), query)
    assert set(off[:2]) != {made["clarinet"], made["violin"]}


def test_a_date_in_the_question_picks_the_memory_from_then(chat: tuple[Vault, dict[str, str]]) -> None:
    """Temporal expressions: "in July 2023" picks the July painting; without them the May one, whose
    words match the question a little better, comes first."""
    vault, made = chat
    query = "What did Melanie paint in July 2023?"
    assert ranked(vault, query, limit=3)[0] == made["sunset-july"]
    # The two paintings' closeness to the query also moves the tag feature (held to the topic):
    # the dates' own effect is measured without that.
    alone = with_settings(vault, rerank_tag_gate=0.0)
    hits = alone.search(SearchQuery(query, limit=3, weak=True)).hits
    assert hits[0].id == made["sunset-july"]
    assert hits[0].rerank.get("time", 1.0) > 1.0
    assert any("date the query names" in line for line in hits[0].why)
    off = ranked(with_settings(vault, rerank_time=0.0, fts_when=0.0, rerank_tag_gate=0.0), query, limit=3)
    assert off.index(made["sunset-may"]) < off.index(made["sunset-july"])


def test_one_sentence_of_a_long_turn_answers_a_question(chat: tuple[Vault, dict[str, str]]) -> None:
    """Sentence lane: the question matches one sentence of a long turn better than the whole turn."""
    vault, made = chat
    hit = next(h for h in vault.search(SearchQuery("Where did Caroline move from?", limit=10, weak=True)).hits
               if h.id == made["sweden"])
    assert hit.similarity["sentence"] > hit.similarity["summary"]
    without = with_settings(vault, sentence_lane=False).search(
        SearchQuery("Where did Caroline move from?", weak=True)).hits
    assert all("sentence" not in h.similarity and "sentence" not in h.lanes for h in without)


def test_expansion_with_the_vaults_own_words_when_turned_on(make_vault: Callable[..., Vault]) -> None:
    """Query expansion (off by default): "martial arts" also looks for the vault's word "taekwondo"."""
    root = make_vault().root
    settings = root / "memvault.toml"
    settings.write_text(settings.read_text().replace("#weight_expansion = 0.0", "weight_expansion = 0.3"))
    vault = Vault(root, auto_sync=True)
    target = vault.add(NewMemory("Sam trains taekwondo twice a week at the dojo.")).id
    for text in ("Sam bakes sourdough bread on Sundays.", "Sam drives an old red pickup truck.",
                 "Sam's sister studies marine biology."):
        vault.add(NewMemory(text))
    hits = vault.search(SearchQuery("Does Sam do any martial arts?", weak=True)).hits
    hit = next(h for h in hits if h.id == target)
    assert hit.lanes["expansion"] == 1  # "Sam" alone matches every memory in full text
    assert any("taekwondo for 'martial'" in line or "taekwondo for 'arts'" in line for line in hit.why)
    assert hits[0].id == target
    plain = with_settings(vault, weight_expansion=0.0).search(
        SearchQuery("Does Sam do any martial arts?", weak=True)).hits
    assert all("expansion" not in h.lanes for h in plain)


def turns(vault: Vault, chat: str, lines: list[tuple[str, str]]) -> list[str]:
    return [turn(vault, chat, f"D{n}:1", speaker, text) for n, (speaker, text) in enumerate(lines, 1)]


def scores(vault: Vault, query: str) -> dict[str, Any]:
    return {h.id: h for h in vault.search(SearchQuery(query, limit=20, weak=True)).hits}


def test_feedback_finds_the_other_items_of_a_list(make_vault: Callable[..., Vault]) -> None:
    """Pseudo-relevance feedback: The Hobbit never says "book" or "read", but it is like the
    Harry Potter turn the question finds first; the feedback lane ranks it higher than the
    question's own vector does, and it gains on a turn that only shares the word "read"."""
    vault = Vault(make_vault().root, auto_sync=True)
    potter, hobbit, _thrones, manual, *_ = turns(vault, "c2", [
        ("Tim", "I just finished reading Harry Potter, the first book of the series."),
        ("Tim", "The Hobbit was such a ride: elves, dragons, wizards and a long journey home."),
        ("Tim", "Wizards and dragons, Game of Thrones has it all, I stayed up all night with it."),
        ("Tim", "I had to read the car manual twice to find the fuse box."),
        ("Tim", "My new reading glasses make everything so sharp."),
        ("Tim", "I read the news every morning with coffee."),
        ("Tim", "I went hiking in the mountains last weekend."),
        ("Tim", "I cooked a spicy curry for my parents."),
        ("Tim", "My car broke down on the highway again."),
        ("Tim", "Our basketball team won the game on Sunday."),
    ])
    query = "What books has Tim read?"
    on = scores(vault, query)
    assert next(iter(on)) == potter
    assert on[hobbit].lanes["feedback"] < on[hobbit].lanes["summary"]
    assert any(line.startswith("like the best first hits: rank") for line in on[hobbit].why)
    # Its cosine is with the moved query: never reported as a cosine with the query (the context
    # manifest admits hits by those).
    assert "feedback" not in on[hobbit].similarity
    off = scores(with_settings(vault, weight_feedback=0.0), query)
    assert all("feedback" not in h.lanes for h in off.values())
    # (Game of Thrones, like them too, gained a little with the float graph and no longer does with the int8
    # one: its feedback rank falls behind the manual's, which the first hits hold for its word "read".)
    assert on[hobbit].score / on[manual].score > off[hobbit].score / off[manual].score


def test_a_name_many_memories_carry_leaves_the_vector_query(make_vault: Callable[..., Vault]) -> None:
    """Tag words out of the vector query: with "Tim" in it, every turn that says "Tim" looks
    alike to the vectors; without it they look for cooking (the oven turn climbs), while the
    tag feature still puts Tim's own lasagna first."""
    vault = Vault(make_vault().root, auto_sync=True)
    lasagna, car, oven, *_ = turns(vault, "c3", [
        ("Tim", "I make a mean vegetable lasagna every Sunday."),
        ("Tim", "My car broke down on the highway again."),
        ("John", "I bought a new oven for baking bread."),
        ("John", "Tim, you are the best, Tim! Thanks for being there, Tim."),
        ("John", "Tim, did you see the match yesterday? Tim, call me."),
        ("John", "Happy birthday, Tim! Tim, you're a legend."),
        ("Tim", "I went hiking in the mountains last weekend."),
        ("John", "Tim and I should grab dinner with Tim's brother."),
    ])
    query = "What does Tim cook?"
    plain = dict(weight_feedback=0.0)
    on = scores(with_settings(vault, **plain), query)
    off = scores(with_settings(vault, vector_drop_tags=False, **plain), query)
    assert next(iter(on)) == lasagna
    assert any("vector query without Tim" in line for line in on[lasagna].why)
    assert all(not any("vector query without" in line for line in h.why) for h in off.values())
    gap = {name: found[lasagna].similarity["summary"] - found[car].similarity["summary"]
           for name, found in (("on", on), ("off", off))}
    assert gap["on"] > gap["off"]
    assert on[oven].lanes["summary"] < off[oven].lanes["summary"]


def test_the_query_words_a_long_memory_says_late_in_its_body_count(make_vault: Callable[..., Vault]) -> None:
    """The re-ranker's word feature reads a memory's own words, its body too: an episode whose
    summary (its first sentences) says nothing of the question still covers it further down."""
    vault = Vault(make_vault().root, auto_sync=True)
    body = "\n\n".join([
        "Gina: Morning! Long week, but a good one.",
        "Jon: Same here, the studio was packed every night.",
        *[f"Gina: Filler line {n} about the weather and the traffic on the way in." for n in range(12)],
        "Gina: To keep the store running I hired two students for the weekend shifts.",
    ])
    episode = vault.add(NewMemory(body, title="Gina: Morning! Long week", type="episode", authority="inferred",
                                  tags=("keep",)), allow_one_off=True).id
    vault.add(NewMemory("Jon runs a dance studio."))  # the re-ranker looks at two candidates at least
    hit = next(h for h in vault.search(SearchQuery("How does Gina keep her store running?", weak=True)).hits
               if h.id == episode)
    assert "store" not in hit.summary.casefold()
    assert hit.rerank["terms"] > 1.5  # "gina", "keep", "store" and "run" are all in the body


def test_an_inferred_memorys_tags_are_not_taken_for_whom_it_is_about(make_vault: Callable[..., Vault]) -> None:
    """Tags a person gave count when the query names them; an inferred memory's (the compacter's
    choice of frequent words) do not."""
    vault = Vault(make_vault().root, auto_sync=True)
    stated = vault.add(NewMemory("Gina opened a clothing store downtown.", tags=("gina",))).id
    guessed = vault.add(NewMemory("Gina talked about the store and the dance studio.", type="episode",
                                  authority="inferred", tags=("gina",)), allow_one_off=True).id
    hits = {h.id: h for h in vault.search(SearchQuery("What store did Gina open?", weak=True)).hits}
    assert hits[stated].rerank.get("tags", 1.0) > 1.0
    assert "tags" not in hits[guessed].rerank
    off = {h.id: h for h in with_settings(vault, rerank_tags=0.0).search(
        SearchQuery("What store did Gina open?", weak=True)).hits}
    assert off[guessed].score == pytest.approx(hits[guessed].score)


def test_a_question_that_names_the_wrong_person_still_finds_the_topic(chat: tuple[Vault, dict[str, str]]) -> None:
    """A name is no topic: Caroline's turns about other things do not push out what Melanie said
    about the lake painting the question (wrongly) credits to Caroline."""
    vault, made = chat
    query = "What did Caroline paint over the lake?"
    on = ranked(vault, query)
    off = ranked(with_settings(vault, rerank_tag_gate=0.0), query)
    assert on.index(made["sunset-may"]) < off.index(made["sunset-may"])
    assert on.index(made["sunset-may"]) <= 1


def test_an_untagged_note_is_about_the_name_its_title_leads_with(make_vault: Callable[..., Vault]) -> None:
    """Subjects inferred: untagged notes that lead with a name the vault keeps coming back to are
    that person's, as a tag would say."""
    vault = Vault(make_vault().root, auto_sync=True)
    made = {}
    for key, text in (("mine", "Caroline: I went camping in the mountains with friends last week."),
                      ("theirs", "Melanie: We went camping at the lake and roasted marshmallows."),
                      ("c2", "Caroline: The support group was so inspiring."),
                      ("c3", "Caroline: I am reading a book about adoption."),
                      ("m2", "Melanie: The kids loved the pottery class."),
                      ("m3", "Melanie: I ran a charity race for mental health.")):
        made[key] = vault.add(NewMemory(text, title=text[:60])).id
    query = "Where did Caroline go camping?"
    hits = {h.id: h for h in vault.search(SearchQuery(query, weak=True)).hits}
    assert hits[made["mine"]].rerank.get("tags", 1.0) > 1.0
    assert "tags" not in hits[made["theirs"]].rerank
    assert ranked(vault, query)[0] == made["mine"]
