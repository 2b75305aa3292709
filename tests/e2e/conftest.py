"""The real agent CLIs (installed by ``scripts/bootstrap.sh`` into ``.cache/agents``) run against the
loopback mock of the model APIs (:mod:`.mock_models`), in a private HOME with memvault installed
into it, on a real vault and a real git checkout.

A CLI that is not installed fails the test that needs it, saying how to install it;
``MEMVAULT_SKIP_AGENTS=1`` (read once, before the tests clear ``MEMVAULT_*``) skips them instead,
for a machine without npm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from vault_engine.vault import NewMemory, Vault

from .agent_setup import PACKAGES, agent_env, point_at_mock
from .mock_models import MockModels, Recorded

REPO = Path(__file__).resolve().parents[2]
AGENTS = REPO / ".cache" / "agents"
PINNED: dict[str, str] = json.loads((Path(__file__).parent / "agents" / "package.json").read_text())["dependencies"]
SKIP_AGENTS = os.environ.get("MEMVAULT_SKIP_AGENTS") == "1"
RUN_TIMEOUT = 180.0  # seconds one agent command may take (its hooks included)
CAPTURE_WAIT = 45.0  # seconds capture may take after the agent exits (it may run in the background)

API_DEPLOY = "Deploys of the api go through the blue-green pipeline; never deploy on Fridays."
WEB_DEPLOY = "Deploys of the web app go through Netlify preview builds, promoted by hand."
RELEASE_NOTES = "Release notes are written in docs/CHANGELOG.md, newest entry first, one line per change."
PROFILE = "The user prefers short answers that show the code first."
API = "github.com/acme/api"


def agent_cli(name: str) -> Path:
    """The installed CLI ``name`` (a key of :data:`.agent_setup.PACKAGES`); fails (or skips, see the module) when it
    is not there."""
    path = AGENTS / "node_modules" / ".bin" / name
    if SKIP_AGENTS:
        pytest.skip("MEMVAULT_SKIP_AGENTS=1: the agent CLIs are not run")
    if not path.exists():
        pytest.fail(f"the agent CLI '{name}' is not installed in {AGENTS}: run scripts/bootstrap.sh (it needs npm "
                    "and the npm registry), or set MEMVAULT_SKIP_AGENTS=1 to skip the end-to-end tests", pytrace=False)
    return path


def cli_version(name: str) -> str:
    """The version of the installed package behind CLI ``name``."""
    return str(json.loads((AGENTS / "node_modules" / PACKAGES[name] / "package.json").read_text())["version"])


@dataclass
class World:
    """A private HOME with memvault installed for an agent, a vault with a few memories, a project checkout."""

    home: Path
    vault: Path
    project: Path  # a checkout of github.com/acme/api
    ids: dict[str, str]
    mock: MockModels
    env: dict[str, str] = field(default_factory=dict)  # the agent's environment

    def memvault(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(self.vault), *args],
                              capture_output=True, text=True, cwd=self.project, env=self.env, timeout=120)
        assert done.returncode == 0, done.stderr
        return done

    def run(self, argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
        """Run an agent command in the project, stdin closed; the test fails when it does not exit 0."""
        done = subprocess.run(argv, capture_output=True, text=True, cwd=self.project, env={**self.env, **env},
                              stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
        assert done.returncode == 0, (f"{argv[0]} exited {done.returncode}:\n"
                                      f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    def turns(self, since: int = 0) -> list[Recorded]:
        return [r for r in self.mock.requests[since:] if r.is_turn]

    def episodes(self) -> str:
        """The bodies of the vault's episodes (every turn verbatim), in file order."""
        out = []
        for path in sorted((self.vault / "episodes").rglob("*.md")):
            _, head, body = path.read_text(encoding="utf-8").split("---\n", 2)
            if "type: episode" in head:
                out.append(body)
        return "\n".join(out)

    def buffered(self) -> str:
        """The turns captured but not yet cut into an episode (a session that has not ended: OpenCode's), in the
        session buffers under ``.memvault/sessions/``."""
        out = []
        for path in sorted((self.vault / ".memvault" / "sessions").glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                out.append(str(json.loads(line).get("content", "")))
        return "\n".join(out)

    def documents(self) -> list[str]:
        """The full text (front matter and body) of every ``document`` memory in the vault."""
        out = []
        for path in sorted(self.vault.rglob("*.md")):
            if ".memvault" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if text.startswith("---\n") and "\ntype: document\n" in text.split("---\n", 2)[1]:
                out.append(text)
        return out

    def stored(self, *markers: str) -> str:
        """What the vault holds of the conversations (the episodes, then the buffered turns) once each of
        ``markers`` is in it and it has stopped changing (capture may finish after the agent exits); the test
        fails after :data:`CAPTURE_WAIT` seconds."""
        deadline = time.monotonic() + CAPTURE_WAIT
        last, steady = None, 0
        while True:
            text = self.episodes() + "\n" + self.buffered()
            if all(m in text for m in markers):
                steady = steady + 1 if text == last else 0
                if steady >= 4:
                    return text
            assert time.monotonic() < deadline, (f"not stored within {CAPTURE_WAIT:.0f} s: "
                                                 f"{[m for m in markers if m not in text]}\n{self.log()}")
            last = text
            time.sleep(0.5)

    def log(self) -> str:
        path = self.vault / ".memvault" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


def _configure(vault: Path) -> None:
    """The vault's settings for the tests: the offline model (the agent's ``ANTHROPIC_API_KEY`` is the mock's,
    and what memvault asks a model is not under test), and tool outputs kept from 200 characters on."""
    config = vault / "memvault.toml"
    text = config.read_text(encoding="utf-8")
    for old, new in (('#provider = "auto"', 'provider = "offline"'),
                     ("#tool_output_min_chars = 1500", "tool_output_min_chars = 200")):
        assert old in text, f"{old!r} is no longer in the template's memvault.toml"
        text = text.replace(old, new)
    config.write_text(text, encoding="utf-8")


@pytest.fixture
def mock() -> Iterator[MockModels]:
    with MockModels() as server:
        yield server


@pytest.fixture
def make_world(tmp_path: Path, isolated_env: Path, make_vault: Callable[..., Vault],
               make_checkout: Callable[..., Path], mock: MockModels) -> Callable[..., World]:
    """``make_world(agent, scope)``: memvault installed for ``agent`` (``claude-code``, ``codex``, ``gemini``,
    ``opencode``) at ``scope``, the agent pointed at the mock."""

    def build(agent: str, scope: str = "user") -> World:
        project = make_checkout(tmp_path / "api", "git@github.com:acme/api.git")
        vault = Vault(make_vault().root, auto_sync=True)
        _configure(vault.root)
        ids = {
            "api": vault.add(NewMemory(API_DEPLOY, title="Api deploy rule", project=API)).id,
            "web": vault.add(NewMemory(WEB_DEPLOY, title="Web deploy rule", project="github.com/acme/web")).id,
            "notes": vault.add(NewMemory(RELEASE_NOTES, title="Where release notes go", scope="global")).id,
            "profile": vault.add(NewMemory(PROFILE, title="Short answers", type="core-profile")).id,
        }
        # memvault on PATH, as it is for a person who installed it (a project-scope install runs it from there)
        path = os.pathsep.join((str(Path(sys.executable).parent), os.environ["PATH"]))
        env = {"PATH": path, "HOME": str(isolated_env), "LANG": "C.UTF-8",
               "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO)), "TMPDIR": str(tmp_path)}
        if scope == "project":  # the committed settings name no vault: a teammate's is found by discovery
            env["MEMVAULT_DIR"] = str(vault.root)
        world = World(isolated_env, vault.root, project, ids, mock, env)
        world.memvault("install", agent, "--scope", scope)
        world.env.update(agent_env(agent, mock, isolated_env))
        point_at_mock(agent, isolated_env, mock, os.environ.get("PYTHONPATH", str(REPO)))
        return world

    return build
