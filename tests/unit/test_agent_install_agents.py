"""memvault install for every agent: what goes where, the person's entries kept, a second install a no-op,
uninstall exact, malformed settings refused untouched, and project scope with nothing of this machine."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from vault_engine.agents import opencode
from vault_engine.agents.install import FileChange, Target, apply, plan
from vault_engine.errors import InvalidInput

COMMAND = ("/opt/memvault/bin/memvault",)
READ_ONLY = ("memory_search", "memory_read")


def target(tmp_path: Path, agent: str, scope: str = "user", **kwargs: Any) -> Target:
    return Target(agent, scope, tmp_path / "home", tmp_path / "project", tmp_path / "vault", COMMAND,
                  agents_md=lambda: "<memory-context>\nTask: Work on this project\n</memory-context>", **kwargs)


def install(tmp_path: Path, agent: str, scope: str = "user", **kwargs: Any) -> list[FileChange]:
    return apply(plan(target(tmp_path, agent, scope, **kwargs)))


def uninstall(tmp_path: Path, agent: str, scope: str = "user", **kwargs: Any) -> list[FileChange]:
    return apply(plan(target(tmp_path, agent, scope, **kwargs), uninstall=True))


def load(path: Path) -> Any:
    return json.loads(path.read_text())


# What a person already has, per agent: (file relative to HOME, its content).
OWN = {
    "codex": (".codex/hooks.json", {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}],
                                              "SessionStart": [{"matcher": "startup", "hooks": [
                                                  {"type": "command", "command": "echo hi"}]}]}}),
    "gemini": (".gemini/settings.json", {"theme": "GitHub", "mcpServers": {"docs": {"command": "docs-mcp"}},
                                         "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
                                             {"type": "command", "command": "./audit.sh"}]}],
                                                   "SessionEnd": [{"hooks": [{"type": "command",
                                                                              "command": "./log-end.sh"}]}]}}),
    "cursor": (".cursor/hooks.json", {"version": 1, "hooks": {"sessionStart": [{"command": "./warm.sh"}],
                                                              "afterFileEdit": [{"command": "prettier"}]}}),
    "opencode": (".config/opencode/opencode.json", {"$schema": "https://opencode.ai/config.json",
                                                    "model": "anthropic/claude-sonnet-4-5",
                                                    "mcp": {"gh": {"type": "remote", "url": "https://x"}}}),
    "copilot": (".copilot/mcp-config.json", {"mcpServers": {"gh": {"type": "http", "url": "https://x"}}}),
}


@pytest.mark.parametrize("agent", sorted(OWN))
def test_the_persons_settings_are_kept_a_second_install_changes_nothing_and_uninstall_is_exact(
        tmp_path: Path, agent: str) -> None:
    rel, own = OWN[agent]
    path = tmp_path / "home" / rel
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(own, indent=2))
    written = install(tmp_path, agent)
    assert written
    merged = load(path)
    for key, value in own.items():  # every key of the person's is still there, with their entries in it
        if isinstance(value, dict):
            assert all(merged[key][k] == v or (isinstance(v, list) and merged[key][k][:len(v)] == v)
                       for k, v in value.items()), key
        else:
            assert merged[key] == value
    assert not any(c.changed for c in plan(target(tmp_path, agent)))
    uninstall(tmp_path, agent)
    assert load(path) == own
    assert not any(c.changed for c in plan(target(tmp_path, agent), uninstall=True))


def test_codex_hooks_and_server(tmp_path: Path) -> None:
    install(tmp_path, "codex")
    hooks = load(tmp_path / "home" / ".codex" / "hooks.json")["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"}
    assert hooks["PreCompact"] == [{"hooks": [{"type": "command", "timeout": 120, "command":
                                              f"{COMMAND[0]} --vault {tmp_path / 'vault'} hook codex PreCompact"}]}]
    server = tomllib.loads((tmp_path / "home" / ".codex" / "config.toml").read_text())["mcp_servers"]["memvault"]
    assert "required" not in server and server["startup_timeout_sec"] == 60  # a broken vault never stops Codex
    uninstall(tmp_path, "codex")
    assert not (tmp_path / "home" / ".codex").exists() or not any((tmp_path / "home" / ".codex").iterdir())


def test_gemini_hooks_and_server_in_one_settings_file(tmp_path: Path) -> None:
    install(tmp_path, "gemini")
    settings = load(tmp_path / "home" / ".gemini" / "settings.json")
    assert set(settings["hooks"]) == {"SessionStart", "BeforeAgent", "PreCompress", "SessionEnd"}
    handler = settings["hooks"]["BeforeAgent"][0]["hooks"][0]
    assert handler["timeout"] == 15_000 and handler["name"] == "memvault"
    assert handler["command"].endswith("hook gemini BeforeAgent")
    for event in ("PreCompress", "SessionEnd"):
        assert settings["hooks"][event][0]["hooks"][0]["command"].endswith(f"hook gemini {event}")
    assert settings["mcpServers"]["memvault"]["args"][-1] == "mcp"
    uninstall(tmp_path, "gemini")
    assert not (tmp_path / "home" / ".gemini" / "settings.json").exists()


def test_cursor_hooks_file_is_versioned_and_goes_when_it_held_only_memvault(tmp_path: Path) -> None:
    install(tmp_path, "cursor", "project")
    data = load(tmp_path / "project" / ".cursor" / "hooks.json")
    assert data == {"version": 1, "hooks": {"sessionStart": [{"command": "memvault hook cursor sessionStart",
                                                               "timeout": 30}]}}
    assert load(tmp_path / "project" / ".cursor" / "mcp.json")["mcpServers"]["memvault"] == {
        "command": "memvault", "args": ["mcp"]}
    uninstall(tmp_path, "cursor", "project")
    assert not (tmp_path / "project" / ".cursor" / "hooks.json").exists()
    assert not (tmp_path / "project" / ".cursor" / "mcp.json").exists()


def test_opencode_plugin_is_written_replaced_and_removed_but_a_foreign_one_is_not(tmp_path: Path) -> None:
    install(tmp_path, "opencode", "project")
    plugin = tmp_path / "project" / ".opencode" / "plugins" / "memvault.js"
    text = plugin.read_text()
    assert text.startswith(opencode.MARKER) and 'const COMMAND = ["memvault"]' in text
    assert str(tmp_path) not in text
    config = load(tmp_path / "project" / "opencode.json")
    assert config == {"mcp": {"memvault": {"type": "local", "command": ["memvault", "mcp"], "enabled": True}}}
    uninstall(tmp_path, "opencode", "project")
    assert not plugin.exists() and not (tmp_path / "project" / "opencode.json").exists()
    plugin.write_text("export const Mine = async () => ({})\n")
    with pytest.raises(InvalidInput, match="did not write"):
        plan(target(tmp_path, "opencode", "project"))


def test_copilot_gets_its_mcp_config_user_wide_and_the_agents_md_block_in_a_project(tmp_path: Path) -> None:
    install(tmp_path, "copilot")
    server = load(tmp_path / "home" / ".copilot" / "mcp-config.json")["mcpServers"]["memvault"]
    assert server["type"] == "local" and server["tools"] == ["*"] and server["args"][-1] == "mcp"
    install(tmp_path, "copilot", "project")
    assert "<memory-context>" in (tmp_path / "project" / "AGENTS.md").read_text()
    uninstall(tmp_path, "copilot", "project")
    assert not (tmp_path / "project" / "AGENTS.md").exists()


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "cursor", "opencode"])
def test_project_scope_writes_nothing_of_this_machine(tmp_path: Path, agent: str) -> None:
    changes = install(tmp_path, agent, "project")
    assert changes and all(c.path.is_relative_to(tmp_path / "project") for c in changes)
    for change in changes:
        assert change.after is not None and str(tmp_path) not in change.after, change.path
        assert COMMAND[0] not in change.after


@pytest.mark.parametrize(("agent", "rel", "content"), [
    ("codex", ".codex/hooks.json", '{"hooks": {"SessionStart": {}}}'),
    ("gemini", ".gemini/settings.json", "{broken"),
    ("gemini", ".gemini/settings.json", '{"mcpServers": []}'),
    ("cursor", ".cursor/hooks.json", '{"version": 1, "hooks": []}'),
    ("cursor", ".cursor/mcp.json", '{"mcpServers": {"memvault": {"command": "other"}}}'),
    ("opencode", ".config/opencode/opencode.json", '{"mcp": {} // a comment\n}'),
    ("copilot", ".copilot/mcp-config.json", "[]"),
])
def test_a_settings_file_memvault_cannot_read_is_refused_untouched(tmp_path: Path, agent: str, rel: str,
                                                                    content: str) -> None:
    path = tmp_path / "home" / rel
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(InvalidInput):
        plan(target(tmp_path, agent))
    assert path.read_text() == content


def test_allow_tools_adds_the_read_only_rules_beside_the_persons_and_uninstall_takes_them_back(
        tmp_path: Path) -> None:
    settings = tmp_path / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    own = {"permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(.env)"]}}
    settings.write_text(json.dumps(own))
    changes = plan(target(tmp_path, "claude-code", allow_tools=READ_ONLY))
    assert '+      "mcp__memvault__memory_search",' in changes[0].diff()  # shown by --dry-run
    apply(changes)
    assert load(settings)["permissions"] == {"allow": ["Bash(npm test)", "mcp__memvault__memory_search",
                                                       "mcp__memvault__memory_read"], "deny": ["Read(.env)"]}
    assert not any(c.changed for c in plan(target(tmp_path, "claude-code", allow_tools=READ_ONLY)))
    assert not any(c.changed for c in plan(target(tmp_path, "claude-code")))  # install without it keeps them
    uninstall(tmp_path, "claude-code", allow_tools=READ_ONLY)
    assert load(settings) == own


def test_allow_tools_is_refused_for_an_agent_without_per_tool_rules(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="--allow-tools"):
        plan(target(tmp_path, "gemini", allow_tools=READ_ONLY))
