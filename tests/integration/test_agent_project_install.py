"""A project-scope install is committed, cloned into another folder under another HOME, and works there
unchanged: real git, the real ``memvault`` on PATH, each hook command run from the cloned settings file
through a shell, as the agent runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine.store import create_vault
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

RULE = "Deploys of the api go through the blue-green pipeline; never deploy on Fridays."


def git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_committed_project_install_works_in_a_clone_elsewhere(tmp_path: Path, isolated_env: Path,
                                                                make_vault: Callable[..., Vault],
                                                                make_checkout: Callable[..., Path]) -> None:
    if shutil.which("memvault", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("no memvault script beside this interpreter")
    # Machine A: the project, a vault of this person's, the install, committed.
    api = make_checkout(tmp_path / "a" / "api", "git@github.com:acme/api.git")
    vault_a = make_vault(name="vault-a")
    done = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault_a.root), "install",
                           "claude-code", "--scope", "project", "--allow-tools"],
                          cwd=api, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    git("add", ".claude/settings.json", ".mcp.json", cwd=api)
    git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "memvault hooks", cwd=api)
    for committed in (".claude/settings.json", ".mcp.json"):
        text = git("show", f"HEAD:{committed}", cwd=api)
        assert str(tmp_path) not in text and sys.executable not in text and str(vault_a.root) not in text

    # Machine B: another HOME with its own default vault, the clone in another folder.
    home_b = tmp_path / "b" / "home"
    create_vault(home_b / ".memvault" / "vault", git=False)  # the default vault, found without --vault
    vault_b = Vault(home_b / ".memvault" / "vault", auto_sync=True)
    wanted = vault_b.add(NewMemory(RULE, title="Api deploy rule", project="github.com/acme/api")).id
    clone = tmp_path / "b" / "work" / "api"
    env_b = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env_b.update(HOME=str(home_b), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    git("clone", "-q", str(api), str(clone), cwd=tmp_path, env=env_b)
    git("remote", "set-url", "origin", "git@github.com:acme/api.git", cwd=clone)  # as cloned from GitHub

    settings = json.loads((clone / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["mcp__memvault__memory_search", "mcp__memvault__memory_read"]
    server = json.loads((clone / ".mcp.json").read_text())["mcpServers"]["memvault"]
    assert (server["command"], server["args"]) == ("memvault", ["mcp"])

    def run_hook(event: str, **fields: str) -> str:
        command = settings["hooks"][event][0]["hooks"][0]["command"]
        stdin = {"session_id": "b-1", "cwd": str(clone), "hook_event_name": event,
                 "transcript_path": str(home_b / "none.jsonl"), **fields}
        done = subprocess.run(command, shell=True, input=json.dumps(stdin), capture_output=True, text=True,
                              cwd=clone, env=env_b, timeout=180)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]) if done.stdout else ""

    assert wanted in run_hook("SessionStart", source="startup")
    assert not (vault_a.root / ".memvault" / "agents").exists()  # machine A's vault was never asked
    assert (home_b / ".memvault" / "vault" / ".memvault" / "agents" / "claude-code-b-1.json").is_file()
