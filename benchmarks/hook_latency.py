"""What an agent waits for: each Claude Code hook and ``memvault mcp``'s handshake, run as the agent runs them.

For each vault size (memories written, then one sync with the real model), from a git checkout of
one of its projects, each hook is a new ``memvault --vault DIR hook claude-code EVENT`` process with
the JSON Claude Code sends on stdin, --runs times (a new session each time):

- cold: no server and no warm server (``MEMVAULT_SERVER_WARM_MINUTES=0``): the hook loads what it needs;
- warm: the default: the first hook with no server starts the warm server (``agents/warm.py``) and
  answers itself; the runs after it ask that server.  Every run is counted, the first too;
- server: ``memvault serve`` is running.

PreCompact and SessionEnd queue the capture and start a worker; the worker's capture is waited
for between runs, untimed.  Then ``memvault mcp`` is started --runs times and timed until it
answers ``initialize`` (MCP's JSON-RPC over stdio).  ``python -c pass`` and ``memvault --version``
are the floor, in the same run.  Bytecode is written and used (PYTHONDONTWRITEBYTECODE is dropped), as
an installed memvault has it.  Printed: p50 and p90 in milliseconds per row.

    python -m benchmarks.hook_latency                    # 50 and 1,000 memories, 10 runs
    python -m benchmarks.hook_latency --sizes 50 --runs 5
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
import uuid
from collections.abc import Callable
from pathlib import Path

from vault_engine.agents.backend import ServedVault
from vault_engine.agents.warm import STARTED_FILE
from vault_engine.captures import CaptureQueue
from vault_engine.locks import WriterLock
from vault_engine.store import create_vault
from vault_engine.vault import NewMemory, Vault

TOPICS = ("deploy", "tests", "database", "caching", "logging", "auth", "frontend", "api", "ci", "docs")
PROMPTS = ("how do we deploy the api?", "why is the caching layer slow?", "where do the auth tokens live?",
           "what should I check before merging a database migration?", "write a haiku about green tea")
PROJECT = "github.com/acme/api"
TRANSCRIPT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "agents" / "claude_code_transcript.jsonl"


def command() -> list[str]:
    script = Path(sys.executable).with_name("memvault")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "vault_engine"]


def build(root: Path, size: int) -> None:
    create_vault(root, git=False)
    vault = Vault(root)
    vault.add(NewMemory("The user prefers short answers that show the code first.", title="Short answers",
                        type="core-profile"))
    for n in range(size - 1):
        topic = TOPICS[n % len(TOPICS)]
        own = n % 2 == 0
        vault.add(NewMemory(f"Rule {n} about {topic}: when working on {topic}, check item {n} and run the {topic} "
                            f"checks before merging; owner team {n % 7}.", title=f"{topic} rule {n}",
                            project=PROJECT if own else None, scope=None if own else "global"))
    vault.sync()


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def timed(argv: list[str], stdin: str = "", cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    begin = time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, check=False, timeout=300)
    return time.perf_counter() - begin


def drained(vault: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    lock = WriterLock(vault / ".memvault" / "captures" / "drain.lock", 0)
    while (CaptureQueue(vault).ready() or lock.held()) and time.monotonic() < deadline:
        time.sleep(0.1)


def wait_until(condition: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)


def hook_runs(vault: Path, checkout: Path, event: str, runs: int, env: dict[str, str],
              folder: Path) -> list[float]:
    out = []
    for n in range(runs):
        session = str(uuid.uuid4())
        data: dict[str, object] = {"session_id": session, "cwd": str(checkout), "hook_event_name": event}
        if event == "SessionStart":
            data["source"] = "startup"
        elif event == "UserPromptSubmit":
            data["prompt"] = PROMPTS[n % len(PROMPTS)]
        else:
            transcript = folder / f"{session}.jsonl"
            transcript.write_text(TRANSCRIPT.read_text())
            data["transcript_path"] = str(transcript)
        out.append(timed([*command(), "--vault", str(vault), "hook", "claude-code", event], json.dumps(data),
                         checkout, env))
        if event in ("PreCompact", "SessionEnd"):
            drained(vault)
    return out


def stop_server(vault: Path) -> None:
    try:
        pid = int(json.loads((vault / ".memvault" / "serve.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return
    os.kill(pid, signal.SIGTERM)
    wait_until(lambda: ServedVault.find(vault) is None)
    # A hook starts no warm server within START_GAP of the last start: the next rows start their own.
    (vault / STARTED_FILE).unlink(missing_ok=True)


def mcp_initialize(vault: Path, checkout: Path, env: dict[str, str]) -> float:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "hook-latency", "version": "1"}}}
    begin = time.perf_counter()
    process = subprocess.Popen([*command(), "--vault", str(vault), "mcp"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=checkout, env=env)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(request) + "\n").encode())
    process.stdin.flush()
    answer = process.stdout.readline()
    elapsed = time.perf_counter() - begin
    if b'"result"' not in answer:
        raise SystemExit(f"memvault mcp did not answer initialize: {answer[:200]!r}")
    process.stdin.close()
    process.wait(30)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="50,1000", help="vault sizes, comma-separated (default 50,1000)")
    parser.add_argument("--runs", type=int, default=10, help="runs per row (default 10)")
    args = parser.parse_args()
    rows: list[tuple[str, str, str, list[float]]] = []
    with tempfile.TemporaryDirectory(prefix="hook-latency-") as temp:
        base = Path(temp)
        # As installed, memvault runs from bytecode pip compiled: with PYTHONDONTWRITEBYTECODE set (as in some
        # shells and containers), a checkout's package would be compiled again by every run (~0.4 s).
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
               "HOME": os.environ.get("HOME", str(base))}
        cold = {**env, "MEMVAULT_SERVER_WARM_MINUTES": "0"}
        rows.append(("-", "floor", "python -c pass", [timed([sys.executable, "-c", "pass"]) for _ in range(args.runs)]))
        rows.append(("-", "floor", "memvault --version",
                     [timed([*command(), "--version"], env=env) for _ in range(args.runs)]))
        for size in (int(s) for s in args.sizes.split(",")):
            vault, checkout, folder = base / f"vault{size}", base / f"api{size}", base / f"sessions{size}"
            folder.mkdir()
            print(f"building a vault of {size} memories ...", file=sys.stderr)
            build(vault, size)
            subprocess.run(["git", "init", "-q", str(checkout)], check=True)
            subprocess.run(["git", "-C", str(checkout), "remote", "add", "origin", "git@github.com:acme/api.git"],
                           check=True)
            for event in ("SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"):
                rows.append((f"{size:,}", "cold", event, hook_runs(vault, checkout, event, args.runs, cold, folder)))
            for event in ("SessionStart", "UserPromptSubmit"):
                rows.append((f"{size:,}", "warm", event, hook_runs(vault, checkout, event, args.runs, env, folder)))
                stop_server(vault)
            server = subprocess.Popen([*command(), "--vault", str(vault), "serve", "--port", "0"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cold)
            try:
                wait_until(lambda: ServedVault.find(vault) is not None)  # noqa: B023
                hook_runs(vault, checkout, "UserPromptSubmit", 1, cold, folder)  # the server loads the model
                for event in ("SessionStart", "UserPromptSubmit"):
                    rows.append((f"{size:,}", "server", event, hook_runs(vault, checkout, event, args.runs, cold,
                                                                          folder)))
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(60)
            rows.append((f"{size:,}", "-", "mcp initialize",
                         [mcp_initialize(vault, checkout, cold) for _ in range(args.runs)]))
    print("| memories | path | what | p50 ms | p90 ms |")
    print("|---|---|---|---:|---:|")
    for size_text, path, what, values in rows:
        p50, p90 = percentiles(values)
        print(f"| {size_text} | {path} | {what} | {p50 * 1000:,.0f} | {p90 * 1000:,.0f} |")


if __name__ == "__main__":
    main()
