"""Conversation ingestion: buffering, the three compaction triggers, flush, raw content, tags and links,
one-off turns, redaction, model failures, session names and input parsing."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from vault_engine.errors import InvalidInput, LlmUnavailable, VaultError
from vault_engine.format import chat_turns
from vault_engine.format.memory import Memory
from vault_engine.history import replay
from vault_engine.index.fakes import HashEmbedder
from vault_engine.ingest.conversation import (
    LINK_LIMIT,
    IngestDeferred,
    LlmDeferred,
    buffer_path,
    check_session,
    episode_body,
    ingest,
    parse_jsonl,
    parse_text,
    parse_turns,
    read_buffer,
    session_record,
)
from vault_engine.llm.base import Digest, Sense, Turn
from vault_engine.llm.offline import OfflineLlm
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault

SHIFT = "NEW TOPIC"  # a turn containing this shifts the topic for ScriptedLlm
HEAVY = "HEAVY"  # a turn containing this reads as load 0.9 (threshold 0.7)
SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"


class ScriptedLlm:
    """A fake model: topic shifts and load are marked in the turns; the digest is fixed; failures on demand."""

    def __init__(self, tags: Sequence[str] = ("testing",), recall: str = "active", load: float | None = None,
                 fail_digest: int = 0, fail_sense: int = 0):
        self.tags = tuple(tags)
        self.recall = recall
        self.load = load
        self.fail_digest = fail_digest
        self.fail_sense = fail_sense
        self.sensed: list[tuple[int, str]] = []  # (buffer length, turn content)
        self.digests: list[tuple[str, list[str]]] = []  # (text, existing tags)

    @property
    def name(self) -> str:
        return "scripted"

    def sense(self, buffer: Sequence[Turn], turn: Turn) -> Sense:
        if self.fail_sense:
            self.fail_sense -= 1
            raise LlmUnavailable("the model timed out")
        self.sensed.append((len(buffer), turn.content))
        load = self.load if self.load is not None else (0.9 if HEAVY in turn.content else 0.1)
        return Sense(SHIFT in turn.content, load)

    def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
        assert kind == "conversation"
        if self.fail_digest:
            self.fail_digest -= 1
            raise LlmUnavailable("rate limited")
        self.digests.append((text, list(existing_tags)))
        first = text.split("\n", 1)[0]
        return Digest(title=f"About {first[:40]}", summary="A summary.", trigger="When I need the talk",
                      recall=self.recall, tags=self.tags)

    def detail(self, text: str) -> str:
        raise AssertionError("not used")


def turns(*contents: str, role: str = "user") -> list[Turn]:
    return [Turn(role, c) for c in contents]


def numbered(n: int, start: int = 1) -> list[Turn]:
    return [Turn("user" if i % 2 else "assistant", f"turn {i} about the database schema") for i in
            range(start, start + n)]


def episodes(vault: Vault) -> list[Memory]:
    return sorted((e.memory for e in vault.scan().active() if e.memory.type == "episode"), key=lambda m: m.id)


def buffered(vault: Vault, session: str = "default") -> list[str]:
    return [b.turn.content for b in read_buffer(vault.root, session)]


def vault_bytes(vault: Vault) -> bytes:
    return b"".join(p.read_bytes() for p in vault.root.rglob("*") if p.is_file() and "models" not in p.parts)


def events(vault: Vault, kind: str) -> list[dict[str, object]]:
    return [{"memory": e.memory, **e.payload} for e in vault.journal.events() if e.kind == kind]


# ---------------------------------------------------------------- the triggers


def test_nothing_is_compacted_below_min_turns_even_on_shift_and_full_load(vault: Vault) -> None:
    llm = ScriptedLlm(load=1.0)
    result = ingest(vault, turns("first", f"{SHIFT} second", f"{SHIFT} third"), llm=llm)
    assert result.episodes == [] and result.pending == 3 and result.buffered == 3
    assert llm.sensed == [] and llm.digests == []  # below min_turns the sensor is not even asked
    assert episodes(vault) == []
    assert buffered(vault) == ["first", f"{SHIFT} second", f"{SHIFT} third"]


def test_a_topic_shift_compacts_the_buffer_and_the_shifting_turn_starts_the_next(vault: Vault) -> None:
    llm = ScriptedLlm()
    first = ingest(vault, numbered(4), llm=llm)
    assert first.episodes == [] and first.pending == 4
    result = ingest(vault, turns(f"{SHIFT}: sourdough bread", "with rye"), llm=llm)
    assert [e.turns for e in result.episodes] == [4]
    [episode] = episodes(vault)
    for turn in numbered(4):
        assert turn.content in episode.body
    assert "sourdough" not in episode.body
    assert buffered(vault) == [f"{SHIFT}: sourdough bread", "with rye"]
    assert result.pending == 2


def test_a_shift_with_exactly_min_turns_buffered_compacts(vault: Vault) -> None:
    result = ingest(vault, [*numbered(3), Turn("user", f"{SHIFT} elsewhere")], llm=ScriptedLlm())
    assert [e.turns for e in result.episodes] == [3]
    assert buffered(vault) == [f"{SHIFT} elsewhere"]


@pytest.mark.parametrize(("load", "compacts"), [(0.69, False), (0.7, True), (0.95, True)])
def test_load_at_or_above_the_threshold_compacts(vault: Vault, load: float, compacts: bool) -> None:
    result = ingest(vault, numbered(4), llm=ScriptedLlm(load=load))
    assert [e.turns for e in result.episodes] == ([3] if compacts else [])
    assert len(buffered(vault)) == (1 if compacts else 4)


def test_a_heavy_turn_starts_the_next_buffer(vault: Vault) -> None:
    result = ingest(vault, [*numbered(5), Turn("user", f"{HEAVY} paste of a log")], llm=ScriptedLlm())
    assert [e.turns for e in result.episodes] == [5]
    assert buffered(vault) == [f"{HEAVY} paste of a log"]


def test_the_buffer_reaching_max_buffer_compacts(vault: Vault) -> None:
    assert vault.config.ingest.max_buffer == 10
    result = ingest(vault, numbered(9), llm=ScriptedLlm())
    assert result.episodes == [] and result.pending == 9
    result = ingest(vault, numbered(1, start=10), llm=ScriptedLlm())  # the tenth turn fills it
    assert [e.turns for e in result.episodes] == [10] and result.pending == 0
    [episode] = episodes(vault)
    assert "turn 1 about" in episode.body and "turn 10 about" in episode.body
    assert buffered(vault) == []
    result = ingest(vault, numbered(2, start=11), llm=ScriptedLlm())
    assert result.episodes == [] and buffered(vault) == ["turn 11 about the database schema",
                                                         "turn 12 about the database schema"]


def test_the_offline_model_compacts_on_a_real_topic_change(vault: Vault) -> None:
    talk = [
        Turn("user", "How should the database migrations for the billing service be ordered?"),
        Turn("assistant", "Order the billing database migrations by timestamp and run them in one transaction."),
        Turn("user", "Should billing migrations run before the service starts?"),
        Turn("assistant", "Yes: run the billing database migrations before the service starts."),
        Turn("user", "Completely unrelated question: which sourdough starter ratio works for rye flour bread?"),
    ]
    result = ingest(vault, talk, llm=OfflineLlm())
    assert [e.turns for e in result.episodes] == [4]
    assert buffered(vault) == [talk[-1].content]


# ---------------------------------------------------------------- flush and the session record


def test_flush_compacts_a_short_buffer_and_closes_the_session(vault: Vault) -> None:
    ingest(vault, turns("only one", "and two"), llm=ScriptedLlm())
    result = ingest(vault, [], llm=ScriptedLlm(), flush=True)
    assert [e.turns for e in result.episodes] == [2] and result.pending == 0 and result.closed
    assert buffer_path(vault.root, "default").read_bytes() == b""
    record = session_record(vault, "default")
    assert record["episodes"] == [result.episodes[0].id] and record["closed_at"] is not None
    again = ingest(vault, [], llm=ScriptedLlm(), flush=True)  # an empty buffer: nothing to write
    assert again.episodes == [] and len(episodes(vault)) == 1
    ingest(vault, turns("a later turn"), llm=ScriptedLlm())  # new turns reopen the session
    assert session_record(vault, "default")["closed_at"] is None


def test_flush_of_a_single_turn_in_the_same_call(vault: Vault) -> None:
    result = ingest(vault, turns("just me"), llm=ScriptedLlm(), flush=True)
    assert [e.turns for e in result.episodes] == [1]
    assert "just me" in episodes(vault)[0].body


def test_sessions_are_separate(vault: Vault) -> None:
    ingest(vault, turns("in a"), session="a", llm=ScriptedLlm())
    ingest(vault, turns("in b"), session="b", llm=ScriptedLlm())
    assert buffered(vault, "a") == ["in a"] and buffered(vault, "b") == ["in b"]
    result = ingest(vault, [], session="a", llm=ScriptedLlm(), flush=True)
    assert [e.turns for e in result.episodes] == [1] and buffered(vault, "b") == ["in b"]
    assert episodes(vault)[0].source == "session:a"


# ---------------------------------------------------------------- the episode


TRICKY = [
    "# A markdown heading\n\nSome text.",
    "---",
    "title: not frontmatter\n---\nbody after a rule\n---",
    "```python\ndef f():\n    return '### user · 2026'\n```",
    "trailing spaces   ",
    "   leading spaces and a tab\t",
    "unicode: café — 日本語 — emoji 🎉 — line\u2028separator",
    "windows\r\nline ending and a lone \r carriage return",
    "### assistant · 2026-01-01T00:00:00Z\n\nA fake turn heading inside a turn.\n",
    "ends with two newlines\n\n",
]


def test_every_turn_is_kept_byte_for_byte(vault: Vault, tmp_path: Path) -> None:
    lines = [json.dumps({"role": "user" if i % 2 else "assistant", "content": c}, ensure_ascii=False)
             for i, c in enumerate(TRICKY)]
    parsed = parse_jsonl("\n".join(lines) + "\n", "chat.jsonl")
    assert [t.content for t in parsed] == TRICKY
    result = ingest(vault, parsed, llm=ScriptedLlm(), flush=True)
    assert [e.turns for e in result.episodes] == [10]
    raw = (vault.root / result.episodes[0].path).read_bytes()
    memory = vault.scan().get(result.episodes[0].id).memory  # the file parses back as the episode
    assert memory.type == "episode" and memory.body == episode_body(parsed)
    for content in TRICKY:
        assert content.encode("utf-8") in raw
        assert content in memory.body
    # The turns appear in order, each under its own heading.
    positions = [memory.body.index(f"\n\n{c}" if i else c) for i, c in enumerate(TRICKY)]
    assert positions == sorted(positions)


def test_the_body_has_a_heading_per_turn_with_role_and_time(vault: Vault) -> None:
    talk = [Turn("user", "Hello", "2026-03-01T09:00:00Z"), Turn("assistant", "Hi", "2026-03-01T09:00:05Z"),
            Turn("tool", "{\"ok\": true}")]
    result = ingest(vault, talk, llm=ScriptedLlm(), flush=True)
    memory = vault.scan().get(result.episodes[0].id).memory
    assert memory.body == ("### user · 2026-03-01T09:00:00Z\n\nHello\n\n### assistant · 2026-03-01T09:00:05Z\n\n"
                           "Hi\n\n### tool\n\n{\"ok\": true}\n")
    assert memory.occurred_at is not None and memory.occurred_at.isoformat() == "2026-03-01T09:00:00+00:00"


def test_the_episode_is_inferred_trial_learned_from_its_session(vault: Vault) -> None:
    result = ingest(vault, turns("hello there"), session="review-42", llm=ScriptedLlm(recall="both"), flush=True)
    memory = vault.scan().get(result.episodes[0].id).memory
    assert (memory.type, memory.authority, memory.lifecycle, memory.trust, memory.tier) == (
        "episode", "inferred", "trial", "learned", "cold")
    assert memory.source == "session:review-42" and memory.recall == "both"
    assert (memory.title, memory.summary, memory.trigger) == ("About User: hello there", "A summary.",
                                                              "When I need the talk")
    assert memory.occurred_at is None  # no turn carried a time
    assert result.episodes[0].path.startswith("episodes/global/")


def test_an_invalid_recall_mode_becomes_active(vault: Vault) -> None:
    result = ingest(vault, turns("hello"), llm=ScriptedLlm(recall="sometimes"), flush=True)
    assert vault.scan().get(result.episodes[0].id).memory.recall == "active"


def test_tags_reuse_existing_spellings_and_link_both_ways(vault: Vault) -> None:
    py1 = vault.add(NewMemory("Prefer pathlib over os.path", tags=["Python"])).id
    py2 = vault.add(NewMemory("Use dataclasses for records", tags=["tooling", "PYTHON"])).id
    rust = vault.add(NewMemory("Cargo builds with --locked", tags=["rust"])).id
    llm = ScriptedLlm(tags=("python", "Testing", "testing", "extra", "fourth"))
    result = ingest(vault, turns("pathlib and dataclasses"), llm=llm, flush=True)
    [episode] = episodes(vault)
    assert "Python" in llm.digests[0][1]  # the compacter saw the vault's tags
    assert episode.tags == ("Python", "Testing", "extra")  # the vault's spelling, no repeats, at most 3
    assert set(episode.links) == {py1, py2}
    scan = vault.scan()
    assert episode.id in scan.get(py1).memory.links and episode.id in scan.get(py2).memory.links
    assert episode.id not in scan.get(rust).memory.links
    assert {e["memory"] for e in events(vault, "link")} == {py1, py2}
    assert result.episodes[0].links == episode.links


def test_episodes_sharing_a_tag_link_to_each_other(vault: Vault) -> None:
    first = ingest(vault, turns("one"), llm=ScriptedLlm(tags=("deploys",)), flush=True).episodes[0].id
    second = ingest(vault, turns("two"), llm=ScriptedLlm(tags=("Deploys",)), flush=True).episodes[0].id
    scan = vault.scan()
    assert scan.get(second).memory.links == (first,) and scan.get(first).memory.links == (second,)
    assert scan.get(second).memory.tags == ("deploys",)


def test_links_go_to_the_most_recent_memories_sharing_a_tag(vault: Vault) -> None:
    made = [vault.add(NewMemory(f"Fact number {i} about queues", tags=["queues"])).id for i in range(LINK_LIMIT + 2)]
    result = ingest(vault, turns("queues again"), llm=ScriptedLlm(tags=("queues",)), flush=True)
    assert set(result.episodes[0].links) == set(made[-LINK_LIMIT:])


def test_superseded_trashed_and_plain_memories_are_not_linked(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault({"notes/plain.md": "---\ntags: [queues]\n---\n# A plain note about queues\n"})
    old = vault.add(NewMemory("Old queue fact", tags=["queues"])).id
    vault.correct(old, "New queue fact")
    trashed = vault.add(NewMemory("Trashed queue fact", tags=["queues"])).id
    vault.forget(trashed)
    result = ingest(vault, turns("queues"), llm=ScriptedLlm(tags=("queues",)), flush=True)
    [new] = [e.memory.id for e in vault.scan().active() if e.memory.type == "fact"
             and e.memory.lifecycle == "proven"]
    assert result.episodes[0].links == (new,)


def test_a_speaker_label_is_not_a_tag_unless_the_turns_use_it(vault: Vault) -> None:
    result = ingest(vault, turns("about deploys"), llm=ScriptedLlm(tags=("user", "deploys")), flush=True)
    assert result.episodes[0].tags == ("deploys",)
    result = ingest(vault, turns("the user table"), llm=ScriptedLlm(tags=("user",)), flush=True)
    assert result.episodes[0].tags == ("user",)
    result = ingest(vault, turns("hello"), llm=ScriptedLlm(tags=("assistant",)), flush=True)
    assert result.episodes[0].tags == ("conversation",)


# ---------------------------------------------------------------- what is never kept


def test_one_off_instructions_are_not_buffered(vault: Vault) -> None:
    talk = turns("Use tabs in this repo", "Skip the tests, just this once", "Run the linter")
    result = ingest(vault, talk, llm=ScriptedLlm(), flush=True)
    assert result.one_off == 1 and result.buffered == 2 and result.received == 3
    assert b"just this once" not in vault_bytes(vault)
    assert "Use tabs" in episodes(vault)[0].body


@pytest.mark.parametrize("text", ["Not this time, skip the linter.",
                                  "Never mind, not this time: skip the linter just for today."])
def test_an_order_after_its_occasion_is_a_one_off_as_add_says(vault: Vault, text: str) -> None:
    """``memvault add`` refuses both; ingest kept them as episodes (the occasion led in by other words)."""
    assert vault_add_refuses(vault, text)
    result = ingest(vault, turns("Use tabs in this repo", text, "Run the linter"), llm=ScriptedLlm(), flush=True)
    assert result.one_off == 1 and result.buffered == 2
    assert b"skip the linter" not in vault_bytes(vault)


def vault_add_refuses(vault: Vault, text: str) -> bool:
    from vault_engine.errors import VaultError
    from vault_engine.vault import NewMemory

    try:
        vault.add(NewMemory(text))
    except VaultError:
        return True
    return False


@pytest.mark.parametrize("text", [
    "I went to the support group just this once, and it changed my life.",
    "Caroline: Only for now, I'm staying with my parents until the lease starts.",
    "The deploy failed, not this time because of the tests but the registry.",
])
def test_telling_about_a_one_off_is_conversation_and_kept(vault: Vault, text: str) -> None:
    result = ingest(vault, turns("We talked about the week", text, "What happened next?"), llm=ScriptedLlm(),
                    flush=True)
    assert result.one_off == 0 and result.buffered == 3
    assert text in episodes(vault)[0].body


def test_only_user_instructions_count_as_one_off() -> None:
    from vault_engine.ingest.conversation import is_one_off_instruction

    assert is_one_off_instruction(Turn("user", "Skip the tests, just this once"))
    assert is_one_off_instruction(Turn("user", "Please use the staging database, only this time."))
    assert not is_one_off_instruction(Turn("assistant", "Skip the tests, just this once"))
    assert not is_one_off_instruction(Turn("user", "Skip the tests. " + "x " * 200 + "just this once"))


def test_secrets_are_redacted_in_the_buffer_and_the_episode(vault: Vault) -> None:
    result = ingest(vault, turns(f"my key is {SECRET} keep it", "thanks"), llm=ScriptedLlm())
    assert result.redacted == 1
    buffer = buffer_path(vault.root, "default").read_text(encoding="utf-8")
    assert SECRET not in buffer and "my key is [REDACTED] keep it" in buffer
    flushed = ingest(vault, [], llm=ScriptedLlm(), flush=True)
    body = episodes(vault)[0].body
    assert "my key is [REDACTED] keep it" in body
    assert SECRET.encode() not in vault_bytes(vault)  # nowhere: files, buffer, journal
    [added] = events(vault, "add")
    assert added["memory"] == flushed.episodes[0].id and added["redacted"] == 1


def test_secrets_the_model_repeats_are_redacted(vault: Vault) -> None:
    class Leaky(ScriptedLlm):
        def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
            return Digest(f"Key {SECRET}", "s", "t", "active", ("x",))

    ingest(vault, turns("hello"), llm=Leaky(), flush=True)
    assert episodes(vault)[0].title == "Key [REDACTED]"
    assert events(vault, "add")[0]["redacted"] == 1
    assert SECRET.encode() not in vault_bytes(vault)


def test_learning_off_refuses_before_buffering(vault: Vault) -> None:
    config = dataclasses.replace(vault.config, vault=dataclasses.replace(vault.config.vault, learning=False))
    quiet = Vault(vault.root, config)
    with pytest.raises(InvalidInput, match="learning is off"):
        ingest(quiet, turns("hello"), llm=ScriptedLlm())
    assert not buffer_path(vault.root, "default").exists()


# ---------------------------------------------------------------- failures


def test_a_model_failure_keeps_every_turn_and_a_later_flush_succeeds(vault: Vault) -> None:
    llm = ScriptedLlm(fail_digest=1)
    ingest(vault, numbered(3), llm=llm)
    with pytest.raises(LlmUnavailable) as caught:
        ingest(vault, [Turn("user", f"{SHIFT} other"), Turn("assistant", "more")], llm=llm)
    assert isinstance(caught.value, IngestDeferred) and isinstance(caught.value, LlmDeferred)
    assert caught.value.exit_code == 75
    message = caught.value.one_line()
    assert "rate limited" in message and "5 turns kept in the buffer of session 'default'" in message
    assert "\n" not in message
    assert caught.value.result.buffered == 2 and caught.value.result.pending == 5
    assert episodes(vault) == [] and events(vault, "add") == []
    assert len(buffered(vault)) == 5  # the three old turns and both new ones: nothing lost
    result = ingest(vault, [], llm=llm, flush=True)
    assert [e.turns for e in result.episodes] == [5] and buffered(vault) == []
    assert len(episodes(vault)) == 1


def test_a_failed_compaction_is_retried_on_the_next_trigger(vault: Vault) -> None:
    llm = ScriptedLlm(fail_digest=1)
    with pytest.raises(LlmDeferred):
        ingest(vault, [*numbered(3), Turn("user", f"{SHIFT} one")], llm=llm)
    result = ingest(vault, [Turn("user", f"{SHIFT} two")], llm=llm)
    assert [e.turns for e in result.episodes] == [4]
    assert buffered(vault) == [f"{SHIFT} two"]


def test_episodes_written_before_a_failure_stay_and_are_reported(vault: Vault) -> None:
    class FailSecond(ScriptedLlm):
        def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
            if self.digests:
                raise LlmUnavailable("gone")
            return super().digest(text, existing_tags, kind)

    talk = [*numbered(3), Turn("user", f"{SHIFT} a"), *numbered(2), Turn("user", f"{SHIFT} b"), Turn("user", "c")]
    with pytest.raises(LlmDeferred) as caught:
        ingest(vault, talk, llm=FailSecond())
    assert [e.turns for e in caught.value.result.episodes] == [3]
    assert len(episodes(vault)) == 1
    assert len(buffered(vault)) == 5 and caught.value.result.pending == 5


def test_a_sensor_failure_also_keeps_the_turns(vault: Vault) -> None:
    llm = ScriptedLlm(fail_sense=1)
    with pytest.raises(LlmDeferred):
        ingest(vault, numbered(5), llm=llm)
    assert len(buffered(vault)) == 5
    assert [e.turns for e in ingest(vault, [], llm=llm, flush=True).episodes] == [5]


def test_a_leftover_long_buffer_is_compacted_in_max_buffer_spans(vault: Vault) -> None:
    with pytest.raises(LlmDeferred):
        ingest(vault, numbered(13), llm=ScriptedLlm(fail_digest=1))
    assert len(buffered(vault)) == 13
    result = ingest(vault, numbered(1, start=14), llm=ScriptedLlm())
    assert [e.turns for e in result.episodes] == [10]
    assert len(buffered(vault)) == 4


def test_recompacting_a_stored_span_writes_nothing_twice(vault: Vault) -> None:
    ingest(vault, numbered(2), llm=ScriptedLlm())
    path = buffer_path(vault.root, "default")
    before = path.read_bytes()
    first = ingest(vault, [], llm=ScriptedLlm(), flush=True).episodes[0]
    path.write_bytes(before)  # as if the process died after writing the episode, before cutting the buffer
    again = ingest(vault, [], llm=ScriptedLlm(), flush=True).episodes[0]
    assert (again.action, again.id) == ("existing", first.id)
    assert len(episodes(vault)) == 1 and len(events(vault, "add")) == 1 and buffered(vault) == []


def test_a_permanently_forgotten_span_is_not_stored_again(vault: Vault) -> None:
    ingest(vault, turns("forget me"), llm=ScriptedLlm())
    path = buffer_path(vault.root, "default")
    before = path.read_bytes()
    first = ingest(vault, [], llm=ScriptedLlm(), flush=True).episodes[0]
    vault.forget(first.id, permanent=True)
    path.write_bytes(before)
    again = ingest(vault, [], llm=ScriptedLlm(), flush=True).episodes[0]
    assert again.action == "forgotten" and episodes(vault) == [] and buffered(vault) == []


def test_an_unreadable_buffer_line_is_skipped_with_a_warning(vault: Vault) -> None:
    ingest(vault, turns("kept"), llm=ScriptedLlm())
    with buffer_path(vault.root, "default").open("a", encoding="utf-8") as handle:
        handle.write('{"role": "user", "cont')  # a torn last line
    result = ingest(vault, turns("next"), llm=ScriptedLlm())
    assert len(result.warnings) == 1 and "unreadable buffered turn" in result.warnings[0]
    assert buffered(vault) == ["kept", "next"]


# ---------------------------------------------------------------- journal and indexes


def test_replay_agrees_with_the_files_after_ingest(vault: Vault) -> None:
    vault.add(NewMemory("Queues retry three times", tags=["queues"]))
    result = ingest(vault, turns("queues talk"), llm=ScriptedLlm(tags=("queues",)), flush=True)
    assert vault.replay_diff() == []
    state = replay(vault.journal.events())[result.episodes[0].id]
    assert (state.lifecycle, state.authority, state.status) == ("trial", "inferred", "active")
    [added] = events(vault, "add")[1:]
    assert added["session"] == "default" and added["turns"] == 1 and added["by"] == "scripted"
    assert added["type"] == "episode"


def test_the_indexes_follow_an_ingest(vault: Vault) -> None:
    live = Vault(vault.root, auto_sync=True, embedder=HashEmbedder())
    result = ingest(live, turns("the zeppelin hangar checklist"), llm=ScriptedLlm(), flush=True)
    assert live.last_sync is not None and live.index_warning is None
    hits = live.search(SearchQuery("zeppelin hangar")).hits
    assert [h.id for h in hits][:1] == [result.episodes[0].id]


# ---------------------------------------------------------------- session names


@pytest.mark.parametrize("name", ["../etc", "a/b", "", ".", "..", ".hidden", "x" * 65, "a b", "a\\b", "é",
                                  "a\n", "/abs"])
def test_unsafe_session_names_are_refused(vault: Vault, name: str) -> None:
    with pytest.raises(InvalidInput, match="invalid session name"):
        check_session(name)
    with pytest.raises(InvalidInput):
        ingest(vault, turns("hello"), session=name, llm=ScriptedLlm())
    sessions = vault.root / ".memvault" / "sessions"
    assert not sessions.exists() or list(sessions.iterdir()) == []


@pytest.mark.parametrize("name", ["default", "review-42", "A.b_c", "x" * 64])
def test_safe_session_names_are_accepted(name: str) -> None:
    assert check_session(name) == name


# ---------------------------------------------------------------- input


def test_jsonl_turns_with_roles_and_times() -> None:
    text = ('{"role": "user", "content": "hi", "ts": "2026-05-01T09:14:00Z", "name": "ada"}\n\n'
            '{"role": "Assistant", "content": "hello"}\n'
            '{"role": "assistant", "content": ""}\n'  # an empty turn (a tool call) says nothing
            '{"role": "tool", "content": "42", "ts": "2026-05-01"}\n')
    assert parse_jsonl(text) == [Turn("user", "hi", "2026-05-01T09:14:00Z"), Turn("assistant", "hello"),
                                 Turn("tool", "42", "2026-05-01")]


@pytest.mark.parametrize(("line", "fragment"), [
    ("{not json", "not valid JSON"),
    ('["user", "hi"]', "must be a JSON object"),
    ('{"role": "bob", "content": "hi"}', "key 'role' must be one of user, assistant, system, tool"),
    ('{"content": "hi"}', "key 'role'"),
    ('{"role": "user"}', "key 'content' is missing"),
    ('{"role": "user", "content": ["a", "b"]}', "key 'content' must be text"),
    ('{"role": "user", "content": "hi", "ts": "yesterday"}', "key 'ts' must be a date-time"),
    ('{"role": "user", "content": "hi", "ts": 5}', "key 'ts' must be a date-time"),
    ('{"role": "user", "content": "\\ud800"}', "lone surrogate"),
])
def test_a_bad_jsonl_line_refuses_the_whole_input_with_its_line_number(line: str, fragment: str) -> None:
    text = '{"role": "user", "content": "fine"}\n{"role": "assistant", "content": "also fine"}\n' + line + "\n"
    with pytest.raises(InvalidInput) as caught:
        parse_jsonl(text, "chat.jsonl")
    message = caught.value.one_line()
    assert message.startswith("chat.jsonl:3: ") and fragment in message and "\n" not in message


def test_plain_text_with_speakers() -> None:
    text = ("Some preamble.\n"
            "User: How do I run it?\n"
            "With two lines.   \n"
            "\n"
            "Assistant:   Like this:\n"
            "```sh\n"
            "make run\n"
            "\n"
            "User: this line is inside the code block\n"
            "```\n"
            "Human: thanks\n"
            "AI: welcome\n")
    assert parse_text(text) == [
        Turn("user", "Some preamble."),
        Turn("user", "How do I run it?\nWith two lines.   "),
        Turn("assistant", "Like this:\n```sh\nmake run\n\nUser: this line is inside the code block\n```"),
        Turn("user", "thanks"),
        Turn("assistant", "welcome"),
    ]


def test_plain_text_paragraphs_are_user_turns() -> None:
    text = "First paragraph\nstill first.  \n\n\n  \nSecond.\n\n~~~\ncode\n\nmore code\n~~~\n"
    assert parse_text(text) == [Turn("user", "First paragraph\nstill first.  "), Turn("user", "Second."),
                                Turn("user", "~~~\ncode\n\nmore code\n~~~")]


def test_plain_text_crlf_becomes_lf() -> None:
    assert parse_text("User: a\r\nb\r\nAssistant: c\r\n") == [Turn("user", "a\nb"), Turn("assistant", "c")]


def test_format_detection() -> None:
    jsonl = '{"role": "user", "content": "x"}\n'
    assert parse_turns("\ufeff" + jsonl) == [Turn("user", "x")]
    assert parse_turns("hello", source="chat.txt") == [Turn("user", "hello")]
    assert parse_turns(jsonl, fmt="text") == [Turn("user", jsonl.strip())]
    with pytest.raises(InvalidInput, match=r"^chat\.jsonl:1: not valid JSON"):
        parse_turns("User: hi\n", source="chat.jsonl")
    with pytest.raises(InvalidInput, match="unknown input format"):
        parse_turns("x", fmt="xml")


def test_deferred_is_a_vault_error_with_the_cause() -> None:
    assert issubclass(IngestDeferred, VaultError) and issubclass(LlmDeferred, LlmUnavailable)


@pytest.mark.parametrize(("source", "thread"), [
    ("chats/2026-05 trip.jsonl", "2026-05-trip"),
    ("C:\\exports\\chat.json", "chat"),
    ("<stdin>", "stdin"),
    ("...jsonl", "chat"),
])
def test_a_chat_export_names_its_conversation_after_the_file_and_its_first_turn(source: str, thread: str) -> None:
    first = '{"role": "user", "content": "hi"}'
    name = chat_turns.thread_name(source, first)
    assert name.startswith(thread + "-") and len(name) == len(thread) + 7
    assert chat_turns.thread_name(source, first + "  ") == name  # the same export, wherever it lies
    assert chat_turns.thread_name(source, '{"role": "user", "content": "hello"}') != name  # another one


def test_only_a_record_without_memory_fields_is_a_chat_turn() -> None:
    assert chat_turns.is_chat_turn({"role": "user", "content": "hi", "ts": "2026-05-01"})
    assert not chat_turns.is_chat_turn({"role": "user", "content": "hi", "body": "a memory's own text"})
    assert not chat_turns.is_chat_turn({"content": "no role"})
    assert chat_turns.as_memory_record({"role": "user", "content": "hi", "source": "conversation:x#9",
                                         "tags": ["user"]}, "t", 1) == {
        "body": "hi", "tags": ["user"], "source": "conversation:x#9"}
    assert chat_turns.as_memory_record({"role": "tool", "content": "  "}, "t", 2) is None
