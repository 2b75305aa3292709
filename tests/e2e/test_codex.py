"""Codex (the real CLI, ``codex exec``) with memvault installed (``memvault install codex``: the MCP
server in config.toml, its hooks in hooks.json, the context manifest in the project's AGENTS.md), against the
mock Responses API."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import API_DEPLOY, PROFILE, RELEASE_NOTES, WEB_DEPLOY, World, agent_cli
from .mock_models import Recorded, Reply, default_script
from .test_claude_code import _break_config, _break_memory

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SEARCH_TOOL = "mcp__memvault__memory_search"


def codex(world: World, *args: str) -> str:
    """Run ``codex exec ARGS`` in the project; what it printed as the model's last message.

    Codex runs a new hook only once a person trusts it (``/hooks``); ``--dangerously-bypass-hook-trust``
    is its flag for automation that vetted the hooks itself, here the ones ``memvault install`` wrote."""
    done = world.run([str(agent_cli("codex")), "exec", "--dangerously-bypass-hook-trust", *args])
    return done.stdout


def search_script(request: Recorded) -> Reply:
    """Calls memvault's search tool (in the namespace Codex offers an MCP server's tools in) when asked to."""
    if not request.tool_results() and "zulu-marker" in request.last_user_text():
        return Reply("", tool="memory_search", namespace="mcp__memvault",
                     arguments={"query": "where do release notes go"})
    return default_script(request)


def test_the_first_request_carries_the_projects_manifest(make_world: Callable[..., World]) -> None:
    world = make_world("codex")
    out = codex(world, "Hello, what are we working on?")
    first = world.turns()[0].text()
    assert "# AGENTS.md instructions" in first
    assert world.ids["api"] in first and API_DEPLOY in first
    assert world.ids["profile"] in first and PROFILE in first
    assert world.ids["web"] not in first and WEB_DEPLOY not in first
    assert "Reply number" in out


def test_memvaults_mcp_tools_round_trip(make_world: Callable[..., World]) -> None:
    world = make_world("codex")
    world.mock.script = search_script
    out = codex(world, "Search memory for the release notes rule (zulu-marker).")
    first = world.turns()[0]
    assert SEARCH_TOOL in first.tool_names()
    assert "mcp__memvault__memory_remember" in first.tool_names()
    answered = [text for r in world.turns() for text in r.tool_results()]
    assert any(world.ids["notes"] in text and RELEASE_NOTES in text for text in answered), answered
    assert "The tool answered; that is all." in out


@pytest.mark.parametrize("breakage", [_break_config, _break_memory], ids=["bad-config", "unreadable-memory"])
def test_a_broken_vault_does_not_break_the_session(make_world: Callable[..., World],
                                                   breakage: Callable[[Path], None]) -> None:
    world = make_world("codex")
    breakage(world.vault)
    out = codex(world, "Where do the release notes go? hotel-marker")
    assert "Reply number" in out
    assert "hotel-marker" in world.turns()[0].text()


def test_a_relevant_prompt_gets_its_memory(make_world: Callable[..., World]) -> None:
    world = make_world("codex")
    codex(world, "Where do the release notes go?")
    asked = world.turns()[0].text()
    assert "Memories relevant to this prompt" in asked and world.ids["notes"] in asked


def test_each_message_is_stored_once_across_resume(make_world: Callable[..., World]) -> None:
    world = make_world("codex")
    codex(world, "First words, kilo-marker.")
    codex(world, "resume", "--last", "Second words, lima-marker.")
    stored = world.stored("kilo-marker", "lima-marker")
    assert stored.count("kilo-marker") == 1 and stored.count("lima-marker") == 1, stored
