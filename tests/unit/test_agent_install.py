"""memvault install: the settings files planned and applied, the person's own entries kept."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from vault_engine.agents.install import Target, apply, plan
from vault_engine.errors import InvalidInput

COMMAND = ("/opt/memvault/bin/memvault",)


def target(tmp_path: Path, agent: str = "claude-code", scope: str = "user") -> Target:
    return Target(agent, scope, tmp_path / "home", tmp_path / "project", tmp_path / "vault", COMMAND,
                  agents_md=lambda: "<memory-context>\nTask: Work on this project\n</memory-context>")


def installed(tmp_path: Path, **kwargs: str) -> list[Path]:
    return [c.path for c in apply(plan(target(tmp_path, **kwargs)))]


def test_claude_code_user_scope_writes_four_hooks_and_the_server(tmp_path: Path) -> None:
    written = installed(tmp_path)
    home = tmp_path / "home"
    assert written == [home / ".claude" / "settings.json", home / ".claude.json"]
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"}
    start = settings["hooks"]["SessionStart"][0]["hooks"][0]
    assert start["type"] == "command" and start["timeout"] == 30
    assert start["command"] == f"/opt/memvault/bin/memvault --vault {tmp_path / 'vault'} hook claude-code SessionStart"
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["memvault"]
    assert server == {"type": "stdio", "command": COMMAND[0], "args": ["--vault", str(tmp_path / "vault"), "mcp"],
                      "env": {}}


def test_project_scope_writes_into_the_project(tmp_path: Path) -> None:
    written = installed(tmp_path, scope="project")
    assert written == [tmp_path / "project" / ".claude" / "settings.json", tmp_path / "project" / ".mcp.json"]


def test_a_second_install_changes_nothing(tmp_path: Path) -> None:
    installed(tmp_path)
    again = plan(target(tmp_path))
    assert not any(c.changed for c in again)


def test_the_persons_own_settings_are_kept_and_uninstall_removes_exactly_what_was_added(tmp_path: Path) -> None:
    settings_file = tmp_path / "home" / ".claude" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    own = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}],
        },
    }
    settings_file.write_text(json.dumps(own, indent=4))
    claude_json = tmp_path / "home" / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 7, "mcpServers": {"github": {"command": "gh-mcp"}}}))
    installed(tmp_path)
    merged = json.loads(settings_file.read_text())
    assert merged["model"] == "opus" and merged["permissions"] == own["permissions"]
    assert merged["hooks"]["PreToolUse"] == own["hooks"]["PreToolUse"]
    assert merged["hooks"]["SessionStart"][0] == own["hooks"]["SessionStart"][0]
    assert len(merged["hooks"]["SessionStart"]) == 2
    servers = json.loads(claude_json.read_text())["mcpServers"]
    assert set(servers) == {"github", "memvault"}
    # A user adds a hook after ours: installing again does not move or repeat ours.
    merged["hooks"]["UserPromptSubmit"].append({"hooks": [{"type": "command", "command": "log-prompt"}]})
    settings_file.write_text(json.dumps(merged, indent=2))
    assert not any(c.changed for c in plan(target(tmp_path)))
    apply(plan(target(tmp_path), uninstall=True))
    after = json.loads(settings_file.read_text())
    assert after["hooks"] == {**own["hooks"], "UserPromptSubmit": [{"hooks": [{"type": "command",
                                                                              "command": "log-prompt"}]}]}
    assert json.loads(claude_json.read_text()) == {"numStartups": 7, "mcpServers": {"github": {"command": "gh-mcp"}}}


def test_uninstall_removes_files_that_held_only_memvault(tmp_path: Path) -> None:
    installed(tmp_path, scope="project")
    apply(plan(target(tmp_path, scope="project"), uninstall=True))
    assert not (tmp_path / "project" / ".claude" / "settings.json").exists()
    assert not (tmp_path / "project" / ".mcp.json").exists()
    assert not any(c.changed for c in plan(target(tmp_path, scope="project"), uninstall=True))


def test_a_moved_installation_replaces_its_old_hooks(tmp_path: Path) -> None:
    installed(tmp_path)
    moved = Target("claude-code", "user", tmp_path / "home", tmp_path / "project", tmp_path / "vault",
                   ("/usr/bin/python3", "-m", "vault_engine"))
    apply(plan(moved))
    hooks = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())["hooks"]
    assert all(len(groups) == 1 for groups in hooks.values())
    assert hooks["SessionEnd"][0]["hooks"][0]["command"].startswith("/usr/bin/python3 -m vault_engine --vault ")


@pytest.mark.parametrize("content", ["{broken", "[]", '{"hooks": []}', '{"hooks": {"SessionStart": {}}}'])
def test_a_settings_file_memvault_cannot_read_is_refused_untouched(tmp_path: Path, content: str) -> None:
    settings_file = tmp_path / "home" / ".claude" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(content)
    with pytest.raises(InvalidInput):
        plan(target(tmp_path))
    assert settings_file.read_text() == content


def test_a_foreign_server_named_memvault_is_not_replaced(tmp_path: Path) -> None:
    claude_json = tmp_path / "home" / ".claude.json"
    claude_json.parent.mkdir(parents=True)
    claude_json.write_text(json.dumps({"mcpServers": {"memvault": {"command": "something-else"}}}))
    with pytest.raises(InvalidInput, match="does not run memvault"):
        plan(target(tmp_path))


def test_the_dry_run_diff_shows_the_change(tmp_path: Path) -> None:
    changes = plan(target(tmp_path))
    diff = changes[0].diff()
    assert diff.startswith("--- /dev/null\n+++ ") and '+    "UserPromptSubmit": [' in diff
    assert not (tmp_path / "home" / ".claude").exists()


def test_codex_gets_its_server_table_and_the_agents_md_block(tmp_path: Path) -> None:
    config = tmp_path / "home" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    agents = tmp_path / "project" / "AGENTS.md"
    agents.parent.mkdir(parents=True)
    agents.write_text("# Project rules\n\nRun the tests.\n")
    apply(plan(target(tmp_path, agent="codex")))
    data = tomllib.loads(config.read_text())
    assert data["model"] == "o4" and data["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert data["mcp_servers"]["memvault"] == {"command": COMMAND[0],
                                               "args": ["--vault", str(tmp_path / "vault"), "mcp"],
                                               "startup_timeout_sec": 60}
    text = agents.read_text()
    assert text.startswith("# Project rules\n\nRun the tests.\n") and "<memory-context>" in text
    assert not any(c.changed for c in plan(target(tmp_path, agent="codex")))
    apply(plan(target(tmp_path, agent="codex"), uninstall=True))
    assert agents.read_text() == "# Project rules\n\nRun the tests.\n"
    assert tomllib.loads(config.read_text()) == {"model": "o4", "mcp_servers": {"docs": {"command": "docs-mcp"}}}


def test_codex_config_that_is_not_toml_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "home" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("model = \n")
    with pytest.raises(InvalidInput, match="TOML"):
        plan(target(tmp_path, agent="codex"))


def test_the_plugin_folder_holds_the_hooks_and_server_install_writes(tmp_path: Path) -> None:
    plugin = Path(__file__).resolve().parents[2] / "integrations" / "claude-code"
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "memvault"
    bare = Target("claude-code", "project", tmp_path / "home", tmp_path / "project", tmp_path / "vault", ("memvault",))
    apply(plan(bare))
    installed_hooks = json.loads((tmp_path / "project" / ".claude" / "settings.json").read_text())["hooks"]
    # The plugin runs `memvault` from PATH on the default vault: install's commands without --vault.
    for groups in installed_hooks.values():
        hook = groups[0]["hooks"][0]
        hook["command"] = hook["command"].replace(f" --vault {tmp_path / 'vault'}", "")
    assert json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"] == installed_hooks
    server = json.loads((tmp_path / "project" / ".mcp.json").read_text())["mcpServers"]["memvault"]
    server["args"] = [a for a in server["args"] if a not in ("--vault", str(tmp_path / "vault"))]
    assert json.loads((plugin / ".mcp.json").read_text())["mcpServers"]["memvault"] == server
    marketplace = json.loads((plugin.parents[1] / ".claude-plugin" / "marketplace.json").read_text())
    assert marketplace["plugins"][0]["source"] == "./integrations/claude-code"
