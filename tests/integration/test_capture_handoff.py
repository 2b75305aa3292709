"""The hand-off of a session's capture to a background worker, and the warm server a hook starts: the real
hook command as a subprocess on a real vault, the real worker and server processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_engine.agents.backend import ServedVault
from vault_engine.agents.captured import CapturedKeys
from vault_engine.agents.session import AgentSession
from vault_engine.captures import CaptureQueue
from vault_engine.locks import WriterLock
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
SESSION = "4f1c2a9e-7b3d-4e8a-9c21-5d6e7f809a1b"


def hook(vault: Path, event: str, cwd: Path, env: dict[str, str] | None = None,
         **fields: Any) -> subprocess.CompletedProcess[str]:
    data = {"session_id": SESSION, "cwd": str(cwd), "hook_event_name": event, **fields}
    return subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), "hook", "claude-code", event],
                          input=json.dumps(data), capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, **(env or {})})


def poll(condition: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def episodes(vault: Path) -> list[Path]:
    return sorted((vault / "episodes").rglob("*.md"))


def drained(vault: Path) -> bool:
    return not CaptureQueue(vault).requests() and not WriterLock(vault / ".memvault/captures/drain.lock", 0).held()


@pytest.fixture
def project(tmp_path: Path, make_checkout: Callable[..., Path], make_vault: Callable[..., Vault]
            ) -> tuple[Path, Path, Path]:
    """A vault, a checkout of github.com/acme/api and the fixture transcript of a session in it."""
    vault = Vault(make_vault().root, auto_sync=True)
    vault.add(NewMemory("Deploys of the api go through the blue-green pipeline.", title="Api deploy rule",
                        project="github.com/acme/api"))
    api = make_checkout(tmp_path / "api", "git@github.com:acme/api.git")
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text((FIXTURES / "claude_code_transcript.jsonl").read_text())
    return vault.root, api, transcript


def test_session_end_returns_and_the_worker_stores_the_capture(project: tuple[Path, Path, Path]) -> None:
    vault, api, transcript = project
    done = hook(vault, "SessionEnd", api, transcript_path=str(transcript), reason="other")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    poll(lambda: drained(vault))
    assert any("github.com-acme-api" in str(p) for p in episodes(vault))
    assert CapturedKeys(vault).count() > 0  # the messages stored, recorded vault-wide


def test_the_next_hook_drains_a_queued_capture(project: tuple[Path, Path, Path]) -> None:
    vault, api, transcript = project
    CaptureQueue(vault).put("claude-code", SESSION, str(transcript), str(api), "SessionEnd")  # no worker started
    time.sleep(1)
    assert CaptureQueue(vault).requests() and not episodes(vault)
    done = hook(vault, "UserPromptSubmit", api, prompt="how do we deploy?")
    assert done.returncode == 0
    poll(lambda: drained(vault))
    assert any("github.com-acme-api" in str(p) for p in episodes(vault))


def test_status_shows_pending_and_failed_captures(project: tuple[Path, Path, Path],
                                                  memvault_proc: Callable[..., subprocess.CompletedProcess[str]]
                                                  ) -> None:
    vault, api, transcript = project
    CaptureQueue(vault).put("claude-code", SESSION, str(transcript), str(api), "SessionEnd")
    done = memvault_proc("--vault", str(vault), "--json", "status")
    assert done.returncode == 0, done.stderr
    captures = json.loads(done.stdout)["captures"]
    assert captures["pending"] == 1 and captures["failed"] == 0 and captures["oldest_seconds"] >= 0
    human = memvault_proc("--vault", str(vault), "status").stdout
    assert "captures:  1 pending (oldest" in human
    # A transcript that cannot ever be read (a folder): the worker gives up on it and status says why.
    bad = transcript.with_name("not-a-transcript.jsonl")
    bad.mkdir()
    CaptureQueue(vault).put("claude-code", "s2", str(bad), str(api), "SessionEnd")
    worker = memvault_proc("--vault", str(vault), "drain-captures", timeout=300)
    assert worker.returncode == 0, worker.stderr
    captures = json.loads(memvault_proc("--vault", str(vault), "--json", "status").stdout)["captures"]
    assert captures["pending"] == 0 and captures["failed"] == 1 and captures["last_error"]
    assert "1 failed" in memvault_proc("--vault", str(vault), "status").stdout


def test_a_hook_with_no_server_starts_a_warm_one_that_answers_the_next_hooks(
        project: tuple[Path, Path, Path]) -> None:
    vault, api, _ = project
    warm = {"MEMVAULT_SERVER_WARM_MINUTES": "1"}
    first = hook(vault, "UserPromptSubmit", api, warm, prompt="how do we deploy the api?")
    assert first.returncode == 0 and "Api deploy rule" in first.stdout
    assert AgentSession.load(vault, f"claude-code-{SESSION}").answered_by == "process"
    poll(lambda: ServedVault.find(vault) is not None)
    served = json.loads((vault / ".memvault" / "serve.json").read_text())
    assert (vault / ".memvault" / "serve.json").stat().st_mode & 0o777 == 0o600
    try:
        again = hook(vault, "UserPromptSubmit", api, warm, prompt="how do we deploy the api?",
                     session_id="another-session")
        assert again.stdout == first.stdout  # the same hits, from the warm server
        assert AgentSession.load(vault, "claude-code-another-session").answered_by == "server"
        # A second server started now finds the vault served and exits at once.
        second = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), "serve", "--port", "0",
                                 "--idle-exit", "60"], capture_output=True, text=True, timeout=120)
        assert second.returncode != 0 and "already served" in second.stderr
    finally:
        os.kill(served["pid"], signal.SIGTERM)
    poll(lambda: not (vault / ".memvault" / "serve.json").exists())
