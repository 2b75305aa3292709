"""Claude Code (the real CLI, ``claude -p``) with memvault installed, against the mock Anthropic API:
what memvault puts in the model's requests, what it stores of the sessions, and that nothing it does
breaks a session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import API_DEPLOY, PROFILE, RELEASE_NOTES, WEB_DEPLOY, World, agent_cli
from .mock_models import Recorded, Reply, default_script

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SEARCH_TOOL = "mcp__memvault__memory_search"
ASK_SEARCH = "Search memory for the release notes rule, please (zulu-marker)."


def claude(world: World, prompt: str, *flags: str) -> dict[str, object]:
    """Run ``claude -p PROMPT`` in the project; its JSON result."""
    done = world.run([str(agent_cli("claude")), *flags, "-p", prompt, "--output-format", "json"])
    result: dict[str, object] = json.loads(done.stdout)
    assert result.get("is_error") is False, result
    return result


def search_script(request: Recorded) -> Reply:
    """Calls memvault's search tool when asked to search memory; the default script otherwise."""
    if not request.tool_results() and "zulu-marker" in request.last_user_text():
        return Reply("Searching.", tool=SEARCH_TOOL, arguments={"query": "where do release notes go"})
    return default_script(request)


@pytest.mark.parametrize("scope", ["user", "project"])
def test_the_first_request_carries_the_projects_manifest(make_world: Callable[..., World], scope: str) -> None:
    world = make_world("claude-code", scope)
    result = claude(world, "Hello, what are we working on?")
    first = world.turns()[0].text()
    assert "SessionStart hook additional context" in first
    assert world.ids["api"] in first and API_DEPLOY in first  # the project's memory, with its id
    assert world.ids["profile"] in first and PROFILE in first  # the core profile, in full
    assert world.ids["web"] not in first and WEB_DEPLOY not in first  # never another project's
    assert str(result["result"]).startswith("Reply number")  # the model's answer came through


def test_a_relevant_prompt_gets_its_memory_and_an_unrelated_one_nothing(make_world: Callable[..., World]) -> None:
    world = make_world("claude-code")
    claude(world, "Where do the release notes go?")
    asked = world.turns()[0].text()
    assert "<memory-context>\n" in asked and "Memories relevant to this prompt" in asked
    assert world.ids["notes"] in asked and "docs/CHANGELOG.md" in asked
    count = len(world.mock.requests)
    claude(world, "write a haiku about green tea")
    unrelated = world.turns(count)[0].text()
    assert "SessionStart hook additional context" in unrelated  # the hooks ran
    assert "Memories relevant to this prompt" not in unrelated and world.ids["notes"] not in unrelated


def test_each_message_is_stored_once_across_resume_and_continue(make_world: Callable[..., World]) -> None:
    world = make_world("claude-code")
    first = claude(world, "First words, alpha-marker.")
    claude(world, "Second words, bravo-marker.", "--resume", str(first["session_id"]))
    claude(world, "Third words, charlie-marker.", "--continue")
    stored = world.stored("alpha-marker", "bravo-marker", "charlie-marker")
    for marker in ("alpha-marker", "bravo-marker", "charlie-marker"):
        assert stored.count(marker) == 1, (marker, stored)
    assert stored.count("Reply number") == 3, stored
    assert (world.vault / "episodes" / "projects" / "github.com-acme-api").is_dir()


def test_a_forked_session_stores_the_parents_messages_once(make_world: Callable[..., World]) -> None:
    world = make_world("claude-code")
    first = claude(world, "Parent words, delta-marker.")
    world.stored("delta-marker")
    claude(world, "Fork words, echo-marker.", "--resume", str(first["session_id"]), "--fork-session")
    stored = world.stored("delta-marker", "echo-marker")
    assert stored.count("delta-marker") == 1, stored
    assert stored.count("echo-marker") == 1, stored


def test_a_compaction_stores_each_message_once_and_no_summary_as_the_persons_words(
        make_world: Callable[..., World]) -> None:
    world = make_world("claude-code")
    first = claude(world, "Before compaction, foxtrot-marker.")
    session = str(first["session_id"])
    markers = ["foxtrot-marker"]
    for word in ("one", "two", "three"):  # Claude Code compacts nothing shorter
        markers.append(f"{word}-marker")
        claude(world, f"More words, {word}-marker.", "--resume", session)
    world.run([str(agent_cli("claude")), "--resume", session, "-p", "/compact"])
    transcripts = list((world.home / ".claude" / "projects").rglob(f"{session}.jsonl"))
    assert any('"isCompactSummary":true' in p.read_text() for p in transcripts), "no compaction happened"
    markers.append("golf-marker")
    claude(world, "After compaction, golf-marker.", "--resume", session)
    stored = world.stored(*markers)
    for marker in markers:
        assert stored.count(marker) == 1, (marker, stored)
    assert "This session is being continued" not in stored, stored


def test_the_agents_own_synthetic_replies_are_not_stored(make_world: Callable[..., World]) -> None:
    world = make_world("claude-code")
    first = claude(world, "Some words, india-marker.")
    world.run([str(agent_cli("claude")), "--resume", str(first["session_id"]), "-p", "/compact"])
    claude(world, "More words, juliet-marker.", "--continue")
    stored = world.stored("india-marker", "juliet-marker")
    assert "No response requested." not in stored, stored


def test_memvaults_own_tool_outputs_are_not_stored_back(make_world: Callable[..., World]) -> None:
    world = make_world("claude-code")
    world.mock.script = search_script
    claude(world, ASK_SEARCH, "--allowedTools", SEARCH_TOOL)
    results = [text for r in world.turns() for text in r.tool_results()]
    assert any(RELEASE_NOTES in text for text in results), "the search tool was not answered"
    world.stored("zulu-marker")
    copies = [d for d in world.documents() if "memory_search" in d or RELEASE_NOTES in d]
    assert copies == [], copies


def test_memvaults_mcp_tools_round_trip(make_world: Callable[..., World]) -> None:
    world = make_world("claude-code")
    world.mock.script = search_script
    result = claude(world, ASK_SEARCH, "--allowedTools", SEARCH_TOOL)
    first = world.turns()[0]
    assert SEARCH_TOOL in first.tool_names()
    assert {"mcp__memvault__memory_remember", "mcp__memvault__memory_read"} <= set(first.tool_names())
    answered = [text for r in world.turns() for text in r.tool_results()]
    assert any(world.ids["notes"] in text and RELEASE_NOTES in text for text in answered), answered
    assert result["result"] == "The tool answered; that is all."


def _break_config(vault: Path) -> None:
    (vault / "memvault.toml").write_text("[llm\nprovider = \n", encoding="utf-8")


def _break_memory(vault: Path) -> None:
    memory = next(p for p in sorted((vault / "memories").rglob("*.md")))
    memory.write_bytes(b"---\nid: [unclosed\n\xff\xfe not yaml: : :\n")


@pytest.mark.parametrize("breakage", [_break_config, _break_memory], ids=["bad-config", "unreadable-memory"])
def test_a_broken_vault_does_not_break_the_session(make_world: Callable[..., World],
                                                   breakage: Callable[[Path], None]) -> None:
    world = make_world("claude-code")
    breakage(world.vault)
    result = claude(world, "Where do the release notes go? hotel-marker")
    assert str(result["result"]).startswith("Reply number")
    assert "hotel-marker" in world.turns()[0].text()
