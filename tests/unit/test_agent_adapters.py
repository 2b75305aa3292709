"""Each agent's hook adapter: its documented stdin read into the common input, its answer's shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vault_engine.agents import claude_code, codex, copilot, cursor, gemini, hooks, opencode
from vault_engine.agents.adapter import ACTIONS, HookInputError, NoTranscript

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
# Payloads as each agent's documentation shows them (see each module's docstring for the source).
CODEX_START = {"session_id": "019a-codex", "transcript_path": None, "cwd": "/work/api", "hook_event_name":
               "SessionStart", "model": "gpt-5.5", "permission_mode": "default", "source": "startup"}
CODEX_COMPACT = {"session_id": "019a-codex", "transcript_path": "/h/.codex/sessions/2026/12/06/rollout-x.jsonl",
                 "cwd": "/work/api", "hook_event_name": "PreCompact", "model": "gpt-5.5", "trigger": "auto",
                 "turn_id": "t3"}
GEMINI_PROMPT = {"session_id": "g-1", "transcript_path": "/h/.gemini/tmp/x/chats/session-1.json", "cwd": "/work/api",
                 "hook_event_name": "BeforeAgent", "timestamp": "2026-12-06T03:00:00Z", "prompt": "how do we deploy?"}
CURSOR_START = {"conversation_id": "c-42", "generation_id": "g-7", "hook_event_name": "sessionStart",
                "workspace_roots": ["/work/api", "/work/lib"], "transcript_path": "/h/.cursor/t.jsonl",
                "model": "claude-4", "cursor_version": "2.1.0", "user_email": "a@example.com"}
COPILOT_PROMPT = {"sessionId": "cp-9", "timestamp": 1765000000000, "cwd": "/work/api", "prompt": "deploy?"}


def test_every_wired_event_maps_onto_one_of_memvaults_four_actions() -> None:
    for adapter in hooks.AGENTS.values():
        for event in adapter.EVENTS:
            payload = {"session_id": "s", "conversation_id": "s", "hook_event_name": event}
            assert adapter.parse(json.dumps(payload), event).event in ACTIONS


def test_codex_input_is_claude_codes_shape_and_its_rollout_is_the_transcript() -> None:
    start = codex.parse(json.dumps(CODEX_START), "SessionStart")
    assert (start.event, start.session_id, start.cwd, start.source) == ("SessionStart", "019a-codex", "/work/api",
                                                                       "startup")
    compact = codex.parse(json.dumps(CODEX_COMPACT), "PreCompact")
    assert compact.event == "PreCompact" and compact.transcript_path == CODEX_COMPACT["transcript_path"]
    out = json.loads(codex.answer("UserPromptSubmit", "memories"))
    assert out == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "memories"}}
    assert codex.answer("SessionEnd", "text") == ""
    assert codex.EVENTS == claude_code.EVENTS
    rollout = next(FIXTURES.glob("codex*.jsonl"))
    assert codex.read_transcript(rollout) == codex.read_rollout(rollout) and codex.read_rollout(rollout).messages


def test_gemini_before_agent_is_the_prompt_and_answers_json_only() -> None:
    hook = gemini.parse(json.dumps(GEMINI_PROMPT), "BeforeAgent")
    assert (hook.event, hook.prompt, hook.cwd) == ("UserPromptSubmit", "how do we deploy?", "/work/api")
    out = json.loads(gemini.answer("BeforeAgent", "memories"))
    assert out == {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "memories"}}
    assert gemini.answer("SessionStart", "  ") == ""
    with pytest.raises(HookInputError, match="SessionStart"):
        gemini.parse(json.dumps(GEMINI_PROMPT), "SessionStart")
    with pytest.raises(NoTranscript):
        cursor.read_transcript(Path("/nonexistent"))


def test_gemini_pre_compress_and_session_end_capture_the_transcript() -> None:
    # as gemini 0.61 -p sent them (tests/fixtures/agents/gemini_chat.jsonl is that session's file)
    path = "/home/dev/.gemini/tmp/api/chats/session-2026-12-06T11-55-5ab0d948.jsonl"
    base = {"session_id": "5ab0d948-eb49-4e15-b03d-59ac57d558f6", "transcript_path": path, "cwd": "/home/dev/src/api",
            "timestamp": "2026-12-06T11:55:47.405Z"}
    compress = gemini.parse(json.dumps({**base, "hook_event_name": "PreCompress", "trigger": "auto"}), "PreCompress")
    end = gemini.parse(json.dumps({**base, "hook_event_name": "SessionEnd", "reason": "exit"}), "SessionEnd")
    assert (compress.event, end.event) == ("PreCompact", "SessionEnd")
    assert compress.transcript_path == end.transcript_path == path and end.cwd == "/home/dev/src/api"
    assert gemini.answer("PreCompress", "text") == gemini.answer("SessionEnd", "text") == ""


def test_gemini_prompt_is_the_persons_words_without_the_session_start_context() -> None:
    # gemini -p puts SessionStart's context before the prompt, and BeforeAgent is given the whole text
    manifest = "<hook_context>&lt;memory-context&gt;\nTask: Work on this project\n&lt;/memory-context&gt;" \
        "</hook_context>"
    quoted = "how do we deploy? <hook_context>x</hook_context>"  # not before the words: the person's own
    for said, expected in ((f"{manifest}\n\nhow do we deploy?", "how do we deploy?"),
                           (f"{manifest}\n\n{manifest}\n\nhow do we deploy?", "how do we deploy?"),
                           (manifest, ""), (quoted, quoted)):
        hook = gemini.parse(json.dumps({**GEMINI_PROMPT, "prompt": said}), "BeforeAgent")
        assert hook.prompt == expected


def test_cursor_conversation_is_the_session_and_the_first_root_the_folder() -> None:
    hook = cursor.parse(json.dumps(CURSOR_START), "sessionStart")
    assert (hook.event, hook.session_id, hook.cwd, hook.source) == ("SessionStart", "c-42", "/work/api", "startup")
    assert json.loads(cursor.answer("sessionStart", "manifest")) == {"additional_context": "manifest"}
    assert cursor.answer("sessionStart", "") == ""
    for bad in ({**CURSOR_START, "workspace_roots": "/work/api"}, {**CURSOR_START, "conversation_id": None},
                {**CURSOR_START, "hook_event_name": "stop"}):
        with pytest.raises(HookInputError):
            cursor.parse(json.dumps(bad), "sessionStart")


def test_copilot_input_is_read_but_nothing_is_wired_or_answered() -> None:
    hook = copilot.parse(json.dumps(COPILOT_PROMPT), "userPromptSubmitted")
    assert (hook.event, hook.session_id, hook.prompt) == ("UserPromptSubmit", "cp-9", "deploy?")
    assert copilot.EVENTS == () and copilot.answer("userPromptSubmitted", "x") == ""
    with pytest.raises(HookInputError):
        copilot.parse(json.dumps({"timestamp": 1}), "sessionStart")


def test_opencode_answers_context_for_the_plugin_and_reads_its_message_dump(tmp_path: Path) -> None:
    hook = opencode.parse(json.dumps({"session_id": "ses_1", "cwd": "/w", "prompt": "p",
                                      "hook_event_name": "chat.message"}), "chat.message")
    assert hook.event == "UserPromptSubmit"
    assert opencode.parse('{"session_id": "ses_1"}', "session.idle").event == "PreCompact"
    assert json.loads(opencode.answer("session.created", "manifest")) == {"context": "manifest"}
    assert opencode.answer("session.idle", "x") == ""
    dump = tmp_path / "transcript.jsonl"
    dump.write_text("\n".join([
        json.dumps({"id": "msg_1", "role": "user", "time": 1765000000000, "text": "Why does the deploy fail?"}),
        json.dumps({"id": "msg_2", "role": "assistant", "text": "The token expired; I renewed it."}),
        json.dumps({"id": "msg_3", "role": "assistant", "text": ""}),
        "{torn",
    ]) + "\n")
    transcript = opencode.read_transcript(dump)
    assert [(m.key, m.role, m.text) for m in transcript.messages] == [
        ("opencode:msg_1", "user", "Why does the deploy fail?"),
        ("opencode:msg_2", "assistant", "The token expired; I renewed it.")]
    assert transcript.skipped == 1 and transcript.messages[0].ts == "1765000000000"


def test_a_hook_of_an_agent_without_a_transcript_reader_logs_and_answers_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    environ = {"HOME": str(home)}
    assert hooks.run("copilot", "preCompact", json.dumps(COPILOT_PROMPT), None, environ) == ""
    assert "unknown hook copilot preCompact" in (home / ".memvault" / "hooks.log").read_text()
