"""How each agent CLI is pointed at the loopback mock (:mod:`.mock_models`) and kept off every other address,
shared by the end-to-end tests and ``benchmarks.agent_sessions``.

- Claude Code: ``ANTHROPIC_BASE_URL`` and its switches for telemetry, error reports and updates.
- Codex: a ``model_provider`` in ``config.toml`` whose ``base_url`` is the mock (Responses API).
- Gemini CLI (``gemini -p``): ``GOOGLE_GEMINI_BASE_URL`` with ``GEMINI_API_KEY``, and in ``settings.json``
  ``security.auth.selectedType = "gemini-api-key"`` (without it the base URL selects the ``gateway`` auth,
  which ``-p`` refuses: "Invalid auth method selected."), a fixed ``model.name`` (``auto`` first asks a
  router model for JSON), usage statistics, telemetry and update checks off.  ``GEMINI_CLI_TRUST_WORKSPACE``
  trusts the checkout (``-p`` refuses an untrusted folder).
- OpenCode (``opencode run``): its ``anthropic`` provider with ``options.baseURL`` on the mock (Messages API),
  the ``OPENCODE_DISABLE_*`` switches for the models list, updates, LSP downloads, sharing and its default
  plugins.  At start OpenCode installs its plugin SDK (``@opencode-ai/plugin``) from npm into every config
  folder that has no ``node_modules`` or whose ``package-lock.json`` does not name it, in the background;
  the config folder is given what that install leaves (:func:`_opencode_installed`), so nothing is fetched
  (memvault's plugin imports only Node's own modules).

Each of these was checked by running the CLI in a network namespace holding only the loopback device,
under ``strace -e connect``, with a resolver on 127.0.0.1 logging the names asked: no connection and no
name lookup beyond the mock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .mock_models import MockModels

PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "copilot": "@github/copilot",
            "gemini": "@google/gemini-cli", "opencode": "opencode-ai"}  # CLI -> npm package
CLI = {"claude-code": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode"}  # agent -> CLI
GEMINI_MODEL = "gemini-2.5-flash"
OPENCODE_MODEL = "anthropic/claude-sonnet-4-5"


def agent_env(agent: str, mock: MockModels, home: Path) -> dict[str, str]:
    """The environment that points ``agent`` at the mock and switches off its other traffic."""
    if agent == "claude-code":
        return {"ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_API_KEY": "test", "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                # The first turn waits for the MCP servers: by default they connect beside it, and on a busy
                # machine the model's first call of a memvault tool could come before the tool is there.
                "MCP_CONNECTION_NONBLOCKING": "0"}
    if agent == "codex":
        return {"CODEX_HOME": str(home / ".codex"), "MOCK_API_KEY": "test"}
    if agent == "gemini":
        return {"GOOGLE_GEMINI_BASE_URL": mock.url, "GEMINI_API_KEY": "test", "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    if agent == "opencode":
        return {name: "1" for name in ("OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_AUTOUPDATE",
                                       "OPENCODE_DISABLE_LSP_DOWNLOAD", "OPENCODE_DISABLE_SHARE",
                                       "OPENCODE_DISABLE_DEFAULT_PLUGINS")}
    raise ValueError(f"no set-up for agent {agent!r}")


def point_at_mock(agent: str, home: Path, mock: MockModels, pythonpath: str) -> None:
    """Write ``agent``'s own settings (after ``memvault install``, if any) that make the mock its model;
    ``pythonpath`` is given to memvault's MCP server where the agent passes it no environment of its own."""
    if agent == "codex":
        _codex(home / ".codex" / "config.toml", mock, pythonpath)
    elif agent == "gemini":
        _merge_json(home / ".gemini" / "settings.json", {
            "security": {"auth": {"selectedType": "gemini-api-key"}}, "model": {"name": GEMINI_MODEL},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}})
    elif agent == "opencode":
        config = home / ".config" / "opencode"
        _merge_json(config / "opencode.json", {
            "model": OPENCODE_MODEL, "autoupdate": False, "share": "disabled",
            "provider": {"anthropic": {"options": {"baseURL": f"{mock.url}/v1", "apiKey": "test"}}}})
        _opencode_installed(config)


def codex_provider(mock: MockModels) -> str:
    """The lines of Codex's config.toml that make the mock its model provider (before any table)."""
    return (f'model = "mock-model"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "mock"\n'
            f'base_url = "{mock.url}/v1"\nwire_api = "responses"\nenv_key = "MOCK_API_KEY"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n\n"
            # MCP tools offered to the model with the others, not behind a tool search
            "[features]\ntool_search_always_defer_mcp_tools = false\n\n")


def _codex(config: Path, mock: MockModels, pythonpath: str) -> None:
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    config.parent.mkdir(parents=True, exist_ok=True)
    # Codex starts an MCP server with a few variables only: name the checkout the server is to run.
    server_env = (f"\n[mcp_servers.memvault.env]\nPYTHONPATH = {json.dumps(pythonpath)}\n"
                  if "[mcp_servers.memvault]" in text else "")
    config.write_text(codex_provider(mock) + text + server_env, encoding="utf-8")


def _merge_json(path: Path, extra: dict[str, Any]) -> None:
    """Merge ``extra`` into the JSON object in ``path`` (created when missing), object by object."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def merge(into: dict[str, Any], new: dict[str, Any]) -> None:
        for key, value in new.items():
            if isinstance(value, dict) and isinstance(into.get(key), dict):
                merge(into[key], value)
            else:
                into[key] = value

    merge(data, extra)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _opencode_installed(config: Path) -> None:
    """What OpenCode's own install of its plugin SDK leaves in a config folder: ``node_modules`` and a lock that
    names the package (OpenCode then installs nothing)."""
    (config / "node_modules").mkdir(parents=True, exist_ok=True)
    lock = {"name": "opencode-config", "lockfileVersion": 3,
            "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}
    (config / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
