"""OpenCode (the real CLI, ``opencode run``) with memvault installed (``memvault install opencode``: the
``memvault.js`` plugin and the MCP server in ``~/.config/opencode/opencode.json``), against the mock Anthropic
API through OpenCode's ``anthropic`` provider."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import API_DEPLOY, PROFILE, RELEASE_NOTES, WEB_DEPLOY, World, agent_cli
from .mock_models import Recorded, Reply, default_script
from .test_claude_code import _break_config, _break_memory

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SEARCH_TOOL = "memvault_memory_search"  # OpenCode's name for an MCP server's tool


def opencode(world: World, prompt: str, *flags: str) -> str:
    """Run ``opencode run [FLAGS] PROMPT`` in the project; what it printed (the model's answer)."""
    return world.run([str(agent_cli("opencode")), "run", *flags, prompt]).stdout


def search_script(request: Recorded) -> Reply:
    """Calls memvault's search tool when asked to search memory (in the conversation, not in OpenCode's request
    for the session's title; the person's words are not the last part of the message: memvault's follows)."""
    if request.is_turn and not request.tool_results() and "zulu-marker" in request.text():
        return Reply("Searching.", tool=SEARCH_TOOL, arguments={"query": "where do release notes go"})
    return default_script(request)


def test_the_first_request_carries_the_projects_manifest(make_world: Callable[..., World]) -> None:
    world = make_world("opencode")
    out = opencode(world, "Hello, what are we working on?")
    first = world.turns()[0]
    assert first.api == "anthropic"
    text = first.text()
    assert "<memory-context>\n" in text and "Task: Work on this project" in text
    assert world.ids["api"] in text and API_DEPLOY in text
    assert world.ids["profile"] in text and PROFILE in text
    assert world.ids["web"] not in text and WEB_DEPLOY not in text
    assert "Reply number" in out


def test_a_relevant_prompt_gets_its_memory_and_an_unrelated_one_nothing(make_world: Callable[..., World]) -> None:
    world = make_world("opencode")
    opencode(world, "Where do the release notes go?")
    asked = world.turns()[0].text()
    assert "Memories relevant to this prompt" in asked
    assert world.ids["notes"] in asked and "docs/CHANGELOG.md" in asked
    count = len(world.mock.requests)
    opencode(world, "write a haiku about green tea")
    unrelated = world.turns(count)[0].text()
    assert "Task: Work on this project" in unrelated  # a new session: the plugin gave its manifest
    assert world.ids["notes"] not in unrelated and "docs/CHANGELOG.md" not in unrelated


def test_each_message_is_stored_once_across_continue(make_world: Callable[..., World]) -> None:
    world = make_world("opencode")
    opencode(world, "First words, kilo-marker.")
    world.stored("kilo-marker")
    opencode(world, "Second words, lima-marker.", "--continue")
    stored = world.stored("kilo-marker", "lima-marker")
    assert stored.count("kilo-marker") == 1 and stored.count("lima-marker") == 1, stored
    assert stored.count("Reply number") == 2, stored
    assert "<memory-context>" not in stored, stored  # memvault's own part of the message is not stored


def test_memvaults_mcp_tools_round_trip_and_are_not_stored_back(make_world: Callable[..., World]) -> None:
    world = make_world("opencode")
    world.mock.script = search_script
    out = opencode(world, "Search memory for the release notes rule (zulu-marker).")
    first = world.turns()[0]
    assert SEARCH_TOOL in first.tool_names()
    assert "memvault_memory_remember" in first.tool_names()
    answered = [text for r in world.turns() for text in r.tool_results()]
    assert any(world.ids["notes"] in text and RELEASE_NOTES in text for text in answered), answered
    assert "The tool answered; that is all." in out
    stored = world.stored("zulu-marker", "The tool answered")
    assert RELEASE_NOTES not in stored, stored
    copies = [d for d in world.documents() if "memory_search" in d or RELEASE_NOTES in d]
    assert copies == [], copies


@pytest.mark.parametrize("breakage", [_break_config, _break_memory], ids=["bad-config", "unreadable-memory"])
def test_a_broken_vault_does_not_break_the_session(make_world: Callable[..., World],
                                                   breakage: Callable[[Path], None]) -> None:
    world = make_world("opencode")
    breakage(world.vault)
    out = opencode(world, "Where do the release notes go? hotel-marker")
    assert "Reply number" in out
    assert "hotel-marker" in world.turns()[0].text()
