"""Gemini CLI (the real CLI, ``gemini -p``) with memvault installed (``memvault install gemini``: SessionStart,
BeforeAgent, PreCompress and SessionEnd hooks and the MCP server in ``~/.gemini/settings.json``), against the mock
Gemini API (``streamGenerateContent``).  A session's turns are captured from its chat file
(see :mod:`vault_engine.agents.gemini`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import API_DEPLOY, PROFILE, RELEASE_NOTES, WEB_DEPLOY, World, agent_cli
from .mock_models import Recorded, Reply, default_script
from .test_claude_code import _break_config, _break_memory

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SEARCH_TOOL = "mcp_memvault_memory_search"  # Gemini CLI's name for an MCP server's tool


def gemini(world: World, prompt: str, *flags: str) -> str:
    """Run ``gemini -p PROMPT`` in the project; what it printed (the model's answer)."""
    return world.run([str(agent_cli("gemini")), *flags, "-p", prompt]).stdout


def search_script(request: Recorded) -> Reply:
    """Calls memvault's search tool when asked to search memory (the person's words are not the last part of
    Gemini CLI's message: the hooks' context follows them)."""
    if request.is_turn and not request.tool_results() and "zulu-marker" in request.text():
        return Reply("", tool=SEARCH_TOOL, arguments={"query": "where do release notes go"})
    return default_script(request)


def thinking_script(request: Recorded) -> Reply:
    """:func:`search_script`, each answer with a thought before it."""
    reply = search_script(request)
    return Reply(reply.text, reply.tool, reply.arguments, thought="oscar-thought: the model reasons privately.")


def test_the_first_request_carries_the_projects_manifest(make_world: Callable[..., World]) -> None:
    world = make_world("gemini")
    out = gemini(world, "Hello, what are we working on?")
    first = world.turns()[0]
    assert first.api == "gemini"
    text = first.text()
    assert "<hook_context>&lt;memory-context&gt;" in text  # Gemini CLI escapes what a hook gives
    assert world.ids["api"] in text and API_DEPLOY in text
    assert world.ids["profile"] in text and PROFILE in text
    assert world.ids["web"] not in text and WEB_DEPLOY not in text
    assert out.startswith("Reply number")


def test_a_relevant_prompt_gets_its_memory_and_an_unrelated_one_nothing(make_world: Callable[..., World]) -> None:
    world = make_world("gemini")
    gemini(world, "Where do the release notes go?")
    asked = world.turns()[0].text()
    assert "Memories relevant to this prompt" in asked
    assert world.ids["notes"] in asked and "docs/CHANGELOG.md" in asked
    count = len(world.mock.requests)
    gemini(world, "write a haiku about green tea")
    unrelated = world.turns(count)[0].text()
    assert world.ids["profile"] in unrelated  # the hooks ran
    assert "Memories relevant to this prompt" not in unrelated and world.ids["notes"] not in unrelated


def test_memvaults_mcp_tools_round_trip(make_world: Callable[..., World]) -> None:
    world = make_world("gemini")
    world.mock.script = search_script
    # gemini -p offers only the tools that need no confirmation: this one is allowed by name
    out = gemini(world, "Search memory for the release notes rule (zulu-marker).", "--allowed-tools", SEARCH_TOOL)
    first = world.turns()[0]
    assert SEARCH_TOOL in first.tool_names()
    answered = [text for r in world.turns() for text in r.tool_results()]
    assert any(world.ids["notes"] in text and RELEASE_NOTES in text for text in answered), answered
    assert "The tool answered; that is all." in out


@pytest.mark.parametrize("breakage", [_break_config, _break_memory], ids=["bad-config", "unreadable-memory"])
def test_a_broken_vault_does_not_break_the_session(make_world: Callable[..., World],
                                                   breakage: Callable[[Path], None]) -> None:
    world = make_world("gemini")
    breakage(world.vault)
    out = gemini(world, "Where do the release notes go? hotel-marker")
    assert out.startswith("Reply number")
    assert "hotel-marker" in world.turns()[0].text()


def test_a_session_and_its_resume_are_stored_once_without_memvaults_context(make_world: Callable[..., World]) -> None:
    world = make_world("gemini")
    world.mock.script = thinking_script
    gemini(world, "First words, kilo-marker.")
    gemini(world, "Second words, lima-marker.", "--resume", "latest")
    gemini(world, "Search memory for the release notes rule (zulu-marker).", "--resume", "latest",
           "--allowed-tools", SEARCH_TOOL)
    assert world.ids["notes"] in world.turns()[-2].text()  # the prompt's memories and the tool's answer were given
    stored = world.stored("kilo-marker", "lima-marker", "zulu-marker", "The tool answered; that is all.")
    lines = stored.splitlines()
    for said in ("First words, kilo-marker.", "Second words, lima-marker.",
                 "Search memory for the release notes rule (zulu-marker).", "The tool answered; that is all."):
        assert lines.count(said) == 1, (said, stored)
    for foreign in ("hook_context", "memory-context", world.ids["notes"], world.ids["profile"], RELEASE_NOTES,
                    "oscar-thought", "memory_search", "session_context"):
        assert foreign not in stored, foreign
