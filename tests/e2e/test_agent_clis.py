"""The agent CLIs themselves: installed at the pinned versions, and each runs offline against the mock.

GitHub Copilot CLI has no ``memvault install`` yet; this is the check that it answers a one-shot
session from the mock model with no GitHub login (``COPILOT_OFFLINE``, its own-provider settings),
so its end-to-end tests need only the install."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import PACKAGES, PINNED, agent_cli, cli_version
from .mock_models import MockModels

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_the_installed_cli_is_the_pinned_version(name: str) -> None:
    agent_cli(name)
    assert cli_version(name) == PINNED[PACKAGES[name]], "a stale .cache/agents: run scripts/bootstrap.sh"


def test_copilot_answers_from_the_mock_without_a_login(tmp_path: Path, isolated_env: Path,
                                                       mock: MockModels) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(isolated_env), "TMPDIR": str(tmp_path), "COPILOT_OFFLINE": "true",
           "COPILOT_PROVIDER_TYPE": "anthropic", "COPILOT_PROVIDER_BASE_URL": mock.url,
           "COPILOT_PROVIDER_API_KEY": "test", "COPILOT_MODEL": "claude-sonnet-4"}
    done = subprocess.run([str(agent_cli("copilot")), "-p", "Say hello, mike-marker.", "--allow-all-tools"],
                          cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Reply number" in done.stdout
    turns = [r for r in mock.requests if r.is_turn]
    assert turns and all(r.api == "anthropic" for r in turns)
    assert "mike-marker" in turns[0].last_user_text()
