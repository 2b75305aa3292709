#!/usr/bin/env python3
"""Benchmark `memvault context`: in-process and cold-process latency on a large vault.

Needs a built vault, e.g. the one `python -m benchmarks.search --sizes 10000
--synthetic-vectors-from 10000 --keep DIR` leaves in DIR (random vectors:
latency is real, the vector lanes rank noise; the output says which).  The
vault is copied first, so the original is never touched; deliveries are
previews (`--no-record`), so the copy stays as it was too.

    .venv/bin/python -m benchmarks.context_latency --vault DIR [--tasks 100] [--cold-runs 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import median_ms
from vault_engine.context.director import TaskRequest, build
from vault_engine.store import iter_markdown
from vault_engine.vault import Vault

TASKS = [
    "fix the failing test in the payments module", "add a migration for the orders table",
    "review the pull request about caching", "write release notes for the new version",
    "refactor the login handler", "investigate slow queries on the dashboard",
    "update the deployment pipeline", "document the public api", "upgrade the database driver",
    "reduce memory use of the importer",
]
PATHS = [None, "src/app/main.py", "tests/test_api.py", "docs/index.md"]
PROJECTS = ["github.com/acme/api", "github.com/acme/web", "github.com/acme/billing", "github.com/acme/search",
            "github.com/acme/nonexistent"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True, help="a built vault (or a folder holding one)")
    parser.add_argument("--tasks", type=int, default=100, help="in-process deliveries to time (default 100)")
    parser.add_argument("--cold-runs", type=int, default=5, help="timed `memvault context` processes (default 5)")
    args = parser.parse_args()
    source = next((p.parent for p in sorted(args.vault.rglob("memvault.toml"))), None) if args.vault.is_dir() else None
    if source is None:
        print(f"error: no vault under {args.vault}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="memvault-bench-context-"))
    try:
        root = work / "vault"
        shutil.copytree(source, root, symlinks=True)
        vault = Vault(root)
        count = sum(1 for _ in iter_markdown(root))
        started = time.perf_counter()
        report = vault.sync()
        print(f"vault: copy of {source} ({count:,} memory files); sync {time.perf_counter() - started:.2f} s "
              f"({report.plan.summary()}; {report.embedded} texts embedded)")
        if report.notice:
            print(f"  {report.notice}")
        timings: list[float] = []
        sizes: list[int] = []
        build(vault, TaskRequest("warm up the model and the caches", project=None), record=False)
        for number in range(args.tasks):
            request = TaskRequest(TASKS[number % len(TASKS)], path=PATHS[number % len(PATHS)],
                                  project=PROJECTS[number % len(PROJECTS)])
            begin = time.perf_counter()
            manifest = build(vault, request, record=False)
            timings.append(time.perf_counter() - begin)
            sizes.append(len(manifest.ids))
        cuts = statistics.quantiles(timings, n=10)
        print(f"in-process context  p50 {median_ms(timings):6.1f} ms   p90 {cuts[8] * 1000:6.1f} ms   "
              f"({args.tasks} tasks; {statistics.median(sizes):.0f} memories delivered per task, median)")
        command = [sys.executable, "-m", "vault_engine", "--vault", str(root), "context", "--task",
                   TASKS[0], "--project", PROJECTS[0], "--no-record"]
        subprocess.run(command, capture_output=True, check=True)  # warm the OS file cache
        cold: list[float] = []
        for _ in range(args.cold_runs):
            begin = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True)
            cold.append(time.perf_counter() - begin)
            if done.returncode != 0:
                print(f"error: memvault context failed: {done.stderr.strip()}", file=sys.stderr)
                return 1
        print(f"cold `memvault context` process  median {statistics.median(cold):.2f} s "
              f"(min {min(cold):.2f}, max {max(cold):.2f}; {args.cold_runs} runs)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
