"""Benchmark the servers: `memvault serve` (HTTP) and `memvault mcp` (MCP on stdio) against a cold CLI.

For each server, a real subprocess on a copy of the vault, without its watcher
(--watch to run it: its scheduled `maintain` then writes overviews into the copy
in the first seconds, so the searches would meet another vault than the one the
quality figures are measured on): time from start to the first answer, to the
first search (the model and indexes loading), then --warm-up unrecorded
searches (a server that has answered for a while: the model has met queries of
every length; they are asked from the end of the query list, the recorded ones
from its start, so the two differ when the list is long enough),
then --calls warm calls of search, read (depth 1) and context (not recorded),
with p50/p90, up to 10 status calls (the plugin's status bar), and the server's
peak RSS (VmHWM). Last, the same search as a cold `memvault search --json`
process, --cold-runs times, for the ratio a warm server saves per call.

    .venv/bin/python -m benchmarks.servers                       # the example vault
    .venv/bin/python -m benchmarks.servers --vault /tmp/mv-bench-search/search-10000-synthetic-seed7-v1
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
QUERIES = ("how do we check changes before committing", "database schema migrations", "flaky test on CI",
           "where are signup emails sent", "staging database version", "review checklist for pull requests")


def line(label: str, value: str, note: str = "") -> None:
    print(f"{label:<34} {value:>14}  {note}".rstrip(), flush=True)


def percentiles(values: Sequence[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"p50 {statistics.median(ordered) * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms"


def peak_rss_mb(pid: int) -> float:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) / 1024
    return float("nan")


def example_vault(base: Path) -> Path:
    root = base / "vault"
    memvault = [sys.executable, "-m", "vault_engine", "--vault", str(root)]
    subprocess.run([*memvault, "init", "--no-git"], check=True, capture_output=True)
    subprocess.run([*memvault, "import", str(REPO / "scripts" / "examples.jsonl")], check=True, capture_output=True)
    subprocess.run([*memvault, "sync"], check=True, capture_output=True)
    return root


def timed(calls: int, work: Callable[[int], Any]) -> list[float]:
    seconds = []
    for n in range(calls):
        started = time.perf_counter()
        work(n)
        seconds.append(time.perf_counter() - started)
    return seconds


def warm_up_queries(count: int) -> list[str]:
    """The unrecorded searches' queries: from the end of the list (the recorded ones start at its head)."""
    return [QUERIES[len(QUERIES) - 1 - n % len(QUERIES)] for n in range(count)]


def bench_http(root: Path, calls: int, warm_up: int, watch: bool) -> None:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "vault_engine", "serve", "--vault", str(root), "--port", "0",
                             *([] if watch else ["--no-watch"])], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        proc.stderr.readline()
        served = json.loads((root / ".memvault" / "serve.json").read_text())
        connection = http.client.HTTPConnection("127.0.0.1", served["port"], timeout=120)
        headers = {"Authorization": f"Bearer {served['token']}"}

        def call(method: str, path: str, body: Any = None) -> Any:
            connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            answer = connection.getresponse()
            data = json.loads(answer.read())
            if answer.status != 200:
                raise RuntimeError(f"{path}: {answer.status} {data}")
            return data

        call("GET", "/v1/status")
        line("serve: start to first answer", f"{time.perf_counter() - started:.2f} s", "status")
        first = time.perf_counter()
        found = call("POST", "/v1/search", {"query": QUERIES[0]})
        line("serve: first search", f"{time.perf_counter() - first:.2f} s", "model and indexes warm up")
        for query in QUERIES[1:]:
            if found["hits"]:
                break
            found = call("POST", "/v1/search", {"query": query})
        memory_id = found["hits"][0]["id"]
        for query in warm_up_queries(warm_up):
            call("POST", "/v1/search", {"query": query})
        line("serve: search", "", percentiles(timed(calls, lambda n: call(
            "POST", "/v1/search", {"query": QUERIES[n % len(QUERIES)]}))))
        line("serve: read depth 1", "", percentiles(timed(calls, lambda n: call(
            "POST", "/v1/read", {"id": memory_id, "depth": 1}))))
        line("serve: context (not recorded)", "", percentiles(timed(calls, lambda n: call(
            "POST", "/v1/context", {"task": QUERIES[n % len(QUERIES)], "record": False}))))
        line("serve: status (warm)", "", percentiles(timed(min(calls, 10), lambda n: call("GET", "/v1/status"))))
        line("serve: peak RSS", f"{peak_rss_mb(proc.pid):.0f} MB")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)


async def _bench_mcp(root: Path, calls: int, warm_up: int, watch: bool) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    started = time.perf_counter()
    params = StdioServerParameters(command=sys.executable, args=["-m", "vault_engine", "mcp", "--vault", str(root),
                                                                 *([] if watch else ["--no-watch"])],
                                   env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        line("mcp: start to initialized", f"{time.perf_counter() - started:.2f} s")
        first = time.perf_counter()
        result = await session.call_tool("memory_search", {"query": QUERIES[0]})
        if result.is_error:
            raise RuntimeError(f"memory_search failed: {result.content}")
        line("mcp: first memory_search", f"{time.perf_counter() - first:.2f} s", "model and indexes warm up")
        for query in warm_up_queries(warm_up):
            await session.call_tool("memory_search", {"query": query})
        seconds = []
        for n in range(calls):
            begun = time.perf_counter()
            await session.call_tool("memory_search", {"query": QUERIES[n % len(QUERIES)]})
            seconds.append(time.perf_counter() - begun)
        line("mcp: memory_search", "", percentiles(seconds))
        seconds = []
        for n in range(calls):
            begun = time.perf_counter()
            await session.call_tool("memory_context", {"task": QUERIES[n % len(QUERIES)], "record": False})
            seconds.append(time.perf_counter() - begun)
        line("mcp: memory_context (not recorded)", "", percentiles(seconds))


def bench_cli(root: Path, runs: int) -> None:
    command = [sys.executable, "-m", "vault_engine", "--vault", str(root), "search", "--json", "--", QUERIES[0]]
    subprocess.run(command, check=True, capture_output=True)  # warms the OS file cache
    seconds = timed(runs, lambda _n: subprocess.run(command, check=True, capture_output=True))
    line("cli: cold `memvault search`", "", percentiles(seconds))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, help="A vault to copy and serve (default: the example vault).")
    parser.add_argument("--calls", type=int, default=50, help="Warm calls per operation (default 50).")
    parser.add_argument("--cold-runs", type=int, default=5, help="Cold CLI searches (default 5).")
    parser.add_argument("--warm-up", type=int, default=50,
                        help="Unrecorded searches before the recorded ones (default 50).")
    parser.add_argument("--watch", action="store_true", help="Run the servers with their watcher.")
    parser.add_argument("--query", action="append", default=[],
                        help="A query to ask instead of the example vault's (repeatable; one must find a hit).")
    parser.add_argument("--queries-from-locomo", action="store_true",
                        help="Ask the questions of the LoCoMo development conversation the vault holds "
                             "(its first one, with --vault a conversation's vault of benchmarks.locomo).")
    args = parser.parse_args(argv)
    global QUERIES
    if args.queries_from_locomo:
        from benchmarks.locomo import DEFAULT_DATA, questions
        sample = json.loads(DEFAULT_DATA.read_text(encoding="utf-8"))[0]
        args.query += [question for _category, question, _gold in questions(sample)]
    if args.query:
        QUERIES = tuple(args.query)
    if args.calls < 1 or args.cold_runs < 1 or args.warm_up < 0:
        parser.error("--calls and --cold-runs must be at least 1, --warm-up at least 0")
    with tempfile.TemporaryDirectory(prefix="memvault-bench-servers-") as temp:
        base = Path(temp)
        if args.vault is not None:
            if not (args.vault / "memvault.toml").is_file():
                parser.error(f"{args.vault} is not a vault (no memvault.toml)")
            root = base / "vault"
            shutil.copytree(args.vault, root, ignore=shutil.ignore_patterns("serve.json"))
        else:
            root = example_vault(base)
        count = sum(1 for _ in root.rglob("*.md"))
        line("vault", f"{count:,} files", str(args.vault or "the example vault"))
        overlap = "" if len(QUERIES) >= args.calls + args.warm_up else " (the queries repeat: the list is short)"
        line("warm-up", f"{args.warm_up} searches", f"{len(QUERIES)} queries; watcher "
             f"{'on' if args.watch else 'off'}{overlap}")
        bench_http(root, args.calls, args.warm_up, args.watch)
        asyncio.run(_bench_mcp(root, args.calls, args.warm_up, args.watch))
        bench_cli(root, args.cold_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
