#!/usr/bin/env python3
"""Benchmark the agent hooks: what a Claude Code session waits for at its start and on each prompt.

For each vault size: a vault of synthetic memories (stress/synthetic.py; import, then sync;
reused with --keep), a git checkout whose origin is one of its projects, and the hook commands
exactly as ``memvault install claude-code`` writes them (this installation's ``memvault`` script,
``--vault DIR hook claude-code EVENT``), each run as a new process with the JSON Claude Code sends
on stdin, --runs times (a new session each time, so nothing is held back as already delivered):

- cold: no server of the vault is running; the hook opens the vault and loads the model itself;
- server: ``memvault serve`` of the vault is running (as ``memvault mcp`` is in a Claude Code
  session); the hook asks it over loopback HTTP.

Printed: p50 and p90 per size, path and event, the ratio cold / server, and in the same run the
start of a bare ``python -c pass`` and of ``memvault --help`` as the floor any hook pays.

At sizes >= --synthetic-vectors-from the vectors are random (the model is not run to build the
vault; the queries are still embedded by the real model), so latency is real but the vector
lanes rank noise.  The output says so.

    .venv/bin/python -m benchmarks.hook_sizes                       # 1,000 and 10,000 memories
    .venv/bin/python -m benchmarks.hook_sizes --sizes 1000 --runs 10 --keep ~/.cache/memvault-bench
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness import Parser, markdown_table, new_vault, positive, sizes_arg

EVENTS = ("SessionStart", "UserPromptSubmit")
MARKER = ".bench-hooks.json"


def memvault_script() -> list[str]:
    """What ``memvault install`` writes as the command: the console script next to this python."""
    script = Path(sys.executable).with_name("memvault")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "vault_engine"]


def build(root: Path, size: int, synthetic_from: int) -> None:
    from stress import synthetic
    from vault_engine.vault import Vault

    vault = Vault(root)
    synthetic.write_vault(vault, synthetic.Generator(7), size)
    if size >= synthetic_from:
        synthetic.seed_vectors(root, vault.embedder())
    vault.sync()
    (root / ".memvault" / MARKER).write_text(json.dumps({"size": size, "random_vectors": size >= synthetic_from}))


def vault_for(size: int, keep: Path | None, scratch: Path, synthetic_from: int) -> tuple[Path, bool]:
    """The vault of ``size`` memories (built, or reused from ``keep``) and whether its vectors are random."""
    name = f"hooks-{size}-synthetic-seed7"
    parent = keep or scratch
    root = parent / name
    marker = root / ".memvault" / MARKER
    if not marker.is_file():
        if root.exists():
            shutil.rmtree(root)
        parent.mkdir(parents=True, exist_ok=True)
        new_vault(parent, name)
        started = time.perf_counter()
        print(f"building {size} memories ...", file=sys.stderr, flush=True)
        build(root, size, synthetic_from)
        print(f"  built in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return root, bool(json.loads(marker.read_text())["random_vectors"])


def checkout(folder: Path, project: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", f"https://{project}.git"], check=True)
    return folder


def prompts(size: int, count: int) -> list[str]:
    from stress import synthetic

    return [q.text for q in synthetic.Generator(7).queries(count, size, salt="hooks")]


def run_hook(root: Path, event: str, data: dict[str, Any], cwd: Path) -> tuple[float, str]:
    command = [*memvault_script(), "--vault", str(root), "hook", "claude-code", event]
    started = time.perf_counter()
    done = subprocess.run(command, input=json.dumps(data), capture_output=True, text=True, cwd=cwd, timeout=120)
    seconds = time.perf_counter() - started
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"hook failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, done.stdout


def measure(root: Path, cwd: Path, runs: int, texts: Sequence[str], label: str) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {event: [] for event in EVENTS}
    answered = {event: 0 for event in EVENTS}
    for n in range(runs):
        session = f"bench-{label}-{n}"
        base = {"session_id": session, "cwd": str(cwd), "transcript_path": str(cwd / "none.jsonl")}
        for event, extra in (("SessionStart", {"source": "startup"}), ("UserPromptSubmit", {"prompt": texts[n]})):
            seconds, out = run_hook(root, event, {**base, "hook_event_name": event, **extra}, cwd)
            times[event].append(seconds)
            answered[event] += bool(out)
    state = root / ".memvault" / "agents"
    via = {json.loads(p.read_text()).get("answered_by") for p in state.glob(f"claude-code-bench-{label}-*.json")}
    print(f"  {label}: answered by {sorted(v for v in via if v)}; non-empty answers "
          + ", ".join(f"{e} {answered[e]}/{runs}" for e in EVENTS), file=sys.stderr, flush=True)
    return times


def p(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def start_server(root: Path, cwd: Path) -> subprocess.Popen[bytes]:
    serve_file = root / ".memvault" / "serve.json"
    serve_file.unlink(missing_ok=True)
    proc = subprocess.Popen([*memvault_script(), "--vault", str(root), "serve", "--port", "0", "--no-watch"],
                            cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not serve_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("memvault serve did not start")
        time.sleep(0.1)
    return proc


def startup_floor(runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"python -c pass": [], "memvault --help": []}
    for _ in range(runs):
        for label, command in (("python -c pass", [sys.executable, "-c", "pass"]),
                               ("memvault --help", [*memvault_script(), "--help"])):
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True)
            out[label].append(time.perf_counter() - started)
    return out


def main() -> int:
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=sizes_arg, default=sizes_arg("1000,10000"))
    parser.add_argument("--runs", type=positive, default=20, help="hook runs per size, path and event (default 20)")
    parser.add_argument("--keep", type=Path, help="keep the built vaults here and reuse them")
    parser.add_argument("--synthetic-vectors-from", type=int, default=5000, metavar="N",
                        help="at sizes >= N store random vectors instead of running the model (default 5000)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="mv-bench-hooks-") as scratch:
        floor = startup_floor(args.runs)
        for label, values in floor.items():
            rows.append(["-", "start-up floor", label, f"{p(values, 0.5):.0f}", f"{p(values, 0.9):.0f}", ""])
        for size in args.sizes:
            root, random_vectors = vault_for(size, args.keep, Path(scratch), args.synthetic_vectors_from)
            (root / ".memvault" / "serve.json").unlink(missing_ok=True)
            shutil.rmtree(root / ".memvault" / "agents", ignore_errors=True)
            project = "github.com/acme/api"
            cwd = checkout(Path(scratch) / f"checkout-{size}", project)
            texts = prompts(size, args.runs)
            cold = measure(root, cwd, args.runs, texts, f"cold-{size}")
            server = start_server(root, cwd)
            try:
                run_hook(root, "UserPromptSubmit", {"session_id": "warm", "cwd": str(cwd), "prompt": "warm up",
                                                    "hook_event_name": "UserPromptSubmit"}, cwd)
                warm = measure(root, cwd, args.runs, texts, f"server-{size}")
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(60)
            note = " (random vectors)" if random_vectors else ""
            for event in EVENTS:
                ratio = statistics.median(cold[event]) / statistics.median(warm[event])
                rows.append([f"{size}{note}", "cold (no server)", event, f"{p(cold[event], 0.5):.0f}",
                             f"{p(cold[event], 0.9):.0f}", f"{ratio:.1f}x"])
                rows.append([f"{size}{note}", "server running", event, f"{p(warm[event], 0.5):.0f}",
                             f"{p(warm[event], 0.9):.0f}", "1.0x"])
    print(markdown_table(["memories", "path", "event", "p50 ms", "p90 ms", "vs server (p50)"], rows))
    print(f"\n{args.runs} runs each; one process per hook run, as the agent starts it; "
          f"{os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
