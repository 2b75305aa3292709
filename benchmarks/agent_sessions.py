#!/usr/bin/env python3
"""What memvault costs a whole agent session: one-shot sessions of the real CLIs, with and without it.

Each agent CLI (installed by ``scripts/bootstrap.sh`` into ``.cache/agents``) runs a one-shot session,
``claude -p PROMPT``, ``codex exec PROMPT``, ``gemini -p PROMPT`` and ``opencode run PROMPT``, against the
loopback mock of the model APIs (``tests/e2e/mock_models.py``, which answers at once; each CLI pointed at it
as the end-to-end tests do, ``tests/e2e/agent_setup.py``), in a git checkout, in two private HOMEs: one
without memvault, one with ``memvault install AGENT --scope user`` on a vault of a few memories (the
offline model, so that no request of memvault's own reaches the mock).  The two alternate, ``--runs``
times each, after one unmeasured warm-up each (first-run caches: the embedding graph, the CLI's own).

Printed per agent, as a markdown table: the median wall time of a session without and with memvault,
their ratio and difference, and the median time from the process's start to its first request to the
model (from the mock's record: what the agent's start-up, memvault's SessionStart hook and MCP server
included, keeps the model waiting).  With memvault, Claude Code runs every hook inside the session
(SessionStart, UserPromptSubmit, SessionEnd's capture), so its wall time holds all of them; Codex runs
the MCP server only (its hooks run once trusted, which ``codex exec`` is not told); Gemini CLI waits for
SessionStart and BeforeAgent and lists the MCP server's tools; OpenCode loads memvault's plugin, which runs
the manifest, the prompt's memories and, when the session goes idle, the capture's hand-off.

Usage:
    .venv/bin/python -m benchmarks.agent_sessions [--runs 5] [--agents claude codex gemini opencode]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.agent_setup import agent_env, point_at_mock
from tests.e2e.mock_models import MockModels
from vault_engine.store import create_vault
from vault_engine.vault import NewMemory, Vault

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / ".cache" / "agents" / "node_modules" / ".bin"
PROMPT = "Where do the release notes go?"
AGENT = {"claude": "claude-code", "codex": "codex", "gemini": "gemini", "opencode": "opencode"}
ARGS = {"claude": ["-p"], "codex": ["exec"], "gemini": ["-p"], "opencode": ["run"]}  # before the prompt
MEMORIES = (
    ("Release notes are written in docs/CHANGELOG.md, newest entry first.", "Where release notes go", None),
    ("Deploys of the api go through the blue-green pipeline; never deploy on Fridays.", "Api deploy rule",
     "github.com/acme/api"),
    ("Integration tests need the local Postgres from docker compose up db.", "Integration tests need Postgres",
     "github.com/acme/api"),
    ("The user prefers short answers that show the code first.", "Short answers", None),
)


@dataclass
class Timings:
    wall: list[float] = field(default_factory=list)
    first_request: list[float] = field(default_factory=list)


def _home(root: Path, cli: str, mock: MockModels, with_memvault: bool) -> tuple[dict[str, str], Path]:
    """A private HOME (and a checkout to work in) for ``cli``; memvault installed into it when asked."""
    home = root / f"{cli}-{'with' if with_memvault else 'without'}"
    project = home / "work" / "api"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "git@github.com:acme/api.git"], check=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8",
           "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env |= agent_env(AGENT[cli], mock, home)
    if with_memvault:
        vault_root = home / "vault"
        create_vault(vault_root, git=False)
        config = vault_root / "memvault.toml"
        config.write_text(config.read_text().replace('#provider = "auto"', 'provider = "offline"'))
        vault = Vault(vault_root, auto_sync=True)
        for text, title, project_key in MEMORIES:
            vault.add(NewMemory(text, title=title, project=project_key, scope="global" if project_key is None
                                else "project"))
        done = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault_root), "install",
                               AGENT[cli], "--scope", "user"], cwd=project, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"memvault install {AGENT[cli]} failed: {done.stderr.strip()}")
    point_at_mock(AGENT[cli], home, mock, env["PYTHONPATH"])
    return env, project


def _session(cli: str, env: dict[str, str], project: Path, mock: MockModels) -> tuple[float, float]:
    """One one-shot session: its wall time and the time to its first request to the model, in seconds."""
    argv = [str(BIN / cli), *ARGS[cli], PROMPT]
    seen = len(mock.requests)
    started_wall = time.time()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cli} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    firsts = [r.at for r in list(mock.since(seen)) if r.api != "other"]
    if not firsts:
        raise SystemExit(f"{cli} made no request to the model")
    return wall, min(firsts) - started_wall


def _stop_warm_server(vault: Path) -> None:
    """Stop the warm server the sessions' hooks started (it would idle for 15 minutes in a removed folder)."""
    try:
        pid = int(json.loads((vault / ".memvault" / "serve.json").read_text(encoding="utf-8"))["pid"])
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, KeyError, TypeError):
        return  # none running


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="measured sessions per agent and setting (default 5)")
    parser.add_argument("--agents", nargs="+", choices=sorted(AGENT), default=["claude", "codex"])
    args = parser.parse_args()
    missing = [cli for cli in args.agents if not (BIN / cli).exists()]
    if missing:
        raise SystemExit(f"not installed in {BIN}: {', '.join(missing)} (run scripts/bootstrap.sh)")
    rows = []
    # The warm server and the capture worker a session leaves behind may still write in the folder as it is
    # removed: that is not the benchmark's failure.
    with tempfile.TemporaryDirectory(prefix="agent-sessions-", ignore_cleanup_errors=True) as tmp, \
            MockModels() as mock:
        for cli in args.agents:
            setups = {flag: _home(Path(tmp), cli, mock, flag) for flag in (False, True)}
            timings = {flag: Timings() for flag in setups}
            for env, project in setups.values():
                _session(cli, env, project, mock)  # warm-up
            for run in range(args.runs):
                for flag, (env, project) in setups.items():
                    wall, first = _session(cli, env, project, mock)
                    timings[flag].wall.append(wall)
                    timings[flag].first_request.append(first)
                print(f"  {cli}: run {run + 1}/{args.runs}", file=sys.stderr)
            rows.append((cli, timings[False], timings[True]))
            _stop_warm_server(Path(tmp) / f"{cli}-with" / "vault")
    print(f"\none-shot sessions against the mock model API, median of {args.runs} (seconds)\n")
    print("| agent | without memvault | with memvault | ratio | difference | first request without | "
          "first request with |")
    print("|---|---|---|---|---|---|---|")
    for cli, without, with_ in rows:
        a, b = statistics.median(without.wall), statistics.median(with_.wall)
        fa, fb = statistics.median(without.first_request), statistics.median(with_.first_request)
        print(f"| {cli} | {a:.2f} | {b:.2f} | {b / a:.2f}x | +{b - a:.2f} | {fa:.2f} | {fb:.2f} |")


if __name__ == "__main__":
    main()
