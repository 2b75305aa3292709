"""The agents' formats: Claude Code's hook input, answer and transcript; Codex's session files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vault_engine.agents import claude_code, codex
from vault_engine.agents.messages import condensed_call
from vault_engine.agents.session import AgentSession, session_name

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
INPUTS = json.loads((FIXTURES / "claude_code_hook_inputs.json").read_text())


def test_every_documented_hook_input_parses() -> None:
    for example in INPUTS.values():
        event = example["hook_event_name"]
        parsed = claude_code.HookInput.parse(json.dumps(example), event)
        assert parsed.session_id == example["session_id"] and parsed.cwd == example["cwd"]
        assert parsed.prompt == example.get("prompt") and parsed.source == example.get("source")


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", '{"cwd": "/x"}', '{"session_id": 5}',
                                  '{"session_id": "s", "prompt": ["a"]}', "[" * 100000])
def test_malformed_hook_input_is_refused(text: str) -> None:
    with pytest.raises(claude_code.HookInputError):
        claude_code.HookInput.parse(text, "UserPromptSubmit")


def test_an_input_for_another_event_is_refused() -> None:
    with pytest.raises(claude_code.HookInputError, match="SessionEnd"):
        claude_code.HookInput.parse(json.dumps(INPUTS["SessionEnd"]), "SessionStart")


def test_the_answer_is_the_documented_json_for_context_events_and_nothing_else() -> None:
    out = json.loads(claude_code.answer("UserPromptSubmit", "remember this"))
    assert out == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "remember this"}}
    assert claude_code.answer("SessionStart", "  \n") == ""
    assert claude_code.answer("SessionEnd", "text") == ""
    assert claude_code.answer("PreCompact", "text") == ""


def test_the_claude_code_transcript_keeps_words_and_condensed_calls() -> None:
    transcript = claude_code.read_transcript(FIXTURES / "claude_code_transcript.jsonl")
    assert transcript.session == "4f1c2a9e-7b3d-4e8a-9c21-5d6e7f809a1b" and transcript.cwd == "/tmp/project-a"
    roles = [m.role for m in transcript.messages]
    assert roles.count("user") == 3 and "tool" in roles
    texts = "\n".join(m.text for m in transcript.messages)
    assert "The retry test in tests/test_client.py is flaky on CI" in texts
    assert "[tool Bash: python -m pytest tests/test_client.py -q -p no:randomly]" in texts
    raw = (FIXTURES / "claude_code_transcript.jsonl").read_text()
    # What is left out: reasoning, side conversations of sub-agents, the tool's notes, summaries.
    thinking = next(json.loads(line) for line in raw.splitlines() if '"thinking"' in line)
    hidden = next(b["thinking"] for b in thinking["message"]["content"] if b["type"] == "thinking")
    assert hidden and hidden not in texts
    sidechain = [json.loads(line) for line in raw.splitlines() if '"isSidechain":true' in line.replace(" ", "")]
    assert sidechain and not {s["uuid"] for s in sidechain} & {m.key for m in transcript.messages}
    assert "Caveat" not in texts
    # Keys are the lines' uuids, unique and stable.
    keys = [m.key for m in transcript.messages]
    assert len(keys) == len(set(keys)) == len(claude_code.read_transcript(FIXTURES / "claude_code_transcript.jsonl")
                                              .messages)
    # A tool's result travels with its tool's name; the error flag is kept.
    outputs = [o for m in transcript.messages for o in m.outputs]
    assert {o.tool for o in outputs} >= {"Read", "Bash"}
    assert any(o.error for o in outputs if o.tool == "Bash")
    assert max(len(o.text) for o in outputs) > 3000


def test_a_torn_last_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text((FIXTURES / "claude_code_transcript.jsonl").read_text() + '{"type": "user", "mess')
    transcript = claude_code.read_transcript(path)
    assert transcript.skipped == 1 and transcript.messages


def test_codex_rollouts_current_and_legacy() -> None:
    current = codex.read_rollout(FIXTURES / "codex_rollout.jsonl")
    assert current.session == "019df3a2-5c17-7b40-9e2d-3f6a1b2c4d5e" and current.cwd == "/tmp/project-a"
    users = [m.text for m in current.messages if m.role == "user"]
    assert users == ["Make the retry backoff in src/http/retry.py deterministic so tests/test_client.py "
                     "stops flaking."]  # not the AGENTS.md, environment or permission messages
    assert any(m.text.startswith("[tool shell_command: ") for m in current.messages)
    assert any(m.role == "assistant" and "per-policy" in m.text for m in current.messages)
    legacy = codex.read_rollout(FIXTURES / "codex_rollout_legacy.jsonl")
    assert legacy.session == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert [m.text for m in legacy.messages if m.role == "user"] == [
        "Why does tests/test_client.py fail intermittently?"]
    output = next(o for m in legacy.messages for o in m.outputs)
    assert output.tool == "shell" and output.text.startswith("6:import random")  # the JSON wrapper unwrapped
    assert [m.key for m in legacy.messages] == [m.key for m in codex.read_rollout(FIXTURES /
                                                                                  "codex_rollout_legacy.jsonl").messages]


def test_condensed_calls_show_the_telling_input_briefly() -> None:
    assert condensed_call("Bash", {"command": "npm test", "description": "run"}) == "[tool Bash: npm test]"
    assert condensed_call("shell", '{"command": ["bash", "-lc", "ls"]}') == "[tool shell: bash -lc ls]"
    assert condensed_call("Noop", {}) == "[tool Noop]"
    long = condensed_call("Write", {"file_path": "x" * 500})
    assert len(long) < 200 and long.endswith("…]")


def test_session_names_fit_ingest_and_state_survives_garbage(tmp_path: Path) -> None:
    assert session_name("claude-code", "4f1c2a9e-7b3d-4e8a-9c21-5d6e7f809a1b") == \
        "claude-code-4f1c2a9e-7b3d-4e8a-9c21-5d6e7f809a1b"
    odd = session_name("codex", "../../etc/passwd")
    assert odd.startswith("codex-") and "/" not in odd and len(odd) <= 64
    state = AgentSession.load(tmp_path, "s")
    state.deliver(["a", "b"])
    state.deliver(["b", "c"])
    state.captured.add("k1")
    state.save(tmp_path)
    again = AgentSession.load(tmp_path, "s")
    assert again.delivered == ["a", "b", "c"] and again.captured == {"k1"}
    AgentSession.path(tmp_path, "s").write_text("{not json")
    assert AgentSession.load(tmp_path, "s").delivered == []
