"""memvault install through the command line, for every agent: --dry-run writes nothing, install writes,
a second run changes nothing, --uninstall leaves the HOME as it was; bad input is one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.vault import Vault

AGENTS = ["claude-code", "codex", "gemini", "cursor", "opencode", "copilot"]


def files_under(folder: Path) -> dict[str, str]:
    """The files under ``folder`` but memvault's cache folder (derived: any ``memvault mcp`` start writes it)."""
    cache = folder / ".cache" / "memvault"
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file() and cache not in p.parents}


def kept_tool_lists(home: Path) -> list[dict[str, object]]:
    """The tools/list answers ``memvault mcp`` keeps in the cache folder of ``home`` for its next start."""
    return [json.loads(p.read_text()) for p in sorted((home / ".cache" / "memvault").glob("mcp-tools-*.json"))]


@pytest.mark.parametrize("agent", AGENTS)
def test_install_dry_run_uninstall(agent: str, isolated_env: Path, make_vault: Callable[..., Vault],
                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("CODEX_HOME", str(isolated_env / ".codex"))
    runner = CliRunner()
    before = files_under(isolated_env), files_under(project)
    base = ["--vault", str(vault.root), "install", agent]
    dry = runner.invoke(cli, [*base, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "--- /dev/null" in dry.output and "would change" in dry.output
    assert (files_under(isolated_env), files_under(project)) == before
    assert kept_tool_lists(isolated_env) == []
    done = runner.invoke(cli, ["--json", *base])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["agent"] == agent and report["written"]
    assert all(Path(p).exists() for p in report["written"])
    again = runner.invoke(cli, ["--json", *base])
    assert json.loads(again.output)["written"] == []
    undone = runner.invoke(cli, [*base, "--uninstall"])
    assert undone.exit_code == 0, undone.output
    assert (files_under(isolated_env), files_under(project)) == before


def test_allow_tools_for_another_agent_is_one_line(isolated_env: Path, make_vault: Callable[..., Vault]) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(make_vault().root), "install", "gemini", "--allow-tools"])
    assert result.exit_code != 0 and "--allow-tools is for claude-code" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_allow_tools_grants_the_read_only_tools_of_the_mcp_server(isolated_env: Path,
                                                                  make_vault: Callable[..., Vault]) -> None:
    from vault_engine.server.mcp.tools import TOOLS

    vault = make_vault()
    result = CliRunner().invoke(cli, ["--vault", str(vault.root), "install", "claude-code", "--allow-tools"])
    assert result.exit_code == 0, result.output
    allow = json.loads((isolated_env / ".claude" / "settings.json").read_text())["permissions"]["allow"]
    assert allow == [f"mcp__memvault__{t.name}" for t in TOOLS if t.read_only]
    assert "mcp__memvault__memory_search" in allow and "mcp__memvault__memory_remember" not in allow
    CliRunner().invoke(cli, ["--vault", str(vault.root), "install", "claude-code", "--uninstall"])
    assert not (isolated_env / ".claude" / "settings.json").exists()


def test_hook_takes_every_wired_agent_and_event(isolated_env: Path) -> None:
    result = CliRunner().invoke(cli, ["hook", "--help"])
    assert result.exit_code == 0
    for agent in ("claude-code", "codex", "gemini", "cursor", "opencode"):
        assert agent in result.output
    assert "copilot" not in result.output.split("Usage:")[1].split("\n")[0]  # no hook of Copilot's is wired


def test_installing_codex_keeps_the_tool_list_for_its_first_turn(isolated_env: Path, make_vault: Callable[..., Vault],
                                                                 tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex waits about a second for memvault's server before its first turn, less than the server's first start
    of a release takes: install starts it once, so that Codex's start is answered from the kept tool list."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(isolated_env / ".codex"))
    done = CliRunner().invoke(cli, ["--vault", str(make_vault().root), "install", "codex"])
    assert done.exit_code == 0, done.output
    kept = kept_tool_lists(isolated_env)
    assert len(kept) == 1
    assert "memory_search" in [tool["name"] for tool in kept[0]["result"]["tools"]]  # type: ignore[index]
