"""OpenCode's plugin run by Node with a stand-in for OpenCode's client: the session's first prompt gets
the manifest and the prompt's memories, and an idle session's messages are stored, through the real
``memvault hook opencode`` commands the plugin runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine.agents import opencode
from vault_engine.agents.captured import CapturedKeys
from vault_engine.agents.session import AgentSession
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

DRIVER = """
import { MemvaultPlugin } from "./memvault.mjs"
const messages = [
  { info: { id: "msg_1", role: "user", time: { created: 1765000000000 } },
    parts: [{ type: "text", text: "How do we deploy the api?" }] },
  { info: { id: "msg_2", role: "assistant", time: { created: 1765000001000 } },
    parts: [{ type: "text", text: "Through the blue-green pipeline, never on Fridays." },
            { type: "text", text: "memvault's own note", synthetic: true }] },
]
const client = { session: { messages: async () => ({ data: messages }) } }
const hooks = await MemvaultPlugin({ client, directory: process.argv[2] })
await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_1" } } } })
const output = { message: { id: "msg_1" }, parts: [{ id: "prt_1", type: "text", text: "how do we deploy?" }] }
await hooks["chat.message"]({ sessionID: "ses_1" }, output)
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } })
console.log(JSON.stringify(output.parts))
"""


def test_the_plugin_gives_context_and_captures_the_session(tmp_path: Path, isolated_env: Path,
                                                          make_vault: Callable[..., Vault],
                                                          make_checkout: Callable[..., Path]) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    api = make_checkout(tmp_path / "api", "git@github.com:acme/api.git")
    vault = Vault(make_vault().root, auto_sync=True)
    wanted = vault.add(NewMemory("Deploys of the api go through the blue-green pipeline.", title="Api deploys",
                                 project="github.com/acme/api")).id
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "memvault.mjs").write_text(opencode.plugin([sys.executable, "-m", "vault_engine",
                                                          "--vault", str(vault.root)]))
    (folder / "driver.mjs").write_text(DRIVER)
    done = subprocess.run([node, "driver.mjs", str(api)], cwd=folder, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    parts = json.loads(done.stdout)
    assert len(parts) == 2 and parts[1]["synthetic"] is True and parts[1]["type"] == "text"
    assert wanted in parts[1]["text"] and parts[1]["id"] != parts[0]["id"]
    state = AgentSession.load(vault.root, "opencode-ses_1")
    assert wanted in state.delivered
    # The capture went to the queue's worker: both messages are stored once it has run.
    deadline = time.monotonic() + 120
    while CapturedKeys(vault.root).count() < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    log = vault.root / ".memvault" / "hooks.log"
    assert CapturedKeys(vault.root).count() == 2, log.read_text() if log.exists() else "no log"
