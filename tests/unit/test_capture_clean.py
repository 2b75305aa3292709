"""What capture keeps of a real transcript: never a compaction's summary, a fork's copy of its parent,
memvault's own tool answers or injected context, nor a one-off instruction.

The fixtures (``tests/fixtures/agents``) are in the agents' own formats: Claude Code 2.1 JSONL with
hook context attachments, a ``compact_boundary`` and its ``isCompactSummary`` line, and the fork
``--fork-session`` makes of it (the parent's lines, same ``uuid``, under the fork's ``sessionId``); a
Codex rollout calling memvault's MCP server, with a ``compacted`` line and its hand-over message.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from vault_engine.agents import claude_code, codex
from vault_engine.agents.capture import capture
from vault_engine.agents.captured import CAPTURED_DIR, CapturedKeys
from vault_engine.agents.messages import Message, Transcript, is_memvault_tool, without_injected
from vault_engine.agents.session import AgentSession
from vault_engine.llm.offline import OfflineLlm
from vault_engine.locks import WriterLock
from vault_engine.vault import Vault

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
SUMMARY = "This session is being continued from a previous conversation"


def stored_text(vault: Vault) -> str:
    """Every memory file and session buffer of the vault, as one text."""
    parts = [p.read_text(encoding="utf-8") for p in sorted(vault.root.rglob("*.md")) if ".memvault" not in p.parts]
    parts += [p.read_text(encoding="utf-8") for p in sorted((vault.root / ".memvault").rglob("*.jsonl"))]
    return "\n".join(parts)


def holding(vault: Vault, phrase: str) -> int:
    """How many memory files and session buffers hold ``phrase`` (a turn is stored in one of them)."""
    files = [p for p in vault.root.rglob("*.md") if ".memvault" not in p.parts]
    files += list((vault.root / ".memvault").rglob("*.jsonl"))
    return sum(phrase in p.read_text(encoding="utf-8") for p in files)


def memory_types(vault: Vault) -> list[str]:
    return sorted(e.memory.type for e in vault.scan().active())


def run(vault: Vault, transcript: Transcript, name: str) -> None:
    capture(vault, transcript, name=name, project=None, flush=True, llm=OfflineLlm())


# ---------------------------------------------------------------- compaction


def test_a_compaction_summary_is_never_the_users_words(vault: Vault) -> None:
    transcript = claude_code.read_transcript(FIXTURES / "claude_code_compacted.jsonl")
    texts = [m.text for m in transcript.messages]
    assert not any(SUMMARY in t for t in texts)
    assert "Now the deploy passes. Which timeout did we pick for the pipeline?" in texts  # the words after it stay
    run(vault, transcript, "claude-code-compacted")
    stored = stored_text(vault)
    assert "Now the deploy passes" in stored and SUMMARY not in stored
    assert "Primary Request and Intent" not in stored


def test_an_unflagged_summary_of_an_older_version_is_left_out_too(tmp_path: Path) -> None:
    lines = [{"type": "user", "uuid": "u-1", "sessionId": "s", "message": {"role": "user", "content": [
        {"type": "text", "text": f"{SUMMARY} that ran out of context. The conversation is summarized below: ..."}]}},
        {"type": "user", "uuid": "u-2", "sessionId": "s", "isMeta": False,
         "message": {"role": "user", "content": "Carry on with the migration."}}]
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert [m.text for m in claude_code.read_transcript(path).messages] == ["Carry on with the migration."]


def test_a_reply_the_tool_writes_in_the_agents_name_is_left_out(tmp_path: Path) -> None:
    """After a local command (``/compact``) Claude Code writes an assistant line of its own, model
    ``<synthetic>``: "No response requested." is not the agent's words."""
    lines = [{"type": "user", "uuid": "u-1", "sessionId": "s", "message": {"role": "user", "content": "/compact"}},
             {"type": "assistant", "uuid": "a-1", "sessionId": "s", "message": {
                 "id": "m-1", "role": "assistant", "model": "<synthetic>",
                 "content": [{"type": "text", "text": "No response requested."}]}},
             {"type": "assistant", "uuid": "a-2", "sessionId": "s", "message": {
                 "id": "m-2", "role": "assistant", "model": "claude-sonnet",
                 "content": [{"type": "text", "text": "The pipeline timeout is ten minutes."}]}}]
    path = tmp_path / "synthetic.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    texts = [m.text for m in claude_code.read_transcript(path).messages if m.role == "assistant"]
    assert texts == ["The pipeline timeout is ten minutes."]


def test_a_codex_compaction_and_its_hand_over_are_left_out() -> None:
    texts = [m.text for m in codex.read_rollout(FIXTURES / "codex_rollout_memvault.jsonl").messages]
    assert not any("Another language model" in t or "replacement_history" in t for t in texts)
    assert "Thanks. Which command starts the canary rollout?" in texts


# ---------------------------------------------------------------- forks


def test_a_fork_stores_its_parents_messages_once(vault: Vault) -> None:
    parent = claude_code.read_transcript(FIXTURES / "claude_code_compacted.jsonl")
    fork = claude_code.read_transcript(FIXTURES / "claude_code_forked.jsonl")
    assert parent.session != fork.session
    assert {m.key for m in parent.messages} < {m.key for m in fork.messages}  # same uuids, another session
    # The parent ends part way (its SessionEnd stores what it had), later it is resumed with
    # --fork-session: the fork copies the whole history and goes on.
    early = Transcript(parent.session, parent.cwd, parent.messages[:4])
    run(vault, early, "claude-code-parent")
    run(vault, fork, "claude-code-fork")
    assert holding(vault, "How do we deploy the api to staging?") == 1
    assert holding(vault, "Fifteen minutes for the whole pipeline") == 1
    assert holding(vault, "which flag enables it?") == 1  # the fork's own words are stored


def test_a_message_copied_twice_into_one_transcript_is_stored_once(vault: Vault, tmp_path: Path) -> None:
    # Claude Code's second /compact in one process re-appends earlier rows with their own uuids.
    lines = (FIXTURES / "claude_code_compacted.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "replayed.jsonl"
    path.write_text("".join(lines + lines[2:6]), encoding="utf-8")
    run(vault, claude_code.read_transcript(path), "claude-code-replayed")
    assert holding(vault, "How do we deploy the api to staging?") == 1


def test_keys_an_older_version_kept_per_session_still_count(vault: Vault) -> None:
    transcript = claude_code.read_transcript(FIXTURES / "claude_code_compacted.jsonl")
    old = AgentSession("claude-code-legacy", captured={m.key for m in transcript.messages})
    old.save(vault.root)
    run(vault, transcript, "claude-code-legacy")
    assert "How do we deploy the api" not in stored_text(vault)
    state = json.loads(AgentSession.path(vault.root, "claude-code-legacy").read_text(encoding="utf-8"))
    assert "captured" not in state  # moved to the vault's record
    assert CapturedKeys(vault.root).count() == len(transcript.messages)


# ---------------------------------------------------------------- memvault's own echo


def test_memvaults_own_tools_and_context_are_never_ingested_from_claude_code(vault: Vault) -> None:
    transcript = claude_code.read_transcript(FIXTURES / "claude_code_compacted.jsonl")
    assert not any("memvault__" in m.text or "<memory-context>" in m.text for m in transcript.messages)
    assert not any(m.outputs for m in transcript.messages)  # the 9,466-character search answer is not an output
    prompt = next(m.text for m in transcript.messages if m.role == "user")
    assert prompt == "How do we deploy the api to staging? The release pipeline keeps timing out."
    run(vault, transcript, "claude-code-echo")
    assert "document" not in memory_types(vault)
    stored = stored_text(vault)
    assert "Stored memory 3" not in stored and "Deploy rule" not in stored and "memory_remember" not in stored


def test_memvaults_own_tools_are_never_ingested_from_codex(vault: Vault) -> None:
    transcript = codex.read_rollout(FIXTURES / "codex_rollout_memvault.jsonl")
    assert not any(m.outputs for m in transcript.messages)
    assert not any("memvault" in m.text or "memory_search" in m.text for m in transcript.messages)
    run(vault, transcript, "codex-echo")
    assert "document" not in memory_types(vault)
    assert "Stored memory" not in stored_text(vault)
    assert "Run the release command with --canary=10." in stored_text(vault)


def test_memvault_tool_names_and_injected_blocks() -> None:
    for name in ("mcp__memvault__memory_search", "memvault__memory_context", "memvault.memory_read"):
        assert is_memvault_tool(name)
    for name in ("mcp__github__search", "Bash", "mcp__memvault_x__memory_search", "memvaultish__search"):
        assert not is_memvault_tool(name)
    assert is_memvault_tool("memory_search", server="memvault")
    assert without_injected("<memory-context>\n- m-1\n</memory-context>\nDeploy it.") == "Deploy it."
    assert without_injected("Deploy it.\n<system-reminder>\nnote") == "Deploy it."  # cut short: still left out
    assert without_injected("a <memory-context> in prose") == "a"


# ---------------------------------------------------------------- one-off instructions


def test_capture_leaves_out_one_off_instructions_as_add_does(vault: Vault) -> None:
    from vault_engine.errors import InvalidInput
    from vault_engine.vault.results import NewMemory

    texts = ["Today, use the staging database.", "For now, skip the e2e tests.",
             "Just this once, skip the changelog."]
    for text in texts:
        try:
            vault.add(NewMemory(text))
        except InvalidInput:
            pass
        else:
            raise AssertionError(f"add kept {text!r}")
    messages = [Message(f"k{n}", "user", text) for n, text in enumerate(texts)]
    messages.append(Message("k9", "user", "The staging database is refreshed every night at 02:00."))
    run(vault, Transcript("s", None, messages), "claude-code-once")
    stored = stored_text(vault)
    assert "refreshed every night" in stored
    assert not any(text in stored for text in texts)


# ---------------------------------------------------------------- the vault-wide record


def test_the_record_is_small_sorted_shards(vault: Vault) -> None:
    transcript = claude_code.read_transcript(FIXTURES / "claude_code_forked.jsonl")
    run(vault, transcript, "claude-code-fork")
    shards = sorted((vault.root / CAPTURED_DIR).glob("*.keys"))
    lines = [line for s in shards for line in s.read_text(encoding="ascii").splitlines()]
    assert len(lines) == len(transcript.messages) and all(len(line) == 16 for line in lines)
    for shard in shards:
        content = shard.read_text(encoding="ascii").splitlines()
        assert content == sorted(content) and all(line[0] == shard.stem for line in content)
    assert not list((vault.root / CAPTURED_DIR / "pending").glob("*.keys"))


def test_a_running_capture_keeps_its_messages_and_a_crashed_one_does_not(vault: Vault) -> None:
    keys = CapturedKeys(vault.root)
    messages = [Message(f"key-{n}", "user", f"text {n}") for n in range(4)]
    lock_path = vault.root / ".memvault" / "agents" / "a.lock"
    lock_of = {"a": lock_path, "b": vault.root / ".memvault" / "agents" / "b.lock"}.__getitem__
    lock = WriterLock(lock_path, 5)
    started, finish = threading.Event(), threading.Event()

    def capture_a() -> None:
        with lock.hold():
            keys.take("a", messages[:3], lock_of=lock_of)
            started.set()
            finish.wait(10)

    thread = threading.Thread(target=capture_a)
    thread.start()
    started.wait(10)
    try:
        assert [m.key for m in keys.take("b", messages, lock_of=lock_of)] == ["key-3"]
    finally:
        finish.set()
        thread.join()
    # a's lock is free now and it recorded nothing (it crashed): its messages are b's to take.
    assert [m.key for m in keys.take("b", messages, lock_of=lock_of)] == [m.key for m in messages]
    keys.record("b", messages)
    assert keys.take("a", messages, lock_of=lock_of) == [] and keys.count() == 4


def test_a_torn_shard_loses_only_its_torn_line(vault: Vault) -> None:
    keys = CapturedKeys(vault.root)
    messages = [Message(f"key-{n}", "user", "x") for n in range(40)]
    keys.record("s", messages)
    shard = sorted((vault.root / CAPTURED_DIR).glob("*.keys"))[0]
    shard.write_text(shard.read_text(encoding="ascii") + "0123\x00garbage\n", encoding="ascii")
    assert keys.count() == 40
