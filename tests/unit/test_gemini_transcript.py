"""Gemini CLI's chat file read as a transcript: the person's words, the model's text, each message once.

``tests/fixtures/agents/gemini_chat.jsonl`` is the file Gemini CLI 0.61 wrote for a real ``gemini -p`` session
against the loopback mock (its paths renamed to /home/dev): memvault installed (the manifest and the prompts'
memories in ``<hook_context>`` blocks), two ``--resume`` runs appending to it, thoughts, and a call of memvault's
``mcp_memvault_memory_search`` with its answer.  The variants below change that file the way Gemini CLI's
``chatRecordingService`` writes them (a compression's rebuilt history, a message written again, another tool).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vault_engine.agents import gemini
from vault_engine.agents.capture import capture
from vault_engine.agents.messages import is_memvault_tool
from vault_engine.llm.offline import OfflineLlm
from vault_engine.vault import Vault

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "agents" / "gemini_chat.jsonl"
SESSION = "5ab0d948-eb49-4e15-b03d-59ac57d558f6"
PROMPTS = ["First words, kilo-marker.", "Second words, lima-marker.",
           "Search memory for the release notes rule (zulu-marker)."]
REPLIES = ["Reply number 1.", "Reply number 2.", "Let me look.", "The tool answered; that is all."]
SNAPSHOT = "<state_snapshot>\n<overall_goal>Find where release notes go.</overall_goal>\n</state_snapshot>"


def lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def texts(path: Path, role: str) -> list[str]:
    return [m.text for m in gemini.read_transcript(path).messages if m.role == role]


def test_the_persons_words_without_the_hooks_context_and_the_models_text_without_thoughts() -> None:
    transcript = gemini.read_transcript(FIXTURE)
    assert (transcript.session, transcript.cwd, transcript.skipped) == (SESSION, "/home/dev/src/api", 0)
    assert texts(FIXTURE, "user") == PROMPTS
    assert texts(FIXTURE, "assistant") == REPLIES
    raw = FIXTURE.read_text(encoding="utf-8")
    assert "<hook_context>" in raw and "Thinking about the answer." in raw and "<session_context>" in raw
    for message in transcript.messages:
        for foreign in ("hook_context", "memory-context", "memvault feedback", "Thinking about", "session_context"):
            assert foreign not in message.text, (foreign, message)
    assert all(m.ts and m.ts.startswith("2026-12-06T11:55") for m in transcript.messages)


def test_an_answer_written_again_as_parts_keeps_its_text_not_its_thought(tmp_path: Path) -> None:
    # After a resume the CLI keeps each answer's content as the model's parts (the thought among them); a later
    # write of the same message (its tool calls added) carries that shape: the same message, the same text.
    records = lines()
    rebuilt = next(r["$set"]["messages"] for r in records if isinstance(r.get("$set"), dict)
                   and any(m["type"] == "gemini" for m in r["$set"].get("messages", [])))
    answer = next(m for m in rebuilt if m["type"] == "gemini")
    assert any(p.get("thought") for p in answer["content"])
    path = write(tmp_path / "again.jsonl", [*records, answer])
    assert texts(path, "assistant") == REPLIES
    assert [m.key for m in gemini.read_transcript(path).messages] == [m.key for m in
                                                                       gemini.read_transcript(FIXTURE).messages]


def test_memvaults_own_tool_call_and_its_answer_are_left_out_another_tools_are_kept(tmp_path: Path) -> None:
    transcript = gemini.read_transcript(FIXTURE)
    assert "mcp_memvault_memory_search" in FIXTURE.read_text(encoding="utf-8")
    assert not any(m.outputs for m in transcript.messages)
    assert not any("memory_search" in m.text or "untrusted_context" in m.text for m in transcript.messages)
    assert [m.role for m in transcript.messages] == ["user", "assistant"] * 3 + ["assistant"]
    # the same session had it called a shell command: the call is condensed, its output kept
    shell = FIXTURE.read_text(encoding="utf-8").replace("mcp_memvault_memory_search", "run_shell_command")
    path = tmp_path / "shell.jsonl"
    path.write_text(shell, encoding="utf-8")
    other = gemini.read_transcript(path).messages
    assert "Let me look.\n\n[tool run_shell_command: where do release notes go]" in [m.text for m in other]
    outputs = [o for m in other for o in m.outputs]
    assert [o.tool for o in outputs] == ["run_shell_command"] and "docs/CHANGELOG.md" in outputs[0].text
    assert [m.role for m in other].count("tool") == 1


def test_a_compressions_summary_and_rebuilt_history_are_not_stored_as_anyones_words(tmp_path: Path) -> None:
    # What 0.61 writes when it compresses (ChatCompressionService, GeminiChat.initialize ->
    # updateMessagesFromHistory): one $set.messages of its context, the summary in the person's name, the model's
    # "Got it." and the kept turns under new ids.
    records = lines()
    context = records[1]["$set"]["messages"][0]
    kept = [{**m, "id": f"kept-{n}"} for n, m in enumerate(r for r in records if r.get("type") in ("user", "gemini"))]
    rebuilt = [context, {"id": "summary", "timestamp": "2026-12-06T11:56:00.000Z", "type": "user",
                         "content": [{"text": SNAPSHOT}]},
               {"id": "ack", "timestamp": "2026-12-06T11:56:00.000Z", "type": "gemini",
                "content": [{"text": "Got it. Thanks for the additional context!"}]}, *kept[-3:]]
    after = {"id": "after", "timestamp": "2026-12-06T11:56:01.000Z", "type": "user", "content": [{"text": "Go on."}]}
    path = write(tmp_path / "compressed.jsonl", [*records, {"$set": {"messages": rebuilt}}, after])
    assert texts(path, "user") == [*PROMPTS, "Go on."]
    assert texts(path, "assistant") == REPLIES
    # an older version's file (one object) holding such a summary and its acknowledgement
    legacy = {"sessionId": SESSION, "projectHash": "x", "messages": [*rebuilt[1:3], after]}
    old = tmp_path / "session-old.json"
    old.write_text(json.dumps(legacy, indent=2), encoding="utf-8")
    transcript = gemini.read_transcript(old)
    assert transcript.session == SESSION and [m.text for m in transcript.messages] == ["Go on."]


def test_a_resumed_sessions_messages_are_stored_once(vault: Vault, tmp_path: Path) -> None:
    records = lines()
    second_resume = [n for n, r in enumerate(records) if "projectHash" in r][2]  # the third run's first line
    earlier = write(tmp_path / "earlier.jsonl", records[:second_resume])
    assert texts(earlier, "user") == PROMPTS[:2]
    keys = [m.key for m in gemini.read_transcript(FIXTURE).messages]
    assert len(keys) == len(set(keys)) == 7 and all(k.startswith("gemini:") for k in keys)
    llm = OfflineLlm()
    first = capture(vault, gemini.read_transcript(earlier), name="gemini-" + SESSION, project=None, flush=False,
                    llm=llm)
    second = capture(vault, gemini.read_transcript(FIXTURE), name="gemini-" + SESSION, project=None, flush=True,
                     llm=llm)
    assert (first.new_messages, second.new_messages) == (4, 3)
    stored = stored_text(vault)
    for said in [*PROMPTS, *REPLIES]:  # each turn's text is a line of one episode's body (titles shorten it)
        assert stored.splitlines().count(said) == 1, said
    assert "memory-context" not in stored and "Thinking about" not in stored and "untrusted_context" not in stored


def test_a_one_off_instruction_is_left_out_as_for_the_other_agents(vault: Vault, tmp_path: Path) -> None:
    raw = FIXTURE.read_text(encoding="utf-8").replace("Second words, lima-marker.",
                                                      "Just this once, skip the changelog.")
    path = tmp_path / "once.jsonl"
    path.write_text(raw, encoding="utf-8")
    assert "Just this once, skip the changelog." in texts(path, "user")
    capture(vault, gemini.read_transcript(path), name="gemini-once", project=None, flush=True, llm=OfflineLlm())
    stored = stored_text(vault)
    assert "kilo-marker" in stored and "skip the changelog" not in stored


def test_gemini_names_of_memvaults_tools() -> None:
    for name in ("mcp_memvault_memory_search", "mcp_memvault_memory_remember"):
        assert is_memvault_tool(name)
    for name in ("mcp_github_search", "run_shell_command", "memory_search"):
        assert not is_memvault_tool(name)


def test_a_torn_line_is_skipped_and_a_foreign_file_reads_as_nothing(tmp_path: Path) -> None:
    torn = tmp_path / "torn.jsonl"
    torn.write_text(FIXTURE.read_text(encoding="utf-8") + '{"id": "x", "type": "us', encoding="utf-8")
    transcript = gemini.read_transcript(torn)
    assert transcript.skipped == 1 and [m.text for m in transcript.messages if m.role == "user"] == PROMPTS
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{\n  "hello": [1, 2]\n}\n', encoding="utf-8")
    assert gemini.read_transcript(foreign).messages == []


def stored_text(vault: Vault) -> str:
    """Every memory file and session buffer of the vault, as one text."""
    parts = [p.read_text(encoding="utf-8") for p in sorted(vault.root.rglob("*.md")) if ".memvault" not in p.parts]
    parts += [p.read_text(encoding="utf-8") for p in sorted((vault.root / ".memvault").rglob("*.jsonl"))]
    return "\n".join(parts)
